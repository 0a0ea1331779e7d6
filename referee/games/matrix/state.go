package matrix

import (
	"fmt"
	"math/big"
	"slices"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
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

// result is one finished round.
type result struct {
	profile equilibria.Profile
}

// state is one match. Slices are append-only and shared by clones (appends go through
// slices.Clip); everything else is a value, so a shallow copy plus History.Clone is a deep
// enough clone.
type state struct {
	s     *setup
	turn  int32
	round int32
	phase phase
	talk  pretalk.Talk
	// chosen[seat] is seat's choice in the current round, -1 until made.
	chosen  [2]int
	results []result
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

// startRound begins round r: its talk, or its choice when there is no talk.
func (st *state) startRound(r int32) {
	st.round = r
	st.chosen = [2]int{-1, -1}
	st.talk = pretalk.Start(st.s.talk, st.s.opener)
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
	if st.phase == phaseTalk {
		return prefix + fmt.Sprintf("Talk: up to %d %s, opened by %s.", st.s.talk, plural(int64(st.s.talk), "round", "rounds"), st.s.players[st.s.opener])
	}
	return prefix + "Both players now choose at the same time; neither sees the other's choice until both have chosen."
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

func (st *state) maxTurns() int32 { return st.s.rounds * (2*st.s.talk + 1) }

func (st *state) toMove(seat games.Seat) bool { return slices.Contains(st.ToMove(), seat) }

// Apply plays seat's action. Refused actions return a *games.Rejection and change nothing.
func (st *state) Apply(seat games.Seat, action *agentv1.Action) ([]*eventsv1.MatchEvent, error) {
	if err := games.CheckAction(action, seat, 2); err != nil {
		return nil, err
	}
	if st.phase == phaseOver {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "the game is over; no more moves can be made")
	}
	if !st.toMove(seat) {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "%s is not to move on turn %d: %s", games.SeatName(seat, st.s.players[:]), st.turn, st.waitingText())
	}
	move := action.GetMove()
	if st.phase == phaseTalk {
		if err := pretalk.Check(action); err != nil {
			return nil, err
		}
		ended := move.GetPass() != nil
		summary := fmt.Sprintf("%s speaks.", st.s.players[seat])
		if ended {
			summary = fmt.Sprintf("%s speaks and ends the talk.", st.s.players[seat])
		}
		st.history.AddMove(st.turn, seat, proto.CloneOf(move), cloneMessages(action.GetMessages()), summary)
		st.talk = st.talk.Advance(seat, ended)
		st.turn++
		if !st.talk.Over {
			return nil, nil
		}
		st.phase = phaseChoice
		st.history.AddAnnouncement(st.turn, st.phaseText())
		return []*eventsv1.MatchEvent{st.phaseEvent()}, nil
	}
	ch := move.GetChoose()
	if ch == nil {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "this is the choice: choose is the only legal move, with one of %s", st.optionList(seat))
	}
	idx := slices.IndexFunc(st.s.actions(seat), func(a *matrixv1.Action) bool { return a.GetId() == ch.GetOption() })
	if idx < 0 {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "there is no option %q; choose one of %s", ch.GetOption(), st.optionList(seat))
	}
	// The choice is shown to the chooser alone until both have chosen; messages go to their
	// recipients at once.
	st.history.AddMove(st.turn, seat, proto.CloneOf(move), cloneMessages(action.GetMessages()),
		fmt.Sprintf("%s chooses %s.", st.s.players[seat], st.s.label(seat, idx)), seat)
	st.chosen[seat] = idx
	if st.chosen[0] < 0 || st.chosen[1] < 0 {
		return nil, nil
	}
	return st.reveal(), nil
}

// reveal ends the round once both have chosen.
func (st *state) reveal() []*eventsv1.MatchEvent {
	pr := equilibria.Profile{Row: st.chosen[0], Col: st.chosen[1]}
	st.results = append(slices.Clip(st.results), result{profile: pr})
	pay := st.s.m.Payoffs(pr)
	prefix := "The choices are in: "
	if st.s.rounds > 1 {
		prefix = fmt.Sprintf("Round %d: ", st.round)
	}
	if st.s.history {
		st.history.AddAnnouncement(st.turn, fmt.Sprintf("%s%s chose %s and %s chose %s: %s gets %s, %s gets %s.", prefix,
			st.s.players[0], st.s.label(0, pr.Row), st.s.players[1], st.s.label(1, pr.Col),
			st.s.players[0], equilibria.RatText(pay[0]), st.s.players[1], equilibria.RatText(pay[1])))
	} else {
		st.history.AddAnnouncement(st.turn, prefix+"both have chosen; each learns its own payoff only.")
	}
	if st.round < st.s.rounds {
		st.turn++
		st.startRound(st.round + 1)
		return []*eventsv1.MatchEvent{st.phaseEvent()}
	}
	st.phase = phaseOver // the turn stays that of the last move
	return nil
}

