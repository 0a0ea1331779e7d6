package agentconn

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// filled sets every field of m that is not in a oneof, and the oneofs' fields chosen by pick
// (the i-th of each oneof), to a value that is not the default: an element in each list, a
// message (empty, which is still present) in each message field.
func filled(m protoreflect.Message, pick int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() && o.Fields().Get(pick%o.Fields().Len()) != fd {
			continue
		}
		switch {
		case fd.IsMap():
			m.Mutable(fd).Map().Set(protoreflect.ValueOfString("k").MapKey(), m.Mutable(fd).Map().NewValue())
		case fd.IsList() && fd.Message() != nil:
			l := m.Mutable(fd).List()
			l.Append(l.NewElement())
		case fd.IsList():
			m.Mutable(fd).List().Append(scalar(fd))
		case fd.Message() != nil:
			m.Set(fd, protoreflect.ValueOfMessage(m.NewField(fd).Message()))
		default:
			m.Set(fd, scalar(fd))
		}
	}
}

func scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("x")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte("x"))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(1)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(7)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(7)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(7)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(7)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(7)
	default:
		return protoreflect.ValueOfFloat64(7)
	}
}

// A copy of an observation to send carries every field of it, whichever game's view it holds:
// a field added to Observation and not to sentCopy would be missing from every call on a
// stream.
func TestSentCopyHasEveryField(t *testing.T) {
	views := agentv1.File_parley_agent_v1_agent_proto.Messages().ByName("Observation").Oneofs().ByName("view").Fields().Len()
	for pick := range views {
		obs := &agentv1.Observation{}
		filled(obs.ProtoReflect(), pick)
		if got := sentCopy(obs); !proto.Equal(got, obs) {
			t.Errorf("view %d: the copy differs from the observation:\n%v\nwant\n%v", pick, got, obs)
		}
	}
	// What the stream sends besides the observation: an ActRequest holds nothing else.
	if n := (&agentv1.ActRequest{}).ProtoReflect().Descriptor().Fields().Len(); n != 1 {
		t.Errorf("ActRequest has %d fields; roundTrip sends its observation alone", n)
	}
}

// A request whose parts changed after protobuf cached their sizes is still sent as it is
// now; one whose sizes are up to date is sent as gRPC's own codec sends it.
func TestPresizedEncodesWhatIsThere(t *testing.T) {
	entry := &agentv1.HistoryEntry{Turn: 1, Summary: "P1 proposes.", Move: &gamev1.Move{}}
	obs := &agentv1.Observation{Game: "ultimatum", History: []*agentv1.HistoryEntry{entry}}
	proto.Size(obs) // caches every part's size, as FitObservation and History do
	req := &agentv1.PlayRequest{Call: 1, Act: &agentv1.ActRequest{Observation: sentCopy(obs)}}
	check := func(when string) {
		t.Helper()
		data, err := presizedCodec.Marshal(req)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		got := &agentv1.PlayRequest{}
		if err := proto.Unmarshal(data.Materialize(), got); err != nil {
			t.Fatalf("%s: the encoding does not decode: %v", when, err)
		}
		if !proto.Equal(got, req) {
			t.Fatalf("%s: sent\n%v\nwant\n%v", when, got, req)
		}
	}
	check("sizes up to date")
	entry.Summary = "P1 proposes an even split, and says why at length."
	check("an entry changed after it was sized")
}
