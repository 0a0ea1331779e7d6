// Package tables turns finished matches (metrics.Row) into the tables of a tournament: per
// ordered pair of agents (a row-vs-column table like the published heat maps: P2's agent on
// rows, P1's on columns), per agent, per outcome, per game family (buyer/seller, coalition)
// and per language model. The functions are pure: the tournament command, `parley report` and
// the analytics service all call them on rows they read.
//
// Conventions:
//   - A void match is counted and listed (Game.Void) but left out of every rate and mean.
//   - A match is decisive when one seat's payoff is strictly larger than every other's; that
//     seat wins. Otherwise it is a tie. Win rates are over decisive matches only.
//   - Per-agent tables leave out self-play (an agent in more than one seat of a match), which
//     says nothing about the agent against others; the pair table keeps it on its diagonal.
//   - Family tables use values the game's metrics family computed, by name (see names.go).
//     When no row carries them, the table is nil; nothing is recomputed here.
package tables

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/bargaining"
)

// DefaultBadCounterNull is the probability the bad-counter-offer test takes as its null
// hypothesis: the published rate of the default buyer (0.11; specs/negotiationarena.md).
const DefaultBadCounterNull = 0.11

// Options tune Build. The zero value is ready to use.
type Options struct {
	// Agent names the agent in a seat of a row. Nil: the agent's own name and version
	// (metrics.SeatResult.AgentKey). A tournament passes its entrants' labels, so that two
	// variants of one program stay apart.
	Agent func(r metrics.Row, seat int) string
	// Seat picks, per game, the seat whose win rate and payoff fill the pair table. Nil:
	// DefaultSeat.
	Seat func(game string) int32
	// BadCounterNull is the null probability of the one-sided binomial test of
	// P(p2 > p1). Zero: DefaultBadCounterNull.
	BadCounterNull float64
}

// DefaultSeat is the seat the published heat maps show: P1 in the ultimatum, P2 (the buyer)
// in buyer/seller, P2 in resource exchange; seat 0 elsewhere.
func DefaultSeat(game string) int32 {
	switch game {
	case "buysell", "trading":
		return 1
	default:
		return 0
	}
}

func (o Options) agent(r metrics.Row, seat int) string {
	if o.Agent != nil {
		return o.Agent(r, seat)
	}
	return r.Seats[seat].AgentKey()
}

// Game holds every table of one game.
type Game struct {
	// Game is the game's name.
	Game string
	// Seats are the seats' names, in seat order.
	Seats []string
	// Matches counts every match, void ones included.
	Matches int
	// Void lists the void matches' ids, sorted: recorded, left out of every rate.
	Void []string
	// Agents are the agents that played, sorted.
	Agents []string
	// Pairs is the ordered-pair table; nil unless the game has two seats.
	Pairs *Pairs
	// AgentStats has one entry per agent, in the order of Agents.
	AgentStats []AgentStats
	// Outcomes sums up how the matches ended.
	Outcomes Outcomes
	// BuySell holds the buyer/seller analyses; nil when no row has their values.
	BuySell *BuySell
	// Coalition holds the coalition analyses; nil when no row has their values.
	Coalition *Coalition
	// Usage is the language-model usage per model, void matches included (they cost too).
	Usage []ModelUsage
}

// Pairs is the ordered-pair table of a two-player game: Rows are the agents in seat 1 (P2),
// Cols the agents in seat 0 (P1), as in the published heat maps.
type Pairs struct {
	// Seat is the seat whose wins the cells' WinRate counts, SeatName its name.
	Seat     int32
	SeatName string
	// Rows and Cols are agent names.
	Rows, Cols []string
	// Cells[r][c] is the pair with Rows[r] in seat 1 and Cols[c] in seat 0.
	Cells [][]PairCell
}

// PairCell is one ordered pair's results.
type PairCell struct {
	// Matches counts the pair's non-void matches, Void its void ones.
	Matches, Void int
	// Decisive counts the non-void matches with a winner; Wins those the chosen seat won.
	Decisive, Wins int
	// WinRate is the chosen seat's win rate over decisive matches.
	WinRate Mean
	// Payoff[s] is seat s's mean payoff over non-void matches.
	Payoff []Mean
	// Agreement is the agreement rate over non-void matches.
	Agreement Mean
}

