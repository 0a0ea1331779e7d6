package datagame_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/referee/games/datagame"
	"github.com/parley-arena/parley/referee/games/gamefile"
)

var fam = datagame.Family{Name: "matrix", Kind: gamefile.KindMatrix, Other: "sequential", DefaultGame: "prisoners_dilemma"}

// TestSource: the default game, a named one, a game of the other kind, and a file not loaded.
func TestSource(t *testing.T) {
	f, name, err := fam.Source(nil, nil)
	if err != nil || *name != "prisoners_dilemma" || f.Table == nil {
		t.Fatalf("default: %v %v %v", f, name, err)
	}
	for _, tc := range []struct {
		game, file *string
		want       string
	}{
		{proto.String("monopoly"), nil, "play it with the sequential game"},
		{proto.String("nope"), nil, "no shipped game"},
		{nil, proto.String("x.yaml"), "was not loaded"},
	} {
		if _, _, err := fam.Source(tc.game, tc.file); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Source(%v, %v) = %v, want %q", tc.game, tc.file, err, tc.want)
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

// TestSettle bounds the talk and the opener by the number of players.
func TestSettle(t *testing.T) {
	three := []string{"Ann", "Ben", "Cat"}
	s, err := fam.Settle(three, nil, proto.String("5/2"), proto.Int32(2), proto.Int32(2), nil)
	if err != nil || s.Scale.RatString() != "5/2" || s.Opener != 2 || s.Talk != 2 || s.Neutral {
		t.Fatalf("settle: %+v %v", s, err)
	}
	if tk := s.StartTalk(); tk.Speaker() != 2 || tk.Seats != 3 {
		t.Errorf("talk %+v", tk)
	}
	for _, tc := range []struct {
		players      []string
		talk, opener int32
		want         string
	}{
		{three, 1, 3, "talk_opener must be a seat from 0 to 2"},
		{nil, 1, 2, "talk_opener must be a seat from 0 to 1"},
		{three, 51, 0, "talk_rounds"},
		{three, -1, 0, "talk_rounds"},
	} {
		if _, err := fam.Settle(tc.players, nil, nil, &tc.talk, &tc.opener, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v talk %d opener %d: %v, want %q", tc.players, tc.talk, tc.opener, err, tc.want)
		}
	}
	if _, err := fam.Settle(three, nil, proto.String("0"), nil, nil, nil); err == nil {
		t.Error("scale 0 accepted")
	}
	if obs, ok := s.Observation("matrix", 3, 1, 1, nil); ok || !strings.Contains(obs.GetBriefing(), "0 (Ann), 1 (Ben) and 2 (Cat)") {
		t.Errorf("an outsider's observation: %v", obs)
	}
}
