package record_test

import (
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/privacy"
	"github.com/parley-arena/parley/referee/record"
)

// testFamily is the parameter proto of a game family that exists only in this test, declared
// at run time the way a new family's .proto would declare it:
//
//	message Params {
//	  int64 deck_size = 1;
//	  int64 hole_card = 2 [(parley.game.v1.privacy).seat = 1];
//	  repeated Hand hands = 3 [(parley.game.v1.privacy).seat_list = true];
//	  string shuffle = 4 [(parley.game.v1.privacy).no_seat = true];
//	}
//	message Hand {
//	  string name = 1;
//	  repeated int64 cards = 2 [(parley.game.v1.privacy).element_seat = true];
//	}
//	// GameParams as a program that knows the family has it: one more oneof branch.
//	message GameParams { Params cards = 99; }
//
// It returns the Params and GameParams message descriptors.
func testFamily(t *testing.T) (params, gameParams protoreflect.MessageDescriptor) {
	t.Helper()
	opt := func(p *gamev1.Privacy) *descriptorpb.FieldOptions {
		o := &descriptorpb.FieldOptions{}
		proto.SetExtension(o, gamev1.E_Privacy, p)
		return o
	}
	field := func(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, typeName string, o *descriptorpb.FieldOptions) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n), Type: typ.Enum(), Label: label.Enum(), Options: o}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	const (
		single = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		rep    = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
		i64    = descriptorpb.FieldDescriptorProto_TYPE_INT64
		str    = descriptorpb.FieldDescriptorProto_TYPE_STRING
		msg    = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		pkg    = "parley.games.testcards.v1"
	)
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("parley/games/testcards/v1/testcards.proto"), Package: proto.String(pkg), Syntax: proto.String("proto3"),
		Dependency: []string{"parley/game/v1/privacy.proto"},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Params"), Field: []*descriptorpb.FieldDescriptorProto{
				field("deck_size", 1, i64, single, "", nil),
				field("hole_card", 2, i64, single, "", opt(&gamev1.Privacy{Owner: &gamev1.Privacy_Seat{Seat: 1}})),
				field("hands", 3, msg, rep, "."+pkg+".Hand", opt(&gamev1.Privacy{SeatList: true})),
				field("shuffle", 4, str, single, "", opt(&gamev1.Privacy{Owner: &gamev1.Privacy_NoSeat{NoSeat: true}})),
			}},
			{Name: proto.String("Hand"), Field: []*descriptorpb.FieldDescriptorProto{
				field("name", 1, str, single, "", nil),
				field("cards", 2, i64, rep, "", opt(&gamev1.Privacy{Owner: &gamev1.Privacy_ElementSeat{ElementSeat: true}})),
			}},
			{Name: proto.String("GameParams"), Field: []*descriptorpb.FieldDescriptorProto{
				field("cards", 99, msg, single, "."+pkg+".Params", nil),
			}},
		},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().ByName("Params"), fd.Messages().ByName("GameParams")
}

// testParams fills the test family's Params: a public deck size and hand names, a hole card
// (seat 1's), each hand's cards (its seat's) and how the deck was shuffled (nobody's).
func testParams(desc protoreflect.MessageDescriptor) *dynamicpb.Message {
	p := dynamicpb.NewMessage(desc)
	fields := desc.Fields()
	p.Set(fields.ByName("deck_size"), protoreflect.ValueOfInt64(52))
	p.Set(fields.ByName("hole_card"), protoreflect.ValueOfInt64(777001))
	p.Set(fields.ByName("shuffle"), protoreflect.ValueOfString("riffle 777002"))
	hands := p.Mutable(fields.ByName("hands")).List()
	handDesc := fields.ByName("hands").Message()
	for i, name := range []string{"north", "south"} {
		h := dynamicpb.NewMessage(handDesc)
		h.Set(handDesc.Fields().ByName("name"), protoreflect.ValueOfString(name))
		cards := h.Mutable(handDesc.Fields().ByName("cards")).List()
		cards.Append(protoreflect.ValueOfInt64(int64(777100 + i)))
		hands.Append(protoreflect.ValueOfMessage(h))
	}
	return p
}