// AgentStats is one agent's results over its non-void matches against other agents.
type AgentStats struct {
	Agent string
	// Matches counts non-void matches (self-play excluded); Void the void ones it sat in.
	Matches, Void int
	// Decisive counts decisive matches; Wins those it won.
	Decisive, Wins int
	// WinRate is over decisive matches.
	WinRate Mean
	// Payoff is its mean payoff.
	Payoff Mean
	// Agreement is the share of its matches that ended in a deal.
	Agreement Mean
	// TurnsToAgreement is the mean turn of agreement (bargaining.ValueTurnsToAgreement, or the
	// turn of the last action when the family gives none) over its matches that ended in a deal.
	TurnsToAgreement Mean
	// OpeningBySeat[s] is the mean of its first proposal in seat s, in the game's unit
	// (bargaining.ValueOpeningProposal), when the game's metrics give it.
	OpeningBySeat []Mean
	// Refused counts its refused actions; RefusedPerMatch is their mean per match.
	Refused         int
	RefusedPerMatch Mean
	// Faulted counts matches in which its agent faulted.
	Faulted int
	// BySeat[s] is its mean payoff in seat s.
	BySeat []Mean
}

// Outcomes sums up how a game's matches ended.
type Outcomes struct {
	// NonVoid counts the matches that count.
	NonVoid int
	// Ties counts non-void matches without a winner; NoDeal those without an agreement.
	Ties, NoDeal int
	// TieRate and NoDealRate are over non-void matches.
	TieRate, NoDealRate Mean
	// Causes counts every match (void included) by end cause, sorted by cause.
	Causes []CauseCount
}

// CauseCount is how many matches ended for one cause.
type CauseCount struct {
	Cause matchv1.EndCause
	N     int
}

// Build computes the tables of every game in rows, sorted by game name.
func Build(rows []metrics.Row, opts Options) []*Game {
	byGame := map[string][]metrics.Row{}
	for _, r := range rows {
		byGame[r.Game] = append(byGame[r.Game], r)
	}
	names := make([]string, 0, len(byGame))
	for g := range byGame {
		names = append(names, g)
	}
	sort.Strings(names)
	out := make([]*Game, 0, len(names))
	for _, g := range names {
		out = append(out, BuildGame(byGame[g], opts))
	}
	return out
}

// BuildGame computes the tables of rows, which must all be of one game.
func BuildGame(rows []metrics.Row, opts Options) *Game {
	g := &Game{Matches: len(rows)}
	if len(rows) > 0 {
		g.Game = rows[0].Game
	}
	agents := map[string]bool{}
	nSeats := 0
	for _, r := range rows {
		if len(r.Seats) > nSeats {
			nSeats = len(r.Seats)
			g.Seats = g.Seats[:0]
			for _, s := range r.Seats {
				g.Seats = append(g.Seats, s.Name)
			}
		}
		for i := range r.Seats {
			agents[opts.agent(r, i)] = true
		}
		if r.Void() {
			g.Void = append(g.Void, r.MatchID)
		}
	}
	sort.Strings(g.Void)
	for a := range agents {
		g.Agents = append(g.Agents, a)
	}
	sort.Strings(g.Agents)
	g.Outcomes = outcomes(rows)
	g.AgentStats = agentStats(rows, g.Agents, nSeats, opts)
	if nSeats == 2 {
		seat := DefaultSeat(g.Game)
		if opts.Seat != nil {
			seat = opts.Seat(g.Game)
		}
		g.Pairs = pairs(rows, seat, g.Seats, opts)
	}
	g.BuySell = buySell(rows, opts)
	g.Coalition = coalitionTable(rows, g.Seats, opts)
	g.Usage = usage(rows)
	return g
}

// Winner returns the seat with the strictly largest payoff, or -1 for a tie (or a void match).
func Winner(r metrics.Row) int {
	if r.Void() || len(r.Seats) == 0 {
		return -1
	}
	best, n := math.Inf(-1), 0
	win := -1
	for i, s := range r.Seats {
		switch {
		case s.Payoff > best:
			best, n, win = s.Payoff, 1, i
		case s.Payoff == best:
			n++
		}
	}
	if n != 1 {
		return -1
	}
	return win
}

func outcomes(rows []metrics.Row) Outcomes {
	var o Outcomes
	causes := map[matchv1.EndCause]int{}
	for _, r := range rows {
		causes[r.Cause]++
		if r.Void() {
			continue
		}
		o.NonVoid++
		tie := Winner(r) < 0
		o.TieRate.Add(b2f(tie))
		o.NoDealRate.Add(b2f(!r.Agreement))
		if tie {
			o.Ties++
		}
		if !r.Agreement {
			o.NoDeal++
		}
	}
	for c, n := range causes {
		o.Causes = append(o.Causes, CauseCount{Cause: c, N: n})
	}
	sort.Slice(o.Causes, func(i, j int) bool { return o.Causes[i].Cause < o.Causes[j].Cause })
	return o
}

