package builtin_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// firstObservation is P1's observation on turn 1 of a 100-dollar, 8-turn ultimatum game.
func firstObservation(t *testing.T) *agentv1.Observation {
	t.Helper()
	st, err := games.Start(ultimatum.New(), &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{
		Total: proto.Int64(100), MaxTurns: proto.Int32(8),
	}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st.Observe(0)
}

func TestNew(t *testing.T) {
	// The catalogue grows; an unknown name must list all of it.
	known := "(known: " + strings.Join(builtin.Names(), ", ") + ")"
	if !strings.Contains(known, "fair") || !strings.Contains(known, "random") {
		t.Fatalf("Names() = %q, want fair and random among them", builtin.Names())
	}
	tests := []struct {
		name     string
		agent    string
		settings string // a URL query
		// wantErr lists substrings of the error; empty means no error.
		wantErr []string
		// wantName is what the agent's Describe answers.
		wantName string
		// wantGives, for the fair agent, is what P1 offers on turn 1 of a 100-dollar game.
		wantGives int64
	}{
		{name: "random", agent: "random", wantName: "random"},
		{name: "random with a seed", agent: "random", settings: "seed=18446744073709551615", wantName: "random"},
		{name: "fair defaults", agent: "fair", wantName: "fair", wantGives: 40},
		{name: "fair open=0.7", agent: "fair", settings: "open=0.7", wantName: "fair", wantGives: 30},
		{name: "fair every setting", agent: "fair", settings: "open=0.9&target=0.8&floor=0.1", wantName: "fair", wantGives: 10},
		{name: "empty value means the default", agent: "fair", settings: "open=", wantName: "fair", wantGives: 40},
		{name: "coalition defaults", agent: "coalition", wantName: "coalition"},
		{name: "coalition shapley", agent: "coalition", settings: "basis=shapley&threshold=0.9", wantName: "coalition"},
		{name: "coalition unknown basis", agent: "coalition", settings: "basis=nucleolus",
			wantErr: []string{"builtin agent coalition", "basis must be core or shapley"}},
		{name: "coalition threshold not a number", agent: "coalition", settings: "threshold=most",
			wantErr: []string{`threshold="most"`, "want a number"}},
		{name: "coalition negative threshold", agent: "coalition", settings: "threshold=-1",
			wantErr: []string{"threshold must be from 0 to 10"}},
		{name: "unknown name", agent: "stubborn", wantErr: []string{`unknown built-in agent "stubborn"`, known}},
		{name: "cooperative", agent: "cooperative", wantName: "cooperative"},
		{name: "greedy with a floor", agent: "greedy", settings: "floor=0.8", wantName: "greedy"},
		{name: "adversarial targeted", agent: "adversarial", settings: "target=union", wantName: "adversarial"},
		{name: "cooperative takes no target", agent: "cooperative", settings: "target=union",
			wantErr: []string{"builtin agent cooperative", `unknown setting "target"`}},
		{name: "greedy floor out of range", agent: "greedy", settings: "floor=2",
			wantErr: []string{"floor must be from 0 to 1"}},
		{name: "empty name", agent: "", wantErr: []string{`unknown built-in agent ""`, known}},
		{name: "names are case-sensitive", agent: "Fair", wantErr: []string{`unknown built-in agent "Fair"`}},
		{name: "unknown setting of random", agent: "random", settings: "open=0.5",
			wantErr: []string{"builtin agent random", `unknown setting "open"`, "accepted: seed=N"}},
		{name: "unknown setting of fair", agent: "fair", settings: "seed=1",
			wantErr: []string{"builtin agent fair", `unknown setting "seed"`, "accepted: open=F target=F floor=F"}},
		{name: "negative seed", agent: "random", settings: "seed=-1",
			wantErr: []string{"builtin agent random", `seed="-1"`, "want a non-negative whole number"}},
		{name: "seed not a number", agent: "random", settings: "seed=abc",
			wantErr: []string{`seed="abc"`, "want a non-negative whole number"}},
		{name: "seed too big", agent: "random", settings: "seed=18446744073709551616",
			wantErr: []string{`seed="18446744073709551616"`}},
		{name: "share not a number", agent: "fair", settings: "open=lots",
			wantErr: []string{"builtin agent fair", `open="lots"`, "want a number"}},
		{name: "target not a number", agent: "fair", settings: "target=half",
			wantErr: []string{`target="half"`, "want a number"}},
		{name: "shares out of order", agent: "fair", settings: "open=0.4",
			wantErr: []string{"builtin agent fair", "0 <= floor <= target <= open <= 1", "open=0.4"}},
		{name: "share above one", agent: "fair", settings: "open=1.5",
			wantErr: []string{"0 <= floor <= target <= open <= 1"}},
		{name: "NaN share", agent: "fair", settings: "floor=NaN",
			wantErr: []string{"0 <= floor <= target <= open <= 1"}},
		{name: "bayes decimal and fraction", agent: "bayes", settings: "gamma=0.25&lambda=1/3", wantName: "bayes"},
		// An exponent would make every later number of the agent half a million digits long.
		{name: "bayes exponent", agent: "bayes", settings: "gamma=1e-500000",
			wantErr: []string{"builtin agent bayes", `gamma="1e-500000"`, "decimal or a fraction", "at most 9 digits"}},
		{name: "bayes long fraction", agent: "bayes", settings: "lambda=1/10000000000",
			wantErr: []string{`lambda="1/10000000000"`, "at most 9 digits"}},
		{name: "bayes division by zero", agent: "bayes", settings: "gamma=1/0", wantErr: []string{`gamma="1/0"`}},
		{name: "bayes out of range", agent: "bayes", settings: "gamma=2", wantErr: []string{"gamma must be from 0 to 1"}},
		{name: "adversary's target too long", agent: "adversarial", settings: "target=" + strings.Repeat("x", 200),
			wantErr: []string{"target is 200 bytes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			settings, err := url.ParseQuery(tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			a, err := builtin.New(tc.agent, settings)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("New(%q, %q) = %T, want an error", tc.agent, tc.settings, a)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%q, %q): %v", tc.agent, tc.settings, err)
			}
			d, ok := a.(sdk.Describer)
			if !ok {
				t.Fatalf("%T does not describe itself", a)
			}
			if got := d.Describe().GetName(); got != tc.wantName {
				t.Errorf("Describe().Name = %q, want %q", got, tc.wantName)
			}
			if tc.agent != "fair" {
				return
			}
			action, err := a.Act(context.Background(), firstObservation(t))
			if err != nil {
				t.Fatal(err)
			}
			shares := action.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()
			if len(shares) != 1 || shares[0].GetGives()["Dollars"] != tc.wantGives {
				t.Errorf("first proposal = %v, want P1 to give %d", action.GetMove(), tc.wantGives)
			}
		})
	}
}

