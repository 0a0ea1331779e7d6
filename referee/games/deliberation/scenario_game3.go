package deliberation

// game3Game is the Saarland airport: investors and two levels of government plan an airport in a
// border region.
var game3Game = shippedGame{
	title: "Saarland airport",
	text: `
Private investors, the German federal government and the state government of Saarland plan a new
airport for Saarland to lift the region's economy and tourism; the investors would build and run
it. Environmental activists, neighbouring France and the town of Neunkirchen are also at the
table. Six parties negotiate; the private investors lead.

Five questions are open. Where the airport goes: near the French border, near the Luxembourg
border by the existing air base, near the Rhineland-Palatinate border by an existing airport, or
in the centre of Saarland near Neunkirchen. How hard it is on the environment: high impact with
few rules and fossil fuels, moderate impact with some rules and some renewable energy, or low
impact with strict rules and mostly renewable energy. How the profits are split between the
federal government, the state and the investors: equally, or with half going to one of the
three. What the communities nearby receive for noise and pollution: nothing, a one-off payment
of EUR 10m, or EUR 5m, 10m or 15m a year for ten years. And how much local businesses are
involved in running it: not at all, partly, or fully.`,
	issues: []shippedIssue{
		{"Site", []string{"French border", "Luxembourg border", "Rhineland-Palatinate border", "centre of Saarland"}},
		{"Environmental impact", []string{"high", "moderate", "low"}},
		{"Profit split", []string{"equal", "federal half", "state half", "investors' half"}},
		{"Compensation for nearby communities", []string{"none", "EUR 10m once", "EUR 5m a year", "EUR 10m a year", "EUR 15m a year"}},
		{"Local business involvement", []string{"none", "partial", "full"}},
	},
	opening: "A1,B1,C4,D1,E1",
	parties: []shippedParty{
		{
			id: "investors", name: "Private investors", threshold: 63,
			points: [][]int32{{25, 20, 0, 10}, {18, 13, 0}, {25, 10, 0, 32}, {15, 12, 8, 4, 0}, {10, 5, 0}},
			briefing: `You speak for the private investors who would build and run the airport, and you
lead the talks. You want a good return: the largest share of the profits, low running costs
(lenient environmental rules, little compensation, your own choice of contractors) and a site
that suits your plans, preferably near the French border.`,
		},
		{
			id: "federal", name: "Federal government of Germany", threshold: 55,
			points: [][]int32{{0, 40, 10, 29}, {0, 25, 20}, {10, 14, 6, 0}, {0, 9, 13, 7, 0}, {0, 8, 5}},
			briefing: `You represent the federal government, a co-funder and the regulator. The site is
your main concern: you favour building near the Luxembourg border, by the existing air base, and
you do not want the airport on the French border. You want the airport to meet reasonable
environmental standards, a fair return on the federal money, and fair treatment of the people
nearby.`,
		},
		{
			id: "saarland", name: "State government of Saarland", threshold: 45,
			points: [][]int32{{0, 5, 3, 7}, {0, 24, 30}, {24, 12, 30, 0}, {0, 11, 17, 15, 5}, {0, 11, 16}},
			briefing: `You represent Saarland's state government, a co-funder and the main beneficiary.
You want the region to gain: a fair share of the profits for the state, local businesses fully
involved, decent compensation for your communities and an airport that respects the environment.`,
		},
		{
			id: "activists", name: "Environmental activists", threshold: 50,
			points: [][]int32{{0, 0, 0, 0}, {0, 40, 65}, {0, 0, 0, 0}, {0, 10, 20, 35, 25}, {0, 0, 0}},
			briefing: `You speak for environmental activists. Keeping the airport's environmental impact as
low as possible is what you care about most, and you want the communities that suffer its noise
and pollution well compensated. Profits and contracts do not concern you.`,
		},
		{
			id: "france", name: "France", threshold: 65,
			points: [][]int32{{0, 45, 20, 20}, {0, 25, 30}, {0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 20, 25}},
			briefing: `You represent France, Saarland's neighbour. You do not want the airport next to the
French border; anywhere else is better, and the Luxembourg border is best. You want the airport
clean, and local businesses on both sides of the border involved in running it.`,
		},
		{
			id: "neunkirchen", name: "Local community of Neunkirchen", threshold: 50,
			points: [][]int32{{20, 20, 25, 0}, {0, 15, 20}, {0, 0, 0, 0}, {0, 17, 25, 30, 35}, {0, 15, 20}},
			briefing: `You speak for the people of Neunkirchen. You do not want the airport in the centre
of Saarland, on your doorstep. Whatever happens, you want generous compensation for the noise and
pollution, a clean airport, and work for local businesses.`,
		},
	},
}
