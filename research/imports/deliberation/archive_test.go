package deliberation_test

import (
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/research/imports/deliberation"
)

// archive extracts the shared archive of the reproduction's runs into a temporary folder, or
// skips the test with one line when the shared folder is not here.
func archive(t *testing.T) string {
	t.Helper()
	return repodata.Untar(t, repodata.Shared(t, "transcripts", "deliberation", "reproduction.tar.gz"))
}

// runFiles lists the history files under dir, slash-separated and relative to it.
func runFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(path.Base(p), "history") && strings.HasSuffix(p, ".json") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestArchiveRuns reads every run of the shared archive and checks it against numbers this
// test works out from the JSON and the score sheets by itself: runs per folder, each run's
// answers, who opens and closes, the final deal the study's code reads in p1's last public
// answer, the vote on it and everyone's payoff, and which runs failed.
func TestArchiveRuns(t *testing.T) {
	dir := archive(t)
	fsys := os.DirFS(dir)
	aux := func(name string) ([]byte, error) { return fs.ReadFile(fsys, name) }
	files := runFiles(t, dir)
	if len(files) != 419 {
		t.Fatalf("%d history files in the archive, want 419", len(files))
	}
	perFolder := map[string]int{}
	failed, passed := 0, 0
	// The reasoning steps the prompts of each of Table 3's configurations ask for, read from
	// the prompts by hand (row 2 is also the variants' configuration, row 5 the models').
	steps := map[string]string{
		"/row1": "", "/row2": "restate,infer,candidates,plan", "/row3": "restate,infer,plan",
		"/row4": "restate,infer", "/row5": "infer,plan", "_row5": "infer,plan", "/row6": "plan",
	}
	for _, file := range files {
		perFolder[path.Dir(file)]++
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			t.Fatal(err)
		}
		run, err := deliberation.Read(file, data, aux)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for suffix, want := range steps {
			if !strings.HasSuffix(path.Dir(file), suffix) {
				continue
			}
			for _, seat := range run.Seats {
				if !seat.Spoke {
					continue
				}
				if seat.Incentive != deliberation.DefaultIncentive {
					continue // a greedy or adversarial seat gets its incentive's own prompt
				}
				if got := strings.Join(seat.Steps, ","); got != want {
					t.Fatalf("%s: the prompts of %s ask for steps %q, want %q", file, seat.Party, got, want)
				}
			}
		}
		ref := independent(t, fsys, file, data)
		if len(run.Answers) != ref.answers {
			t.Fatalf("%s: %d answers, want %d", file, len(run.Answers), ref.answers)
		}
		if got := run.Setup.Parties[0].Name; got != ref.p1 {
			t.Fatalf("%s: p1 is %s, want %s", file, got, ref.p1)
		}
		if (run.Failed != "") != ref.failed {
			t.Fatalf("%s: failed %q, want failed %v", file, run.Failed, ref.failed)
		}
		if ref.failed {
			failed++
			continue
		}
		if got := run.Setup.DealString(run.Answers[len(run.Answers)-1].Deal); got != ref.final {
			t.Fatalf("%s: final deal %s, want %s", file, got, ref.final)
		}
		if run.Outcome.GetAgreement() != ref.passed {
			t.Fatalf("%s: agreement %v, want %v", file, run.Outcome.GetAgreement(), ref.passed)
		}
		if ref.passed {
			passed++
		}
		for i, want := range ref.payoffs {
			if got := run.Outcome.GetPayoffs()[i]; math.Abs(got-want) > 1e-9 {
				t.Fatalf("%s: payoff of %s %v, want %v", file, run.Setup.Parties[i].Name, got, want)
			}
		}
	}
	// The transcripts' README: 10 runs in each folder, but for Llama 2 13B's 8.
	for folder, n := range perFolder {
		want := 10
		switch {
		case strings.Contains(folder, "llama_2_13b"):
			want = 8
		case strings.HasPrefix(folder, "games_descriptions/base_rewritten/games_descriptions"):
			want = 1 // a stray copy of one run inside the game folder
		}
		if n != want {
			t.Errorf("%s: %d runs, want %d", folder, n, want)
		}
	}
	t.Logf("%d runs in %d folders: %d failed, %d final deals passed", len(files), len(perFolder), failed, passed)
}

