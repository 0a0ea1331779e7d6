// Package deliberation holds the built-in agents of the deliberation games: cooperative, greedy
// and adversarial parties that play any seat from the observation's view alone (their own score
// sheet and minimum, the public issues and every public statement). They make matches meaningful
// without a language model.
//
// Every strategy reads the deals other parties attach as evidence of what those parties want.
// A deal j attached while p1's deal D was on the table shows the options j asked for: on the
// issues where it departs from D, j insists (those issues weigh 4 times the others). The
// estimated liking of j for a deal is the largest weighted share of issues on which the deal
// agrees with one of j's deals (1 for a deal j tabled itself), and j is believed to say yes
// when that liking reaches Belief (0.8 by default); a party that has tabled no deal yet is
// believed to say yes. The opening deal is fixed by the rules and says nothing about p1. A deal
// is believed to pass when the believed yes-votes, the agent's own (computed exactly from its
// own sheet) included, reach the quorum with every veto holder among them.
//
//   - cooperative (every seat): any deal at or above its minimum beats no deal, and it looks
//     for a compromise everybody can accept. As p1 it concedes along its own ranking of deals:
//     on each of its turns it only considers deals worth at least an aspiration that falls in
//     a straight line from its best deal to its minimum by three quarters of the talk, and
//     among them tables the deal the others are believed to like best; on the final turn it
//     tables, among the deals at or above its minimum (or within its bonus of it, when every
//     other party is believed to say yes), the one believed to pass, then to win the most
//     yes-votes, then the best-liked, then the best for itself. Any other party attaches the
//     best deal for itself among those it accepts and believes can pass (changing p1's deal on
//     the table no more than it gains by); when it believes none can, the deal it accepts that
//     changes p1's deal the least, best liked by the others.
//   - greedy: pushes for its own maximum and gives way only on the issues it values least (by
//     the spread of its points on them): as the talk goes on it frees them one by one (after a
//     share p of the talk, the p*I least valued of its I issues) and keeps its best option on
//     every other issue; it never goes below the middle of its minimum and its maximum (Floor
//     = 0.5), and among those deals it tables the one the others are believed to like best. As
//     p1 its final deal is the best for itself among those believed to pass, or else the
//     best-liked deal at or above its minimum.
//   - adversarial: wants the match to end without a deal (it counts no deal as worth the
//     view's adversary_no_deal_value, above any deal) and, since votes are computed, its only
//     lever is what it says and attaches. It attaches deals that keep its own score at or above
//     its minimum (in case a deal passes anyway) but that the others are believed to like
//     least; targeted (Target set), the deals its target is believed to like least, and its
//     messages urge the target to hold out. As p1 it tables, as the final deal, the deal at or
//     above its minimum believed to win the fewest yes-votes.
//
// The agents are deterministic (ties go to the deal first in lexical order, A1 before A2) and
// keep no state between calls; their messages never state their points or their minimum.
package deliberation

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	rules "github.com/parley-arena/parley/referee/games/deliberation"
)

// Role is a strategy.
type Role string

// The roles.
const (
	Cooperative Role = "cooperative"
	Greedy      Role = "greedy"
	Adversarial Role = "adversarial"
)

// Roles lists the roles.
func Roles() []Role { return []Role{Cooperative, Greedy, Adversarial} }

// Defaults of Config fields.
const (
	DefaultBelief = 0.8
	DefaultFloor  = 0.5
	// MaxDeals bounds the deals an agent enumerates; games with more are refused.
	MaxDeals = 200_000
)

// Config sets an agent's strategy.
type Config struct {
	// Role is the strategy (default cooperative).
	Role Role
	// Target, for an adversary: the party to isolate, by id, name or role (p1, p2). Empty:
	// untargeted.
	Target string
	// Belief is the estimated liking at which another party is believed to say yes (default
	// 0.6).
	Belief float64
	// Floor, for the greedy role: the least share of the way from its minimum to its maximum it
	// keeps (default 0.5).
	Floor float64
}

// maxTarget bounds the target's length: longer than any party's id or name.
const maxTarget = 128