// selfPlay reports whether one agent holds several seats of r.
func selfPlay(r metrics.Row, opts Options) bool {
	seen := map[string]bool{}
	for i := range r.Seats {
		a := opts.agent(r, i)
		if seen[a] {
			return true
		}
		seen[a] = true
	}
	return false
}

func agentStats(rows []metrics.Row, agents []string, nSeats int, opts Options) []AgentStats {
	idx := map[string]int{}
	out := make([]AgentStats, len(agents))
	for i, a := range agents {
		idx[a] = i
		out[i] = AgentStats{Agent: a, BySeat: make([]Mean, nSeats), OpeningBySeat: make([]Mean, nSeats)}
	}
	for _, r := range rows {
		if selfPlay(r, opts) {
			continue
		}
		win := Winner(r)
		for seat := range r.Seats {
			st := &out[idx[opts.agent(r, seat)]]
			if r.Void() {
				st.Void++
				continue
			}
			st.Matches++
			if win >= 0 {
				st.Decisive++
				if win == seat {
					st.Wins++
				}
				st.WinRate.Add(b2f(win == seat))
			}
			st.Payoff.Add(r.Seats[seat].Payoff)
			st.BySeat[seat].Add(r.Seats[seat].Payoff)
			st.Agreement.Add(b2f(r.Agreement))
			if r.Agreement {
				turns, ok := r.Value(bargaining.ValueTurnsToAgreement, metrics.WholeMatch)
				if !ok {
					turns = float64(r.Turns)
				}
				st.TurnsToAgreement.Add(turns)
			}
			if v, ok := r.Value(bargaining.ValueOpeningProposal, int32(seat)); ok {
				st.OpeningBySeat[seat].Add(v)
			}
			if v, ok := r.Value(metrics.ValueRefused, int32(seat)); ok {
				st.Refused += int(v)
				st.RefusedPerMatch.Add(v)
			}
			if r.Seats[seat].Faulted {
				st.Faulted++
			}
		}
	}
	return out
}

func pairs(rows []metrics.Row, seat int32, seatNames []string, opts Options) *Pairs {
	p := &Pairs{Seat: seat}
	if int(seat) < len(seatNames) {
		p.SeatName = seatNames[seat]
	}
	rowSet, colSet := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		if len(r.Seats) != 2 {
			continue
		}
		colSet[opts.agent(r, 0)] = true
		rowSet[opts.agent(r, 1)] = true
	}
	p.Rows, p.Cols = sortedKeys(rowSet), sortedKeys(colSet)
	p.Cells = make([][]PairCell, len(p.Rows))
	for i := range p.Cells {
		p.Cells[i] = make([]PairCell, len(p.Cols))
		for j := range p.Cells[i] {
			p.Cells[i][j].Payoff = make([]Mean, 2)
		}
	}
	for _, r := range rows {
		if len(r.Seats) != 2 {
			continue
		}
		c := &p.Cells[slices.Index(p.Rows, opts.agent(r, 1))][slices.Index(p.Cols, opts.agent(r, 0))]
		if r.Void() {
			c.Void++
			continue
		}
		c.Matches++
		c.Agreement.Add(b2f(r.Agreement))
		for s := range 2 {
			c.Payoff[s].Add(r.Seats[s].Payoff)
		}
		if w := Winner(r); w >= 0 {
			c.Decisive++
			if w == int(seat) {
				c.Wins++
			}
			c.WinRate.Add(b2f(w == int(seat)))
		}
	}
	return p
}

// Cell returns the cell with agent row in seat 1 and col in seat 0, if both played there.
func (p *Pairs) Cell(row, col string) (PairCell, bool) {
	i, j := slices.Index(p.Rows, row), slices.Index(p.Cols, col)
	if i < 0 || j < 0 {
		return PairCell{}, false
	}
	return p.Cells[i][j], true
}

