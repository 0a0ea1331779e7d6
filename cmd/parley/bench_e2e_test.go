package main

import (
	"os"
	"path/filepath"
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
	// The floor, in the same run: its ratios are the move's figures over its own.
	floor := regexp.MustCompile(`# run 1: against the floor \(a bare unary call of 200 bytes each way: ([\d.]+) µs of CPU, (\d+) calls/s saturated\): ([\d.]+)x its calls/s, ([\d.]+)x its CPU per call`)
	f := floor.FindStringSubmatch(r.stdout)
	if f == nil {
		t.Fatalf("no floor line:\n%s", r.stdout)
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			t.Fatalf("%q is not a measure:\n%s", s, r.stdout)
		}
		return v
	}
	movesPerSec, cpuPerMove := num(m[2]), num(m[3])
	floorCPU, floorCalls := num(f[1]), num(f[2])
	if got, want := num(f[3]), movesPerSec/floorCalls; got < want*0.95-0.01 || got > want*1.05+0.01 {
		t.Errorf("%.2fx the floor's calls/s, but %.0f moves/s against %.0f calls/s is %.2fx", got, movesPerSec, floorCalls, want)
	}
	if got, want := num(f[4]), cpuPerMove/floorCPU; got < want*0.95-0.01 || got > want*1.05+0.01 {
		t.Errorf("%.2fx the floor's CPU, but %.1f µs against %.1f µs is %.2fx", got, cpuPerMove, floorCPU, want)
	}
	// And the floor carrying the observation the bare round trips carry, larger than 200 bytes.
	obs := regexp.MustCompile(`# run 1: against the floor carrying the observation \(a bare unary call of (\d+) bytes there, 200 back: ([\d.]+) µs of CPU, (\d+) calls/s saturated\): ([\d.]+)x its calls/s, ([\d.]+)x its CPU per call`)
	o := obs.FindStringSubmatch(r.stdout)
	if o == nil {
		t.Fatalf("no line for the floor carrying the observation:\n%s", r.stdout)
	}
	if size := num(o[1]); size <= 200 {
		t.Errorf("the observation carried is %.0f bytes; a mid-match observation is larger than 200", size)
	}
	if got, want := num(o[4]), movesPerSec/num(o[3]); got < want*0.95-0.01 || got > want*1.05+0.01 {
		t.Errorf("%.2fx the observation floor's calls/s, want %.2fx", got, want)
	}
	if got, want := num(o[5]), cpuPerMove/num(o[2]); got < want*0.95-0.01 || got > want*1.05+0.01 {
		t.Errorf("%.2fx the observation floor's CPU, want %.2fx", got, want)
	}
	// Profiles, when asked: this process's over the matches, and each bot's.
	dir := t.TempDir()
	cpu := filepath.Join(dir, "cpu.out")
	mustRun(t, nil, "bench", "--load", "--matches", "4", "--concurrency", "2", "--cpuprofile", cpu, "--memprofile", filepath.Join(dir, "mem.out"))
	for _, name := range []string{"cpu.out", "cpu.out.bot1", "cpu.out.bot2", "mem.out"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("profile %s: %v", name, err)
		}
	}
	slow := mustRun(t, nil, "bench", "--load", "--latency", "20ms", "--matches", "4", "--concurrency", "4")
	if !regexp.MustCompile(`largest resident set [1-9]\d* MB \(the bots' processes: [1-9]\d* MB\), a match took \S+ against its bots' \S+ \(-?[\d.]+% overhead\)`).MatchString(slow.stdout) {
		t.Errorf("no resident set and overhead:\n%s", slow.stdout)
	}
}

// parley bench plays matches and bare round trips side by side and prints, per run, the ratio
// of a move to a round trip with the two times it comes from, then the median of the runs.
func TestBenchSideBySide(t *testing.T) {
	t.Parallel()
	r := mustRun(t, nil, "bench", "--count", "2")
	line := regexp.MustCompile(`# run (\d): side by side, a move takes ([\d.]+)x a bare round trip \(([\d.]+) µs against ([\d.]+) µs\) and ([\d.]+)x its CPU`)
	runs := line.FindAllStringSubmatch(r.stdout, -1)
	if len(runs) != 2 {
		t.Fatalf("%d side-by-side lines, want 2:\n%s", len(runs), r.stdout)
	}
	for _, m := range runs {
		var v [4]float64
		for i := range v {
			var err error
			if v[i], err = strconv.ParseFloat(m[i+2], 64); err != nil || v[i] <= 0 {
				t.Fatalf("run %s: %q is not a measure", m[1], m[i+2])
			}
		}
		if ratio, move, bare := v[0], v[1], v[2]; ratio < move/bare-0.01 || ratio > move/bare+0.01 {
			t.Errorf("run %s: %.2fx, but %.1f µs against %.1f µs is %.2fx", m[1], ratio, move, bare, move/bare)
		}
	}
	if !regexp.MustCompile(`# median of 2 runs: side by side, a move takes [\d.]+x a bare round trip and [\d.]+x its CPU`).MatchString(r.stdout) {
		t.Errorf("no median:\n%s", r.stdout)
	}
}
