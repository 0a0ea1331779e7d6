package contract_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/internal/contract"
)

// shapes holds the contract's shape at each revision. When this test fails, the shape a bot
// sees changed: make contract.Revision one more, add its shape here, and say what it added
// under "Contract revisions" in docs/writing-an-agent.md.
var shapes = map[int]string{
	// Computed again when the types of options left the shape (the protos of revision 1 give it
	// too: parley.game.v1.Param, new since, is only an option's type).
	1: "7e990f5e87e2fa9b",
	2: "034c00e0c75633ba",
	3: "8bf69bba6a73bd71",
}

func TestRevisionFollowsTheShape(t *testing.T) {
	got := contract.Shape()
	if want := shapes[contract.Revision]; got != want {
		t.Fatalf("the contract's shape is %s, but revision %d's is %q: the proto a bot sees changed; "+
			"make contract.Revision %d, add {%d: %q} to shapes, and list what it added in docs/writing-an-agent.md",
			got, contract.Revision, want, contract.Revision+1, contract.Revision+1, got)
	}
	if v := contract.Version(); v.GetPackage() != "parley.agent.v1" || v.GetRevision() != contract.Revision {
		t.Errorf("version %v", v)
	}
}

// The shape changes with a field added, renamed or renumbered and with a call added; not with
// a comment or an option.
func TestShapeSeesWhatABotSees(t *testing.T) {
	base := protodesc.ToFileDescriptorProto(agentv1.File_parley_agent_v1_agent_proto)
	shape := func(change func(*descriptorpb.FileDescriptorProto)) string {
		t.Helper()
		fdp := proto.CloneOf(base)
		change(fdp)
		f, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
		if err != nil {
			t.Fatal(err)
		}
		return contract.ShapeOf(f)
	}
	message := func(fdp *descriptorpb.FileDescriptorProto, name string) *descriptorpb.DescriptorProto {
		for _, m := range fdp.GetMessageType() {
			if m.GetName() == name {
				return m
			}
		}
		t.Fatalf("no message %s", name)
		return nil
	}
	same := shape(func(*descriptorpb.FileDescriptorProto) {})
	if same != contract.ShapeOf(agentv1.File_parley_agent_v1_agent_proto) {
		t.Fatal("a copy of the descriptor has another shape")
	}
	for name, change := range map[string]func(*descriptorpb.FileDescriptorProto){
		"field added": func(fdp *descriptorpb.FileDescriptorProto) {
			m := message(fdp, "ActResponse")
			m.Field = append(m.Field, &descriptorpb.FieldDescriptorProto{Name: proto.String("extra"), JsonName: proto.String("extra"), Number: proto.Int32(99),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()})
		},
		"field renamed": func(fdp *descriptorpb.FileDescriptorProto) {
			f := message(fdp, "ActResponse").GetField()[1]
			f.Name, f.JsonName = proto.String("turn_echo"), proto.String("turnEcho")
		},
		"field renumbered": func(fdp *descriptorpb.FileDescriptorProto) {
			message(fdp, "ActResponse").GetField()[1].Number = proto.Int32(7)
		},
		"call added": func(fdp *descriptorpb.FileDescriptorProto) {
			s := fdp.GetService()[0]
			s.Method = append(s.Method, &descriptorpb.MethodDescriptorProto{Name: proto.String("Ping"), InputType: proto.String(".parley.agent.v1.DescribeRequest"), OutputType: proto.String(".parley.agent.v1.DescribeResponse")})
		},
	} {
		if shape(change) == same {
			t.Errorf("%s: the shape did not change", name)
		}
	}
	for name, change := range map[string]func(*descriptorpb.FileDescriptorProto){
		"comment": func(fdp *descriptorpb.FileDescriptorProto) {
			fdp.SourceCodeInfo = &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{{Path: []int32{4, 0}, Span: []int32{1, 1, 2}, LeadingComments: proto.String(" another comment\n")}}}
		},
		"option": func(fdp *descriptorpb.FileDescriptorProto) {
			message(fdp, "ActResponse").GetField()[1].Options = &descriptorpb.FieldOptions{Deprecated: proto.Bool(true)}
		},
		"option type declared": func(fdp *descriptorpb.FileDescriptorProto) {
			if !slices.Contains(fdp.Dependency, "google/protobuf/descriptor.proto") {
				fdp.Dependency = append(fdp.Dependency, "google/protobuf/descriptor.proto")
			}
			fdp.MessageType = append(fdp.MessageType, &descriptorpb.DescriptorProto{Name: proto.String("Hint"), Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("help"), JsonName: proto.String("help"), Number: proto.Int32(1),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			}}})
			fdp.Extension = append(fdp.Extension, &descriptorpb.FieldDescriptorProto{Name: proto.String("hint"), JsonName: proto.String("hint"), Number: proto.Int32(50999),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
				TypeName: proto.String(".parley.agent.v1.Hint"), Extendee: proto.String(".google.protobuf.FieldOptions")})
		},
	} {
		if shape(change) != same {
			t.Errorf("%s: the shape changed", name)
		}
	}
}
