package tables

import (
	"sort"
	"strings"

	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/bargaining"
	"github.com/parley-arena/parley/services/analytics/metrics/coalition"
)

// Values of the game families these tables read (the families define them):
//
//   - bargaining: turns_to_agreement, opening_proposal (per seat), and for buyer/seller
//     price_1, price_2, ..., first_price, final_price, bad_counter_offer;
//   - coalition: winning_coalition (a bit set of seats), coalition_member (per seat),
//     core_distance, in_core, shapley_l1, shapley_l2.

// BuySell holds the buyer/seller analyses of specs/negotiationarena.md.
type BuySell struct {
	// Anchoring is Spearman's correlation of the first price with the final (sale) price,
	// over matches with a sale.
	Anchoring Correlation
	// SplitDifference is the Pearson correlation of each price from the third on with the
	// mean of the two prices before it, pooled over matches.
	SplitDifference Correlation
	// FinalPrice is the mean sale price.
	FinalPrice Mean
	// BadCounter is P(p2 > p1), the buyer's first counter above the seller's opening, over
	// every match with two prices, with its one-sided binomial test.
	BadCounter BinomialTest
	// BadCounterByBuyer is the same per agent in the buyer's seat (seat 1), sorted by agent.
	BadCounterByBuyer []AgentBinomial
}

// BinomialTest is a rate of K successes in N trials and the p-value of the one-sided test of
// H0 "the probability is Null" against "it is larger" (BinomialTail).
type BinomialTest struct {
	K, N   int
	Null   float64
	PValue float64
}

// Rate returns K/N, and false when N is 0.
func (b BinomialTest) Rate() (float64, bool) {
	if b.N == 0 {
		return 0, false
	}
	return float64(b.K) / float64(b.N), true
}

// AgentBinomial is one agent's BinomialTest.
type AgentBinomial struct {
	Agent string
	BinomialTest
}

func newBinomial(k, n int, null float64) BinomialTest {
	return BinomialTest{K: k, N: n, Null: null, PValue: BinomialTail(k, n, null)}
}

func buySell(rows []metrics.Row, opts Options) *BuySell {
	null := opts.BadCounterNull
	if null == 0 {
		null = DefaultBadCounterNull
	}
	var (
		found        bool
		first, final []float64
		prev2, next  []float64
		k, n         int
		byBuyer      = map[string][2]int{}
		bs           BuySell
	)
	for _, r := range rows {
		if r.Void() {
			continue
		}
		if _, ok := r.Value(bargaining.ValueFirstPrice, metrics.WholeMatch); ok {
			found = true
		}
		p1, ok1 := r.Value(bargaining.ValueFirstPrice, metrics.WholeMatch)
		fp, ok2 := r.Value(bargaining.ValueFinalPrice, metrics.WholeMatch)
		if ok1 && ok2 {
			first = append(first, p1)
			final = append(final, fp)
		}
		if ok2 {
			bs.FinalPrice.Add(fp)
		}
		var prices []float64
		for i := 1; ; i++ {
			p, ok := r.Value(bargaining.PriceName(i), metrics.WholeMatch)
			if !ok {
				break
			}
			prices = append(prices, p)
		}
		for i := 2; i < len(prices); i++ {
			prev2 = append(prev2, (prices[i-1]+prices[i-2])/2)
			next = append(next, prices[i])
		}
		if bad, ok := r.Value(bargaining.ValueBadCounterOffer, metrics.WholeMatch); ok {
			found = true
			n++
			c := byBuyer[opts.agent(r, 1)]
			c[1]++
			if bad > 0 {
				k++
				c[0]++
			}
			byBuyer[opts.agent(r, 1)] = c
		}
	}
	if !found {
		return nil
	}
	bs.Anchoring = Correlation{R: Spearman(first, final), N: len(first)}
	bs.SplitDifference = Correlation{R: Pearson(prev2, next), N: len(next)}
	bs.BadCounter = newBinomial(k, n, null)
	for a, c := range byBuyer {
		bs.BadCounterByBuyer = append(bs.BadCounterByBuyer, AgentBinomial{Agent: a, BinomialTest: newBinomial(c[0], c[1], null)})
	}
	sort.Slice(bs.BadCounterByBuyer, func(i, j int) bool { return bs.BadCounterByBuyer[i].Agent < bs.BadCounterByBuyer[j].Agent })
	return &bs
}

