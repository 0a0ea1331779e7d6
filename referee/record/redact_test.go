package record_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	dealornodealv1 "github.com/parley-arena/parley/gen/go/parley/games/dealornodeal/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/privacy"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/record"
)

func taken(seat int32, msgs ...*gamev1.Message) *eventsv1.MatchEvent {
	return &eventsv1.MatchEvent{MatchId: "m", Seq: 2, Turn: 1, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{
		Seat: seat, Attempt: 1,
		Action: &agentv1.Action{
			Move:             &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}},
			Messages:         msgs,
			PrivateReasoning: "reasoning",
			PrivateNotes:     "notes",
			Usage:            &agentv1.Usage{Model: "m", PromptTokens: 10, RawOutputs: []string{"raw"}, Style: "deliberation"},
		},
	}}}
}

func TestRedact(t *testing.T) {
	public := &gamev1.Message{Text: "to all"}
	toP2 := &gamev1.Message{To: []int32{1}, Text: "to P2"}
	toP3 := &gamev1.Message{To: []int32{2}, Text: "to P3"}
	started := &eventsv1.MatchEvent{MatchId: "m", Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
		Game: "buysell", Seed: 99,
		Params: &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{
			Cost: proto.Int64(40), Willingness: proto.Int64(60), Budget: proto.Int64(100),
		}}},
		Seats: []*gamev1.SeatInfo{{Seat: 0, Name: "P1", Label: "a"}, {Seat: 1, Name: "P2"}},
	}}}
	publicStarted := proto.CloneOf(started)
	publicStarted.GetMatchStarted().Seed = 0
	publicStarted.GetMatchStarted().GetParams().GetBuysell().Cost = nil
	publicStarted.GetMatchStarted().GetParams().GetBuysell().Willingness = nil

	draw := &eventsv1.MatchEvent{MatchId: "m", Seq: 3, Payload: &eventsv1.MatchEvent_ChanceDrawn{ChanceDrawn: &eventsv1.ChanceDrawn{
		What: "cost", Seat: proto.Int32(0), Value: proto.Int64(33), Summary: "P1's cost is 33", VisibleTo: []int32{0},
	}}}
	hiddenDraw := &eventsv1.MatchEvent{MatchId: "m", Seq: 3, Payload: &eventsv1.MatchEvent_ChanceDrawn{ChanceDrawn: &eventsv1.ChanceDrawn{
		What: "cost", VisibleTo: []int32{0},
	}}}
	publicDraw := &eventsv1.MatchEvent{MatchId: "m", Seq: 3, Payload: &eventsv1.MatchEvent_ChanceDrawn{ChanceDrawn: &eventsv1.ChanceDrawn{
		What: "proposer", Seat: proto.Int32(1), Summary: "P2 proposes",
	}}}
	refused := &eventsv1.MatchEvent{MatchId: "m", Seq: 4, Payload: &eventsv1.MatchEvent_ActionRefused{ActionRefused: &eventsv1.ActionRefused{
		Seat: 0, Attempt: 1, Action: &agentv1.Action{PrivateReasoning: "oops"},
		Rejection: &gamev1.Rejection{Code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, Message: "below your cost of 40"},
	}}}
	refusedPublic := &eventsv1.MatchEvent{MatchId: "m", Seq: 4, Payload: &eventsv1.MatchEvent_ActionRefused{ActionRefused: &eventsv1.ActionRefused{
		Seat: 0, Attempt: 1, Rejection: &gamev1.Rejection{Code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS},
	}}}
	stripped := func(seat int32, msgs ...*gamev1.Message) *eventsv1.MatchEvent {
		ev := taken(seat, msgs...)
		a := ev.GetActionTaken().GetAction()
		a.PrivateReasoning, a.PrivateNotes = "", ""
		a.Usage.RawOutputs, a.Usage.Style = nil, ""
		return ev
	}
	ended := &eventsv1.MatchEvent{MatchId: "m", Seq: 5, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{
		Outcome: &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_AGREEMENT, Payoffs: []float64{1, 2}},
		Usage:   []*eventsv1.SeatUsage{{Seat: 0, Total: &agentv1.Usage{PromptTokens: 5, RawOutputs: []string{"raw"}}}},
	}}}
	endedPublic := proto.CloneOf(ended)
	endedPublic.GetMatchEnded().GetUsage()[0].GetTotal().RawOutputs = nil

	// A vote P2 alone is shown until every vote is in.
	vote := taken(0)
	vote.GetActionTaken().Summary, vote.GetActionTaken().SummaryVisibleTo = "P1 votes accept.", []int32{1}
	voteUnworded := stripped(0)
	voteUnworded.GetActionTaken().SummaryVisibleTo = []int32{1}
	voteWorded := proto.CloneOf(voteUnworded)
	voteWorded.GetActionTaken().Summary = "P1 votes accept."

	spectator, p1, p2, p3 := record.Spectator, record.SeatViewer(0), record.SeatViewer(1), record.SeatViewer(2)
	cases := []struct {
		name   string
		ev     *eventsv1.MatchEvent
		viewer record.Viewer
		reveal bool
		want   *eventsv1.MatchEvent
	}{
		{"nil", nil, spectator, false, nil},
		{"started: spectator loses seed and private params", started, spectator, false, publicStarted},
		{"started: seat loses seed and private params", started, p1, false, publicStarted},
		{"started: reveal shows spectators everything", started, spectator, true, started},
		{"started: reveal does not widen a seat", started, p2, true, publicStarted},
		{"taken: spectator sees public messages only", taken(0, public, toP2, toP3), spectator, false, stripped(0, public)},
		{"taken: the actor sees all its own", taken(0, public, toP2, toP3), p1, false, taken(0, public, toP2, toP3)},
		{"taken: a recipient sees what names it", taken(0, public, toP2, toP3), p2, false, stripped(0, public, toP2)},
		{"taken: the other recipient", taken(0, public, toP2, toP3), p3, false, stripped(0, public, toP3)},
		{"taken: reveal shows spectators everything", taken(0, public, toP2, toP3), spectator, true, taken(0, public, toP2, toP3)},
		{"taken: reveal does not widen a seat", taken(0, public, toP2, toP3), p3, true, stripped(0, public, toP3)},
		{"taken: a summary shown to some seats, spectator", vote, spectator, false, voteUnworded},
		{"taken: a summary shown to some seats, the mover", vote, p1, false, vote},
		{"taken: a summary shown to some seats, a seat shown it", vote, p2, false, voteWorded},
		{"taken: a summary shown to some seats, a seat not shown it", vote, p3, false, voteUnworded},
		{"taken: a summary shown to some seats, reveal", vote, spectator, true, vote},
		{"draw for one seat: spectator", draw, spectator, false, hiddenDraw},
		{"draw for one seat: that seat", draw, p1, false, draw},
		{"draw for one seat: another seat", draw, p2, false, hiddenDraw},
		{"draw for one seat: reveal", draw, spectator, true, draw},
		{"public draw", publicDraw, spectator, false, publicDraw},
		{"refused: spectator", refused, spectator, false, refusedPublic},
		{"refused: another seat", refused, p2, false, refusedPublic},
		{"refused: its seat", refused, p1, false, refused},
		{"refused: reveal", refused, spectator, true, refused},
		{"ended: usage without raw outputs", ended, spectator, false, endedPublic},
		{"ended: its seat", ended, p1, false, ended},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before *eventsv1.MatchEvent
			if tc.ev != nil {
				before = proto.CloneOf(tc.ev)
			}
			got := record.Redact(tc.ev, tc.viewer, tc.reveal)
			if !proto.Equal(got, tc.want) {
				t.Errorf("Redact:\n got  %v\n want %v", got, tc.want)
			}
			if tc.ev != nil && !proto.Equal(tc.ev, before) {
				t.Errorf("Redact modified its input")
			}
			if got != nil && got == tc.ev {
				t.Errorf("Redact returned its input, not a copy")
			}
		})
	}
}

