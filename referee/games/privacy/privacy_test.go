package privacy_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/privacy"
)

// TestLeavesOfDeliberation reads deliberation's declaration: each party's threshold, points and
// briefing belong to the seat of its place in the list of parties, p1's bonus to seat 0; names
// and the rest are public.
func TestLeavesOfDeliberation(t *testing.T) {
	gp := &matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{
		P1Bonus: proto.Int32(10), DiscussionTurns: proto.Int32(4),
		Scenario: &deliberationv1.Scenario{Title: "t", Parties: []*deliberationv1.Party{
			{Id: "a", Name: "A", Threshold: 50, Briefing: "a's", Points: []*deliberationv1.IssuePoints{{Points: []int32{1, 2}}}},
			{Id: "b", Name: "B", Threshold: 60, Briefing: "b's", Points: []*deliberationv1.IssuePoints{{Points: []int32{3, 4}}}},
		}},
	}}}
	leaves, err := privacy.Leaves(gp.ProtoReflect())
	if err != nil {
		t.Fatal(err)
	}
	type owner struct {
		secret string
		seat   games.Seat
	}
	got := map[string]owner{}
	for _, l := range leaves {
		o := owner{seat: -2}
		if l.Secret != nil {
			o = owner{l.Secret.String(), l.Seat}
		}
		got[l.Path.String()] = o
	}
	public := owner{seat: -2}
	want := map[string]owner{
		"deliberation.discussion_turns":                     public,
		"deliberation.p1_bonus":                             {"deliberation.p1_bonus", 0},
		"deliberation.scenario.title":                       public,
		"deliberation.scenario.parties[0].id":               public,
		"deliberation.scenario.parties[0].name":             public,
		"deliberation.scenario.parties[0].threshold":        {"deliberation.scenario.parties[0].threshold", 0},
		"deliberation.scenario.parties[0].points[0].points": {"deliberation.scenario.parties[0].points", 0},
		"deliberation.scenario.parties[0].briefing":         {"deliberation.scenario.parties[0].briefing", 0},
		"deliberation.scenario.parties[1].id":               public,
		"deliberation.scenario.parties[1].name":             public,
		"deliberation.scenario.parties[1].threshold":        {"deliberation.scenario.parties[1].threshold", 1},
		"deliberation.scenario.parties[1].points[0].points": {"deliberation.scenario.parties[1].points", 1},
		"deliberation.scenario.parties[1].briefing":         {"deliberation.scenario.parties[1].briefing", 1},
	}
	if len(got) != len(want) {
		t.Errorf("%d leaves, want %d: %v", len(got), len(want), got)
	}
	for path, w := range want {
		if g, ok := got[path]; !ok || g != w {
			t.Errorf("%s: %+v, want %+v", path, g, w)
		}
	}
	// Holder reaches the message a path's last field lies in, on a copy too.
	c := proto.CloneOf(gp)
	for _, l := range leaves {
		if l.Path.String() == "deliberation.scenario.parties[1].threshold" {
			l.Path.Holder(c.ProtoReflect()).Set(l.Path[len(l.Path)-1].Field, protoreflect.ValueOfInt32(61))
		}
	}
	if th := c.GetDeliberation().GetScenario().GetParties()[1].GetThreshold(); th != 61 {
		t.Errorf("Holder: threshold %d, want 61", th)
	}
}

// TestElementSeatOutsideASeatList: a field private to "its element's seat" in no seat_list has
// no owner; Leaves says so rather than guess.
func TestElementSeatOutsideASeatList(t *testing.T) {
	o := &descriptorpb.FieldOptions{}
	proto.SetExtension(o, gamev1.E_Privacy, &gamev1.Privacy{Owner: &gamev1.Privacy_ElementSeat{ElementSeat: true}})
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("bad.proto"), Package: proto.String("bad"), Syntax: proto.String("proto3"),
		Dependency: []string{"parley/game/v1/privacy.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Params"), Field: []*descriptorpb.FieldDescriptorProto{{
			Name: proto.String("card"), Number: proto.Int32(1), Options: o,
			Type: descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
		}}}},
	}, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	m := dynamicpb.NewMessage(fd.Messages().ByName("Params"))
	m.Set(m.Descriptor().Fields().ByName("card"), protoreflect.ValueOfInt64(7))
	if _, err := privacy.Leaves(m); err == nil || !strings.Contains(err.Error(), "card is private to its element's seat but lies in no seat_list") {
		t.Fatalf("Leaves: %v, want an error naming card", err)
	}
}
