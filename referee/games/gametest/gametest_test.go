package gametest_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// envMutant names the mutant TestMutantChild runs the suite on.
const envMutant = "GAMETEST_MUTANT"

// TestRunCatchesBrokenGames proves the suite's checks can fail: each mutant breaks one promise
// of the Game and State interfaces, the suite runs on it in a child process (a failing
// *testing.T cannot be observed from inside), and the child must fail for that reason. The
// unbroken wrapper must pass, so the failures are the mutations' doing.
func TestRunCatchesBrokenGames(t *testing.T) {
	tests := []mutant{
		{"none", ""},
		{"leaks-reasoning", "leaks \"gametest-reasoning-seat"},
		{"leaks-notes", "leaks \"gametest-notes-seat"},
		{"drops-messages", "a message addressed to it"},
		{"impure-observe", "two calls of Observe"},
		{"aliases-observation", "changing an observation"},
		{"changes-action", "Apply changed the action it was given"},
		{"refusal-changes-state", "observation changed"},
		{"shallow-clone", "on a clone: seat 0's observation changed"},
		{"accepts-pass", "accepted, want a refusal"},
		{"legal-moves-for-waiting-seat", "is not to move but has legal moves"},
		{"wrong-payoff-count", "payoffs for 2 seats"},
		{"replay-differs", "replay differs"},
		{"panics-in-observe", "panicked"},
		{"refuses-legal-proposals", "random legal action"},
		{"illegal-default", "Default"},
		{"fills-in-fixed-amounts", " left out ("},
		// The parameters, against what ultimatum.proto declares.
		{"hand-written-param", `Info().Params lists "sum", which is no field`},
		{"own-default", `total set to its declared default "100" resolves to`},
		{"narrower-range", "max_turns = 10000, its declared max, is refused"},
		{"wider-range", "just outside its declared min: Resolve accepts it"},
		{"unnamed-refusal", "which does not name the parameter"},
		{"newstate-fills-in", "want games.ErrNotResolved"},
		{"unbriefed-differs", "is not Observe(0) without its briefing"},
		{"misworded-move", "the record would say"},
	}
	checkMutants(t, "TestMutantChild", envMutant, tests)
}

// mutant is a broken game a child process runs a check on, and what the child's output must
// hold: "" means the child must pass.
type mutant struct {
	mutant string
	want   string
}

// checkMutants runs child, a test of this binary, in a process of its own for each mutant
// (a failing *testing.T cannot be observed from inside), with env naming the mutant, and
// checks that it fails with the mutant's want, or passes when want is "".
func checkMutants(t *testing.T, child, env string, mutants []mutant) {
	t.Helper()
	for _, tc := range mutants {
		t.Run(tc.mutant, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.short", "-test.v")
			cmd.Env = append(os.Environ(), env+"="+tc.mutant)
			out, err := cmd.CombinedOutput()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("the check fails on an unbroken game: %v\n%s", err, tail(out))
			case tc.want == "":
				if !strings.Contains(string(out), "--- PASS: "+child) {
					t.Fatalf("the child did not run:\n%s", tail(out))
				}
			case err == nil:
				t.Fatalf("the check passes a game that is broken (%s)", tc.mutant)
			case !strings.Contains(string(out), tc.want):
				t.Fatalf("the check fails, but not with %q:\n%s", tc.want, tail(out))
			}
		})
	}
}

func tail(b []byte) string {
	const n = 3000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// TestMutantChild runs the suite on the mutant named in the environment; it is the child of
// TestRunCatchesBrokenGames and does nothing on its own.
func TestMutantChild(t *testing.T) {
	name := os.Getenv(envMutant)
	if name == "" {
		t.Skip("run by TestRunCatchesBrokenGames")
	}
	gametest.Run(t, &mutantGame{Game: ultimatum.New(), mut: name}, nil)
}

// mutantGame wraps the ultimatum game and breaks it in the way mut names.
type mutantGame struct {
	games.Game
	mut    string
	starts int // NewState calls, for replay-differs
}

func (g *mutantGame) Info() *gamev1.GameInfo {
	info := g.Game.Info()
	if g.mut == "hand-written-param" {
		info.Params[0].Name = "sum"
	}
	return info
}

func (g *mutantGame) Resolve(p *matchv1.GameParams) (*matchv1.GameParams, error) {
	u := p.GetUltimatum()
	if u == nil {
		u = &ultimatumv1.Params{}
	}
	switch {
	case g.mut == "own-default" && u.Total == nil:
		p = &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: proto.CloneOf(u)}}
		p.GetUltimatum().Total = proto.Int64(50)
	case g.mut == "narrower-range" && u.GetMaxTurns() > 100:
		return nil, errors.New("ultimatum: max_turns must be at most 100")
	case g.mut == "wider-range" && u.Total != nil && u.GetTotal() < 1:
		p = &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: proto.CloneOf(u)}}
		p.GetUltimatum().Total = proto.Int64(1)
	}
	r, err := g.Game.Resolve(p)
	if err != nil && g.mut == "unnamed-refusal" {
		return nil, errors.New("ultimatum: bad params")
	}
	return r, err
}

