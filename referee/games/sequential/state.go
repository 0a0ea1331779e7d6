package sequential

import (
	"fmt"
	"slices"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	sequentialv1 "github.com/parley-arena/parley/gen/go/parley/games/sequential/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/datagame"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/pretalk"
	"google.golang.org/protobuf/proto"
)

// state is one match. path is append-only and shared by clones (appends go through
// slices.Clip); everything else is a value.
type state struct {
	s    *setup
	turn int32
	node int   // current node
	path []int // branches taken so far
	talk pretalk.Talk
	over bool
	// talking is true while the talk before the current move runs.
	talking bool
	history games.History
}

var (
	_ games.State  = (*state)(nil)
	_ games.Opener = (*state)(nil)
)

func newState(s *setup) *state {
	st := &state{s: s, turn: 1}
	st.startMove()
	return st
}

// mover is the seat to move at the current node.
func (st *state) mover() games.Seat { return games.Seat(st.s.tree.Node(st.node).Player) }

// startMove begins the talk before the move at the current node, or the move itself.
func (st *state) startMove() {
	st.talk = st.s.StartTalk()
	st.talking = !st.talk.Over
	st.history.AddAnnouncement(st.turn, st.phaseText())
}

func (st *state) phaseText() string {
	if st.talking {
		return fmt.Sprintf("Talk before %s's move: up to %d %s, opened by %s.", st.s.Players[st.mover()], st.s.Talk, pretalk.Plural(int64(st.s.Talk), "round", "rounds"), st.s.Players[st.s.Opener])
	}
	return fmt.Sprintf("%s to move: %s.", st.s.Players[st.mover()], st.moveList())
}

func (st *state) moveList() string {
	var out []string
	for b := range st.s.tree.Node(st.node).Children {
		out = append(out, st.s.moveName(st.node, b))
	}
	return strings.Join(out, " or ")
}

func (st *state) phaseEvent() *eventsv1.MatchEvent {
	name := PhaseMove
	if st.talking {
		name = PhaseTalk
	}
	return &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_PhaseStarted{PhaseStarted: &eventsv1.PhaseStarted{Phase: name, Summary: st.phaseText()}}}
}

// OpeningEvents announces the first phase.
func (st *state) OpeningEvents() []*eventsv1.MatchEvent {
	return []*eventsv1.MatchEvent{newState(st.s).phaseEvent()}
}

// ToMove returns the speaker during talk, the player at the node otherwise.
func (st *state) ToMove() []games.Seat {
	switch {
	case st.over:
		return nil
	case st.talking:
		return []games.Seat{st.talk.Speaker()}
	}
	return []games.Seat{st.mover()}
}

// Turn returns the current turn, 1-based.
func (st *state) Turn() int32 { return st.turn }

// LastMove returns the summary of seat's move on turn (games.MoveWorder).
func (st *state) LastMove(seat games.Seat, turn int32) (string, []games.Seat, bool) {
	return st.history.LastMove(seat, turn)
}

func (st *state) maxTurns() int32 { return st.s.depth * (int32(len(st.s.Players))*st.s.Talk + 1) }

// Apply plays seat's action. Refused actions return a *games.Rejection and change nothing.
func (st *state) Apply(seat games.Seat, action *agentv1.Action) ([]*eventsv1.MatchEvent, error) {
	if err := games.CheckAction(action, seat, len(st.s.Players)); err != nil {
		return nil, err
	}
	if st.over {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "the game is over; no more moves can be made")
	}
	if !slices.Contains(st.ToMove(), seat) {
		who := st.s.Players[st.ToMove()[0]]
		what := "move"
		if st.talking {
			what = "talk"
		}
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "%s is not to move on turn %d: it is %s's turn to %s",
			games.SeatName(seat, st.s.Players[:]), st.turn, who, what)
	}
	move := action.GetMove()
	if st.talking {
		talk, err := st.talk.Speak(&st.history, st.turn, seat, action, st.s.Players)
		if err != nil {
			return nil, err
		}
		st.talk = talk
		st.turn++
		if !st.talk.Over {
			return nil, nil
		}
		st.talking = false
		st.history.AddAnnouncement(st.turn, st.phaseText())
		return []*eventsv1.MatchEvent{st.phaseEvent()}, nil
	}
	ch := move.GetChoose()
	if ch == nil {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "it is your move: choose is the only legal move, with one of %s", st.idList())
	}
	branches := st.s.shown.GetNodes()[st.node].GetBranches()
	b := slices.IndexFunc(branches, func(br *sequentialv1.Branch) bool { return br.GetId() == ch.GetOption() })
	if b < 0 {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "there is no move %q here; choose one of %s", ch.GetOption(), st.idList())
	}
	st.history.AddMove(st.turn, seat, move, action.GetMessages(), fmt.Sprintf("%s chooses %s.", st.s.Players[seat], st.s.moveName(st.node, b)))
	st.path = append(slices.Clip(st.path), b)
	st.node = st.s.tree.Node(st.node).Children[b]
	if st.s.tree.Node(st.node).Leaf() {
		st.over = true
		st.history.AddAnnouncement(st.turn, st.outcomeText())
		return nil, nil
	}
	st.turn++
	st.startMove()
	return []*eventsv1.MatchEvent{st.phaseEvent()}, nil
}

func (st *state) idList() string {
	var ids []string
	for _, br := range st.s.shown.GetNodes()[st.node].GetBranches() {
		ids = append(ids, br.GetId())
	}
	return strings.Join(ids, " or ")
}

