package deliberation

// game1Game is the island airport: a small island state's government proposes a new airport.
var game1Game = shippedGame{
	title: "Island airport",
	text: `
The government of a small island nation proposes a new airport to bring in more tourists and
business. A development bank would lend the money; a construction company would build it. An
environmental group, the island's indigenous community and the local tourism association all
have a stake in how it is done. Six parties negotiate; the government leads.

Five questions are open. Where the airport goes: on the coast near the capital (easy to reach,
hard on the reefs and the indigenous lands), in a city in the middle of the island (simpler to
build, far from the community, less attractive to visitors), or on an artificial island in the
south (little harm, costly and technically hard). How large the budget is: $300m, $500m, $800m
or $1.2bn; a bigger budget means a bigger, better airport and a heavier debt. How much is spent
on limiting environmental harm: nothing, basic, moderate or advanced measures. How thoroughly
the effects on local people are studied and compensated: no study, or a basic, moderate, high or
very high level of assessment. And how the profits are shared: a fixed share for each party, a
share that varies with each party's contribution, or a mix of the two.`,
	issues: []shippedIssue{
		{"Site", []string{"coast near the capital", "midland city", "artificial island"}},
		{"Budget", []string{"$300m", "$500m", "$800m", "$1.2bn"}},
		{"Environmental measures", []string{"none", "basic", "moderate", "advanced"}},
		{"Social impact assessment", []string{"none", "basic", "moderate", "high", "very high"}},
		{"Profit sharing", []string{"fixed shares", "variable shares", "fixed and variable"}},
	},
	opening: "A1,B4,C1,D1,E3",
	parties: []shippedParty{
		{
			id: "government", name: "government", threshold: 60,
			points: [][]int32{{17, 5, 9}, {10, 15, 29, 40}, {12, 8, 4, 0}, {8, 6, 4, 2, 0}, {0, 23, 17}},
			briefing: `You lead for the island's government. You want an airport that puts the island on
the map: a large budget matters most to you, and you want the profits shared in a way that
rewards the government's leading role. Every dollar spent on studies and environmental measures
is a dollar not spent on the airport itself, and you prefer the site near the capital.`,
		},
		{
			id: "bank", name: "international development bank", threshold: 60,
			points: [][]int32{{0, 9, 13}, {10, 26, 40, 10}, {0, 15, 20, 25}, {0, 9, 11, 13, 15}, {7, 0, 4}},
			briefing: `You represent the development bank that would lend the money. Your mandate is
sustainable development: the loan must be large enough to be worthwhile but not so large that
the island cannot repay it, and the project must take its environmental and social effects
seriously. You prefer predictable profit shares.`,
		},
		{
			id: "ngo", name: "environmental NGO", threshold: 60,
			points: [][]int32{{0, 20, 25}, {11, 9, 5, 0}, {0, 10, 29, 40}, {0, 9, 11, 13, 15}, {2, 5, 9}},
			briefing: `You speak for an environmental group. Strong measures against environmental harm
are what you care about most, followed by a site away from the reefs. The smaller the airport,
the better for the island's nature; you also want the effects on local people properly studied.`,
		},
		{
			id: "builder", name: "construction company", threshold: 57,
			points: [][]int32{{15, 22, 5}, {10, 15, 29, 40}, {6, 10, 2, 0}, {0, 6, 4, 2, 0}, {0, 22, 15}},
			briefing: `You represent the construction company that would build the airport. A bigger
budget means a bigger contract, and profit shares that reward contribution suit you. You favour
the inland site, where building is easiest, and you would keep costly extra studies and measures
modest.`,
		},
		{
			id: "community", name: "indigenous community", threshold: 47,
			points: [][]int32{{0, 45, 25}, {10, 8, 2, 0}, {0, 5, 15, 9}, {0, 15, 20, 25, 30}, {0, 0, 0}},
			briefing: `You speak for the island's indigenous community. Above all you want the airport
kept away from your ancestral land on the coast. You want the project's effects on your people
studied and compensated as thoroughly as possible, and a smaller airport would disturb less.`,
		},
		{
			id: "tourism", name: "local tourism association", threshold: 57,
			points: [][]int32{{30, 0, 25}, {10, 20, 25, 30}, {0, 14, 7, 0}, {0, 9, 5, 2, 0}, {10, 5, 17}},
			briefing: `You represent the island's tourism businesses. You want the airport where
visitors want to land, near the capital or on the new island, and large enough to bring them in
numbers. Some care for the environment keeps the island attractive, but heavy studies would only
delay the project.`,
		},
	},
}
