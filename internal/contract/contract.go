// Package contract says which version of the agent contract this build speaks: the package
// parley.agent.v1 at a revision, one more each time the shape a bot sees changes (a message,
// field, enum value or call added or renamed in parley.agent.v1, parley.botlink.v1 or what they
// import). Shape computes that shape from the compiled descriptors, and a test holds it to
// the revision, so the number cannot fall behind the proto.
package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
)

// Revision is the revision of parley.agent.v1 this build speaks. docs/writing-an-agent.md
// ("Contract revisions") says what each one added.
const Revision = 3

// Version is the contract version a server tells a bot (parley.botlink.v1.Welcome).
func Version() *agentv1.ContractVersion {
	return &agentv1.ContractVersion{Package: string(agentv1.File_parley_agent_v1_agent_proto.Package()), Revision: Revision}
}

// Shape is a digest of the contract's shape as a bot sees it: every message, field (name,
// number, type, cardinality, oneof), enum value and call of parley.agent.v1,
// parley.botlink.v1 and the Parley packages they import. Comments and options (the types of
// options among them) are left out: they change nothing on the wire.
func Shape() string {
	return ShapeOf(agentv1.File_parley_agent_v1_agent_proto, botlinkv1.File_parley_botlink_v1_botlink_proto)
}

// ShapeOf is the digest of the shape of roots and the Parley files they import.
func ShapeOf(roots ...protoreflect.FileDescriptor) string {
	files := map[string]protoreflect.FileDescriptor{}
	var walk func(protoreflect.FileDescriptor)
	walk = func(f protoreflect.FileDescriptor) {
		if _, seen := files[f.Path()]; seen || !strings.HasPrefix(f.Path(), "parley/") {
			return
		}
		files[f.Path()] = f
		for i := range f.Imports().Len() {
			walk(f.Imports().Get(i).FileDescriptor)
		}
	}
	for _, f := range roots {
		walk(f)
	}

	// The types of options (such as parley.game.v1.Param, which declares a game's parameters)
	// are options too: never on the wire, whatever they hold.
	options := map[protoreflect.FullName]bool{}
	for _, f := range files {
		for i := range f.Extensions().Len() {
			if x := f.Extensions().Get(i); x.Message() != nil && x.ContainingMessage().ParentFile().Package() == "google.protobuf" {
				options[x.Message().FullName()] = true
			}
		}
	}

	var b strings.Builder
	for _, path := range slices.Sorted(maps.Keys(files)) {
		f := files[path]
		if f.Enums().Len() == 0 && f.Services().Len() == 0 && !hasMessageBut(f.Messages(), options) {
			continue
		}
		fmt.Fprintf(&b, "file %s %s\n", f.Path(), f.Package())
		writeMessages(&b, f.Messages(), options)
		writeEnums(&b, f.Enums())
		for i := range f.Services().Len() {
			s := f.Services().Get(i)
			fmt.Fprintf(&b, "service %s\n", s.FullName())
			for j := range s.Methods().Len() {
				m := s.Methods().Get(j)
				fmt.Fprintf(&b, " rpc %s %s %t %s %t\n", m.Name(), m.Input().FullName(), m.IsStreamingClient(), m.Output().FullName(), m.IsStreamingServer())
			}
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// hasMessageBut says whether ms holds a message not in skip.
func hasMessageBut(ms protoreflect.MessageDescriptors, skip map[protoreflect.FullName]bool) bool {
	for i := range ms.Len() {
		if !skip[ms.Get(i).FullName()] {
			return true
		}
	}
	return false
}

func writeMessages(b *strings.Builder, ms protoreflect.MessageDescriptors, skip map[protoreflect.FullName]bool) {
	for i := range ms.Len() {
		m := ms.Get(i)
		if skip[m.FullName()] {
			continue
		}
		fmt.Fprintf(b, "message %s\n", m.FullName())
		for j := range m.Fields().Len() {
			f := m.Fields().Get(j)
			var typ string
			switch {
			case f.Message() != nil:
				typ = string(f.Message().FullName())
			case f.Enum() != nil:
				typ = string(f.Enum().FullName())
			default:
				typ = f.Kind().String()
			}
			oneof := ""
			if o := f.ContainingOneof(); o != nil {
				oneof = string(o.Name())
			}
			fmt.Fprintf(b, " field %s %d %s %s %q %t\n", f.Name(), f.Number(), f.Cardinality(), typ, oneof, f.HasPresence())
		}
		writeMessages(b, m.Messages(), skip)
		writeEnums(b, m.Enums())
	}
}

func writeEnums(b *strings.Builder, es protoreflect.EnumDescriptors) {
	for i := range es.Len() {
		e := es.Get(i)
		fmt.Fprintf(b, "enum %s\n", e.FullName())
		for j := range e.Values().Len() {
			v := e.Values().Get(j)
			fmt.Fprintf(b, " value %s %d\n", v.Name(), v.Number())
		}
	}
}