// Validate checks the settings.
func (c *Config) Validate() error {
	if c.Role == "" {
		c.Role = Cooperative
	}
	if c.Belief == 0 {
		c.Belief = DefaultBelief
	}
	if c.Floor == 0 {
		c.Floor = DefaultFloor
	}
	switch {
	case !slices.Contains(Roles(), c.Role):
		return fmt.Errorf("deliberation agent: role must be cooperative, greedy or adversarial, got %q", c.Role)
	case !(c.Belief > 0 && c.Belief <= 1):
		return fmt.Errorf("deliberation agent: belief must be above 0 and at most 1, got %g", c.Belief)
	case !(c.Floor >= 0 && c.Floor <= 1):
		return fmt.Errorf("deliberation agent: floor must be from 0 to 1, got %g", c.Floor)
	case c.Target != "" && c.Role != Adversarial:
		return fmt.Errorf("deliberation agent: only an adversary takes a target")
	case len(c.Target) > maxTarget:
		return fmt.Errorf("deliberation agent: target is %d bytes; a party's id or name is at most %d", len(c.Target), maxTarget)
	}
	return nil
}

// Agent is a built-in deliberation agent.
type Agent struct{ cfg Config }

// New returns an agent with cfg (zero fields take their defaults).
func New(cfg Config) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Agent{cfg: cfg}, nil
}

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	desc := map[Role]string{
		Cooperative: "Cooperative: any deal at or above its minimum beats no deal; as p1 it concedes along its own ranking of deals toward what the others' attached deals suggest they want, otherwise it attaches the best deal for itself that it believes can pass.",
		Greedy:      "Greedy: pushes for its own maximum and gives way only on the issues it values least, never below the middle of its minimum and maximum; still wants some deal above its minimum.",
		Adversarial: "Adversarial: wants no deal; attaches deals it can live with that the others (or its target) are believed to like least, and as p1 tables a deal believed to fail.",
	}[a.cfg.Role]
	name := string(a.cfg.Role)
	if a.cfg.Target != "" {
		desc += " Targets " + a.cfg.Target + "."
	}
	return &gamev1.AgentInfo{Name: name, Version: "1", Author: "parley", Games: []string{rules.Name}, Description: desc}
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act decides one move.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	v := obs.GetDeliberation()
	if v == nil {
		return nil, fmt.Errorf("deliberation agent: plays only the deliberation games, not %q", obs.GetGame())
	}
	t, err := readTable(obs.GetSeat(), v, a.cfg)
	if err != nil {
		return nil, err
	}
	legal := obs.GetLegalMoves()
	switch {
	case v.GetStage() == deliberationv1.Stage_STAGE_OPENING && slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE):
		return t.opening(), nil
	case slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_SAY):
		return t.talk(), nil
	case slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE):
		return t.final(), nil
	}
	return nil, fmt.Errorf("deliberation agent: no move it knows is legal (legal: %v)", legal)
}

// table is the agent's reading of one observation.
type table struct {
	cfg      Config
	me, n    int
	issues   []*gamev1.Issue
	options  []int   // options per issue
	points   [][]int // own points
	thr      int
	bonus    int // p1's bonus, known to p1 only; 0 otherwise
	quorum   int
	vetoes   []int
	names    []string
	target   int // -1: none
	noDeal   int
	openDeal []int

	deals    [][]int
	own      []int      // own score of each deal
	evidence [][]tabled // evidence[j]: deals j tabled in the talk, oldest first
	latest   []int      // p1's latest deal (the opening deal at first)
	progress float64    // 0 at the first talk turn, 1 on the final turn
}

// tabled is a deal a party attached, and p1's deal on the table when it did (nil for p1's own).
type tabled struct {
	deal, ref []int
}