// Default is pass with "(no message)" on a talk turn, the first move at a decision; a pass
// otherwise (refused).
func (st *state) Default(seat games.Seat) *agentv1.Action {
	switch {
	case st.over || !slices.Contains(st.ToMove(), seat):
	case st.talking:
		return pretalk.Default()
	default:
		return datagame.Choose(st.s.shown.GetNodes()[st.node].GetBranches()[0].GetId())
	}
	return datagame.Pass()
}

// Outcome pays the leaf reached.
func (st *state) Outcome() *matchv1.Outcome {
	if !st.over {
		return &matchv1.Outcome{Summary: "The game is not over."}
	}
	out := &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_COMPLETED, Summary: st.outcomeText()}
	for _, x := range st.s.tree.Node(st.node).Payoffs {
		out.Payoffs = append(out.Payoffs, gamefile.RatFloat(x))
	}
	return out
}

func (st *state) outcomeText() string {
	return fmt.Sprintf("The game ends after %s: %s.", st.pathText(), st.s.payText(st.s.tree.Node(st.node).Payoffs))
}

// pathText writes the moves made, e.g. "Alice's a2, Bob's b1".
func (st *state) pathText() string {
	var parts []string
	n := 0
	for _, b := range st.path {
		parts = append(parts, fmt.Sprintf("%s's %s", st.s.Players[st.s.tree.Node(n).Player], st.s.shown.GetNodes()[n].GetBranches()[b].GetId()))
		n = st.s.tree.Node(n).Children[b]
	}
	return strings.Join(parts, ", ")
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
	obs, ok := st.s.Observation(Name, seat, st.turn, st.maxTurns(), nil)
	if !ok {
		return obs
	}
	switch {
	case st.over:
	case st.talking:
		st.talk.Observe(obs, seat)
	default:
		obs.Phase = PhaseMove
		if st.mover() == seat {
			obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_CHOOSE}
			for b, br := range st.s.shown.GetNodes()[st.node].GetBranches() {
				obs.Choices = append(obs.Choices, &gamev1.Option{Id: br.GetId(), Label: br.GetLabel(), Description: st.branchText(b)})
			}
		}
	}
	obs.History, obs.HistoryOmitted = st.history.For(seat)
	v := &sequentialv1.View{
		Tree:       proto.CloneOf(st.s.shown),
		Node:       int32(st.node),
		TalkRounds: st.s.Talk,
		TalkOpener: st.s.Opener,
	}
	n := 0
	for _, b := range st.path {
		v.Path = append(v.Path, st.s.shown.GetNodes()[n].GetBranches()[b].GetId())
		n = st.s.tree.Node(n).Children[b]
	}
	if st.talking {
		v.TalkRound = st.talk.Round
	}
	obs.View = &agentv1.Observation_Sequential{Sequential: v}
	if brief {
		obs.Briefing = st.briefing(seat)
	}
	return obs
}

// branchText says where move b of the current node leads.
func (st *state) branchText(b int) string {
	ch := st.s.tree.Node(st.node).Children[b]
	node := st.s.tree.Node(ch)
	if node.Leaf() {
		return "ends the game: " + st.s.payText(node.Payoffs)
	}
	return fmt.Sprintf("then %s moves", st.s.Players[node.Player])
}

// briefing is the rules, the whole tree and where the match stands for seat.
func (st *state) briefing(seat games.Seat) string {
	s := st.s
	var b strings.Builder
	me := s.Players[seat]
	var others []string
	for _, o := range datagame.Others(seat, len(s.Players)) {
		others = append(others, s.Players[o])
	}
	titled := !s.Neutral && s.shown.GetTitle() != ""
	switch {
	case len(s.Players) == 2 && !titled:
		fmt.Fprintf(&b, "You are %s in a two-player game against %s, played in turns. Both of you know the whole game and see every move.\n", me, others[0])
	case len(s.Players) == 2:
		fmt.Fprintf(&b, "You are %s in a two-player game, %s, against %s, played in turns. Both of you know the whole game and see every move.\n", me, s.shown.GetTitle(), others[0])
	case !titled:
		fmt.Fprintf(&b, "You are %s in a game of %s players with %s, played in turns. All of you know the whole game and see every move.\n", me, datagame.Number(len(s.Players)), bargain.AndList(others))
	default:
		fmt.Fprintf(&b, "You are %s in a game of %s players, %s, with %s, played in turns. All of you know the whole game and see every move.\n", me, datagame.Number(len(s.Players)), s.shown.GetTitle(), bargain.AndList(others))
	}
	b.WriteString("\nThe game\n")
	b.WriteString(s.text)
	b.WriteString("\nHow it goes\n")
	if s.Talk > 0 {
		fmt.Fprintf(&b, "- %s\n", pretalk.Rules("Before every move", s.Talk, s.Opener, s.Players))
	}
	b.WriteString("- The player to move sends a choose move with the id of one of its moves at that point.\n")
	b.WriteString("\nNow\n")
	if len(st.path) > 0 {
		fmt.Fprintf(&b, "- Moves so far: %s.\n", st.pathText())
	}
	switch {
	case st.over:
		fmt.Fprintf(&b, "- %s\n", st.outcomeText())
	case st.talking:
		fmt.Fprintf(&b, "- %s Then %s moves.\n", st.talk.Status(s.Players, seat), s.Players[st.mover()])
	case st.mover() == seat:
		fmt.Fprintf(&b, "- It is your move: %s.\n", st.moveList())
	default:
		fmt.Fprintf(&b, "- It is %s's move.\n", s.Players[st.mover()])
	}
	return b.String()
}