func TestCatalog(t *testing.T) {
	cat := builtin.Catalog()
	var names []string
	for _, e := range cat {
		names = append(names, e.Name)
		if e.Summary == "" || e.New == nil {
			t.Errorf("entry %q has no summary or constructor", e.Name)
		}
		for _, k := range e.Keys {
			if !strings.Contains(e.Settings, k+"=") {
				t.Errorf("entry %q: key %q is not documented in %q", e.Name, k, e.Settings)
			}
		}
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("Catalog names = %q, want sorted and unique", names)
	}
	for _, want := range []string{"fair", "random"} {
		if !slices.Contains(names, want) {
			t.Errorf("Catalog names = %q, want %q among them", names, want)
		}
	}
	if got := builtin.Names(); !slices.Equal(got, names) {
		t.Errorf("Names() = %q, want %q", got, names)
	}
}

// Served by one host, every opened agent is still one of its own, with its own settings, for
// as long as its connection is open.
func TestHostedAgents(t *testing.T) {
	host := sdk.NewHost()
	defer host.Close()
	agents := builtin.Agents{Host: host}
	obs := firstObservation(t)
	offer := func(l *agentconn.Local) int64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		resp, err := l.Client.Act(ctx, &agentv1.ActRequest{Observation: obs})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetAction().GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[0].GetGives()["Dollars"]
	}
	var opened []*agentconn.Local
	for _, addr := range []string{"builtin:fixed?offer=10", "builtin:fixed?offer=20", "builtin:fixed?offer=10"} {
		l, err := agents.Open(context.Background(), addr)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		opened = append(opened, l)
	}
	a, b, c := offer(opened[0]), offer(opened[1]), offer(opened[2])
	if a == b || a != c {
		t.Errorf("agents opened as offer=10, 20, 10 proposed %d, %d, %d", a, b, c)
	}
	if host.Len() != 3 {
		t.Errorf("the host serves %d agents, want 3", host.Len())
	}
	opened[0].Close()
	if host.Len() != 2 {
		t.Errorf("the host serves %d agents after one was closed, want 2", host.Len())
	}
	if got := offer(opened[2]); got != a {
		t.Errorf("the other offer=10 agent proposed %d after the first closed, want %d", got, a)
	}
}

// Only agents that keep nothing between calls are reusable from one match to the next.
func TestReusableAgents(t *testing.T) {
	host := sdk.NewHost()
	defer host.Close()
	agents := builtin.Agents{Host: host}
	for addr, want := range map[string]bool{
		"builtin:fair":           true,
		"builtin:fair?open=0.7":  true,
		"builtin:fixed?offer=10": true,
		"builtin:concede":        true,
		"builtin:trader":         true,
		"builtin:spe":            true,
		"builtin:equilibrium":    true, // its mixed moves are drawn from the match, seat and turn
		"builtin:dondgreedy":     true,
		"builtin:random?seed=1":  false, // draws from a generator of its own
	} {
		l, err := agents.Open(context.Background(), addr)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if l.Reusable != want {
			t.Errorf("%s: reusable %v, want %v", addr, l.Reusable, want)
		}
		l.Close()
	}
}

// Every built-in agent but the language model acts on the typed fields alone and says it reads
// no briefing, so that none is written for it; the language model reads it.
func TestBuiltinsSkipTheBriefing(t *testing.T) {
	for _, e := range builtin.Catalog() {
		if e.Name == "llm" {
			continue // it needs a model to be built; checked below
		}
		a, err := builtin.New(e.Name, nil)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if !sdk.SkipsBriefing(a) || !sdk.ObservingOf(a).GetSkipsBriefing() {
			t.Errorf("%s reads the briefing, by what it says", e.Name)
		}
	}
	if _, skips := any((*llm.Agent)(nil)).(sdk.BriefingSkipper); skips {
		t.Error("the language model says it reads no briefing")
	}
}