func TestPublicParams(t *testing.T) {
	cases := []struct {
		name string
		in   *matchv1.GameParams
		want *matchv1.GameParams
	}{
		{"nil", nil, nil},
		{"ultimatum: nothing private",
			&matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{Total: proto.Int64(10)}}},
			&matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{Total: proto.Int64(10)}}}},
		{"dealornodeal: values and their source",
			&matchv1.GameParams{Family: &matchv1.GameParams_Dealornodeal{Dealornodeal: &dealornodealv1.Params{
				Items: []string{"book"}, Counts: []int64{2}, AliceValues: []int64{5}, BobValues: []int64{5},
				Corpus: proto.String("test.txt"), Datapoint: proto.Int32(3), Source: proto.String("test.txt dialogue 3"),
			}}},
			&matchv1.GameParams{Family: &matchv1.GameParams_Dealornodeal{Dealornodeal: &dealornodealv1.Params{
				Items: []string{"book"}, Counts: []int64{2}, Corpus: proto.String("test.txt"),
			}}}},
		{"trading: each seat's holdings and goal",
			&matchv1.GameParams{Family: &matchv1.GameParams_Trading{Trading: &tradingv1.Params{
				MaxTurns: proto.Int32(8), P1Holdings: map[string]int64{"X": 25}, P2Holdings: map[string]int64{"Y": 25},
				P1Goal: map[string]int64{"X": 15}, P2Goal: map[string]int64{"Y": 15},
			}}},
			&matchv1.GameParams{Family: &matchv1.GameParams_Trading{Trading: &tradingv1.Params{MaxTurns: proto.Int32(8)}}}},
		{"buysell: cost and willingness, not the public ranges",
			&matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{
				Cost: proto.Int64(40), Willingness: proto.Int64(60), CostMin: proto.Int64(20), SelfInterestedBuyer: proto.Bool(true),
			}}},
			&matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{
				CostMin: proto.Int64(20), SelfInterestedBuyer: proto.Bool(true),
			}}}},
		{"deliberation: score sheets, thresholds, briefings, bonus",
			&matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{
				P1Bonus: proto.Int32(10),
				Scenario: &deliberationv1.Scenario{Title: "t", Parties: []*deliberationv1.Party{{
					Id: "u", Name: "Union", Threshold: 50, Briefing: "secret", Points: []*deliberationv1.IssuePoints{{Points: []int32{1, 2}}},
				}}},
			}}},
			&matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{
				Scenario: &deliberationv1.Scenario{Title: "t", Parties: []*deliberationv1.Party{{Id: "u", Name: "Union"}}},
			}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := record.PublicParams(tc.in); !proto.Equal(got, tc.want) {
				t.Errorf("PublicParams:\n got  %v\n want %v", got, tc.want)
			}
		})
	}
}

