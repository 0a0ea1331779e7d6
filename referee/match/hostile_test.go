package match_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/fixed"
	"github.com/parley-arena/parley/agents/hostile"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/referee/match"
)

// honestWatch is an honest ultimatum player (builtin fixed: proposes, never accepts) that
// keeps what it needs to judge what the referee sent it.
type honestWatch struct {
	agent *fixed.Agent
	// notes makes it write the longest legal note on every move, numbered, and check that
	// its notes come back as the latest it wrote, the others counted as left out.
	notes bool

	mu      sync.Mutex
	asked   int
	largest int              // largest observation, encoded
	sizes   map[int32]int    // observation size per turn
	counts  [][2]int32       // per observation: turn, history entries shown + left out
	omitted map[string]int32 // largest history_omitted and notes_omitted seen
	briefs  []string         // the first briefings
	written int              // notes written
	wrong   string           // what was wrong with the notes it got back, first time
}

func newHonest(t *testing.T) *honestWatch {
	t.Helper()
	a, err := fixed.New(1)
	if err != nil {
		t.Fatal(err)
	}
	return &honestWatch{agent: a, omitted: map[string]int32{}, sizes: map[int32]int{}}
}

func (h *honestWatch) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	h.mu.Lock()
	h.asked++
	size := proto.Size(obs)
	h.largest = max(h.largest, size)
	h.sizes[obs.GetTurn()] = size
	h.counts = append(h.counts, [2]int32{obs.GetTurn(), int32(len(obs.GetHistory())) + obs.GetHistoryOmitted()})
	h.omitted["history"] = max(h.omitted["history"], obs.GetHistoryOmitted())
	h.omitted["notes"] = max(h.omitted["notes"], obs.GetNotesOmitted())
	if len(h.briefs) < 4 {
		h.briefs = append(h.briefs, obs.GetBriefing())
	}
	if h.notes {
		// Every answer is applied (fixed plays legally), so each note written is kept.
		notes := obs.GetNotes()
		switch {
		case h.wrong != "":
		case int(obs.GetNotesOmitted())+len(notes) != h.written:
			h.wrong = fmt.Sprintf("turn %d: %d notes shown and %d left out, %d written", obs.GetTurn(), len(notes), obs.GetNotesOmitted(), h.written)
		case len(notes) > 0 && !strings.HasPrefix(notes[len(notes)-1], fmt.Sprintf("note %06d ", h.written)):
			h.wrong = fmt.Sprintf("turn %d: the last note shown is not the latest written", obs.GetTurn())
		}
	}
	h.mu.Unlock()
	action, err := h.agent.Act(ctx, obs)
	if h.notes && err == nil {
		h.mu.Lock()
		h.written++
		note := fmt.Sprintf("note %06d ", h.written)
		action.PrivateNotes = note + strings.Repeat(".", games.MaxTextBytes-len(note))
		h.mu.Unlock()
	}
	return action, err
}

// floodTestTurns is the length of the flood matches; -race slows them several times over, so
// they are shorter there, and then stop short of what gRPC's 4 MiB would have cut.
var floodTestTurns = int32(map[bool]int{false: 1100, true: 300}[gametest.Race])

// hostileCase is a hostile bot against the honest player and what the record must show.
type hostileCase struct {
	kind     hostile.Kind
	opts     []hostile.Option
	turns    int32 // max_turns; long for floods
	timeout  time.Duration
	wantKind eventsv1.FaultKind // the hostile seat's first fault; UNSPECIFIED: none
	// honestNotes: the honest seat writes the longest notes too.
	honestNotes bool
	check       func(t *testing.T, res *match.Result, h *honestWatch)
}

