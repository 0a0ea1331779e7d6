package matrix

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/datagame"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/pretalk"
	"google.golang.org/protobuf/proto"
)

type phase int

const (
	phaseTalk phase = iota
	phaseChoice
	phaseOver
)

// state is one match. Slices are append-only or copied on write and shared by clones
// (appends go through slices.Clip); everything else is a value, so a shallow copy plus
// History.Clone is a deep enough clone.
type state struct {
	s     *setup
	turn  int32
	round int32
	phase phase
	talk  pretalk.Talk
	// chosen[seat] is seat's choice in the current round, -1 until made.
	chosen  []int
	results []equilibria.Profile
	history games.History
}

var (
	_ games.State  = (*state)(nil)
	_ games.Opener = (*state)(nil)
)

func newState(s *setup) *state {
	st := &state{s: s, turn: 1}
	st.startRound(1)
	return st
}

func (st *state) players() int { return len(st.s.Players) }

// startRound begins round r: its talk, or its choice when there is no talk.
func (st *state) startRound(r int32) {
	st.round = r
	st.chosen = make([]int, st.players())
	for i := range st.chosen {
		st.chosen[i] = -1
	}
	st.talk = st.s.StartTalk()
	if st.talk.Over {
		st.phase = phaseChoice
	} else {
		st.phase = phaseTalk
	}
	st.history.AddAnnouncement(st.turn, st.phaseText())
}

// phaseText announces the phase just begun.
func (st *state) phaseText() string {
	prefix := ""
	if st.s.rounds > 1 {
		prefix = fmt.Sprintf("Round %d of %d. ", st.round, st.s.rounds)
	}
	switch {
	case st.phase == phaseTalk:
		return prefix + fmt.Sprintf("Talk: up to %d %s, opened by %s.", st.s.Talk, pretalk.Plural(int64(st.s.Talk), "round", "rounds"), st.s.Players[st.s.Opener])
	case st.players() == 2:
		return prefix + "Both players now choose at the same time; neither sees the other's choice until both have chosen."
	}
	return prefix + "All players now choose at the same time; nobody sees another's choice until all have chosen."
}

func (st *state) phaseEvent() *eventsv1.MatchEvent {
	name := PhaseChoice
	if st.phase == phaseTalk {
		name = PhaseTalk
	}
	return &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_PhaseStarted{PhaseStarted: &eventsv1.PhaseStarted{Phase: name, Summary: st.phaseText()}}}
}

// OpeningEvents announces the first phase.
func (st *state) OpeningEvents() []*eventsv1.MatchEvent {
	return []*eventsv1.MatchEvent{newState(st.s).phaseEvent()}
}

// ToMove returns the speaker during talk, the seats yet to choose during a choice.
func (st *state) ToMove() []games.Seat {
	switch st.phase {
	case phaseTalk:
		return []games.Seat{st.talk.Speaker()}
	case phaseChoice:
		var out []games.Seat
		for seat, c := range st.chosen {
			if c < 0 {
				out = append(out, games.Seat(seat))
			}
		}
		return out
	}
	return nil
}

// Turn returns the current turn, 1-based.
func (st *state) Turn() int32 { return st.turn }

// LastMove returns the summary of seat's move on turn (games.MoveWorder).
func (st *state) LastMove(seat games.Seat, turn int32) (string, []games.Seat, bool) {
	return st.history.LastMove(seat, turn)
}

func (st *state) maxTurns() int32 { return st.s.rounds * (int32(st.players())*st.s.Talk + 1) }

func (st *state) toMove(seat games.Seat) bool { return slices.Contains(st.ToMove(), seat) }