func readTable(seat int32, v *deliberationv1.View, cfg Config) (*table, error) {
	t := &table{cfg: cfg, me: int(seat), n: len(v.GetParties()), issues: v.GetIssues(), thr: int(v.GetThreshold()),
		bonus: int(v.GetP1Bonus()), quorum: int(v.GetQuorum()), target: -1, noDeal: int(v.GetAdversaryNoDealValue())}
	if t.me < 0 || t.me >= t.n || len(v.GetPoints()) != len(t.issues) {
		return nil, fmt.Errorf("deliberation agent: the view is not one of seat %d's", seat)
	}
	count := 1
	for i, is := range t.issues {
		k := len(is.GetOptions())
		if k == 0 || len(v.GetPoints()[i].GetPoints()) != k {
			return nil, fmt.Errorf("deliberation agent: issue %s has %d options and %d points", is.GetId(), k, len(v.GetPoints()[i].GetPoints()))
		}
		t.options = append(t.options, k)
		row := make([]int, k)
		for o, x := range v.GetPoints()[i].GetPoints() {
			row[o] = int(x)
		}
		t.points = append(t.points, row)
		if count *= k; count > MaxDeals {
			return nil, fmt.Errorf("deliberation agent: the game has more than %d deals", MaxDeals)
		}
	}
	for _, s := range v.GetVetoes() {
		t.vetoes = append(t.vetoes, int(s))
	}
	for _, p := range v.GetParties() {
		t.names = append(t.names, p.GetName())
	}
	if cfg.Target != "" {
		for i, p := range v.GetParties() {
			if strings.EqualFold(p.GetId(), cfg.Target) || strings.EqualFold(p.GetName(), cfg.Target) ||
				(strings.EqualFold(cfg.Target, "p1") && i == 0) || (strings.EqualFold(cfg.Target, "p2") && i == 1) {
				t.target = i
			}
		}
		if t.target < 0 || t.target == t.me {
			return nil, fmt.Errorf("deliberation agent: target %q is no other party of this game", cfg.Target)
		}
	}
	var err error
	if t.openDeal, err = t.read(v.GetOpeningDeal()); err != nil {
		return nil, err
	}
	// Every deal, with its score for me.
	d := make([]int, len(t.options))
	for {
		t.deals = append(t.deals, slices.Clone(d))
		t.own = append(t.own, t.score(d))
		i := len(d) - 1
		for ; i >= 0; i-- {
			if d[i]++; d[i] < t.options[i] {
				break
			}
			d[i] = 0
		}
		if i < 0 {
			break
		}
	}
	t.evidence = make([][]tabled, t.n)
	t.latest = t.openDeal
	for _, st := range v.GetStatements() {
		if st.GetDeal() == nil {
			continue
		}
		d, err := t.read(st.GetDeal())
		if err != nil || int(st.GetSeat()) >= t.n {
			continue
		}
		seat := int(st.GetSeat())
		if st.GetStage() == deliberationv1.Stage_STAGE_DISCUSSION {
			ref := t.latest
			if seat == 0 {
				ref = nil // p1 answers nobody: its deals are the table's
			}
			t.evidence[seat] = append(t.evidence[seat], tabled{deal: d, ref: ref})
		}
		if seat == 0 {
			t.latest = d
		}
	}
	if total := v.GetDiscussionTurns(); total > 0 && v.GetStage() == deliberationv1.Stage_STAGE_DISCUSSION {
		t.progress = float64(v.GetDiscussionTurn()-1) / float64(total)
	}
	if v.GetStage() == deliberationv1.Stage_STAGE_FINAL {
		t.progress = 1
	}
	return t, nil
}

// read turns a generic deal into option indexes.
func (t *table) read(d *gamev1.Deal) ([]int, error) {
	out := make([]int, len(t.issues))
	for i := range out {
		out[i] = -1
	}
	for _, c := range d.GetChoices() {
		for i, is := range t.issues {
			if is.GetId() != c.GetIssue() {
				continue
			}
			for o, opt := range is.GetOptions() {
				if opt.GetId() == c.GetOption() {
					out[i] = o
				}
			}
		}
	}
	if slices.Contains(out, -1) {
		return nil, fmt.Errorf("deliberation agent: deal %v is not complete", d)
	}
	return out, nil
}

func (t *table) score(d []int) int {
	s := 0
	for i, o := range d {
		s += t.points[i][o]
	}
	return s
}

func (t *table) best() int { return slices.Max(t.own) }

// liking is party j's estimated liking of d, from 0 to 1, and whether j tabled any deal: the
// largest weighted share of issues on which d picks the same option as one of j's deals (1 for
// a deal j tabled itself). An issue on which j's deal departs from p1's deal on the table when
// j tabled it is one j insists on: it weighs insist times as much as the others.
func (t *table) liking(j int, d []int) (float64, bool) {
	ev := t.evidence[j]
	if len(ev) == 0 {
		return 0, false
	}
	best := 0.0
	for _, e := range ev {
		var agree, total float64
		for i := range d {
			w := 1.0
			if e.ref != nil && e.deal[i] != e.ref[i] {
				w = insist
			}
			total += w
			if e.deal[i] == d[i] {
				agree += w
			}
		}
		best = max(best, agree/total)
	}
	return best, true
}

// insist is the weight of an issue on which a party departs from p1's deal on the table.
const insist = 4

// support sums the others' estimated liking of d (1/2 for a party without evidence).
func (t *table) support(d []int, skip int) float64 {
	s := 0.0
	for j := range t.n {
		if j == t.me || j == skip {
			continue
		}
		l, ok := t.liking(j, d)
		if !ok {
			l = 0.5
		}
		s += l
	}
	return s
}