// secretAgent plays random legal moves and marks everything private it sends with its seat, so
// that a redacted record can be searched for other seats' secrets. Its first attempt at a
// move is sometimes an empty action, which the rules refuse.
type secretAgent struct {
	mu   sync.Mutex
	rng  *rand.Rand
	seat int32
	n    int
}

// Play is not served: the runner asks with Act.
func (a *secretAgent) Play(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[agentv1.PlayRequest, agentv1.PlayResponse], error) {
	return nil, errors.New("no Play here")
}

func (a *secretAgent) Describe(context.Context, *agentv1.DescribeRequest, ...grpc.CallOption) (*agentv1.DescribeResponse, error) {
	return &agentv1.DescribeResponse{Agent: &gamev1.AgentInfo{Name: "secret", Version: "1"}}, nil
}

func (a *secretAgent) Act(_ context.Context, req *agentv1.ActRequest, _ ...grpc.CallOption) (*agentv1.ActResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	obs := req.GetObservation()
	secret := fmt.Sprintf("SECRET-%d-", a.seat)
	if obs.GetAttempt() == 1 && a.rng.IntN(5) == 0 {
		return &agentv1.ActResponse{Action: &agentv1.Action{PrivateReasoning: secret + "refused"}}, nil
	}
	act := games.RandomAction(obs, a.rng)
	act.PrivateReasoning = fmt.Sprintf("%sreasoning-%d", secret, a.n)
	act.PrivateNotes = fmt.Sprintf("%snotes-%d", secret, a.n)
	act.Usage = &agentv1.Usage{Model: "test", PromptTokens: 3, RawOutputs: []string{fmt.Sprintf("%sraw-%d", secret, a.n)}}
	for i, m := range act.GetMessages() {
		if len(m.GetTo()) > 0 {
			m.Text = fmt.Sprintf("PRIVATE-from%d-to%v-%d-%d", a.seat, m.GetTo(), a.n, i)
		}
	}
	return &agentv1.ActResponse{Action: act, Turn: obs.GetTurn()}, nil
}

