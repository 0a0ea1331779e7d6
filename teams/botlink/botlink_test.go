package botlink_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/teams/botlink"
)

func openBus(t *testing.T) *bus.Bus { return openBusAt(t, "") }

// openBusAt opens a bus on the NATS server at url ("": an embedded one).
func openBusAt(t *testing.T, url string) *bus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// Calls cross NATS to a session and back; what goes wrong on the way is a gRPC status the
// referee classifies like any agent's.
func TestClientThroughSession(t *testing.T) {
	b := openBus(t)
	client := botlink.NewClient(b.Conn(), "team", "bot")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if _, err := client.Describe(ctx, &agentv1.DescribeRequest{}); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "not connected") {
		t.Fatalf("no session: %v", err)
	}
	if botlink.Connected(ctx, b.Conn(), "team", "bot") {
		t.Fatal("connected without a session")
	}

	// The "bot": answers act with a message as long as the observation's match id, never
	// answers turn 13.
	var session *botlink.Session
	asked13 := make(chan struct{}, 4)
	session = botlink.NewSession(b.Conn(), "team", "bot", func(c *botlinkv1.Call) error {
		go func() {
			res := &botlinkv1.CallResult{CallId: c.GetCallId()}
			switch {
			case c.GetDescribe() != nil:
				res.Kind = &botlinkv1.CallResult_Describe{Describe: &agentv1.DescribeResponse{Agent: &gamev1.AgentInfo{Name: "linked"}}}
			case c.GetAct().GetObservation().GetTurn() == 13:
				asked13 <- struct{}{}
				return
			case c.GetAct().GetObservation().GetTurn() == 7:
				res.Kind = &botlinkv1.CallResult_Error{Error: "cannot decide"}
			default:
				text := c.GetAct().GetObservation().GetMatchId()
				res.Kind = &botlinkv1.CallResult_Act{Act: &agentv1.ActResponse{Action: &agentv1.Action{PrivateNotes: text}, Turn: c.GetAct().GetObservation().GetTurn()}}
			}
			if c.GetDeadline() == nil {
				res.Kind = &botlinkv1.CallResult_Error{Error: "no deadline"}
			}
			session.Deliver(res)
		}()
		return nil
	})
	if err := session.Start(); err != nil {
		t.Fatal(err)
	}
	if !botlink.Connected(ctx, b.Conn(), "team", "bot") {
		t.Fatal("not connected with a session")
	}

	d, err := client.Describe(ctx, &agentv1.DescribeRequest{})
	if err != nil || d.GetAgent().GetName() != "linked" {
		t.Fatalf("describe: %v %v", d, err)
	}
	act, err := client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: 2, MatchId: "m"}})
	if err != nil || act.GetTurn() != 2 || act.GetAction().GetPrivateNotes() != "m" {
		t.Fatalf("act: %v %v", act, err)
	}
	_, err = client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: 7}})
	if status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), "cannot decide") {
		t.Errorf("the bot's error: %v", err)
	}
	big := strings.Repeat("x", 5000)
	_, err = client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: 3, MatchId: big}}, grpc.MaxCallRecvMsgSize(1024))
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "larger than max") {
		t.Errorf("oversized reply: %v", err)
	}
	short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = client.Act(short, &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: 13}})
	stop()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("no answer: %v", err)
	}
	<-asked13

	// A call in flight when the session closes fails at once, saying why.
	done := make(chan error, 1)
	go func() {
		_, err := client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: 13}})
		done <- err
	}()
	<-asked13 // the call is waiting in the session
	session.Close("the test cut the link")
	select {
	case err := <-done:
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "the test cut the link") {
			t.Errorf("call cut off: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("a call in flight waited on after the session closed")
	}
	if _, err := client.Describe(ctx, &agentv1.DescribeRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("after close: %v", err)
	}
}
