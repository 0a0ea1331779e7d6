package bus

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// A read WithoutFields gives the events without those fields wherever their message occurs
// (an action taken, an action refused), and everything else as stored, from a message per
// event and from a batch alike; a read without options gives the events whole.
func TestReadWithoutFields(t *testing.T) {
	b := openEmbedded(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	record := func(id string) []*eventsv1.MatchEvent {
		evs := syntheticMatch(id, 4)
		evs[1].Payload = &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: 0, Attempt: 1, Action: &agentv1.Action{
			Move:             &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}},
			Messages:         []*gamev1.Message{{Text: "deal?"}},
			PrivateReasoning: "the whole answer, once",
			PrivateNotes:     "a note",
			Usage:            &agentv1.Usage{Model: "m", RawOutputs: []string{"the whole answer", "again"}, Style: "tagged"},
		}}}
		evs[2].Payload = &eventsv1.MatchEvent_ActionRefused{ActionRefused: &eventsv1.ActionRefused{Seat: 1, Attempt: 1, Action: &agentv1.Action{
			PrivateReasoning: "refused reasoning", Usage: &agentv1.Usage{RawOutputs: []string{"refused answer"}},
		}}}
		return evs
	}
	single := record("proj-single")
	if err := recordAll(ctx, NewPublisher(b), single); err != nil {
		t.Fatal(err)
	}
	batched := record("proj-batch")
	settler := NewPublisher(b).SettleEachMatch()
	settler.Linger = time.Minute // the whole record leaves in one message, with its ending
	for _, ev := range batched {
		if err := settler.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	action := (&agentv1.Action{}).ProtoReflect().Descriptor().Fields()
	usage := (&agentv1.Usage{}).ProtoReflect().Descriptor().Fields()
	leave := WithoutFields(action.ByName("private_reasoning"), usage.ByName("raw_outputs"))
	for _, evs := range [][]*eventsv1.MatchEvent{single, batched} {
		id := evs[0].GetMatchId()
		whole, err := ReadMatch(ctx, b.JetStream(), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameEvents(whole, evs); err != nil {
			t.Errorf("%s read whole: %v", id, err)
		}
		want := make([]*eventsv1.MatchEvent, len(evs))
		for i, ev := range evs {
			want[i] = proto.CloneOf(ev)
		}
		taken := want[1].GetActionTaken().GetAction()
		taken.PrivateReasoning, taken.Usage.RawOutputs = "", nil
		refused := want[2].GetActionRefused().GetAction()
		refused.PrivateReasoning, refused.Usage.RawOutputs = "", nil
		light, err := ReadMatch(ctx, b.JetStream(), id, leave)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameEvents(light, want); err != nil {
			t.Errorf("%s read without reasoning and raw outputs: %v", id, err)
		}
	}
}