// TestRedactWholeMatches plays every game with agents that fill every private field, then
// checks each viewer's redacted record: no other seat's secrets, no message that is not the
// viewer's, no draw meant for others, and nothing lost that the viewer may see.
func TestRedactWholeMatches(t *testing.T) {
	reg := families.New()
	var privateMsgs, hiddenDraws, refusals, hiddenSummaries int
	defer func() {
		// The agents above must have exercised every private part somewhere.
		if privateMsgs == 0 || hiddenDraws == 0 || refusals == 0 || hiddenSummaries == 0 {
			t.Errorf("private messages %d, draws for one seat %d, refused actions %d, moves worded for some seats %d: want some of each", privateMsgs, hiddenDraws, refusals, hiddenSummaries)
		}
	}()
	params := map[string]*matchv1.GameParams{
		"buysell": {Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{Draw: proto.Bool(true)}}},
	}
	for _, g := range reg.Games() {
		name := g.Info().GetName()
		t.Run(name, func(t *testing.T) {
			resolved, err := g.Resolve(params[name])
			if err != nil {
				t.Fatal(err)
			}
			seats, _ := games.Seats(g, resolved)
			agents := make([]agentv1.AgentServiceClient, len(seats))
			for i := range agents {
				agents[i] = &secretAgent{rng: rand.New(rand.NewPCG(uint64(i), 7)), seat: int32(i)}
			}
			res, err := match.NewRunner(nil).Run(context.Background(), match.Spec{
				ID: "m-" + name, Game: g, Params: resolved, Seed: 3, Agents: agents,
			})
			if err != nil {
				t.Fatal(err)
			}
			full := res.Events
			for _, ev := range full {
				for _, m := range ev.GetActionTaken().GetAction().GetMessages() {
					if len(m.GetTo()) > 0 {
						privateMsgs++
					}
				}
				if len(ev.GetChanceDrawn().GetVisibleTo()) > 0 {
					hiddenDraws++
				}
				if ev.GetActionRefused() != nil {
					refusals++
				}
				if a := ev.GetActionTaken(); a != nil {
					// Every family words its moves in the record as in the seats' histories.
					if a.GetSummary() == "" {
						t.Errorf("turn %d: seat %d's action has no summary: %v", ev.GetTurn(), a.GetSeat(), a)
					}
					if len(a.GetSummaryVisibleTo()) > 0 {
						hiddenSummaries++
					}
				}
			}
			viewers := []record.Viewer{record.Spectator}
			for i := range seats {
				viewers = append(viewers, record.SeatViewer(int32(i)))
			}
			for _, v := range viewers {
				checkView(t, full, record.RedactAll(full, v), v)
			}
			// With reveal, spectators get the record as it is.
			started := proto.CloneOf(full[0])
			started.GetMatchStarted().RevealPrivate = true
			revealed := record.RedactAll(append([]*eventsv1.MatchEvent{started}, full[1:]...), record.Spectator)
			for i := 1; i < len(full); i++ {
				if !proto.Equal(revealed[i], full[i]) {
					t.Fatalf("reveal: event %d differs:\n got  %v\n want %v", i+1, revealed[i], full[i])
				}
			}
		})
	}
}