// believedYes says whether party j is believed to say yes to d: for me, exactly (without the
// bonus); for another party, when its estimated liking of d reaches Belief, or when it has
// tabled no deal yet (nothing says it would refuse).
func (t *table) believedYes(j int, d []int) bool {
	if j == t.me {
		return t.score(d) >= t.thr
	}
	l, ok := t.liking(j, d)
	return !ok || l >= t.cfg.Belief-1e-9
}

// believedVotes counts the believed yes-votes on d (the bonus applied for p1 when every other
// party is believed to say yes) and says whether d is believed to pass.
func (t *table) believedVotes(d []int) (int, bool) {
	yes := make([]bool, t.n)
	others := true
	for j := range t.n {
		yes[j] = t.believedYes(j, d)
		if j != 0 && !yes[j] {
			others = false
		}
	}
	if t.me == 0 && !yes[0] && others && t.score(d)+t.bonus >= t.thr {
		yes[0] = true
	}
	count := 0
	for _, y := range yes {
		if y {
			count++
		}
	}
	pass := count >= t.quorum
	for _, v := range t.vetoes {
		pass = pass && v < t.n && yes[v]
	}
	return count, pass
}

// pick returns the deal maximising better among those keep accepts (first in lexical order on
// ties), or nil when keep accepts none.
func (t *table) pick(keep func(i int) bool, better func(i, j int) bool) []int {
	bi := -1
	for i := range t.deals {
		if keep(i) && (bi < 0 || better(i, bi)) {
			bi = i
		}
	}
	if bi < 0 {
		return nil
	}
	return t.deals[bi]
}

// cmp compares a and b, which are equal within 1e-9 for the float comparisons.
func greater(a, b float64) bool { return a > b+1e-9 }

func (t *table) opening() *agentv1.Action {
	return t.action(proposeMove(t.dealProto(t.openDeal)), "Here is our opening proposal: "+t.dealWords(t.openDeal)+
		". We are open to changes and want to hear what matters most to each of you.",
		fmt.Sprintf("opening deal %s, worth %d to me", t.dealText(t.openDeal), t.score(t.openDeal)))
}

// talk is a discussion turn: one public message with the deal the role attaches.
func (t *table) talk() *agentv1.Action {
	var d []int
	var why string
	switch t.cfg.Role {
	case Greedy:
		d, why = t.greedyDeal()
	case Adversarial:
		d, why = t.spoilerDeal()
	default:
		if t.me == 0 {
			d, why = t.concession()
		} else {
			d, why = t.bestPassable()
		}
	}
	msg := t.message(d, false)
	a := &agentv1.Action{
		Move:             &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}},
		Messages:         []*gamev1.Message{{Text: msg}},
		PrivateReasoning: why,
	}
	if d != nil {
		a.Messages[0].Proposal = &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: t.dealProto(d)}}
	}
	return a
}

// final is p1's final turn.
func (t *table) final() *agentv1.Action {
	var d []int
	var why string
	switch t.cfg.Role {
	case Greedy:
		d = t.pick(func(i int) bool { _, p := t.believedVotes(t.deals[i]); return p }, func(i, j int) bool { return t.own[i] > t.own[j] })
		why = "the best deal for me among those I believe pass"
		if d == nil {
			d, why = t.mostLiked(t.thr), "no deal seems to pass; the best-liked deal at or above my minimum"
		}
	case Adversarial:
		d = t.pick(func(i int) bool { return t.own[i] >= t.thr }, func(i, j int) bool {
			ci, _ := t.believedVotes(t.deals[i])
			cj, _ := t.believedVotes(t.deals[j])
			if ci != cj {
				return ci < cj
			}
			return greater(t.support(t.deals[j], -1), t.support(t.deals[i], -1))
		})
		why = fmt.Sprintf("no deal is worth %d to me; this one keeps my minimum and wins the fewest believed votes", t.noDeal)
	default:
		d = t.pick(func(i int) bool { return t.own[i] >= t.thr || t.own[i]+t.bonus >= t.thr && t.allOthersYes(t.deals[i]) }, func(i, j int) bool {
			ci, pi := t.believedVotes(t.deals[i])
			cj, pj := t.believedVotes(t.deals[j])
			if pi != pj {
				return pi
			}
			if ci != cj {
				return ci > cj
			}
			return t.likedBetter(i, j)
		})
		why = "the deal at or above my minimum believed to win the most votes"
	}
	if d == nil {
		return t.action(&gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, "I see no deal I can table. We end without an agreement.", "no deal at or above my minimum")
	}
	votes, pass := t.believedVotes(d)
	return t.action(proposeMove(t.dealProto(d)), t.message(d, true),
		fmt.Sprintf("%s: %s, worth %d to me; %d believed yes-votes, believed to pass: %v", why, t.dealText(d), t.score(d), votes, pass))
}

