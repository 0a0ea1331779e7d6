// Package dealornodeal computes Deal or No Deal's metrics (specs/deal-or-no-deal.md) from a
// match record, and the same metrics for the human dialogues of the corpus ("Human") and for
// the Best allocation ("Best"), so that the three rows of a results table use one definition.
//
// Values of a match (rates are 0 or 1 per match, so their mean over matches is the rate; a
// match without agreement counts 0 for both scores and as neither PO nor EF):
//
//   - rounds: turns played divided by 2, rounded up (the seed's unit);
//   - po, ef: 1 when the deal made is Pareto-optimal, envy-free;
//   - total: the sum of both scores;
//   - has_ef: 1 when the set-up has an envy-free allocation at all (the seed leaves out
//     set-ups without one); best_total and best_score (per seat): the Best allocation's total
//     and scores (the first Best in enumeration order), present only with has_ef;
//   - distance: the L1 distance between the value vectors (difficulty is its negative);
//   - per seat whose agent wrote its belief support in its private notes or reasoning (the
//     bayes agent; solution.SupportPrefix), the estimation of the opponent's values from the
//     support V of its last action that wrote one: est_precision (the true vector is in V), est_recall (1/|V| then, else 0),
//     est_reduction (1 - |V| / prior size), est_ind_precision and est_ind_recall (the same two
//     against the indistinguishable set; vectors without any EF allocation count as inside, see
//     solution.Estimation), est_support (|V|).
//
// The common values of every game are metrics.NewRow's: agreement, turns (the turn of the
// last action, i.e. the turns played) and payoff per seat (the score).
package dealornodeal