func cloneMessages(msgs []*gamev1.Message) []*gamev1.Message {
	out := make([]*gamev1.Message, len(msgs))
	for i, m := range msgs {
		out[i] = proto.CloneOf(m)
	}
	return out
}

func (st *state) waitingText() string {
	switch st.phase {
	case phaseTalk:
		return fmt.Sprintf("it is %s's turn to talk", st.s.players[st.talk.Speaker()])
	case phaseChoice:
		var names []string
		for _, s := range st.ToMove() {
			names = append(names, st.s.players[s])
		}
		return fmt.Sprintf("waiting for %s to choose", joinAnd(names))
	}
	return "the game is over"
}

func (st *state) optionList(seat games.Seat) string {
	var ids []string
	for _, a := range st.s.actions(seat) {
		ids = append(ids, a.GetId())
	}
	return joinOr(ids)
}

// Default is pass with "(no message)" on a talk turn, the seat's first action when choosing;
// a pass otherwise (refused).
func (st *state) Default(seat games.Seat) *agentv1.Action {
	switch {
	case st.phase == phaseTalk && st.toMove(seat):
		return pretalk.Default()
	case st.phase == phaseChoice && st.toMove(seat):
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: st.s.actions(seat)[0].GetId()}}}}
	}
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}
}

// totals returns each seat's payoff summed over the finished rounds.
func (st *state) totals() [2]*big.Rat {
	out := [2]*big.Rat{new(big.Rat), new(big.Rat)}
	for _, r := range st.results {
		pay := st.s.m.Payoffs(r.profile)
		out[0].Add(out[0], pay[0])
		out[1].Add(out[1], pay[1])
	}
	return out
}

// Outcome returns the summed payoffs once every round is played.
func (st *state) Outcome() *matchv1.Outcome {
	if st.phase != phaseOver {
		return &matchv1.Outcome{Summary: "The game is not over."}
	}
	tot := st.totals()
	return &matchv1.Outcome{
		Cause:   matchv1.EndCause_END_CAUSE_COMPLETED,
		Payoffs: []float64{gamefile.RatFloat(tot[0]), gamefile.RatFloat(tot[1])},
		Summary: st.outcomeText(tot),
	}
}

func (st *state) outcomeText(tot [2]*big.Rat) string {
	p := st.s.players
	if st.s.rounds == 1 {
		pr := st.results[0].profile
		return fmt.Sprintf("%s chose %s and %s chose %s: %s gets %s, %s gets %s.",
			p[0], st.s.label(0, pr.Row), p[1], st.s.label(1, pr.Col), p[0], equilibria.RatText(tot[0]), p[1], equilibria.RatText(tot[1]))
	}
	return fmt.Sprintf("After %d rounds %s has %s and %s has %s.", st.s.rounds, p[0], equilibria.RatText(tot[0]), p[1], equilibria.RatText(tot[1]))
}

// Clone returns an independent copy.
func (st *state) Clone() games.State {
	c := *st
	c.history = st.history.Clone()
	return &c
}

// Observe builds seat's observation.
func (st *state) Observe(seat games.Seat) *agentv1.Observation {
	obs := &agentv1.Observation{Game: Name, Seat: seat, Turn: st.turn, MaxTurns: st.maxTurns()}
	if seat != 0 && seat != 1 {
		obs.Briefing = fmt.Sprintf("Seat %d does not play in this game; the seats are 0 (%s) and 1 (%s).", seat, st.s.players[0], st.s.players[1])
		return obs
	}
	roles := []string{"row player", "column player"}
	for i, name := range st.s.players {
		obs.Seats = append(obs.Seats, &gamev1.SeatInfo{Seat: int32(i), Name: name, Role: roles[i]})
	}
	switch st.phase {
	case phaseTalk:
		obs.Phase = PhaseTalk
		if st.toMove(seat) {
			obs.LegalMoves = pretalk.LegalMoves()
			obs.RequiredMessages = pretalk.RequiredMessages()
		}
	case phaseChoice:
		obs.Phase = PhaseChoice
		if st.toMove(seat) {
			obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_CHOOSE}
			obs.Choices = st.options(seat)
		}
	}
	obs.History, obs.HistoryOmitted = st.history.For(seat)
	obs.View = &agentv1.Observation_Matrix{Matrix: st.view(seat)}
	obs.Briefing = st.briefing(seat)
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
		TalkRounds: st.s.talk,
		TalkOpener: st.s.opener,
		Rounds:     st.s.rounds,
		Round:      st.round,
	}
	if st.phase == phaseTalk {
		v.TalkRound = st.talk.Round
	}
	total := new(big.Rat)
	for k, r := range st.results {
		pay := st.s.m.Payoffs(r.profile)
		rr := &matrixv1.RoundResult{Round: int32(k + 1), OwnChoice: int32(r.profile.Action(int(seat))), OwnPayoff: gamefile.RatProto(pay[seat])}
		if st.s.history {
			rr.OtherChoice = proto.Int32(int32(r.profile.Action(int(1 - seat))))
			rr.OtherPayoff = gamefile.RatProto(pay[1-seat])
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
