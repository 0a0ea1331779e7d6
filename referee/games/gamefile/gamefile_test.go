package gamefile_test

import (
	"errors"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"google.golang.org/protobuf/proto"
)

const chickenYAML = `
# A user's own game, with labels, a fraction and a decimal.
title: Chicken
players: [Ann, Ben]
rows: [{id: S, label: swerve}, {id: T, label: straight}]
cols: [swerve, go straight]
payoffs:
  - [[3, 3], ["1/2", 4]]
  - [[4, 0.5], [0, 0]]
`

const chickenJSON = `{"kind": "matrix", "title": "Chicken", "players": ["Ann", "Ben"],
 "rows": [{"id": "S", "label": "swerve"}, {"id": "T", "label": "straight"}],
 "cols": ["swerve", "go straight"],
 "payoffs": [[[3, 3], ["1/2", 4]], [[4, 0.5], [0, 0]]]}`

// TestParseMatrix reads the same game from YAML and JSON.
func TestParseMatrix(t *testing.T) {
	y, err := gamefile.Parse([]byte(chickenYAML))
	if err != nil {
		t.Fatal(err)
	}
	j, err := gamefile.Parse([]byte(chickenJSON))
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(y.Table, j.Table) || y.Kind != gamefile.KindMatrix {
		t.Fatalf("YAML and JSON differ:\n%v\n%v", y.Table, j.Table)
	}
	tb := y.Table
	if tb.GetCols()[1].GetId() != "go_straight" || tb.GetCols()[1].GetLabel() != "go straight" || tb.GetRows()[0].GetLabel() != "swerve" {
		t.Errorf("actions %v %v", tb.GetRows(), tb.GetCols())
	}
	m, err := gamefile.MatrixOf(tb, big.NewRat(2, 1))
	if err != nil {
		t.Fatal(err)
	}
	// Scaled by 2: (S, straight) pays 1/2*2 = 1 and 8; (T, S) pays 8 and 1.
	p := m.Payoffs(equilibria.Profile{0, 1})
	if p[0].Cmp(big.NewRat(1, 1)) != 0 || p[1].Cmp(big.NewRat(8, 1)) != 0 {
		t.Errorf("scaled payoffs %v", p)
	}
}

