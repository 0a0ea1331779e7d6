package bus

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
)

// ReadOption changes how a read of the match stream decodes what it reads.
type ReadOption func(*readConfig)

type readConfig struct {
	leave *projection
}

// WithoutFields leaves fields out of the events a read gives: their bytes are skipped before
// decoding, wherever in an event their message occurs. A reader that needs the moves of many
// records, not every answer's text, then pays for the moves alone.
func WithoutFields(fields ...protoreflect.FieldDescriptor) ReadOption {
	return func(c *readConfig) {
		if len(fields) > 0 {
			c.leave = newProjection(fields)
		}
	}
}

func readConfigOf(opts []ReadOption) readConfig {
	var c readConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// projection removes fields from encoded match events.
type projection struct {
	drop map[protoreflect.FullName]bool // the fields left out
	// into says whether a message type holds a field left out, at any depth (only those are
	// rewritten; any other message is copied as it is).
	into map[protoreflect.FullName]bool
}

func newProjection(fields []protoreflect.FieldDescriptor) *projection {
	p := &projection{drop: map[protoreflect.FullName]bool{}, into: map[protoreflect.FullName]bool{}}
	for _, f := range fields {
		p.drop[f.FullName()] = true
	}
	p.holds((&eventsv1.EventBatch{}).ProtoReflect().Descriptor(), map[protoreflect.FullName]bool{})
	return p
}

// holds reports whether md holds a field left out, recording it in into; seen breaks cycles
// of recursive types.
func (p *projection) holds(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return p.into[md.FullName()]
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if p.drop[f.FullName()] || f.Message() != nil && p.holds(f.Message(), seen) {
			p.into[md.FullName()] = true
		}
	}
	return p.into[md.FullName()]
}

// prune returns b, an encoded md, without the fields left out, in one new buffer (b itself
// when md holds none of them).
func (p *projection) prune(b []byte, md protoreflect.MessageDescriptor) ([]byte, error) {
	if !p.into[md.FullName()] {
		return b, nil
	}
	return p.write(make([]byte, 0, len(b)), b, md)
}

// write appends b, an encoded md, to out without the fields left out.
func (p *projection) write(out, b []byte, md protoreflect.MessageDescriptor) ([]byte, error) {
	fields := md.Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		field := b[:n+m]
		b = b[n+m:]
		f := fields.ByNumber(num)
		switch {
		case f == nil:
			out = append(out, field...)
		case p.drop[f.FullName()]:
		case typ == protowire.BytesType && f.Message() != nil && p.into[f.Message().FullName()]:
			// The message rewritten, then its length put before it (known only once written).
			inner, _ := protowire.ConsumeBytes(field[n:])
			out = append(out, field[:n]...)
			at := len(out)
			var err error
			if out, err = p.write(out, inner, f.Message()); err != nil {
				return nil, err
			}
			k := len(out) - at
			var buf [10]byte // a varint's most
			prefix := protowire.AppendVarint(buf[:0], uint64(k))
			out = append(out, prefix...)
			copy(out[at+len(prefix):], out[at:at+k])
			copy(out[at:], prefix)
		default:
			out = append(out, field...)
		}
	}
	return out, nil
}