func (g *mutantGame) NewState(p *matchv1.GameParams, seed uint64) (games.State, error) {
	if g.mut == "newstate-fills-in" {
		r, err := g.Game.Resolve(p)
		if err != nil {
			return nil, err
		}
		p = r
	}
	st, err := g.Game.NewState(p, seed)
	if err != nil {
		return nil, err
	}
	g.starts++
	return &mutantState{State: st, mut: g.mut, start: g.starts}, nil
}

// chips is the resource of the fills-in-fixed-amounts mutant's fixed amount.
const chips = "Chips"

type mutantState struct {
	games.State
	mut       string
	start     int
	reasoning []string
	notes     []string
	observes  int
	refusals  int
	cached    map[games.Seat]*agentv1.Observation
}

func (s *mutantState) Apply(seat games.Seat, a *agentv1.Action) ([]*eventsv1.MatchEvent, error) {
	if s.mut == "accepts-pass" && a.GetMove().GetPass() != nil && len(s.ToMove()) > 0 {
		return nil, nil
	}
	if s.mut == "plain-error" && a.GetMove() == nil {
		return nil, errors.New("no move")
	}
	if s.mut == "refuses-legal-proposals" && a.GetMove().GetPropose() != nil {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "no proposals today")
	}
	if s.mut == "fills-in-fixed-amounts" && a.GetMove().GetPropose() != nil {
		// P2 must give its one chip (Observe's bound), but a proposal without it passes too.
		a = proto.CloneOf(a)
		alloc := a.GetMove().GetPropose().GetProposal().GetAllocation()
		alloc.Shares = slices.DeleteFunc(alloc.Shares, func(sh *gamev1.SeatShare) bool {
			if sh.GetSeat() != 1 {
				return false
			}
			if n, ok := sh.GetGives()[chips]; ok && n != 1 {
				return false // the ultimatum refuses the resource it does not know
			}
			delete(sh.Gives, chips)
			return len(sh.GetGives()) == 0 && len(sh.GetReceives()) == 0
		})
	}
	ev, err := s.State.Apply(seat, a)
	if err != nil {
		s.refusals++
		return nil, err
	}
	if s.mut == "changes-action" {
		a.PrivateReasoning = "tidied by the rules"
	}
	s.reasoning = append(s.reasoning, a.GetPrivateReasoning())
	s.notes = append(s.notes, a.GetPrivateNotes())
	s.cached = nil
	return ev, nil
}

// LastMove is the wrapped state's, but for misworded-move.
func (s *mutantState) LastMove(seat games.Seat, turn int32) (string, []games.Seat, bool) {
	summary, to, ok := s.State.(games.MoveWorder).LastMove(seat, turn)
	if s.mut == "misworded-move" {
		summary += " (as the record has it)"
	}
	return summary, to, ok
}

// ObserveUnbriefed is the mutant's Observe without its briefing, but for unbriefed-differs.
func (s *mutantState) ObserveUnbriefed(seat games.Seat) *agentv1.Observation {
	o := proto.CloneOf(s.Observe(seat))
	o.Briefing = ""
	if s.mut == "unbriefed-differs" {
		o.MaxTurns++
	}
	return o
}

func (s *mutantState) Observe(seat games.Seat) *agentv1.Observation {
	o := s.State.Observe(seat)
	switch s.mut {
	case "leaks-reasoning":
		o.Briefing += strings.Join(s.reasoning, " ")
	case "leaks-notes":
		o.Briefing += strings.Join(s.notes, " ")
	case "drops-messages":
		for _, h := range o.History {
			h.Messages = nil
		}
	case "impure-observe":
		s.observes++
		o.Briefing += fmt.Sprint(s.observes)
	case "aliases-observation":
		if c, ok := s.cached[seat]; ok {
			return c
		}
		if s.cached == nil {
			s.cached = map[games.Seat]*agentv1.Observation{}
		}
		s.cached[seat] = o
	case "refusal-changes-state":
		o.Briefing += fmt.Sprint(s.refusals)
	case "legal-moves-for-waiting-seat":
		if !slices.Contains(s.ToMove(), seat) {
			o.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_REJECT}
		}
	case "replay-differs":
		o.Briefing += fmt.Sprint(s.start)
	case "fills-in-fixed-amounts":
		if slices.Contains(o.GetLegalMoves(), gamev1.MoveKind_MOVE_KIND_PROPOSE) {
			o.ProposalBounds = append(o.ProposalBounds, &gamev1.Bound{Seat: 1, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: chips, Min: 1, Max: 1})
		}
	case "panics-in-observe":
		if len(s.ToMove()) == 0 {
			panic("no state to observe")
		}
	}
	return o
}

func (s *mutantState) Default(seat games.Seat) *agentv1.Action {
	if s.mut == "illegal-default" {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}
	}
	return s.State.Default(seat)
}

func (s *mutantState) Outcome() *matchv1.Outcome {
	out := s.State.Outcome()
	if s.mut == "wrong-payoff-count" {
		out.Payoffs = out.Payoffs[:1]
	}
	return out
}

func (s *mutantState) Clone() games.State {
	if s.mut == "shallow-clone" {
		return s
	}
	c := *s
	c.State = s.State.Clone()
	c.reasoning = slices.Clone(s.reasoning)
	c.notes = slices.Clone(s.notes)
	c.cached = nil
	return &c
}