// TestParseTree reads a tree with players by name and index.
func TestParseTree(t *testing.T) {
	f, err := gamefile.Parse([]byte(`
root:
  player: 0
  moves:
    - {id: out, leaf: [0, 2]}
    - id: in
      node:
        player: Bob
        moves:
          - {label: share it, leaf: ["2.5", 1]}
          - {id: fight, leaf: [-1, -1]}
`))
	if err != nil {
		t.Fatal(err)
	}
	tr := f.Tree
	if f.Kind != gamefile.KindTree || len(tr.GetNodes()) != 5 || tr.GetNodes()[2].GetPlayer() != 1 || tr.GetNodes()[2].GetBranches()[0].GetId() != "share_it" {
		t.Fatalf("tree %v", tr)
	}
	m, err := gamefile.TreeOf(tr, big.NewRat(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if s := equilibria.BackwardInduction(m); s.Path.Payoffs[0].Cmp(big.NewRat(5, 2)) != 0 {
		t.Errorf("SPE %v", s.Path)
	}
}

// TestParseThreePlayers reads a matrix game and a tree of three players.
func TestParseThreePlayers(t *testing.T) {
	f, err := gamefile.Parse([]byte(`
players: [Ann, Ben, Cat]
actions: [[in, out], [in, out], [{id: x, label: stay}]]
cells: [[1, 2, 3], [4, 5, 6], [7, 8, 9], ["1/2", 0, 0]]
`))
	if err != nil {
		t.Fatal(err)
	}
	acts := gamefile.TableActions(f.Table)
	if len(acts) != 3 || len(f.Table.GetRows()) != 0 || acts[2][0].GetLabel() != "stay" {
		t.Fatalf("table %v", f.Table)
	}
	m, err := gamefile.MatrixOf(f.Table, big.NewRat(2, 1))
	if err != nil {
		t.Fatal(err)
	}
	// (out, in, x) is the third cell: 7, 8, 9 times 2.
	if p := m.Payoffs(equilibria.Profile{1, 0, 0}); p[2].Cmp(big.NewRat(18, 1)) != 0 {
		t.Errorf("payoffs of (out, in, x): %v", p)
	}
	// Written in the form for any number of players, a two-player game is stored as rows and
	// cols.
	f, err = gamefile.Parse([]byte("actions: [[a, b], [c]]\ncells: [[1, 2], [3, 4]]\n"))
	if err != nil || len(f.Table.GetRows()) != 2 || len(f.Table.GetPlayerActions()) != 0 {
		t.Fatalf("two players by actions: %v %v", f, err)
	}
	f, err = gamefile.Parse([]byte(`
players: [Ann, Ben, Cat]
root:
  player: Cat
  moves:
    - {id: a, leaf: [1, 2, 3]}
    - {id: b, node: {player: 1, moves: [{id: c, leaf: [0, 0, 0]}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := gamefile.TreeOf(f.Tree, big.NewRat(1, 1))
	if err != nil || tr.Players() != 3 || tr.Node(0).Player != 2 || tr.Node(2).Player != 1 {
		t.Fatalf("three-player tree: %v %v", f.Tree, err)
	}
}

// TestParseErrors: each malformed file is refused with a reason naming the problem.
func TestParseErrors(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"unknown key", "rows: [a]\ncols: [b]\npayoffs: [[[1, 1]]]\ncolour: red\n", "colour"},
		{"ragged payoffs", "rows: [a, b]\ncols: [x]\npayoffs: [[[1, 1]]]\n", "payoffs has 1 rows"},
		{"short cell", "rows: [a]\ncols: [x]\npayoffs: [[[1]]]\n", "want 2 payoffs"},
		{"bad number", "rows: [a]\ncols: [x]\npayoffs: [[[1, one]]]\n", "not a number"},
		{"exponent", "rows: [a]\ncols: [x]\npayoffs: [[[1, 1e3]]]\n", "not a number"},
		{"negative denominator", "rows: [a]\ncols: [x]\npayoffs: [[[1, \"1/-2\"]]]\n", "positive denominator"},
		{"huge", "rows: [a]\ncols: [x]\npayoffs: [[[1, 99999999999999999]]]\n", "too large"},
		{"duplicate ids", "rows: [a, a]\ncols: [x]\npayoffs: [[[1, 1]], [[1, 1]]]\n", "two of Alice's actions"},
		{"bad id", "rows: [{id: \"a b\", label: x}]\ncols: [x]\npayoffs: [[[1, 1]]]\n", "only letters"},
		{"no rows", "rows: []\ncols: [x]\npayoffs: []\n", "1 to 64"},
		{"both kinds", "rows: [a]\ncols: [x]\npayoffs: [[[1, 1]]]\nroot: {player: 0, moves: [{id: a, leaf: [1, 1]}]}\n", "not both"},
		{"three names, two players", "players: [A, B, C]\nrows: [a]\ncols: [x]\npayoffs: [[[1, 1]]]\n", "3 names for a game of 2"},
		{"same players", "players: [A, A]\nrows: [a]\ncols: [x]\npayoffs: [[[1, 1]]]\n", "two players are called"},
		{"unnamed three", "actions: [[a], [b], [c]]\ncells: [[1, 1, 1]]\n", "names them"},
		{"cells missing", "players: [A, B, C]\nactions: [[a, b], [c], [d]]\ncells: [[1, 1, 1]]\n", "2 profiles"},
		{"short n cell", "players: [A, B, C]\nactions: [[a], [c], [d]]\ncells: [[1, 1]]\n", "cell 1 (a, c, d): want 3 payoffs"},
		{"both forms", "players: [A, B]\nactions: [[a], [c]]\ncells: [[1, 1]]\nrows: [a]\n", "not both"},
		{"one player", "players: [A]\nactions: [[a]]\ncells: [[1]]\n", "2 to 16"},
		{"tree leaf short", "players: [A, B, C]\nroot: {player: C, moves: [{id: a, leaf: [1, 1]}]}\n", "want 3 payoffs"},
		{"unknown player", "root: {player: Carol, moves: [{id: a, leaf: [1, 1]}]}\n", "Carol"},
		{"leaf and node", "root: {player: 0, moves: [{id: a, leaf: [1, 1], node: {player: 1, moves: [{id: b, leaf: [0, 0]}]}}]}\n", "exactly one of leaf"},
		{"no moves", "root: {player: 0, moves: []}\n", "needs moves"},
		{"duplicate moves", "root: {player: 0, moves: [{id: a, leaf: [1, 1]}, {id: a, leaf: [0, 0]}]}\n", "two moves"},
		{"scale without name", "scale: {default: 3}\nrows: [a]\ncols: [x]\npayoffs: [[[1, 1]]]\n", "scale needs a name"},
		{"bad kind", "kind: poker\nrows: [a]\ncols: [x]\npayoffs: [[[1, 1]]]\n", "want matrix or tree"},
		{"not yaml", "rows: [a\n", "invalid game file"},
		{"long label", "rows: [" + strings.Repeat("x", 70) + "]\ncols: [x]\npayoffs: [[[1, 1]]]\n", "at most"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gamefile.Parse([]byte(tc.file))
			if err == nil || !errors.Is(err, gamefile.ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want an ErrFormat mentioning %q", err, tc.want)
			}
		})
	}
}

// TestScale: the parameter wins over the game's default; it must be positive.
func TestScale(t *testing.T) {
	f, err := gamefile.Shipped("golden_balls")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := gamefile.Scale(nil, f.Table.GetScaleDefault()); err != nil || s.Cmp(big.NewRat(100, 1)) != 0 || f.Table.GetScaleName() != "jackpot" {
		t.Errorf("default scale %v %v", s, err)
	}
	v := "27.5"
	if s, err := gamefile.Scale(&v, f.Table.GetScaleDefault()); err != nil || s.Cmp(big.NewRat(55, 2)) != 0 {
		t.Errorf("scale 27.5 = %v %v", s, err)
	}
	for _, bad := range []string{"0", "-3", "x"} {
		if _, err := gamefile.Scale(&bad, nil); err == nil {
			t.Errorf("scale %q accepted", bad)
		}
	}
}

// TestNeutral: neutral copies hide ids, labels, title and description, and leave the original.
func TestNeutral(t *testing.T) {
	f, _ := gamefile.Shipped("prisoners_dilemma")
	n := gamefile.NeutralTable(f.Table)
	if n.GetTitle() != "" || n.GetDescription() != "" || n.GetRows()[1].GetId() != "choice_2" || n.GetCols()[0].GetLabel() != "choice_1" {
		t.Errorf("neutral table %v", n)
	}
	if f.Table.GetRows()[1].GetId() != "defect" {
		t.Errorf("NeutralTable changed the original")
	}
	tr, _ := gamefile.Shipped("monopoly")
	nt := gamefile.NeutralTree(tr.Tree)
	if nt.GetNodes()[2].GetBranches()[1].GetId() != "choice_2" || nt.GetTitle() != "" {
		t.Errorf("neutral tree %v", nt)
	}
}

// TestLibrary: every shipped file parses, and names are refused when they are not games.
func TestLibrary(t *testing.T) {
	if got := len(gamefile.Library("")); got != 18 {
		t.Errorf("%d shipped games, want 18", got)
	}
	for _, bad := range []string{"", "../x", "nope", "library/duopoly"} {
		if _, err := gamefile.Shipped(bad); err == nil {
			t.Errorf("Shipped(%q) accepted", bad)
		}
	}
}

// FuzzParse: arbitrary bytes are refused with ErrFormat or give a game that converts to an
// exact model without error; nothing panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(chickenYAML))
	f.Add([]byte(chickenJSON))
	for _, name := range []string{"duopoly", "trigame", "golden_balls"} {
		b, _ := gamefile.ShippedSource(name)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := gamefile.Parse(data)
		if err != nil {
			if !errors.Is(err, gamefile.ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		switch g.Kind {
		case gamefile.KindMatrix:
			if _, err := gamefile.MatrixOf(g.Table, big.NewRat(1, 1)); err != nil {
				t.Fatalf("parsed table does not convert: %v", err)
			}
		case gamefile.KindTree:
			if _, err := gamefile.TreeOf(g.Tree, big.NewRat(1, 1)); err != nil {
				t.Fatalf("parsed tree does not convert: %v", err)
			}
		default:
			t.Fatalf("kind %q", g.Kind)
		}
	})
}

// TestReadmeExamples parses every YAML example of README.md, so the documentation stays valid.
func TestReadmeExamples(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), "```yaml\n")[1:]
	if len(blocks) != 3 {
		t.Fatalf("%d YAML examples in README.md, want 3", len(blocks))
	}
	for i, blk := range blocks {
		text, _, _ := strings.Cut(blk, "```")
		if _, err := gamefile.Parse([]byte(text)); err != nil {
			t.Errorf("example %d: %v", i+1, err)
		}
	}
}
