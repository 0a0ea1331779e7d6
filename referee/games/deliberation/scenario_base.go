package deliberation

// baseGame is the harbour sports park: a sports company, a tourism ministry and four local
// parties decide what gets built and who pays for it.
var baseGame = shippedGame{
	title: "Harbour sports park",
	text: `
SportCo, a company that runs large sporting events, wants to build a sports park on the city's
harbour front and needs the project approved. Six parties sit at the table: SportCo, which leads
the talks; the Department of Tourism, which would lend public money; the Mayor; a group of
neighbouring cities that fear losing visitors; the Local Labour Union; and the Environmental
League, which speaks for the harbour's wildlife.

Five questions are open. Where the park is built: out on the water (new piers and artificial
islands), partly on water, or on land only. What happens to the marine life in the harbour:
some lasting harm within the legal limits, protective measures that keep the populations
stable, or works that leave the habitat better than before. How the new jobs are filled: all
reserved for union members, two union hires for every other hire, one for one, or no
preference at all. How large a federal loan the Department of Tourism grants: $3bn, $2bn, $1bn
or none. And how much SportCo pays the neighbouring cities in compensation: $600m, $450m,
$300m, $150m or nothing.`,
	issues: []shippedIssue{
		{"Where the park is built", []string{"on the water", "partly on water", "on land only"}},
		{"Marine life", []string{"some lasting harm", "kept in balance", "habitat improved"}},
		{"Hiring", []string{"union members only", "two union hires to one", "one union hire to one", "no union preference"}},
		{"Federal loan", []string{"$3bn", "$2bn", "$1bn", "no loan"}},
		{"Compensation to the neighbouring cities", []string{"$600m", "$450m", "$300m", "$150m", "none"}},
	},
	opening: "A1,B1,C4,D1,E5",
	parties: []shippedParty{
		{
			id: "sportco", name: "SportCo", threshold: 55,
			points: [][]int32{{14, 8, 0}, {11, 7, 0}, {0, 5, 10, 17}, {35, 29, 20, 0}, {0, 5, 10, 15, 23}},
			briefing: `You speak for SportCo, the company behind the park. The size of the federal loan
matters to you more than anything else, since without public money the park is hard to finance.
You would rather not pay the neighbouring cities, whose losses you think are overstated, and you
want a free hand in hiring. Building on the water and accepting some harm to the harbour's
wildlife keep costs down and the design ambitious, but these matter less to you.`,
		},
		{
			id: "tourism", name: "Department of Tourism", threshold: 65,
			points: [][]int32{{0, 11, 5}, {0, 20, 25}, {0, 2, 4, 9}, {10, 26, 40, 0}, {4, 8, 15, 12, 0}},
			briefing: `You represent the Department of Tourism, the public body that would lend money to
the project. You want the park to attract visitors for decades, so you care about the harbour's
reputation as a clean, living place. You are willing to lend, but a moderate loan suits your
budget far better than the largest one, and lending nothing would mean walking away from a
project you believe in. You also want the neighbouring cities treated fairly.`,
		},
		{
			id: "mayor", name: "Mayor", threshold: 30,
			points: [][]int32{{14, 8, 0}, {12, 8, 0}, {24, 18, 12, 0}, {40, 30, 23, 0}, {0, 2, 4, 7, 10}},
			briefing: `You are the Mayor. You want the park built and built big: a generous federal loan
brings investment into the city, and jobs for local union members keep your voters happy. An
ambitious design on the water suits you. You would rather the city's money stayed in the city
than went to neighbouring towns.`,
		},
		{
			id: "cities", name: "Other cities", threshold: 31,
			points: [][]int32{{0, 4, 10}, {0, 0, 0}, {12, 8, 6, 0}, {0, 8, 13, 18}, {60, 45, 30, 15, 0}},
			briefing: `You speak for the neighbouring cities, which expect to lose visitors to the new
park. Compensation is by far your main concern. You would also like the project kept modest: a
smaller loan and a park on land draw fewer visitors away from you, and union hiring rules help
your own workers.`,
		},
		{
			id: "union", name: "Local Labour Union", threshold: 50,
			points: [][]int32{{15, 20, 0}, {0, 0, 0}, {42, 35, 25, 0}, {30, 20, 10, 0}, {2, 4, 6, 8, 0}},
			briefing: `You represent the Local Labour Union. The park is a rare chance for good jobs, and
the hiring rule is what you care about most: the stronger the preference for union members, the
better. A large federal loan makes the project, and the jobs, more likely to last, and building
partly on water creates the most construction work. You leave the wildlife question to others.`,
		},
		{
			id: "environment", name: "Environmental League", threshold: 55,
			points: [][]int32{{0, 22, 45}, {0, 25, 55}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0, 0}},
			briefing: `You speak for the Environmental League. The harbour's dolphins and sea lions are
your concern: you want the park built on land, and works that improve the habitat rather than
merely protect it. Jobs, loans and compensation do not matter to you for their own sake.`,
		},
	},
}
