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
	n, err := p.size(b, md)
	if err != nil {
		return nil, err
	}
	return p.write(make([]byte, 0, n), b, md)
}

// field is one field of an encoded message as walk finds it.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	tag   int    // the tag's length
	whole []byte // tag and value
	// nested is the field's message type when it holds a field left out (its value is then
	// rewritten); drop is set for a field left out.
	nested protoreflect.MessageDescriptor
	drop   bool
}

// walk calls f with each field of b, an encoded md.
func (p *projection) walk(b []byte, md protoreflect.MessageDescriptor, f func(field) error) error {
	fields := md.Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		fl := field{num: num, typ: typ, tag: n, whole: b[:n+m]}
		b = b[n+m:]
		if fd := fields.ByNumber(num); fd != nil {
			fl.drop = p.drop[fd.FullName()]
			if typ == protowire.BytesType && fd.Message() != nil && p.into[fd.Message().FullName()] {
				fl.nested = fd.Message()
			}
		}
		if err := f(fl); err != nil {
			return err
		}
	}
	return nil
}

// size returns the length of b, an encoded md, without the fields left out.
func (p *projection) size(b []byte, md protoreflect.MessageDescriptor) (int, error) {
	n := 0
	err := p.walk(b, md, func(f field) error {
		switch {
		case f.drop:
		case f.nested != nil:
			inner, _ := protowire.ConsumeBytes(f.whole[f.tag:])
			k, err := p.size(inner, f.nested)
			if err != nil {
				return err
			}
			n += f.tag + protowire.SizeVarint(uint64(k)) + k
		default:
			n += len(f.whole)
		}
		return nil
	})
	return n, err
}

// write appends b, an encoded md, to out without the fields left out.
func (p *projection) write(out, b []byte, md protoreflect.MessageDescriptor) ([]byte, error) {
	err := p.walk(b, md, func(f field) error {
		switch {
		case f.drop:
		case f.nested != nil:
			inner, _ := protowire.ConsumeBytes(f.whole[f.tag:])
			k, err := p.size(inner, f.nested)
			if err != nil {
				return err
			}
			out = protowire.AppendVarint(append(out, f.whole[:f.tag]...), uint64(k))
			out, err = p.write(out, inner, f.nested)
			return err
		default:
			out = append(out, f.whole...)
		}
		return nil
	})
	return out, err
}
