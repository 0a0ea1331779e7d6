package main

import (
	"regexp"
	"strconv"
	"testing"
)

// parley bench --load plays its matches from the work queue against bots in processes of their
// own and prints its figures: moves/s, CPU per move against a bare round trip's (a quick run,
// checked for its form and for every number being a real measure, not for speed); with a
// latency, the resident set and the overhead.
func TestBenchLoad(t *testing.T) {
	t.Parallel()
	r := mustRun(t, nil, "bench", "--load", "--matches", "12", "--concurrency", "4")
	line := regexp.MustCompile(`# run 1: 12 matches \((\d+) moves\), 4 at a time on \d+ cores: (\d+) moves/s, ([\d.]+) µs of CPU per move = ([\d.]+)x the CPU of a bare round trip \(([\d.]+) µs, (\d+) calls/s saturated\)`)
	m := line.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no summary line:\n%s", r.stdout)
	}
	for i, name := range []string{"moves", "moves/s", "CPU per move", "ratio", "bare CPU", "calls/s"} {
		if v, err := strconv.ParseFloat(m[i+1], 64); err != nil || v <= 0 {
			t.Errorf("%s = %q", name, m[i+1])
		}
	}
	if moves, _ := strconv.Atoi(m[1]); moves < 2*12 {
		t.Errorf("%d moves in 12 matches", moves)
	}
	slow := mustRun(t, nil, "bench", "--load", "--latency", "20ms", "--matches", "4", "--concurrency", "4")
	if !regexp.MustCompile(`largest resident set [1-9]\d* MB \(the bots' processes: [1-9]\d* MB\), a match took \S+ against its bots' \S+ \(-?[\d.]+% overhead\)`).MatchString(slow.stdout) {
		t.Errorf("no resident set and overhead:\n%s", slow.stdout)
	}
}
