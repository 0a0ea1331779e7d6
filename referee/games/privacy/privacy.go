// Package privacy reads what a game family declares private in its parameters: the
// (parley.game.v1.privacy) option on the fields of its Params message and of the messages
// those hold. It is the one declaration redaction (referee/record) clears and the conformance
// suite (gametest) checks; no list of families or fields is kept anywhere else.
package privacy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// NoSeat is the owner of a value that no seat may see.
const NoSeat games.Seat = -1

// Declared returns fd's declaration, or nil when it has none (a public field).
func Declared(fd protoreflect.FieldDescriptor) *gamev1.Privacy {
	opts := fd.Options()
	if opts == nil || !proto.HasExtension(opts, gamev1.E_Privacy) {
		return nil
	}
	p, _ := proto.GetExtension(opts, gamev1.E_Privacy).(*gamev1.Privacy)
	return p
}

// private reports whether a declaration makes its field private.
func private(p *gamev1.Privacy) bool { return p.GetOwner() != nil }

// Clear clears, in place, every field of m and of the messages it holds that is declared
// private, and every unknown field: a field this program has no descriptor for (a family or a
// field newer than it) has no declaration it could read, so it is never shown.
func Clear(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case private(Declared(fd)):
			m.Clear(fd)
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				Clear(l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, e protoreflect.Value) bool {
				Clear(e.Message())
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			Clear(v.Message())
		}
		return true
	})
}

// Step is one step of a Path: a field, and in a list the element's index, in a map its key.
type Step struct {
	Field protoreflect.FieldDescriptor
	Index int                 // the element of a list; -1 when Field is no list
	Key   protoreflect.MapKey // the entry of a map, when Field is a map
}

// Path leads from a message to a field of it or of a message it holds.
type Path []Step

// String writes p as field names with indexes and keys, e.g. scenario.parties[2].threshold.
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(string(s.Field.Name()))
		switch {
		case s.Field.IsMap() && s.Key.IsValid():
			fmt.Fprintf(&b, "[%v]", s.Key.Interface())
		case s.Index >= 0:
			fmt.Fprintf(&b, "[%d]", s.Index)
		}
	}
	return b.String()
}

// Holder returns the message of m (or of a message shaped like m) that holds p's last field:
// m itself for a path of one step. Messages on the way are made mutable.
func (p Path) Holder(m protoreflect.Message) protoreflect.Message {
	for _, s := range p[:len(p)-1] {
		v := m.Mutable(s.Field)
		switch {
		case s.Field.IsList():
			m = v.List().Get(s.Index).Message()
		case s.Field.IsMap():
			m = v.Map().Mutable(s.Key).Message()
		default:
			m = v.Message()
		}
	}
	return m
}

// Leaf is a field of scalar kind (one value, or a list or map of them) set in a message tree,
// with the privacy it falls under.
type Leaf struct {
	Path Path
	// Secret leads to the field declared private that holds the leaf (the leaf's own field or a
	// message it lies in); nil when the leaf is public.
	Secret Path
	// Seat owns the secret: only its observations may depend on it. NoSeat: no seat's may.
	Seat games.Seat
	// Unequal: the leaf is public, though declared to reach seats unequally.
	Unequal bool
}

// Leaves lists the leaves set in m, depth first in field-number order. It fails on a
// declaration it cannot place: an element_seat field outside a seat_list.
func Leaves(m protoreflect.Message) ([]Leaf, error) {
	w := walker{}
	w.walk(m, nil, under{seat: NoSeat, element: -1})
	return w.leaves, w.err
}

// under is the privacy a part of the tree inherits from the fields above it.
type under struct {
	secret  Path       // the private field above, if any
	seat    games.Seat // its owner
	unequal bool
	element int // the index of the nearest enclosing seat_list element; -1 outside any
}

type walker struct {
	leaves []Leaf
	err    error
}

func (w *walker) walk(m protoreflect.Message, path Path, in under) {
	var fields []protoreflect.FieldDescriptor
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		fields = append(fields, fd)
		return true
	})
	// Range's order is not defined; field-number order keeps reports stable.
	slices.SortFunc(fields, func(a, b protoreflect.FieldDescriptor) int { return cmp.Compare(a.Number(), b.Number()) })
	for _, fd := range fields {
		at := append(path[:len(path):len(path)], Step{Field: fd, Index: -1})
		here := in
		d := Declared(fd)
		if in.secret == nil {
			here.unequal = in.unequal || d.GetUnequal()
			if private(d) {
				here.secret = slices.Clone(at)
				switch o := d.GetOwner().(type) {
				case *gamev1.Privacy_Seat:
					here.seat = o.Seat
				case *gamev1.Privacy_NoSeat:
					here.seat = NoSeat
				case *gamev1.Privacy_ElementSeat:
					if in.element < 0 {
						w.fail(fmt.Errorf("privacy: %s is private to its element's seat but lies in no seat_list", at))
						continue
					}
					here.seat = games.Seat(in.element)
				}
			}
		}
		v := m.Get(fd)
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				el := here
				if d.GetSeatList() {
					el.element = i
				}
				elAt := slices.Clone(at)
				elAt[len(elAt)-1].Index = i
				w.walk(l.Get(i).Message(), elAt, el)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			mp := v.Map()
			for _, k := range SortedKeys(mp) {
				kAt := slices.Clone(at)
				kAt[len(kAt)-1].Key = k
				w.walk(mp.Get(k).Message(), kAt, here)
			}
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			w.walk(v.Message(), at, here)
		default:
			w.leaves = append(w.leaves, Leaf{Path: at, Secret: here.secret, Seat: here.seat, Unequal: here.unequal})
		}
	}
}

func (w *walker) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// SortedKeys returns the keys of mp in the order of their text.
func SortedKeys(mp protoreflect.Map) []protoreflect.MapKey {
	var keys []protoreflect.MapKey
	mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return strings.Compare(a.String(), b.String()) })
	return keys
}