func (t *table) allOthersYes(d []int) bool {
	for j := 1; j < t.n; j++ {
		if !t.believedYes(j, d) {
			return false
		}
	}
	return true
}

// concession is cooperative p1's discussion deal: among the deals worth at least its
// aspiration, the one the others are believed to like best (then the best for p1).
func (t *table) concession() ([]int, string) {
	best := t.best()
	// Down to the minimum by three quarters of the talk, to leave time to converge.
	aspiration := float64(best) - float64(best-t.thr)*min(1, t.progress/0.75)
	d := t.pick(func(i int) bool { return float64(t.own[i]) >= aspiration-1e-9 }, t.likedBetter)
	return d, fmt.Sprintf("aspiration %.1f (from %d toward my minimum %d): the best-liked deal above it is %s, worth %d to me", aspiration, best, t.thr, t.dealText(d), t.score(d))
}

// likedBetter orders deals by the others' believed liking, then by my score.
func (t *table) likedBetter(i, j int) bool {
	si, sj := t.support(t.deals[i], -1), t.support(t.deals[j], -1)
	if greater(si, sj) || greater(sj, si) {
		return greater(si, sj)
	}
	return t.own[i] > t.own[j]
}

// bestPassable is a cooperative party's discussion deal: the best for itself among the deals
// it accepts and believes can pass (then the one changing p1's deal on the table the least, as
// a change reads as a demand); when it believes none can, the deal it accepts closest to p1's
// deal (fewest issues changed, then the best-liked by the others, then the best for itself).
func (t *table) bestPassable() ([]int, string) {
	d := t.pick(func(i int) bool {
		if t.own[i] < t.thr {
			return false
		}
		_, p := t.believedVotes(t.deals[i])
		return p
	}, func(i, j int) bool {
		if t.own[i] != t.own[j] {
			return t.own[i] > t.own[j]
		}
		ci, cj := changes(t.deals[i], t.latest), changes(t.deals[j], t.latest)
		if ci != cj {
			return ci < cj
		}
		return greater(t.support(t.deals[i], -1), t.support(t.deals[j], -1))
	})
	if d != nil {
		return d, fmt.Sprintf("the best deal for me that I believe can pass: %s, worth %d", t.dealText(d), t.score(d))
	}
	d = t.pick(func(i int) bool { return t.own[i] >= t.thr }, func(i, j int) bool {
		ci, cj := changes(t.deals[i], t.latest), changes(t.deals[j], t.latest)
		if ci != cj {
			return ci < cj
		}
		return t.likedBetter(i, j)
	})
	if d == nil {
		d = t.deals[slices.Index(t.own, t.best())]
	}
	return d, fmt.Sprintf("no deal seems to pass yet; the deal I accept closest to p1's %s: %s, worth %d", t.dealText(t.latest), t.dealText(d), t.score(d))
}

// changes counts the issues on which a and b differ.
func changes(a, b []int) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// mostLiked is the best-liked deal worth at least floor to me (then the best for me).
func (t *table) mostLiked(floor int) []int {
	return t.pick(func(i int) bool { return t.own[i] >= floor }, func(i, j int) bool {
		si, sj := t.support(t.deals[i], -1), t.support(t.deals[j], -1)
		if greater(si, sj) || greater(sj, si) {
			return greater(si, sj)
		}
		return t.own[i] > t.own[j]
	})
}