func checkView(t *testing.T, full, view []*eventsv1.MatchEvent, v record.Viewer) {
	t.Helper()
	seat, isSeat := v.Seat()
	who := "spectator"
	if isSeat {
		who = fmt.Sprintf("seat %d", seat)
	}
	if len(view) != len(full) {
		t.Fatalf("%s: %d events, want %d", who, len(view), len(full))
	}
	mine := func(s int32) bool { return isSeat && s == seat }
	for i, ev := range view {
		if ev.GetSeq() != full[i].GetSeq() || kind(ev) != kind(full[i]) {
			t.Fatalf("%s: event %d is %s seq %d, want %s seq %d", who, i+1, kind(ev), ev.GetSeq(), kind(full[i]), full[i].GetSeq())
		}
		js, err := protojson.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		text := string(js)
		for s := int32(0); s < 10; s++ {
			if !mine(s) && strings.Contains(text, fmt.Sprintf("SECRET-%d-", s)) {
				t.Fatalf("%s sees seat %d's secret in event %d: %s", who, s, i+1, text)
			}
		}
		if s := ev.GetMatchStarted(); s != nil && s.GetSeed() != 0 {
			t.Errorf("%s sees the seed", who)
		}
		if s := ev.GetMatchStarted(); s != nil {
			leaves, err := privacy.Leaves(s.GetParams().ProtoReflect())
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range leaves {
				if l.Secret != nil {
					t.Errorf("%s sees %s, which its family declares private", who, l.Path)
				}
			}
		}
		if a := ev.GetActionTaken(); a != nil {
			fullMsgs := full[i].GetActionTaken().GetAction().GetMessages()
			var want []*gamev1.Message
			for _, m := range fullMsgs {
				if len(m.GetTo()) == 0 || mine(a.GetSeat()) || slices.ContainsFunc(m.GetTo(), mine) {
					want = append(want, m)
				}
			}
			got := a.GetAction().GetMessages()
			if len(got) != len(want) {
				t.Fatalf("%s: event %d has %d messages, want %d", who, i+1, len(got), len(want))
			}
			for j := range got {
				if !proto.Equal(got[j], want[j]) {
					t.Fatalf("%s: event %d message %d is %v, want %v", who, i+1, j, got[j], want[j])
				}
			}
			if mine(a.GetSeat()) && !proto.Equal(ev, full[i]) {
				t.Fatalf("%s: its own action was redacted:\n got  %v\n want %v", who, ev, full[i])
			}
			fa := full[i].GetActionTaken()
			shown := len(fa.GetSummaryVisibleTo()) == 0 || mine(a.GetSeat()) || slices.ContainsFunc(fa.GetSummaryVisibleTo(), mine)
			if shown != (a.GetSummary() == fa.GetSummary()) || !shown && a.GetSummary() != "" {
				t.Fatalf("%s: event %d's summary is %q, want it only where shown to %v (%q)", who, i+1, a.GetSummary(), fa.GetSummaryVisibleTo(), fa.GetSummary())
			}
		}
		if r := ev.GetActionRefused(); r != nil && mine(r.GetSeat()) && !proto.Equal(ev, full[i]) {
			t.Fatalf("%s: its own refused action was redacted", who)
		}
		if d := ev.GetChanceDrawn(); d != nil {
			visible := len(d.GetVisibleTo()) == 0 || slices.ContainsFunc(d.GetVisibleTo(), mine)
			if visible && !proto.Equal(ev, full[i]) {
				t.Fatalf("%s: a draw it may see was redacted: %v", who, ev)
			}
			if !visible && (d.Value != nil || d.Seat != nil || d.GetSummary() != "") {
				t.Fatalf("%s sees a draw meant for %v: %v", who, d.GetVisibleTo(), d)
			}
		}
	}
}

// kind names an event's payload kind.
func kind(ev *eventsv1.MatchEvent) string {
	if ev.GetPayload() == nil {
		return "none"
	}
	return fmt.Sprintf("%T", ev.GetPayload())
}
