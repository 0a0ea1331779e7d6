package datagame_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	sequentialv1 "github.com/parley-arena/parley/gen/go/parley/games/sequential/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/datagame"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/pretalk"
)

var fam = datagame.Family{Name: "matrix", Kind: gamefile.KindMatrix, Other: "sequential", Data: "table"}

// TestSource: a named game, a game of the other kind, and a file not loaded.
func TestSource(t *testing.T) {
	f, err := fam.Source(proto.String("prisoners_dilemma"), nil)
	if err != nil || f.Table == nil {
		t.Fatalf("prisoners_dilemma: %v %v", f, err)
	}
	for _, tc := range []struct {
		game, file *string
		want       string
	}{
		{proto.String("monopoly"), nil, "play it with the sequential game"},
		{proto.String("nope"), nil, "no shipped game"},
		{nil, proto.String("x.yaml"), "was not loaded"},
	} {
		if _, err := fam.Source(tc.game, tc.file); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Source(%v, %v) = %v, want %q", tc.game, tc.file, err, tc.want)
		}
	}
}

// TestFill fills the declared defaults, but not the shipped game's name when the params carry
// the game itself or name a file, and refuses the talk outside its declared range.
func TestFill(t *testing.T) {
	table := &matrixv1.Table{Title: "mine"}
	for _, tc := range []struct {
		in       *matrixv1.Params
		wantGame string
	}{
		{&matrixv1.Params{}, "prisoners_dilemma"},
		{&matrixv1.Params{Game: proto.String("stag_hunt")}, "stag_hunt"},
		{&matrixv1.Params{Table: table}, ""},
		{&matrixv1.Params{File: proto.String("x.yaml")}, ""},
		{&matrixv1.Params{Game: proto.String("stag_hunt"), Table: table}, "stag_hunt"},
	} {
		out, err := fam.Fill(&matchv1.GameParams{Family: &matchv1.GameParams_Matrix{Matrix: tc.in}})
		if err != nil {
			t.Fatalf("%v: %v", tc.in, err)
		}
		p := out.GetMatrix()
		if p.GetGame() != tc.wantGame || p.TalkRounds == nil || p.GetRounds() != 1 || !proto.Equal(p.GetTable(), tc.in.GetTable()) {
			t.Errorf("Fill(%v) = %v, want game %q and the defaults", tc.in, p, tc.wantGame)
		}
	}
	for _, talk := range []int32{-1, pretalk.MaxRounds + 1} {
		in := &matchv1.GameParams{Family: &matchv1.GameParams_Matrix{Matrix: &matrixv1.Params{TalkRounds: proto.Int32(talk)}}}
		if _, err := fam.Fill(in); err == nil || !strings.Contains(err.Error(), "talk_rounds") {
			t.Errorf("talk_rounds %d: %v", talk, err)
		}
	}
	if _, err := fam.Fill(&matchv1.GameParams{Family: &matchv1.GameParams_Sequential{Sequential: &sequentialv1.Params{}}}); err == nil {
		t.Error("the sequential game's params filled as the matrix game's")
	}
}

// TestTalkLimitDeclared: both games declare the talk's limit that package pretalk plays.
func TestTalkLimitDeclared(t *testing.T) {
	for _, m := range []proto.Message{&matrixv1.Params{}, &sequentialv1.Params{}} {
		fd := m.ProtoReflect().Descriptor().Fields().ByName("talk_rounds")
		if d := games.Declared(fd); d.GetMax() != pretalk.MaxRounds || d.GetMin() != 0 {
			t.Errorf("%s declares %d to %d, pretalk plays 0 to %d", fd.FullName(), d.GetMin(), d.GetMax(), pretalk.MaxRounds)
		}
	}
}

// TestLoad reads a file through the reader given, refusing the other kind and read errors.
func TestLoad(t *testing.T) {
	tree, _ := gamefile.ShippedSource("monopoly")
	table, _ := gamefile.ShippedSource("stag_hunt")
	read := func(path string) ([]byte, error) {
		switch path {
		case "tree.yaml":
			return tree, nil
		case "table.yaml":
			return table, nil
		}
		return nil, errors.New("no such file")
	}
	if f, err := fam.Load("table.yaml", read); err != nil || f.Table.GetTitle() != "Stag hunt" {
		t.Errorf("table: %v %v", f, err)
	}
	if _, err := fam.Load("tree.yaml", read); err == nil || !strings.Contains(err.Error(), "holds a tree game") {
		t.Errorf("tree: %v", err)
	}
	if _, err := fam.Load("x.yaml", read); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing: %v", err)
	}
}