// TestHostileAgents plays each hostile bot of internal/hostile against an honest agent over
// loopback gRPC, in both seats, and checks the defended behaviour: the match ends with a stated
// cause, the hostile seat's failure is recorded as its own, the honest seat is never faulted,
// every event and every observation stays within its budget.
func TestHostileAgents(t *testing.T) {
	cases := []hostileCase{
		{kind: hostile.Garbage, wantKind: eventsv1.FaultKind_FAULT_KIND_MALFORMED},
		{kind: hostile.Noise, wantKind: eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE},
		{kind: hostile.HTTP1, wantKind: eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE},
		{kind: hostile.Silent, timeout: shortTimeout, wantKind: eventsv1.FaultKind_FAULT_KIND_TIMEOUT},
		{kind: hostile.Slow, timeout: shortTimeout, wantKind: eventsv1.FaultKind_FAULT_KIND_TIMEOUT},
		{kind: hostile.Huge, wantKind: eventsv1.FaultKind_FAULT_KIND_OVERSIZED, check: checkHuge},
		{kind: hostile.Crash, turns: 12, wantKind: eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE, check: checkCrash},
		// Whole, the honest seat's own notes would pass gRPC's 4 MiB by turn 1,000, the
		// flood's messages by turn 150.
		{kind: hostile.NoteFlood, turns: floodTestTurns, honestNotes: true, check: checkNoteFlood},
		{kind: hostile.MessageFlood, turns: floodTestTurns, check: checkMessageFlood},
		{kind: hostile.ForgedDescribe, turns: 6, check: checkForged},
	}
	for _, tc := range cases {
		for _, hostileSeat := range []games.Seat{0, 1} {
			name := string(tc.kind) + "/as-P1"
			if hostileSeat == 1 {
				name = string(tc.kind) + "/as-P2"
			}
			t.Run(name, func(t *testing.T) {
				bot, err := hostile.Start(tc.kind, tc.opts...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(bot.Close)
				h := newHonest(t)
				h.notes = tc.honestNotes
				honestClient := sdktest.Client(t, h, sdk.WithInfo(&gamev1.AgentInfo{Name: "honest", Version: "1"}))
				agents := []agentv1.AgentServiceClient{honestClient, honestClient}
				agents[hostileSeat] = openConn(t, bot.Address()).Client
				turns := tc.turns
				if turns == 0 {
					turns = 4
				}
				timeout := tc.timeout
				if timeout == 0 {
					timeout = waitLimit // the cases that do not wait for a timeout never do
				}
				spec := match.Spec{
					ID: "hostile-" + strings.ReplaceAll(name, "/", "-"), Game: ultimatum.New(), Seed: 3, Agents: agents,
					Params: gametest.Resolve(t, ultimatum.New(), &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{MaxTurns: proto.Int32(turns)}}}),
					Limits: &matchv1.Limits{MoveTimeout: durationpb.New(timeout)},
				}
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
				defer cancel()
				res := runCtx(t, ctx, spec)
				honestSeat := 1 - hostileSeat
				for _, f := range faults(res.Events) {
					if f.GetSeat() == honestSeat {
						t.Fatalf("the honest seat was faulted on attempt %d: %v %s", f.GetAttempt(), f.GetKind(), f.GetDetail())
					}
				}
				for _, s := range res.Outcome.GetFaultedSeats() {
					if s == honestSeat {
						t.Fatalf("the outcome counts a fault against the honest seat: %v", res.Outcome)
					}
				}
				fs := faults(res.Events)
				switch {
				case tc.wantKind == eventsv1.FaultKind_FAULT_KIND_UNSPECIFIED && len(fs) > 0:
					t.Errorf("the hostile seat was faulted (%v: %s); its moves are legal", fs[0].GetKind(), fs[0].GetDetail())
				case tc.wantKind != eventsv1.FaultKind_FAULT_KIND_UNSPECIFIED && (len(fs) == 0 || fs[0].GetKind() != tc.wantKind):
					t.Errorf("faults %v, want the hostile seat's first to be %v", fs, tc.wantKind)
				}
				for _, ev := range res.Events {
					if n := proto.Size(ev); n > match.DefaultMaxEventBytes {
						t.Errorf("event %d is %d bytes, over %d", ev.GetSeq(), n, match.DefaultMaxEventBytes)
					}
				}
				if h.largest > games.MaxObservationBytes {
					t.Errorf("the honest seat was sent a %d-byte observation, over the %d budget", h.largest, games.MaxObservationBytes)
				}
				if tc.check != nil {
					tc.check(t, res, h)
				}
			})
		}
	}
}

// checkHuge: the bot's Describe was too large as well, so it plays unnamed.
func checkHuge(t *testing.T, res *match.Result, _ *honestWatch) {
	for _, s := range res.Events[0].GetMatchStarted().GetSeats() {
		if n := proto.Size(s); n > 2<<10 {
			t.Errorf("seat %d is recorded in %d bytes", s.GetSeat(), n)
		}
	}
}

// checkCrash: the bot played its two moves, then its fault ended the match.
func checkCrash(t *testing.T, res *match.Result, _ *honestWatch) {
	if res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_AGENT_FAULT || len(res.Outcome.GetFaultedSeats()) != 1 {
		t.Fatalf("outcome %v, want an agent fault of the bot's seat", res.Outcome)
	}
	played := 0
	for _, a := range taken(res.Events) {
		if a.GetSeat() == res.Outcome.GetFaultedSeats()[0] && a.GetDefaultReason() == "" {
			played++
		}
	}
	if played != 2 {
		t.Errorf("the bot played %d moves before its fault, want 2", played)
	}
}

