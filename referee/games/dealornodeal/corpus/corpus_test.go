package corpus_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/games/dealornodeal/corpus"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

func parseFile(t testing.TB, path string) *corpus.Corpus {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Parse(filepath.Base(path), b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSample reads the same seven invented lines in formats A and B: mirrors two lines apart
// are paired, a repeated set-up with another text stays a dialogue of its own, an exact repeat
// of a paired line is a third dialogue, and both formats give the same datapoints.
func TestSample(t *testing.T) {
	tagged := parseFile(t, "testdata/sample_tagged.txt")
	raw := parseFile(t, "testdata/sample_raw.txt")
	want := corpus.Stats{Lines: 7, Dialogues: 5, BothSides: 2, OneSide: 3, Deal: 2, Disagree: 1, NoAgreement: 1, Disconnect: 1}
	for _, c := range []*corpus.Corpus{tagged, raw} {
		if got := c.Stats(); got != want {
			t.Errorf("%s: stats %+v, want %+v", c.Format, got, want)
		}
		var kept, mirrors []int
		for _, d := range c.Dialogues {
			kept = append(kept, d.Line.Number)
			if d.Mirror != nil {
				mirrors = append(mirrors, d.Mirror.Number)
			}
		}
		if !slices.Equal(kept, []int{1, 2, 4, 6, 7}) || !slices.Equal(mirrors, []int{3, 5}) {
			t.Errorf("%s: kept lines %v, mirrors %v", c.Format, kept, mirrors)
		}
	}
	if tagged.Format != corpus.FormatTagged || raw.Format != corpus.FormatRaw {
		t.Errorf("formats %v %v", tagged.Format, raw.Format)
	}
	a, b := tagged.Datapoints(), raw.Datapoints()
	for i := range a {
		x, y := a[i], b[i]
		if !slices.Equal(x.Game.Counts, y.Game.Counts) || !slices.Equal(x.Game.Values[0], y.Game.Values[0]) || !slices.Equal(x.Game.Values[1], y.Game.Values[1]) ||
			x.Outcome != y.Outcome || !slices.Equal(x.Deal, y.Deal) || x.Messages != y.Messages {
			t.Errorf("datapoint %d: tagged %+v, raw %+v", i+1, x, y)
		}
	}
	first := a[0]
	if !slices.Equal(first.Game.Values[0], []int{4, 1, 2}) || !slices.Equal(first.Game.Values[1], []int{0, 3, 2}) || !slices.Equal(first.Deal, solution.Alloc{1, 0, 2}) || first.Messages != 2 {
		t.Errorf("first datapoint %+v", first)
	}
	if p := first.Game.Payoffs(first.Deal); p != [2]int{8, 6} {
		t.Errorf("first deal pays %v, want 8 and 6", p)
	}
	// Writing the raw lines in the tagged format gives the tagged file back.
	var lines []*corpus.Line
	for _, l := range raw.Lines {
		lines = append(lines, l)
	}
	want2, _ := os.ReadFile("testdata/sample_tagged.txt")
	if got := corpus.Lines(lines); !bytes.Equal(got, want2) {
		t.Errorf("raw lines written as tagged:\n%s\nwant\n%s", got, want2)
	}
}

// TestContexts reads format C: two set-ups, Alice the first line of each pair.
func TestContexts(t *testing.T) {
	c := parseFile(t, "testdata/sample_contexts.txt")
	if c.Format != corpus.FormatContexts || len(c.Dialogues) != 2 {
		t.Fatalf("%v, %d set-ups", c.Format, len(c.Dialogues))
	}
	d := c.Datapoints()[1]
	if !slices.Equal(d.Game.Values[0], []int{1, 5, 2}) || !slices.Equal(d.Game.Values[1], []int{2, 1, 3}) || d.Outcome != corpus.OutcomeNone {
		t.Errorf("set-up 2: %+v", d)
	}
}

// TestParseErrors refuses lines that are not in a corpus format.
func TestParseErrors(t *testing.T) {
	for name, text := range map[string]string{
		"empty":          "\n\n",
		"short context":  "<input> 1 4 2 1 </input> <dialogue> YOU: <selection> </dialogue> <output> <disagree> <disagree> <disagree> <disagree> <disagree> <disagree> </output> <partner_input> 1 0 2 3 2 2 </partner_input>",
		"no selection":   "<input> 1 4 2 1 2 2 </input> <dialogue> YOU: hi <eos> </dialogue> <output> <disagree> <disagree> <disagree> <disagree> <disagree> <disagree> </output> <partner_input> 1 0 2 3 2 2 </partner_input>",
		"deal too large": "<input> 1 4 2 1 2 2 </input> <dialogue> YOU: <selection> </dialogue> <output> item0=1 item1=2 item2=2 item0=1 item1=0 item2=0 </output> <partner_input> 1 0 2 3 2 2 </partner_input>",
		"counts differ":  "<input> 1 4 2 1 2 2 </input> <dialogue> YOU: <selection> </dialogue> <output> <disagree> <disagree> <disagree> <disagree> <disagree> <disagree> </output> <partner_input> 2 0 2 3 2 2 </partner_input>",
		"raw bad flag":   "1 4 2 1 2 2 YOU: hi <eos> THEM: <selection> item0=1 item1=0 item2=2 <eos> reward=8 maybe 1 0 2 3 2 2",
		"odd contexts":   "1 4 2 1 2 2\n1 0 2 3 2 2\n3 1 1 5 1 2\n",
	} {
		if _, err := corpus.Parse(name, []byte(text)); !errors.Is(err, corpus.ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

// TestEasyAndHardest: the seed's filters on hand-made datapoints.
func TestEasyAndHardest(t *testing.T) {
	g := func(counts, a, b []int) corpus.Datapoint {
		return corpus.Datapoint{Game: solution.Game{Counts: counts, Values: [2][]int{a, b}}}
	}
	// Both value books most (6 and 4 per book); the rest is worth 4 to Alice (< 6) : not easy.
	if corpus.Easy(g([]int{1, 2, 2}, []int{6, 1, 1}, []int{4, 2, 1}).Game) {
		t.Error("Alice's other items are worth 4 < 6: not easy")
	}
	// Both value books most; the rest is worth 6 >= 4 to Alice and 6 >= 4 to Bob: easy.
	if !corpus.Easy(g([]int{1, 2, 2}, []int{4, 2, 1}, []int{4, 1, 2}).Game) {
		t.Error("easy set-up not recognised")
	}
	points := []corpus.Datapoint{
		g([]int{1, 2, 2}, []int{2, 3, 1}, []int{8, 1, 0}), // distance 6+2+1 = 9
		g([]int{2, 2, 2}, []int{1, 2, 2}, []int{2, 2, 1}), // all even: dropped
		g([]int{1, 2, 2}, []int{2, 3, 1}, []int{8, 1, 0}), // repeated set-up: dropped
		g([]int{1, 2, 2}, []int{4, 2, 1}, []int{4, 1, 2}), // easy: dropped
		g([]int{1, 1, 3}, []int{5, 2, 1}, []int{2, 5, 1}), // distance 6
		g([]int{3, 1, 1}, []int{1, 5, 2}, []int{2, 1, 3}), // distance 1+4+1 = 6
		g([]int{1, 4, 1}, []int{2, 1, 4}, []int{4, 1, 2}), // distance 4
	}
	sel, k, rest := corpus.Hardest(points, 2)
	if rest != 4 || k != 6 || len(sel) != 2 || sel[0].Game.Distance() != 6 || sel[1].Game.Distance() != 6 {
		t.Errorf("Hardest(2) = %d points within %d of %d remaining", len(sel), k, rest)
	}
	// Three within distance 6: the first two in order are taken, the closer one (4) is third.
	if sel, k, _ := corpus.Hardest(points, 3); k != 6 || len(sel) != 3 || sel[2].Game.Distance() != 4 {
		t.Errorf("Hardest(3): k=%d %v", k, sel)
	}
}

// corpusFile returns the path of a file of the public corpus: the repository's copy of the
// files it ships (data/dealornodeal), the shared data folder's for the others (skipping the
// test when that is not beside the repository).
func corpusFile(t *testing.T, name string) string {
	t.Helper()
	if name == "test.txt" || name == "sampled_50_deal_no_deal.txt" {
		return repodata.Path(t, "dealornodeal", name)
	}
	return repodata.Shared(t, "dealornodeal", name)
}

// TestShippedCorpusIsTheSource checks the repository's copies of the corpus files against the
// shared data folder's, byte for byte, where that folder is.
func TestShippedCorpusIsTheSource(t *testing.T) {
	for _, name := range []string{"test.txt", "sampled_50_deal_no_deal.txt"} {
		ours, err := os.ReadFile(repodata.Path(t, "dealornodeal", name))
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := os.ReadFile(repodata.Shared(t, "dealornodeal", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("data/dealornodeal/%s differs from the shared copy", name)
		}
	}
}

// TestPublicCorpus reads the public corpus and checks the counts its README gives (computed
// with the same pairing), and that the seed's 50 hardest are reproduced line for line.
func TestPublicCorpus(t *testing.T) {
	cases := []struct {
		file string
		want corpus.Stats
	}{
		{"test.txt", corpus.Stats{Lines: 1052, Dialogues: 545, BothSides: 507, OneSide: 38, Deal: 402, Disagree: 90, NoAgreement: 48, Disconnect: 5}},
		{"val.txt", corpus.Stats{Lines: 1087, Dialogues: 562, BothSides: 525, OneSide: 37, Deal: 422, Disagree: 83, NoAgreement: 54, Disconnect: 3}},
		{"data.txt", corpus.Stats{Lines: 12234, Dialogues: 6318, BothSides: 5916, OneSide: 402, Deal: 4766, Disagree: 919, NoAgreement: 591, Disconnect: 42}},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			c := parseFile(t, corpusFile(t, tc.file))
			if got := c.Stats(); got != tc.want {
				t.Errorf("stats %+v, want %+v", got, tc.want)
			}
		})
	}
	t.Run("selfplay.txt", func(t *testing.T) {
		c := parseFile(t, corpusFile(t, "selfplay.txt"))
		if c.Format != corpus.FormatContexts || len(c.Dialogues) != 4086 {
			t.Errorf("%v with %d set-ups, want 4086", c.Format, len(c.Dialogues))
		}
	})
	t.Run("hardest", func(t *testing.T) {
		c := parseFile(t, corpusFile(t, "test.txt"))
		sel, k, rest := corpus.Hardest(c.OddLines(), 50)
		if k != 4 || rest != 248 || len(sel) != 50 {
			t.Fatalf("Hardest: %d within %d of %d remaining, want 50 within 4 of 248", len(sel), k, rest)
		}
		var lines []*corpus.Line
		noEF := 0
		for _, p := range sel {
			lines = append(lines, p.Line)
			if !p.Game.HasEF() {
				noEF++
			}
		}
		want, err := os.ReadFile(corpusFile(t, "sampled_50_deal_no_deal.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := corpus.Lines(lines); !bytes.Equal(got, want) {
			t.Errorf("the 50 hardest differ from sampled_50_deal_no_deal.txt:\n%s", strings.Join(strings.SplitN(string(got), "\n", 3)[:2], "\n"))
		}
		if noEF != 6 {
			t.Errorf("%d of the 50 have no envy-free allocation, want 6", noEF)
		}
	})
}

// FuzzParse: arbitrary bytes are refused with ErrFormat or give a corpus whose dialogues each
// keep a line and whose deals divide the pool.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/sample_tagged.txt", "testdata/sample_raw.txt", "testdata/sample_contexts.txt"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := corpus.Parse("fuzz", data)
		if err != nil {
			if !errors.Is(err, corpus.ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		st := c.Stats()
		if st.BothSides+st.OneSide != st.Dialogues || st.Dialogues > st.Lines {
			t.Fatalf("stats %+v", st)
		}
		for _, p := range c.Datapoints() {
			if p.Outcome == corpus.OutcomeDeal {
				for i, x := range p.Deal {
					if x < 0 || x > p.Game.Counts[i] {
						t.Fatalf("deal %v of pool %v", p.Deal, p.Game.Counts)
					}
				}
			}
			_ = p.Line.Tagged()
		}
	})
}
