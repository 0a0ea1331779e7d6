package deliberation

// game2Game is the solar farm: a foreign-funded solar power plant in a developing country.
var game2Game = shippedGame{
	title: "Solar farm",
	text: `
A project manager proposes a solar power plant for a developing country, funded by a foreign aid
agency and supported by a local non-profit. The plant would bring clean power and jobs, but the
local government, the landowners whose land it needs and a group of local activists each have
concerns. Six parties negotiate; the project manager leads.

Five questions are open. How large the plant is: 50, 150, 250, 350 or 450 hectares; more land
means more power, money and jobs, and more damage to the land. Where it stands: near a city
(cheap to run, no help to the countryside), near a village (helps a poor area, costlier), or in
a remote area (little harm, hard to reach and to protect). Who owns and runs it once built: the
aid agency, the local non-profit, the local government, or a joint venture. Where its power
goes: to the local community only, to the cities only, or to every region equally. And who
guards it: private guards hired by the project manager, soldiers provided through the aid
agency, the local police, or guards from the community.`,
	issues: []shippedIssue{
		{"Size", []string{"50 ha", "150 ha", "250 ha", "350 ha", "450 ha"}},
		{"Location", []string{"near a city", "near a village", "remote area"}},
		{"Ownership", []string{"aid agency", "local non-profit", "local government", "joint venture"}},
		{"Who gets the power", []string{"local community", "cities", "all regions equally"}},
		{"Security", []string{"private guards", "aid-agency military", "local police", "community guards"}},
	},
	opening: "A3,B1,C1,D2,E1",
	parties: []shippedParty{
		{
			id: "manager", name: "Project manager", threshold: 59,
			points: [][]int32{{5, 10, 23, 15, 5}, {35, 25, 0}, {17, 0, 5, 10}, {0, 14, 8}, {11, 0, 7, 7}},
			briefing: `You are the project manager and lead the talks. You must deliver a plant that is
built on time and runs reliably. A site near a city is the easiest to build and operate, and a
medium-sized plant is the most manageable. You trust the aid agency to own the plant, selling the
power to the cities pays best, and you would keep security under your own control.`,
		},
		{
			id: "aid", name: "Foreign aid agency", threshold: 60,
			points: [][]int32{{0, 15, 25, 20, 0}, {0, 7, 4}, {15, 5, 0, 10}, {13, 0, 9}, {26, 40, 10, 0}},
			briefing: `You represent the foreign aid agency that pays for the plant. Keeping your
investment safe is your first concern, so you want strong security, ideally provided through your
own country's military. You want a plant of sensible size, a say in its ownership, and its power
to help the poorest people.`,
		},
		{
			id: "government", name: "Local government", threshold: 37,
			points: [][]int32{{0, 10, 15, 20, 25}, {14, 7, 0}, {0, 0, 35, 25}, {0, 9, 5}, {0, 0, 17, 10}},
			briefing: `You represent the local government. Above all you want the plant in local hands,
ideally your own, and you want the local police to guard it. A larger plant means more growth and
more tax income for the region.`,
		},
		{
			id: "landowners", name: "Landowners", threshold: 40,
			points: [][]int32{{5, 10, 20, 30, 40}, {16, 12, 5}, {22, 0, 10, 15}, {0, 22, 17}, {0, 0, 0, 0}},
			briefing: `You speak for the landowners whose land the plant would use. The more land is
leased, and the more valuable it is, the better for you. You would rather deal with the well-funded
aid agency as owner, and power sold to the cities makes the project more profitable. Security is
not your concern.`,
		},
		{
			id: "ngo", name: "Local NGO", threshold: 30,
			points: [][]int32{{25, 20, 15, 10, 5}, {0, 35, 40}, {0, 11, 5, 9}, {15, 0, 12}, {2, 0, 5, 9}},
			briefing: `You represent the local non-profit that supports the project. You want it to help
the countryside and harm the land as little as possible: a smaller plant away from the city, with
its power going to the local community. You would be glad to help run it.`,
		},
		{
			id: "activists", name: "Local Activists", threshold: 30,
			points: [][]int32{{10, 8, 6, 2, 0}, {0, 12, 14}, {0, 40, 35, 0}, {11, 0, 5}, {0, 0, 20, 25}},
			briefing: `You speak for local activists wary of foreign control. Your main demand is that the
plant ends up owned by local hands, not by the aid agency or a venture it dominates. You want it
small and away from the city, guarded by the community itself, and its power kept for local
people.`,
		},
	},
}
