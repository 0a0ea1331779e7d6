package deliberation_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"io/fs"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/deliberation"
)

// dataDir is the authors' game folders, data/deliberation, relative to this package: the
// repository root is three levels up.
var dataDir = filepath.Join("..", "..", "..", "data", "deliberation")

// folders opens folders on disk, as the catalog does.
func folders(path string) (fs.FS, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	return os.DirFS(path), nil
}

// newGame is the game with folder import.
func newGame() games.Game { return deliberation.New(deliberation.WithFolders(folders)) }

// params builds deliberation GameParams from "key=value" strings, as --param does.
func params(t testing.TB, kvs ...string) *matchv1.GameParams {
	t.Helper()
	gp, err := games.ParseParams(deliberation.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	if gp.GetDeliberation() == nil {
		gp.Family = &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{}}
	}
	return gp
}

// setup resolves "key=value" parameters into a Setup.
func setup(t testing.TB, kvs ...string) *deliberation.Setup {
	t.Helper()
	resolved, err := newGame().Resolve(params(t, kvs...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := deliberation.NewSetup(resolved)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newState starts a match of resolved kvs.
func newState(t testing.TB, seed uint64, kvs ...string) games.State {
	t.Helper()
	resolved, err := newGame().Resolve(params(t, kvs...))
	if err != nil {
		t.Fatal(err)
	}
	st, err := newGame().NewState(resolved, seed)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// deal parses a deal against s.
func deal(t testing.TB, s *deliberation.Setup, text string) deliberation.Deal {
	t.Helper()
	d, err := s.ParseDeal(text)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// dealProto writes "A1,B2" as a generic deal, issues from the option ids.
func dealProto(text string) *gamev1.Deal {
	d := &gamev1.Deal{}
	for _, o := range strings.Split(text, ",") {
		d.Choices = append(d.Choices, &gamev1.IssueChoice{Issue: o[:1], Option: o})
	}
	return d
}

func dealTerms(text string) *gamev1.Proposal {
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: dealProto(text)}}
}

// Moves used by the tests.

func propose(text, message string) *agentv1.Action {
	return &agentv1.Action{
		Move:     &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: dealTerms(text)}}},
		Messages: []*gamev1.Message{{Text: message}},
	}
}

func say(message, attached string) *agentv1.Action {
	m := &gamev1.Message{Text: message}
	if attached != "" {
		m.Proposal = dealTerms(attached)
	}
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, Messages: []*gamev1.Message{m}}
}

func reject(message string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, Messages: []*gamev1.Message{{Text: message}}}
}

// talkAll plays the opening (as the rules require) and then every talk turn with say moves
// without deals, stopping before the final turn.
func talkAll(t testing.TB, st games.State, s *deliberation.Setup) {
	t.Helper()
	mustApply(t, st, 0, propose(s.DealString(s.Opening), "Here is where we start."))
	for i := 0; i < s.TalkTurns(); i++ {
		seat := st.ToMove()[0]
		mustApply(t, st, seat, say(fmt.Sprintf("turn %d", st.Turn()), ""))
	}
}

func mustApply(t testing.TB, st games.State, seat games.Seat, a *agentv1.Action) {
	t.Helper()
	if _, err := st.Apply(seat, a); err != nil {
		t.Fatalf("seat %d: %v refused: %v", seat, a, err)
	}
}