// TestTestOnlyFamilyDeclaration: a new family's declaration, and nothing else, decides what is
// cleared and whose it is. Redaction walks GameParams with no list of families, so in a program
// whose GameParams has the family's branch (here a dynamic one) it clears what the family
// declares private, and only that.
func TestTestOnlyFamilyDeclaration(t *testing.T) {
	desc, gameParamsDesc := testFamily(t)
	p := testParams(desc)

	leaves, err := privacy.Leaves(p)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{}
	for _, l := range leaves {
		switch {
		case l.Secret == nil:
			owners[l.Path.String()] = "public"
		case l.Seat == privacy.NoSeat:
			owners[l.Path.String()] = "nobody"
		default:
			owners[l.Path.String()] = strconv.Itoa(int(l.Seat))
		}
	}
	want := map[string]string{
		"deck_size": "public", "hole_card": "1", "hands[0].name": "public", "hands[0].cards": "0",
		"hands[1].name": "public", "hands[1].cards": "1", "shuffle": "nobody",
	}
	if len(owners) != len(want) {
		t.Fatalf("leaves %v, want %v", owners, want)
	}
	for k, v := range want {
		if owners[k] != v {
			t.Errorf("%s belongs to %q, want %q (all: %v)", k, owners[k], v, owners)
		}
	}

	gp := dynamicpb.NewMessage(gameParamsDesc)
	gp.Set(gameParamsDesc.Fields().ByName("cards"), protoreflect.ValueOfMessage(p))
	privacy.Clear(gp)
	fields := desc.Fields()
	if p.Has(fields.ByName("hole_card")) || p.Has(fields.ByName("shuffle")) {
		t.Errorf("private fields left: %v", p)
	}
	if p.Get(fields.ByName("deck_size")).Int() != 52 {
		t.Errorf("the public deck size was cleared: %v", p)
	}
	hands := p.Get(fields.ByName("hands")).List()
	for i := range hands.Len() {
		h := hands.Get(i).Message()
		if h.Has(h.Descriptor().Fields().ByName("cards")) || h.Get(h.Descriptor().Fields().ByName("name")).String() == "" {
			t.Errorf("hand %d: %v, want its name and no cards", i, h)
		}
	}
}

// TestRedactFamilyThisProgramLacks: a record made by a newer referee, whose MatchStarted holds
// the parameters of a family this program has no descriptor for, shows spectators and seats
// none of them, in the wire form (what gRPC and Connect clients get) as in JSON: without its
// declaration nothing in it can be known to be public.
func TestRedactFamilyThisProgramLacks(t *testing.T) {
	paramsDesc, gameParamsDesc := testFamily(t)
	newer := dynamicpb.NewMessage(gameParamsDesc)
	newer.Set(gameParamsDesc.Fields().ByName("cards"), protoreflect.ValueOfMessage(testParams(paramsDesc)))
	wire, err := proto.Marshal(newer)
	if err != nil {
		t.Fatal(err)
	}
	gp := &matchv1.GameParams{}
	if err := proto.Unmarshal(wire, gp); err != nil {
		t.Fatal(err)
	}
	if len(gp.ProtoReflect().GetUnknown()) == 0 {
		t.Fatal("the newer family's parameters did not reach the record as unknown fields")
	}
	ev := &eventsv1.MatchEvent{MatchId: "m", Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
		Game: "testcards", Params: gp,
	}}}
	for _, v := range []record.Viewer{record.Spectator, record.SeatViewer(0), record.SeatViewer(1)} {
		got := record.Redact(ev, v, false)
		b, err := proto.Marshal(got.GetMatchStarted().GetParams())
		if err != nil {
			t.Fatal(err)
		}
		back := dynamicpb.NewMessage(gameParamsDesc)
		if err := proto.Unmarshal(b, back); err != nil {
			t.Fatal(err)
		}
		if back.Has(gameParamsDesc.Fields().ByName("cards")) || len(b) != 0 {
			t.Errorf("viewer %v sees the unknown family's parameters: %v", v, back)
		}
		js, err := protojson.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if got.GetMatchStarted().GetGame() != "testcards" {
			t.Errorf("the game's name was lost: %s", js)
		}
	}
	// The record itself keeps them: only what is shown is redacted.
	if len(ev.GetMatchStarted().GetParams().ProtoReflect().GetUnknown()) == 0 {
		t.Error("Redact changed its input")
	}
}
