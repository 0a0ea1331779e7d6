package main

// End-to-end test of a reproduction whose model endpoint fails: it stops with one line naming
// the command that resumes it, and the resumed run (against another endpoint of the model)
// plays the voided matches; replies are cached per scheduled match and seed.

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/llm/llmtest"
)

// TestReproduceEndpointFailures: a 429/503 storm voids the matches of `parley reproduce`; after
// --max-endpoint-failures in a row (across set-ups) it stops with one line and exit status 1,
// naming the command that resumes, --base-url, --id and --seed among its flags. That command,
// pointed at another endpoint of the same model (a different --base-url is the same run),
// plays every match, the voided ones again, and fills the table. The same --id with another
// --seed in a fresh store asks the model afresh (a seed's replies are not another's); with the
// first seed again, nothing is asked: every reply, those of the replayed matches included, is
// in the cache under its scheduled match.
func TestReproduceEndpointFailures(t *testing.T) {
	t.Parallel()
	// Retry-After longer than the move's time: the agent gives up the move at once (it
	// honours the header, within its longest backoff), so the storm costs no waiting, and the
	// healthy runs keep a move time that a loaded machine does not overrun.
	storm := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Seq%2 == 0 {
			return llmtest.Reply{Status: 503, RetryAfter: "30"}
		}
		return llmtest.Reply{Status: 429, RetryAfter: "30"}
	})
	cache, store := t.TempDir(), t.TempDir()
	const table = "Figure 9 (text)" // ten set-ups of one match each
	args := func(baseURL, store, seed string) []string {
		return []string{"reproduce", "negotiationarena", "--table", table, "--games", "1", "--model", "stormy",
			"--base-url", baseURL, "--cache", cache, "--store-dir", store, "--quiet", "--concurrency", "1",
			"--move-timeout", "5s", "--max-endpoint-failures", "2", "--id", "na-endpoints", "--seed", seed}
	}
	r := runParley(t, nil, args(storm.URL, store, "1")...)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "2 matches in a row were voided") {
		t.Fatalf("want one line saying 2 matches in a row were voided, exit status 1; got\n%s", r)
	}
	if storm.Count() == 0 {
		t.Fatal("the storm was never called")
	}
	_, resume, ok := strings.Cut(lines[0], "resume with: ")
	if !ok {
		t.Fatalf("no resume command in %q", lines[0])
	}
	words := shellWords(t, resume)
	want := []string{"parley", "reproduce", "negotiationarena", "--base-url", storm.URL, "--store-dir", store, "--id", "na-endpoints", "--seed", "1"}
	for _, w := range want {
		if !slices.Contains(words, w) {
			t.Fatalf("the resume command lacks %q: %q", w, resume)
		}
	}

	// The endpoint is back, at another address.
	healthy := autoplayServer(t)
	for i, w := range words {
		if w == storm.URL {
			words[i] = healthy.URL
		}
	}
	r = mustRun(t, nil, words[1:]...)
	if healthy.Count() == 0 {
		t.Fatalf("the resumed run asked the model nothing:\n%s", r)
	}
	block := tableBlock(t, r.stdout, table)
	if strings.Contains(block, "no match") {
		t.Errorf("the resumed run left cells empty:\n%s", block)
	}
	asked := healthy.Count()

	// Another seed under the same id, in a fresh store: asked afresh.
	mustRun(t, nil, args(healthy.URL, t.TempDir(), "2")...)
	if healthy.Count() == asked {
		t.Errorf("--seed 2 under the same --id replayed seed 1's replies (no model call)")
	}
	asked = healthy.Count()
	// The first seed again, in a fresh store: every reply is cached.
	r = mustRun(t, nil, args(healthy.URL, t.TempDir(), "1")...)
	if n := healthy.Count() - asked; n != 0 {
		t.Errorf("seed 1 played again asked the model %d times; its replies were paid for", n)
	}
	// The same cells; the resumed run's record also holds the two voided runs it replayed.
	if again := tableBlock(t, r.stdout, table); again != withoutLeftOut(block) {
		t.Errorf("seed 1 played again from the cache prints another table:\n%s\nthen:\n%s", block, again)
	}
}

// tableBlock is the printed table whose title starts with id.
func tableBlock(t *testing.T, out, id string) string {
	t.Helper()
	i := strings.Index(out, id+": ")
	if i < 0 {
		t.Fatalf("table %q is not printed:\n%s", id, out)
	}
	block := out[i:]
	if j := strings.Index(block, "\n\n"); j > 0 {
		block = block[:j]
	}
	return block
}

// withoutLeftOut is a table without its line on the games left out.
func withoutLeftOut(block string) string {
	var keep []string
	for _, l := range strings.Split(block, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "left out:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// shellWords splits a command line of plain words and single-quoted ones (cli.ShellQuote's).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, started := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			in, started = !in, true
		case c == ' ' && !in:
			if started {
				words = append(words, w.String())
				w.Reset()
				started = false
			}
		default:
			w.WriteByte(c)
			started = true
		}
	}
	if in {
		t.Fatalf("unbalanced quotes in %q", line)
	}
	if started {
		words = append(words, w.String())
	}
	return words
}