// TestSettle reads the shared params and bounds the opener by the number of players.
func TestSettle(t *testing.T) {
	three := []string{"Ann", "Ben", "Cat"}
	p := &matrixv1.Params{Scale: proto.String("5/2"), TalkRounds: proto.Int32(2), TalkOpener: proto.Int32(2)}
	s, err := fam.Settle(three, nil, p)
	if err != nil || s.Scale.RatString() != "5/2" || s.Opener != 2 || s.Talk != 2 || s.Neutral {
		t.Fatalf("settle: %+v %v", s, err)
	}
	if tk := s.StartTalk(); tk.Speaker() != 2 || tk.Seats != 3 {
		t.Errorf("talk %+v", tk)
	}
	for _, tc := range []struct {
		players []string
		opener  int32
		want    string
	}{
		{three, 3, "talk_opener must be a seat from 0 to 2"},
		{nil, 2, "talk_opener must be a seat from 0 to 1"},
	} {
		if _, err := fam.Settle(tc.players, nil, &matrixv1.Params{TalkOpener: &tc.opener}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v opener %d: %v, want %q", tc.players, tc.opener, err, tc.want)
		}
	}
	if _, err := fam.Settle(three, nil, &matrixv1.Params{Scale: proto.String("0")}); err == nil {
		t.Error("scale 0 accepted")
	}
	if s, err := fam.Settle(three, &gamev1.Rational{Num: 7, Den: 2}, &matrixv1.Params{}); err != nil || s.Scale.RatString() != "7/2" {
		t.Errorf("the game's own default scale: %v %v", s.Scale, err)
	}
	if obs, ok := s.Observation("matrix", 3, 1, 1, nil); ok || !strings.Contains(obs.GetBriefing(), "0 (Ann), 1 (Ben) and 2 (Cat)") {
		t.Errorf("an outsider's observation: %v", obs)
	}
}

// TestLoadFileAndResolve: a file named in the params is read into them (not when they carry
// the game already, and refused when it holds the other kind), and Resolve fills in the game
// (the one loaded, else the shipped one named) and its default scale, for both families.
func TestLoadFileAndResolve(t *testing.T) {
	tree := datagame.Family{Name: "sequential", Kind: gamefile.KindTree, Other: "matrix", Data: "tree"}
	read := func(path string) ([]byte, error) { return gamefile.ShippedSource(strings.TrimSuffix(path, ".yaml")) }
	golden, err := gamefile.Shipped("golden_balls")
	if err != nil {
		t.Fatal(err)
	}

	gp := &matchv1.GameParams{Family: &matchv1.GameParams_Matrix{Matrix: &matrixv1.Params{File: proto.String("golden_balls.yaml")}}}
	loaded, err := fam.LoadFile(gp, read)
	if err != nil {
		t.Fatal(err)
	}
	if gp.GetMatrix().Table != nil {
		t.Error("LoadFile changed the params it was given")
	}
	if !proto.Equal(loaded.GetMatrix().GetTable(), golden.Table) {
		t.Errorf("loaded table %v, want golden_balls'", loaded.GetMatrix().GetTable())
	}
	p, err := datagame.Resolve[*matrixv1.Params](fam, loaded, gamefile.CheckTable)
	if err != nil {
		t.Fatal(err)
	}
	if p.GetScale() != "100" || !proto.Equal(p.GetTable(), golden.Table) || p.Game != nil {
		t.Errorf("resolved golden_balls file: scale %q, game %v, table %v; want scale 100 (its default), no game name, its table", p.GetScale(), p.Game, p.GetTable().GetTitle())
	}

	own := &matchv1.GameParams{Family: &matchv1.GameParams_Matrix{Matrix: &matrixv1.Params{File: proto.String("x.yaml"), Table: golden.Table}}}
	if got, err := fam.LoadFile(own, read); err != nil || got != own {
		t.Errorf("LoadFile with the table given read the file: %v, %v", got, err)
	}
	if _, err := tree.LoadFile(&matchv1.GameParams{Family: &matchv1.GameParams_Sequential{Sequential: &sequentialv1.Params{File: proto.String("stag_hunt.yaml")}}}, read); err == nil || !strings.Contains(err.Error(), "play it with the matrix game") {
		t.Errorf("a matrix file for the sequential game: %v", err)
	}

	s, err := datagame.Resolve[*sequentialv1.Params](tree, &matchv1.GameParams{Family: &matchv1.GameParams_Sequential{Sequential: &sequentialv1.Params{Game: proto.String("monopoly"), Scale: proto.String("3/2")}}}, gamefile.CheckTree)
	if err != nil {
		t.Fatal(err)
	}
	monopoly, err := gamefile.Shipped("monopoly")
	if err != nil {
		t.Fatal(err)
	}
	if s.GetScale() != "3/2" || !proto.Equal(s.GetTree(), monopoly.Tree) {
		t.Errorf("resolved monopoly: scale %q, tree %q", s.GetScale(), s.GetTree().GetTitle())
	}
	bad := func(*sequentialv1.Tree) error { return errors.New("too deep") }
	if _, err := datagame.Resolve[*sequentialv1.Params](tree, &matchv1.GameParams{Family: &matchv1.GameParams_Sequential{Sequential: &sequentialv1.Params{}}}, bad); err == nil || err.Error() != "sequential: tree: too deep" {
		t.Errorf("a tree its check refuses: %v", err)
	}
}