// Coalition holds the coalition game's analyses of specs/coalition.md.
type Coalition struct {
	// Winning counts how often each coalition won, most frequent first; "none" is no
	// agreement.
	Winning []CoalitionCount
	// PayoffBySeat[s] is seat s's mean payoff.
	PayoffBySeat []Mean
	// MemberRate is, per agent (sorted), how often it ended in the winning coalition.
	MemberRate []AgentMean
	// CoreDistance is the mean Euclidean distance of the split from the core; InCore the
	// share of splits in the core.
	CoreDistance, InCore Mean
	// ShapleyL1 and ShapleyL2 are the mean L1 and Euclidean distances from the Shapley value.
	ShapleyL1, ShapleyL2 Mean
}

// CoalitionCount is how often one coalition won.
type CoalitionCount struct {
	// Members are the seats' names joined with "+", or "none".
	Members string
	N       int
	Share   float64
}

// AgentMean is one agent's mean of some value.
type AgentMean struct {
	Agent string
	Mean
}

func coalitionTable(rows []metrics.Row, seatNames []string, opts Options) *Coalition {
	var (
		c      Coalition
		found  bool
		counts = map[string]int{}
		total  int
		member = map[string]*Mean{}
	)
	c.PayoffBySeat = make([]Mean, len(seatNames))
	for _, r := range rows {
		if r.Void() {
			continue
		}
		set, ok := r.Value(coalition.ValueWinningCoalition, metrics.WholeMatch)
		if !ok {
			continue
		}
		found = true
		total++
		counts[coalitionName(uint64(set), r)]++
		for i, s := range r.Seats {
			if i < len(c.PayoffBySeat) {
				c.PayoffBySeat[i].Add(s.Payoff)
			}
			if v, ok := r.Value(coalition.ValueCoalitionMember, int32(i)); ok {
				a := opts.agent(r, i)
				if member[a] == nil {
					member[a] = &Mean{}
				}
				member[a].Add(v)
			}
		}
		addValue(&c.CoreDistance, r, coalition.ValueCoreDistance)
		addValue(&c.InCore, r, coalition.ValueInCore)
		addValue(&c.ShapleyL1, r, coalition.ValueShapleyL1)
		addValue(&c.ShapleyL2, r, coalition.ValueShapleyL2)
	}
	if !found {
		return nil
	}
	for m, n := range counts {
		c.Winning = append(c.Winning, CoalitionCount{Members: m, N: n, Share: float64(n) / float64(total)})
	}
	sort.Slice(c.Winning, func(i, j int) bool {
		if c.Winning[i].N != c.Winning[j].N {
			return c.Winning[i].N > c.Winning[j].N
		}
		return c.Winning[i].Members < c.Winning[j].Members
	})
	for a, m := range member {
		c.MemberRate = append(c.MemberRate, AgentMean{Agent: a, Mean: *m})
	}
	sort.Slice(c.MemberRate, func(i, j int) bool { return c.MemberRate[i].Agent < c.MemberRate[j].Agent })
	return &c
}

// coalitionName names a bit set of seats with the seats of r: "A+B", or "none".
func coalitionName(set uint64, r metrics.Row) string {
	var names []string
	for i, s := range r.Seats {
		if set&(1<<uint(i)) != 0 {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "+")
}

func addValue(m *Mean, r metrics.Row, name string) {
	if v, ok := r.Value(name, metrics.WholeMatch); ok {
		m.Add(v)
	}
}