// greedyDeal keeps its best option on all but its least valued issues, conceding on more of
// them as the match goes on, never below its floor.
func (t *table) greedyDeal() ([]int, string) {
	order := make([]int, len(t.issues)) // issues by how much they matter to me, least first
	for i := range order {
		order[i] = i
	}
	spread := func(i int) int { return slices.Max(t.points[i]) - slices.Min(t.points[i]) }
	slices.SortStableFunc(order, func(a, b int) int { return spread(a) - spread(b) })
	free := int(math.Floor(t.progress * float64(len(t.issues))))
	floor := float64(t.thr) + t.cfg.Floor*float64(t.best()-t.thr)
	fixed := order[free:]
	bestOpt := make([]int, len(t.issues))
	for i := range bestOpt {
		bestOpt[i] = slices.Index(t.points[i], slices.Max(t.points[i]))
	}
	d := t.pick(func(i int) bool {
		if float64(t.own[i]) < floor-1e-9 {
			return false
		}
		for _, is := range fixed {
			if t.points[is][t.deals[i][is]] != t.points[is][bestOpt[is]] {
				return false
			}
		}
		return true
	}, func(i, j int) bool {
		si, sj := t.support(t.deals[i], -1), t.support(t.deals[j], -1)
		if greater(si, sj) || greater(sj, si) {
			return greater(si, sj)
		}
		return t.own[i] > t.own[j]
	})
	if d == nil {
		d = t.deals[slices.Index(t.own, t.best())]
	}
	return d, fmt.Sprintf("greedy: conceding on my %d least valued issues, floor %.1f: %s, worth %d", free, floor, t.dealText(d), t.score(d))
}

// spoilerDeal is what an adversary attaches: a deal it can live with that the others (or its
// target) are believed to like least.
func (t *table) spoilerDeal() ([]int, string) {
	d := t.pick(func(i int) bool { return t.own[i] >= t.thr }, func(i, j int) bool {
		if t.target >= 0 {
			li, _ := t.liking(t.target, t.deals[i])
			lj, _ := t.liking(t.target, t.deals[j])
			if greater(lj, li) || greater(li, lj) {
				return greater(lj, li)
			}
		}
		si, sj := t.support(t.deals[i], -1), t.support(t.deals[j], -1)
		if greater(si, sj) || greater(sj, si) {
			return greater(sj, si)
		}
		return t.own[i] > t.own[j]
	})
	who := "the others"
	if t.target >= 0 {
		who = t.names[t.target]
	}
	return d, fmt.Sprintf("no deal is worth %d to me; attaching a deal I can live with that %s are believed to like least: %s", t.noDeal, who, t.dealText(d))
}

// message writes the public text for deal d (nil: none), without any number of mine.
func (t *table) message(d []int, final bool) string {
	if d == nil {
		return "I have nothing to add for now."
	}
	words := t.dealWords(d)
	switch {
	case final && t.cfg.Role == Adversarial:
		return "This is my final deal: " + words + "."
	case final:
		return "This is my final deal, which I believe most of us can accept: " + words + "."
	case t.cfg.Role == Adversarial && t.target >= 0:
		return fmt.Sprintf("%s, look closely: the deals on the table ignore what you need, and you should not settle. I could accept %s.", t.names[t.target], words)
	case t.cfg.Role == Adversarial:
		return "I doubt this negotiation is going anywhere good; the current direction ignores too much. If anything, I could accept " + words + "."
	case t.cfg.Role == Greedy:
		return "My position remains firm on what matters to me. I propose " + words + "."
	case t.me == 0:
		return "Taking your proposals into account, I suggest " + words + ". Tell me what you cannot live with."
	default:
		return "I could support " + words + ", and I believe it can win enough support."
	}
}

// dealWords writes a deal with its option names: "A2 (partly on water), B3 (...)".
func (t *table) dealWords(d []int) string {
	parts := make([]string, len(d))
	for i, o := range d {
		opt := t.issues[i].GetOptions()[o]
		parts[i] = opt.GetId()
		if opt.GetLabel() != "" {
			parts[i] += " (" + opt.GetLabel() + ")"
		}
	}
	return strings.Join(parts, ", ")
}

func (t *table) dealText(d []int) string {
	parts := make([]string, len(d))
	for i, o := range d {
		parts[i] = t.issues[i].GetOptions()[o].GetId()
	}
	return strings.Join(parts, ",")
}

func (t *table) dealProto(d []int) *gamev1.Deal {
	out := &gamev1.Deal{}
	for i, o := range d {
		out.Choices = append(out.Choices, &gamev1.IssueChoice{Issue: t.issues[i].GetId(), Option: t.issues[i].GetOptions()[o].GetId()})
	}
	return out
}

func proposeMove(d *gamev1.Deal) *gamev1.Move {
	return &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: d}}}}}
}

func (t *table) action(move *gamev1.Move, text, why string) *agentv1.Action {
	return &agentv1.Action{Move: move, Messages: []*gamev1.Message{{Text: text}}, PrivateReasoning: why}
}