// Apply plays seat's action. Refused actions return a *games.Rejection and change nothing.
func (st *state) Apply(seat games.Seat, action *agentv1.Action) ([]*eventsv1.MatchEvent, error) {
	if err := games.CheckAction(action, seat, st.players()); err != nil {
		return nil, err
	}
	if st.phase == phaseOver {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "the game is over; no more moves can be made")
	}
	if !st.toMove(seat) {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "%s is not to move on turn %d: %s", games.SeatName(seat, st.s.Players), st.turn, st.waitingText())
	}
	if st.phase == phaseTalk {
		talk, err := st.talk.Speak(&st.history, st.turn, seat, action, st.s.Players)
		if err != nil {
			return nil, err
		}
		st.talk = talk
		st.turn++
		if !st.talk.Over {
			return nil, nil
		}
		st.phase = phaseChoice
		st.history.AddAnnouncement(st.turn, st.phaseText())
		return []*eventsv1.MatchEvent{st.phaseEvent()}, nil
	}
	move := action.GetMove()
	ch := move.GetChoose()
	if ch == nil {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "this is the choice: choose is the only legal move, with one of %s", st.optionList(seat))
	}
	idx := slices.IndexFunc(st.s.actions(seat), func(a *matrixv1.Action) bool { return a.GetId() == ch.GetOption() })
	if idx < 0 {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "there is no option %q; choose one of %s", ch.GetOption(), st.optionList(seat))
	}
	// The choice is shown to the chooser alone until all have chosen; messages go to their
	// recipients at once.
	st.history.AddMove(st.turn, seat, move, action.GetMessages(),
		fmt.Sprintf("%s chooses %s.", st.s.Players[seat], st.s.label(seat, idx)), seat)
	st.chosen = slices.Clone(st.chosen)
	st.chosen[seat] = idx
	if slices.Contains(st.chosen, -1) {
		return nil, nil
	}
	return st.reveal(), nil
}

// profileText writes who chose what and what each gets: "Alice chose a and Bob chose b:
// Alice gets 1, Bob gets 2."
func (st *state) profileText(pr equilibria.Profile, pay equilibria.Payoffs) string {
	var chose, gets []string
	for seat, name := range st.s.Players {
		chose = append(chose, fmt.Sprintf("%s chose %s", name, st.s.label(games.Seat(seat), pr[seat])))
		gets = append(gets, fmt.Sprintf("%s gets %s", name, equilibria.RatText(pay[seat])))
	}
	return fmt.Sprintf("%s: %s.", bargain.AndList(chose), strings.Join(gets, ", "))
}

// reveal ends the round once all have chosen.
func (st *state) reveal() []*eventsv1.MatchEvent {
	pr := equilibria.Profile(slices.Clone(st.chosen))
	st.results = append(slices.Clip(st.results), pr)
	prefix := "The choices are in: "
	if st.s.rounds > 1 {
		prefix = fmt.Sprintf("Round %d: ", st.round)
	}
	switch {
	case st.s.history:
		st.history.AddAnnouncement(st.turn, prefix+st.profileText(pr, st.s.m.Payoffs(pr)))
	case st.players() == 2:
		st.history.AddAnnouncement(st.turn, prefix+"both have chosen; each learns its own payoff only.")
	default:
		st.history.AddAnnouncement(st.turn, prefix+"all have chosen; each learns its own payoff only.")
	}
	if st.round < st.s.rounds {
		st.turn++
		st.startRound(st.round + 1)
		return []*eventsv1.MatchEvent{st.phaseEvent()}
	}
	st.phase = phaseOver // the turn stays that of the last move
	return nil
}

func (st *state) waitingText() string {
	switch st.phase {
	case phaseTalk:
		return fmt.Sprintf("it is %s's turn to talk", st.s.Players[st.talk.Speaker()])
	case phaseChoice:
		var names []string
		for _, s := range st.ToMove() {
			names = append(names, st.s.Players[s])
		}
		return fmt.Sprintf("waiting for %s to choose", bargain.AndList(names))
	}
	return "the game is over"
}

func (st *state) optionList(seat games.Seat) string {
	var ids []string
	for _, a := range st.s.actions(seat) {
		ids = append(ids, a.GetId())
	}
	return bargain.OrList(ids)
}

// Default is pass with "(no message)" on a talk turn, the seat's first action when choosing;
// a pass otherwise (refused).
func (st *state) Default(seat games.Seat) *agentv1.Action {
	switch {
	case st.phase == phaseTalk && st.toMove(seat):
		return pretalk.Default()
	case st.phase == phaseChoice && st.toMove(seat):
		return datagame.Choose(st.s.actions(seat)[0].GetId())
	}
	return datagame.Pass()
}