// reference is what the test reads from a run by itself.
type reference struct {
	answers int
	p1      string
	failed  bool
	final   string
	passed  bool
	payoffs []float64
}

var studyOption = map[byte]*regexp.Regexp{}

// independent reads a run with nothing of the package: the JSON as a map, the config and the
// score sheets beside it, the public part and the deal as the study's evaluation code reads
// them, and the vote as the spec states it.
func independent(t *testing.T, fsys fs.FS, file string, data []byte) reference {
	t.Helper()
	var lg map[string]any
	if err := json.Unmarshal(data, &lg); err != nil {
		t.Fatal(err)
	}
	rounds := lg["rounds"].([]any)
	slots := lg["slot_assignment"].([]any)
	dir := path.Dir(file)
	cfg, err := fs.ReadFile(fsys, dir+"/config.txt")
	if err != nil {
		t.Fatal(err)
	}
	type party struct {
		name, role string
		points     [][]int
		min        int
	}
	var parties []party
	for _, line := range strings.Split(strings.TrimSpace(string(cfg)), "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		sheet, err := fs.ReadFile(fsys, dir+"/scores_files/"+f[1]+".txt")
		if err != nil {
			t.Fatal(err)
		}
		p := party{name: f[0], role: f[2]}
		rows := strings.Split(strings.TrimSpace(string(sheet)), "\n")
		for _, row := range rows[:len(rows)-1] {
			var pts []int
			for _, x := range strings.Split(row, ",") {
				n, _ := strconv.Atoi(strings.TrimSpace(x))
				pts = append(pts, n)
			}
			p.points = append(p.points, pts)
		}
		p.min, _ = strconv.Atoi(strings.TrimSpace(rows[len(rows)-1]))
		parties = append(parties, p)
	}
	ref := reference{answers: len(rounds)}
	var p1, p2 int
	for i, p := range parties {
		switch p.role {
		case "p1":
			p1, ref.p1 = i, p.name
		case "p2":
			p2 = i
		}
	}
	solo := true
	for _, s := range slots {
		solo = solo && s.(string) == ref.p1
	}
	complete := len(slots) + 2
	if solo {
		complete = len(slots) + 1
	}
	last := rounds[len(rounds)-1].(map[string]any)
	public := last["full_answer"].(string)
	if i := strings.LastIndex(public, "<ANSWER>"); i >= 0 {
		public = public[i+len("<ANSWER>"):]
	}
	public, _, _ = strings.Cut(public, "</ANSWER>")
	public = strings.ReplaceAll(public, "\n", "")
	var deal []int
	for i := range parties[0].points {
		letter := byte('A' + i)
		re := studyOption[letter]
		if re == nil {
			re = regexp.MustCompile(string(letter) + "[1-5]")
			studyOption[letter] = re
		}
		m := re.FindString(public)
		if m == "" || int(m[1]-'0') > len(parties[0].points[i]) {
			deal = nil
			break
		}
		deal = append(deal, int(m[1]-'0'))
	}
	if len(rounds) < complete || deal == nil {
		ref.failed = true
		return ref
	}
	names := make([]string, len(deal))
	for i, o := range deal {
		names[i] = string(rune('A'+i)) + strconv.Itoa(o)
	}
	ref.final = strings.Join(names, ",")
	scores := make([]int, len(parties))
	yes := make([]bool, len(parties))
	for i, p := range parties {
		for k, o := range deal {
			scores[i] += p.points[k][o-1]
		}
		yes[i] = scores[i] >= p.min
	}
	others := true
	for i := range parties {
		others = others && (i == p1 || yes[i])
	}
	if others && scores[p1]+10 >= parties[p1].min {
		yes[p1] = true
	}
	count := 0
	for _, y := range yes {
		if y {
			count++
		}
	}
	ref.passed = count >= len(parties)-1 && yes[p1] && yes[p2]
	// Parley orders the seats p1, p2, then the rest in config order.
	order := []int{p1, p2}
	for i := range parties {
		if i != p1 && i != p2 {
			order = append(order, i)
		}
	}
	for _, i := range order {
		switch {
		case !ref.passed:
			ref.payoffs = append(ref.payoffs, float64(parties[i].min))
		case i == p1 && count == len(parties):
			ref.payoffs = append(ref.payoffs, float64(scores[i]+10))
		default:
			ref.payoffs = append(ref.payoffs, float64(scores[i]))
		}
	}
	return ref
}