import (
	"fmt"
	"math"
	"strings"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/dealornodeal/corpus"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Names of the values this package writes, besides NewRow's agreement, turns and payoff.
const (
	ValueRounds       = "rounds"
	ValuePO           = "po"
	ValueEF           = "ef"
	ValueTotal        = "total"
	ValueHasEF        = "has_ef"
	ValueBestTotal    = "best_total"
	ValueBestScore    = "best_score"
	ValueDistance     = "distance"
	ValueEstPrecision = "est_precision"
	ValueEstRecall    = "est_recall"
	ValueEstReduction = "est_reduction"
	ValueEstIndPrec   = "est_ind_precision"
	ValueEstIndRecall = "est_ind_recall"
	ValueEstSupport   = "est_support"
	valueAgreement    = metrics.ValueAgreement
	valueTurns        = metrics.ValueTurns
	valuePayoff       = metrics.ValuePayoff
)

// New returns the family.
func New() Family { return Family{} }

// Family computes Deal or No Deal's metrics.
type Family struct{}

var _ metrics.Family = Family{}

// Games lists Deal or No Deal.
func (Family) Games() []string { return []string{dealornodeal.Name} }

// Texts says the family reads private text (the support line of the notes or reasoning).
func (Family) Texts() metrics.Texts { return metrics.PrivateTexts }

// Match computes one match's values.
func (Family) Match(events []*eventsv1.MatchEvent) ([]metrics.Value, error) {
	started, ended, err := metrics.Finished(events)
	if err != nil {
		return nil, err
	}
	items, g, err := dealornodeal.Setup(started.GetParams())
	if err != nil {
		return nil, fmt.Errorf("metrics/dealornodeal: %w", err)
	}
	var turns int32
	var deal solution.Alloc
	var standing solution.Alloc
	standingTurn := int32(-1)
	notes := [2]string{}
	for _, ev := range events {
		a := ev.GetActionTaken()
		if a == nil {
			continue
		}
		turns = ev.GetTurn()
		if s := a.GetSeat(); s == 0 || s == 1 {
			// The support line, from the notes or else the reasoning of the seat's last action
			// that has one.
			for _, text := range []string{a.GetAction().GetPrivateNotes(), a.GetAction().GetPrivateReasoning()} {
				if strings.Contains(text, solution.SupportPrefix) {
					notes[s] = text
					break
				}
			}
		}
		move := a.GetAction().GetMove()
		switch {
		case move.GetPropose() != nil:
			d, err := dealornodeal.Division(items, g.Counts, move.GetPropose().GetProposal().GetAllocation())
			if err != nil {
				return nil, fmt.Errorf("metrics/dealornodeal: turn %d: %w", ev.GetTurn(), err)
			}
			standing, standingTurn = d, ev.GetTurn()
		case move.GetAccept() != nil && standingTurn == ev.GetTurn()-1:
			deal = standing
		}
	}
	if ended.GetOutcome().GetAgreement() && deal == nil {
		return nil, fmt.Errorf("metrics/dealornodeal: the match ended in agreement but the record shows no accepted proposal")
	}
	out := []metrics.Value{{Name: ValueRounds, Seat: metrics.WholeMatch, Value: float64((turns + 1) / 2)}}
	out = append(out, dealValues(g, deal)...)
	out = append(out, reference(g)...)
	for seat, n := range notes {
		support, ok, err := solution.ParseSupport(n)
		if err != nil {
			return nil, fmt.Errorf("metrics/dealornodeal: seat %d's notes: %w", seat, err)
		}
		if !ok {
			continue
		}
		e := solution.Estimation(g, seat, support)
		s := int32(seat)
		out = append(out,
			metrics.Value{Name: ValueEstPrecision, Seat: s, Value: e.Precision},
			metrics.Value{Name: ValueEstRecall, Seat: s, Value: e.Recall},
			metrics.Value{Name: ValueEstReduction, Seat: s, Value: e.Reduction},
			metrics.Value{Name: ValueEstIndPrec, Seat: s, Value: e.IndPrecision},
			metrics.Value{Name: ValueEstIndRecall, Seat: s, Value: e.IndRecall},
			metrics.Value{Name: ValueEstSupport, Seat: s, Value: float64(e.SupportSize)},
		)
	}
	return out, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// dealValues are po, ef and total of a deal (nil: none).
func dealValues(g solution.Game, deal solution.Alloc) []metrics.Value {
	if deal == nil {
		return []metrics.Value{
			{Name: ValuePO, Seat: metrics.WholeMatch}, {Name: ValueEF, Seat: metrics.WholeMatch}, {Name: ValueTotal, Seat: metrics.WholeMatch},
		}
	}
	p := g.Payoffs(deal)
	return []metrics.Value{
		{Name: ValuePO, Seat: metrics.WholeMatch, Value: b2f(g.ParetoOptimal(deal))},
		{Name: ValueEF, Seat: metrics.WholeMatch, Value: b2f(g.EnvyFree(deal))},
		{Name: ValueTotal, Seat: metrics.WholeMatch, Value: float64(p[0] + p[1])},
	}
}

// reference are the set-up's has_ef, best_total, best_score and distance.
func reference(g solution.Game) []metrics.Value {
	best := g.Best()
	out := []metrics.Value{
		{Name: ValueHasEF, Seat: metrics.WholeMatch, Value: b2f(len(best) > 0)},
		{Name: ValueDistance, Seat: metrics.WholeMatch, Value: float64(g.Distance())},
	}
	if len(best) > 0 {
		p := g.Payoffs(best[0])
		out = append(out,
			metrics.Value{Name: ValueBestTotal, Seat: metrics.WholeMatch, Value: float64(p[0] + p[1])},
			metrics.Value{Name: ValueBestScore, Seat: 0, Value: float64(p[0])},
			metrics.Value{Name: ValueBestScore, Seat: 1, Value: float64(p[1])})
	}
	return out
}

// HumanValues are the values of a corpus datapoint's human dialogue, with the same names a
// match's row has: agreement, turns (the dialogue's messages), payoff per seat (the scores),
// rounds, po, ef, total and the reference values. A dialogue without a deal scores 0 for both.
func HumanValues(dp corpus.Datapoint) []metrics.Value {
	var deal solution.Alloc
	if dp.Outcome == corpus.OutcomeDeal {
		deal = dp.Deal
	}
	var pay [2]int
	if deal != nil {
		pay = dp.Game.Payoffs(deal)
	}
	out := []metrics.Value{
		{Name: valueAgreement, Seat: metrics.WholeMatch, Value: b2f(deal != nil)},
		{Name: valueTurns, Seat: metrics.WholeMatch, Value: float64(dp.Messages)},
		{Name: ValueRounds, Seat: metrics.WholeMatch, Value: float64((dp.Messages + 1) / 2)},
		{Name: valuePayoff, Seat: 0, Value: float64(pay[0])},
		{Name: valuePayoff, Seat: 1, Value: float64(pay[1])},
	}
	out = append(out, dealValues(dp.Game, deal)...)
	return append(out, reference(dp.Game)...)
}

// BestValues are the values of playing the Best allocation (the first in enumeration order):
// agreement 1, its scores, po and ef 1, its total; no turns. False when the set-up has no
// envy-free allocation, hence no Best.
func BestValues(g solution.Game) ([]metrics.Value, bool) {
	best := g.Best()
	if len(best) == 0 {
		return nil, false
	}
	p := g.Payoffs(best[0])
	out := []metrics.Value{
		{Name: valueAgreement, Seat: metrics.WholeMatch, Value: 1},
		{Name: valuePayoff, Seat: 0, Value: float64(p[0])},
		{Name: valuePayoff, Seat: 1, Value: float64(p[1])},
	}
	out = append(out, dealValues(g, best[0])...)
	return append(out, reference(g)...), true
}

// Summary is one row of the spec's results table: means over a set of matches (or human
// dialogues, or Best allocations). A mean over no values is NaN (e.g. turns for Best).
type Summary struct {
	// N is the number of matches.
	N int
	// Turns and Rounds are the mean turns played and rounds.
	Turns, Rounds float64
	// Agreement, PO and EF are rates; Score is each seat's mean score; Total the mean total.
	Agreement, PO, EF, Total float64
	Score                    [2]float64
	// Estimation means per seat, over the matches where the seat recorded a belief; NaN when
	// it never did. Indexed like Score.
	Precision, Recall, Reduction, IndPrecision, IndRecall, Support [2]float64
}

// Summarize averages the values of each match (a match's Values, as metrics.NewRow gives
// them, or HumanValues, or BestValues).
func Summarize(matches [][]metrics.Value) Summary {
	type acc struct {
		sum float64
		n   int
	}
	sums := map[string]map[int32]*acc{}
	for _, vals := range matches {
		for _, v := range vals {
			if sums[v.Name] == nil {
				sums[v.Name] = map[int32]*acc{}
			}
			a := sums[v.Name][v.Seat]
			if a == nil {
				a = &acc{}
				sums[v.Name][v.Seat] = a
			}
			a.sum += v.Value
			a.n++
		}
	}
	mean := func(name string, seat int32) float64 {
		a := sums[name][seat]
		if a == nil || a.n == 0 {
			return math.NaN()
		}
		return a.sum / float64(a.n)
	}
	s := Summary{
		N:         len(matches),
		Turns:     mean(valueTurns, metrics.WholeMatch),
		Rounds:    mean(ValueRounds, metrics.WholeMatch),
		Agreement: mean(valueAgreement, metrics.WholeMatch),
		PO:        mean(ValuePO, metrics.WholeMatch),
		EF:        mean(ValueEF, metrics.WholeMatch),
		Total:     mean(ValueTotal, metrics.WholeMatch),
	}
	for seat := range int32(2) {
		s.Score[seat] = mean(valuePayoff, seat)
		s.Precision[seat] = mean(ValueEstPrecision, seat)
		s.Recall[seat] = mean(ValueEstRecall, seat)
		s.Reduction[seat] = mean(ValueEstReduction, seat)
		s.IndPrecision[seat] = mean(ValueEstIndPrec, seat)
		s.IndRecall[seat] = mean(ValueEstIndRecall, seat)
		s.Support[seat] = mean(ValueEstSupport, seat)
	}
	return s
}