// totals returns each seat's payoff summed over the finished rounds.
func (st *state) totals() []*big.Rat {
	out := make([]*big.Rat, st.players())
	for i := range out {
		out[i] = new(big.Rat)
	}
	for _, r := range st.results {
		for i, x := range st.s.m.Payoffs(r) {
			out[i].Add(out[i], x)
		}
	}
	return out
}

// Outcome returns the summed payoffs once every round is played.
func (st *state) Outcome() *matchv1.Outcome {
	if st.phase != phaseOver {
		return &matchv1.Outcome{Summary: "The game is not over."}
	}
	tot := st.totals()
	out := &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_COMPLETED, Summary: st.outcomeText(tot)}
	for _, x := range tot {
		out.Payoffs = append(out.Payoffs, gamefile.RatFloat(x))
	}
	return out
}

func (st *state) outcomeText(tot []*big.Rat) string {
	if st.s.rounds == 1 {
		return st.profileText(st.results[0], tot)
	}
	var has []string
	for seat, name := range st.s.Players {
		has = append(has, fmt.Sprintf("%s has %s", name, equilibria.RatText(tot[seat])))
	}
	return fmt.Sprintf("After %d rounds %s.", st.s.rounds, bargain.AndList(has))
}

// Clone returns an independent copy.
func (st *state) Clone() games.State {
	c := *st
	c.history = st.history.Clone()
	return &c
}

// Observe builds seat's observation.
func (st *state) Observe(seat games.Seat) *agentv1.Observation { return st.observe(seat, true) }

// ObserveUnbriefed is Observe without the briefing, none written (games.Unbriefed).
func (st *state) ObserveUnbriefed(seat games.Seat) *agentv1.Observation {
	return st.observe(seat, false)
}

func (st *state) observe(seat games.Seat, brief bool) *agentv1.Observation {
	obs, ok := st.s.Observation(Name, seat, st.turn, st.maxTurns(), st.s.roles)
	if !ok {
		return obs
	}
	switch st.phase {
	case phaseTalk:
		st.talk.Observe(obs, seat)
	case phaseChoice:
		obs.Phase = PhaseChoice
		if st.toMove(seat) {
			obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_CHOOSE}
			obs.Choices = st.options(seat)
		}
	}
	obs.History, obs.HistoryOmitted = st.history.For(seat)
	obs.View = &agentv1.Observation_Matrix{Matrix: st.view(seat)}
	if brief {
		obs.Briefing = st.briefing(seat)
	}
	return obs
}

// options are seat's actions as choose options, each described by its payoffs.
func (st *state) options(seat games.Seat) []*gamev1.Option {
	acts := st.s.actions(seat)
	out := make([]*gamev1.Option, len(acts))
	for i, a := range acts {
		out[i] = &gamev1.Option{Id: a.GetId(), Label: a.GetLabel(), Description: st.optionText(seat, i)}
	}
	return out
}

// view is seat's view: the shown table and the rounds it may see.
func (st *state) view(seat games.Seat) *matrixv1.View {
	v := &matrixv1.View{
		Table:      proto.CloneOf(st.s.shown),
		TalkRounds: st.s.Talk,
		TalkOpener: st.s.Opener,
		Rounds:     st.s.rounds,
		Round:      st.round,
	}
	if st.phase == phaseTalk {
		v.TalkRound = st.talk.Round
	}
	total := new(big.Rat)
	for k, r := range st.results {
		pay := st.s.m.Payoffs(r)
		rr := &matrixv1.RoundResult{Round: int32(k + 1), OwnChoice: int32(r[seat]), OwnPayoff: gamefile.RatProto(pay[seat])}
		switch {
		case !st.s.history:
		case st.players() == 2:
			rr.OtherChoice = proto.Int32(int32(r[1-seat]))
			rr.OtherPayoff = gamefile.RatProto(pay[1-seat])
		default:
			for p, a := range r {
				rr.Choices = append(rr.Choices, int32(a))
				rr.Payoffs = append(rr.Payoffs, gamefile.RatProto(pay[p]))
			}
		}
		v.Results = append(v.Results, rr)
		total.Add(total, pay[seat])
	}
	v.Total = gamefile.RatProto(total)
	if st.phase == phaseChoice && st.chosen[seat] >= 0 {
		v.OwnChoice = proto.Int32(int32(st.chosen[seat]))
	}
	return v
}