// checkNoteFlood: every turn was played; the honest seat's notes came back as the latest it
// wrote, within the notes window.
func checkNoteFlood(t *testing.T, res *match.Result, h *honestWatch) {
	checkWholeMatch(t, res, h)
	if h.wrong != "" {
		t.Error(h.wrong)
	}
	if h.omitted["notes"] == 0 {
		t.Error("the honest seat's notes were never cut to their window")
	}
}

// checkMessageFlood: every turn was played, the honest seat's history was cut to its window,
// and what was shown plus what was left out is exactly what it may see (every move of the
// match so far, all public in ultimatum).
func checkMessageFlood(t *testing.T, res *match.Result, h *honestWatch) {
	checkWholeMatch(t, res, h)
	if h.omitted["history"] == 0 {
		t.Fatal("the honest seat's history was never cut: the flood did not flood")
	}
	before := map[int32]int32{} // turn -> actions taken on earlier turns
	n := int32(0)
	for _, ev := range takenEvents(res.Events) {
		if _, ok := before[ev.GetTurn()]; !ok {
			before[ev.GetTurn()] = n
		}
		n++
	}
	for _, c := range h.counts {
		if want := before[c[0]]; c[1] != want {
			t.Fatalf("turn %d: %d entries shown or left out, want the %d moves so far", c[0], c[1], want)
		}
	}
	// The cost of a turn does not grow with the turns before it.
	if early, late := h.sizes[200], h.sizes[floodTestTurns]; late > early+early/4 {
		t.Errorf("observation of turn %d is %d bytes, of turn 200 %d: still growing", floodTestTurns, late, early)
	}
}

func checkWholeMatch(t *testing.T, res *match.Result, h *honestWatch) {
	t.Helper()
	// On the last turn the responder may only accept or reject (the honest one rejects).
	got, cause := res.Events[len(res.Events)-1].GetTurn(), res.Outcome.GetCause()
	if got != floodTestTurns || (cause != matchv1.EndCause_END_CAUSE_REJECTED && cause != matchv1.EndCause_END_CAUSE_AGREEMENT) {
		t.Errorf("the match ended on turn %d (%v: %s), want every turn played", got, cause, res.Outcome.GetSummary())
	}
	if int32(h.asked) != floodTestTurns/2 {
		t.Errorf("the honest seat was asked %d times, want %d", h.asked, floodTestTurns/2)
	}
}

// checkForged: what the bot says of itself is recorded and shown on one line, cut to size,
// and no forged line reaches the honest seat's briefing.
func checkForged(t *testing.T, res *match.Result, h *honestWatch) {
	for _, s := range res.Events[0].GetMatchStarted().GetSeats() {
		a := s.GetAgent()
		if a.GetName() == "" {
			t.Fatalf("seat %d's Describe did not come through: nothing was tested", s.GetSeat())
		}
		for _, f := range append([]string{a.GetName(), a.GetVersion(), a.GetAuthor(), a.GetDescription()}, a.GetGames()...) {
			if strings.ContainsAny(f, "\n\r\x00\x1b\u2028") {
				t.Errorf("seat %d's agent is recorded with a control character: %q", s.GetSeat(), f)
			}
		}
		if len(a.GetName()) > 64 || len(a.GetDescription()) > 1<<10 || len(a.GetGames()) > 32 {
			t.Errorf("seat %d's agent is recorded unbounded: name %d bytes, description %d, %d games", s.GetSeat(), len(a.GetName()), len(a.GetDescription()), len(a.GetGames()))
		}
	}
	for _, b := range h.briefs {
		section := b[strings.LastIndex(b, "\nWho plays\n"):]
		lines := strings.Split(strings.TrimSpace(section), "\n")
		if len(lines) != 3 {
			t.Fatalf("the who-plays section has %d lines, want a heading and 2 seats:\n%s", len(lines), section)
		}
		for _, l := range strings.Split(b, "\n") {
			if strings.HasPrefix(l, strings.TrimSpace(hostile.ForgedLine)) || strings.HasPrefix(l, "referee:") || strings.HasPrefix(l, "- P2: nobody") {
				t.Errorf("a forged line reached the briefing: %q", l)
			}
		}
	}
}
