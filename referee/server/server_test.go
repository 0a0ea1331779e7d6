package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/builtin"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/queue"
)

type fixture struct {
	client refereev1.RefereeServiceClient
	bus    *bus.Bus
	server *Server
}

// start serves a referee over real gRPC on loopback, recording to an embedded NATS server.
func start(t *testing.T) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	agents := &agentconn.Resolver{Builtins: builtin.Agents{}}
	ref, err := New(ctx, Config{Matches: &launch.Preparer{Games: families.New(), Agents: agents}, Bus: b, StartGrace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The referee's worker, as `parley referee` runs it: one match at a time, so they are
	// played in the order they were asked for.
	w := queue.NewWorker(b, queue.WorkerConfig{
		Games:  families.New(),
		Player: &launch.Player{Agents: agents},
	}, nil)
	wctx, stopWorker := context.WithCancel(context.Background())
	worked := make(chan error, 1)
	go func() { worked <- w.Run(wctx) }()
	t.Cleanup(func() { stopWorker(); <-worked })
	srv := grpc.NewServer()
	refereev1.RegisterRefereeServiceServer(srv, ref)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(func() {
		srv.Stop()
		ref.Close()
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &fixture{client: refereev1.NewRefereeServiceClient(conn), bus: b, server: ref}
}

// waitEnded waits until every match of ids has ended, and is listed as ended.
func (f *fixture) waitEnded(ctx context.Context, t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		streamAll(ctx, t, f.client, id, 0)
	}
	for {
		resp, err := f.client.ListMatches(ctx, &refereev1.ListMatchesRequest{State: refereev1.MatchState_MATCH_STATE_ENDED, PageSize: MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]bool{}
		for _, m := range resp.GetMatches() {
			listed[m.GetMatchId()] = true
		}
		all := true
		for _, id := range ids {
			all = all && listed[id]
		}
		if all {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("matches %v not all listed as ended", ids)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func streamAll(ctx context.Context, t *testing.T, c refereev1.RefereeServiceClient, id string, from uint64) []*eventsv1.MatchEvent {
	t.Helper()
	stream, err := c.StreamMatchEvents(ctx, &refereev1.StreamMatchEventsRequest{MatchId: id, FromSeq: from})
	if err != nil {
		t.Fatal(err)
	}
	var out []*eventsv1.MatchEvent
	for {
		resp, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("stream: %v", err)
		}
		if resp.GetWaiting() != nil {
			continue // live news between the events, not part of the record
		}
		out = append(out, resp.GetEvent())
	}
}

func TestListGames(t *testing.T) {
	f := start(t)
	resp, err := f.client.ListGames(context.Background(), &refereev1.ListGamesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var found *gamev1.GameInfo
	for _, g := range resp.GetGames() {
		if g.GetName() == "ultimatum" {
			found = g
		}
	}
	if found == nil {
		t.Fatalf("ultimatum not listed: %v", resp)
	}
	names := map[string]string{}
	for _, p := range found.GetParams() {
		names[p.GetName()] = p.GetDefaultValue()
	}
	if names["total"] != "100" || names["max_turns"] != "8" {
		t.Errorf("ultimatum defaults = %v, want total=100 max_turns=8 (the spec's)", names)
	}
}

func TestMatchStreamedRecordedAndStored(t *testing.T) {
	f := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	started, err := f.client.StartMatch(ctx, &refereev1.StartMatchRequest{
		Game: "ultimatum", Seed: 11, Agents: []string{"builtin:fair", "builtin:random?seed=3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := started.GetMatchId()
	streamed := streamAll(ctx, t, f.client, id, 0)
	if len(streamed) < 3 || streamed[0].GetMatchStarted() == nil || streamed[len(streamed)-1].GetMatchEnded() == nil {
		t.Fatalf("streamed record does not run from match_started to match_ended: %d events", len(streamed))
	}
	got, err := f.client.GetMatch(ctx, &refereev1.GetMatchRequest{MatchId: id})
	if err != nil {
		t.Fatal(err)
	}
	if !got.GetEnded() {
		t.Error("GetMatch says the match has not ended after its stream closed")
	}
	assertSameEvents(t, "GetMatch vs stream", got.GetEvents(), streamed)

	// A late joiner starting part-way gets the rest, from the sequence number it asked for.
	tail := streamAll(ctx, t, f.client, id, 3)
	assertSameEvents(t, "stream from seq 3", tail, streamed[2:])

	// Every event reached JetStream: a durable consumer sees each seq exactly once, in order.
	fromNATS := consumeDurable(ctx, t, f.bus, id, len(streamed))
	assertSameEvents(t, "JetStream vs stream", fromNATS, streamed)
}

// consumeDurable reads a match's events with a durable, explicitly acked consumer, the way
// analytics will, and fails if any sequence number is missing, repeated or out of order.
func consumeDurable(ctx context.Context, t *testing.T, b *bus.Bus, id string, want int) []*eventsv1.MatchEvent {
	t.Helper()
	cons, err := b.JetStream().CreateOrUpdateConsumer(ctx, natsname.MatchStream, jetstream.ConsumerConfig{
		Durable:       "test-" + id,
		FilterSubject: natsname.MatchFilter(id),
		AckPolicy:     jetstream.AckExplicitPolicy,
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []*eventsv1.MatchEvent
	for len(out) < want {
		batch, err := cons.Fetch(want-len(out), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			evs, err := bus.Decode(msg.Headers(), msg.Data())
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.GetSeq() != uint64(len(out)+1) {
					t.Fatalf("JetStream gave seq %d after %d events", ev.GetSeq(), len(out))
				}
				out = append(out, ev)
			}
			// A message travels on the subject of its last event, or on match_started when it
			// holds the start and not the ending (see package bus); how many events a message
			// holds is the settler's to choose, and not checked.
			last, on := evs[len(evs)-1], evs[len(evs)-1]
			if evs[0].GetMatchStarted() != nil && last.GetMatchEnded() == nil {
				on = evs[0]
			}
			if msg.Subject() != bus.Subject(id, on) {
				t.Errorf("events %d to %d on subject %q, want %q", evs[0].GetSeq(), last.GetSeq(), msg.Subject(), bus.Subject(id, on))
			}
			if err := msg.Ack(); err != nil {
				t.Fatal(err)
			}
		}
		if n == 0 {
			t.Fatalf("JetStream has %d events of match %s, want %d", len(out), id, want)
		}
	}
	// Nothing more is pending: no event was stored twice.
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumPending != 0 {
		t.Errorf("%d more events pending after the whole record", info.NumPending)
	}
	return out
}

func assertSameEvents(t *testing.T, what string, got, want []*eventsv1.MatchEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("%s: event %d differs:\n got %v\nwant %v", what, i+1, got[i], want[i])
		}
	}
}

func TestConcurrentMatches(t *testing.T) {
	f := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ids []string
	for i := range 6 {
		resp, err := f.client.StartMatch(ctx, &refereev1.StartMatchRequest{
			Game: "ultimatum", Seed: uint64(i), Agents: []string{"builtin:random?seed=1", "builtin:fair"},
			MatchId: fmt.Sprintf("concurrent-%d", i),
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.GetMatchId())
	}
	f.waitEnded(ctx, t, ids...)
	for _, id := range ids {
		got, err := f.client.GetMatch(ctx, &refereev1.GetMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		evs := got.GetEvents()
		if !got.GetEnded() || evs[len(evs)-1].GetMatchEnded() == nil {
			t.Fatalf("match %s did not end", id)
		}
		for i, ev := range evs {
			if ev.GetMatchId() != id || ev.GetSeq() != uint64(i+1) {
				t.Fatalf("match %s event %d: id %q seq %d", id, i+1, ev.GetMatchId(), ev.GetSeq())
			}
		}
		stored, err := bus.ReadMatch(ctx, f.bus.JetStream(), id)
		if err != nil {
			t.Fatal(err)
		}
		assertSameEvents(t, "JetStream "+id, stored, evs)
	}
}

func TestBadRequests(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	tests := []struct {
		name string
		req  *refereev1.StartMatchRequest
		code codes.Code
	}{
		{"unknown game", &refereev1.StartMatchRequest{Game: "chess", Agents: []string{"builtin:fair", "builtin:fair"}}, codes.InvalidArgument},
		{"one agent for two seats", &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{"builtin:fair"}}, codes.InvalidArgument},
		{"unknown builtin", &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{"builtin:fair", "builtin:nobody"}}, codes.InvalidArgument},
		{"bad address", &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{"builtin:fair", "localhost"}}, codes.InvalidArgument},
		{"bad match id", &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{"builtin:fair", "builtin:fair"}, MatchId: "a.b"}, codes.InvalidArgument},
		{"labels for some seats", &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{"builtin:fair", "builtin:fair"}, Labels: []string{"x"}}, codes.InvalidArgument},
		{"a human seat no page here serves", &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{"builtin:fair", "human:ada"}}, codes.InvalidArgument},
		{"an agent for another game", &refereev1.StartMatchRequest{Game: "buysell", Agents: []string{"builtin:fair", "builtin:concede"}}, codes.InvalidArgument},
		{"nothing listens at the address", &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{"builtin:fair", "grpc://127.0.0.1:1"}}, codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.client.StartMatch(ctx, tc.req)
			if status.Code(err) != tc.code {
				t.Fatalf("got %v, want code %s", err, tc.code)
			}
			if status.Convert(err).Message() == "" {
				t.Error("error has no message")
			}
		})
	}
	req := &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{"builtin:fair", "builtin:fair"}, MatchId: "same"}
	if _, err := f.client.StartMatch(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.StartMatch(ctx, req); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("second match with the same id: got %v, want AlreadyExists", err)
	}
	if _, err := f.client.GetMatch(ctx, &refereev1.GetMatchRequest{MatchId: "nope"}); status.Code(err) != codes.NotFound {
		t.Fatalf("GetMatch of an unknown id: got %v, want NotFound", err)
	}
}

func TestListMatchesAndLabels(t *testing.T) {
	f := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range 3 {
		req := &refereev1.StartMatchRequest{
			Game: "ultimatum", Seed: uint64(i), Agents: []string{"builtin:fair", "builtin:random"},
			MatchId: fmt.Sprintf("listed-%d", i), Labels: []string{"fair-one", ""}, RevealPrivate: i == 2,
		}
		if _, err := f.client.StartMatch(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	f.waitEnded(ctx, t, "listed-0", "listed-1", "listed-2")
	resp, err := f.client.ListMatches(ctx, &refereev1.ListMatchesRequest{PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range resp.GetMatches() {
		ids = append(ids, m.GetMatchId())
		if m.GetState() != refereev1.MatchState_MATCH_STATE_ENDED || m.GetOutcome() == nil {
			t.Errorf("%s: state %s outcome %v, want ended with an outcome", m.GetMatchId(), m.GetState(), m.GetOutcome())
		}
		if l := m.GetSeats()[0].GetLabel(); l != "fair-one" {
			t.Errorf("%s: seat 0 label %q", m.GetMatchId(), l)
		}
		if m.GetRevealPrivate() != (m.GetMatchId() == "listed-2") {
			t.Errorf("%s: reveal_private %v", m.GetMatchId(), m.GetRevealPrivate())
		}
	}
	if fmt.Sprint(ids) != "[listed-2 listed-1]" || resp.GetNextPageToken() == "" {
		t.Fatalf("first page %v (next %q), want [listed-2 listed-1] and a next page", ids, resp.GetNextPageToken())
	}
	resp, err = f.client.ListMatches(ctx, &refereev1.ListMatchesRequest{PageSize: 2, PageToken: resp.GetNextPageToken()})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetMatches()) != 1 || resp.GetMatches()[0].GetMatchId() != "listed-0" || resp.GetNextPageToken() != "" {
		t.Fatalf("second page %v", resp)
	}
	resp, err = f.client.ListMatches(ctx, &refereev1.ListMatchesRequest{State: refereev1.MatchState_MATCH_STATE_RUNNING})
	if err != nil || len(resp.GetMatches()) != 0 {
		t.Fatalf("running matches: %v, %v; want none", resp, err)
	}
	if _, err := f.client.ListMatches(ctx, &refereev1.ListMatchesRequest{PageToken: "nope"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("bad page token: %v", err)
	}
}

// The forms of the web page list the built-in agents and have their parameters read as
// `parley play --param` reads them: both through the referee.
func TestListAgentsAndParseParams(t *testing.T) {
	f := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	agents, err := f.client.ListAgents(ctx, &refereev1.ListAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, a := range agents.GetAgents() {
		names[a.GetName()] = a.GetSummary() != ""
	}
	for _, want := range []string{"fair", "random", "coalition"} {
		if !names[want] {
			t.Errorf("built-in agent %q missing or without a summary in %v", want, agents.GetAgents())
		}
	}
	resp, err := f.client.ParseParams(ctx, &refereev1.ParseParamsRequest{Game: "coalition", Params: map[string]string{
		"values": "AB:700,ABC:1000", "rounds": "2", "players": "A,B,C",
	}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := games.ParseParams("coalition", []string{"players=A,B,C", "rounds=2", "values=AB:700,ABC:1000"})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(resp.GetParams(), want) {
		t.Errorf("ParseParams = %v, want what --param gives: %v", resp.GetParams(), want)
	}
	for _, bad := range []*refereev1.ParseParamsRequest{
		{Game: "coalition", Params: map[string]string{"rounds": "many"}},
		{Game: "ultimatum", Params: map[string]string{"nope": "1"}},
		{Game: "chess"},
	} {
		if _, err := f.client.ParseParams(ctx, bad); status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() == "" {
			t.Errorf("ParseParams(%v) = %v, want INVALID_ARGUMENT with a reason", bad, err)
		}
	}
}