// ModelUsage is one language model's usage, summed over every seat that reported it.
type ModelUsage struct {
	Model string
	// Seats counts (match, seat) pairs that reported usage with this model.
	Seats                          int
	PromptTokens, CompletionTokens int64
	Calls, Retries, FormatFailures int
	// FormatFailureRate is FormatFailures over Calls (unset without calls).
	FormatFailureRate Mean
	// Fallbacks counts fallback actions, BudgetFallbacks those played because a budget was
	// spent; tables can show them or leave out the matches that had any.
	Fallbacks, BudgetFallbacks int
	// CachedTokens are tokens of cached replies (at what they cost when made); Cost is in
	// millionths of a dollar, by the agents' price tables.
	CachedTokens, CostMicrodollars int64
}

func usage(rows []metrics.Row) []ModelUsage {
	by := map[string]*ModelUsage{}
	for _, r := range rows {
		for _, su := range r.Usage {
			u := su.GetTotal()
			m := u.GetModel()
			if m == "" {
				m = "(unnamed)"
			}
			mu := by[m]
			if mu == nil {
				mu = &ModelUsage{Model: m}
				by[m] = mu
			}
			mu.Seats++
			mu.PromptTokens += u.GetPromptTokens()
			mu.CompletionTokens += u.GetCompletionTokens()
			mu.Calls += int(u.GetCalls())
			mu.Retries += int(u.GetRetries())
			mu.FormatFailures += int(u.GetFormatFailures())
			fallbacks := int(u.GetFallbacks())
			if fallbacks == 0 && u.GetFallback() {
				fallbacks = 1
			}
			mu.Fallbacks += fallbacks
			mu.BudgetFallbacks += int(u.GetBudgetFallbacks())
			mu.CachedTokens += u.GetCachedTokens()
			mu.CostMicrodollars += u.GetCostMicrodollars()
		}
	}
	out := make([]ModelUsage, 0, len(by))
	for _, mu := range by {
		if mu.Calls > 0 {
			mu.FormatFailureRate = Mean{Sum: float64(mu.FormatFailures), N: mu.Calls}
		}
		out = append(out, *mu)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Model < out[j].Model })
	return out
}

// MetaGame is a tournament's payoff table as a symmetric two-player game between agent
// variants: each player picks an agent to send; Payoffs[i][j] are the mean payoffs of agent i
// (picked by the row player) and agent j (picked by the column player) when they meet, each
// seat order weighted equally. On the diagonal both get the self-play mean over both seats.
type MetaGame struct {
	Game    string
	Agents  []string
	Payoffs [][][2]float64
}

// ErrIncomplete is wrapped by MetaGameOf when a pairing was never played.
var ErrIncomplete = errors.New("tables: payoff table incomplete")

// MetaGameOf builds the meta-game of a two-player game's tables. Every ordered pair of agents,
// self-play included, must have non-void matches.
func MetaGameOf(g *Game) (*MetaGame, error) {
	if g.Pairs == nil {
		return nil, fmt.Errorf("%w: %s is not a two-player game", ErrIncomplete, g.Game)
	}
	m := &MetaGame{Game: g.Game, Agents: g.Agents}
	mean := func(row, col string, seat int) (float64, error) {
		// An agent may never have sat in one of the seats (a scripted first player, a
		// persona that only plays P2): its cells are missing, not a panic.
		c, ok := g.Pairs.Cell(row, col)
		var v float64
		if ok && seat < len(c.Payoff) {
			v, ok = c.Payoff[seat].Value()
		}
		if !ok || seat >= len(c.Payoff) {
			return 0, fmt.Errorf("no match with %s as %s and %s as %s", col, seatName(g, 0), row, seatName(g, 1))
		}
		return v, nil
	}
	var missing []string
	for _, a := range m.Agents {
		var line [][2]float64
		for _, b := range m.Agents {
			// a as P1 against b as P2: cell (row b, col a); a as P2 against b as P1: cell (row a, col b).
			aP1, e1 := mean(b, a, 0)
			bP2, e2 := mean(b, a, 1)
			aP2, e3 := mean(a, b, 1)
			bP1, e4 := mean(a, b, 0)
			if err := firstErr(e1, e2, e3, e4); err != nil {
				missing = append(missing, err.Error())
				line = append(line, [2]float64{})
				continue
			}
			line = append(line, [2]float64{(aP1 + aP2) / 2, (bP1 + bP2) / 2})
		}
		m.Payoffs = append(m.Payoffs, line)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("%w: %s", ErrIncomplete, strings.Join(slices.Compact(missing), "; "))
	}
	return m, nil
}

func seatName(g *Game, s int) string {
	if s < len(g.Seats) {
		return g.Seats[s]
	}
	return fmt.Sprintf("seat %d", s)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
