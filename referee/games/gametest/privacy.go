package gametest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/privacy"
	"github.com/parley-arena/parley/referee/record"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The privacy checks read what the family declares private in its parameter proto (the
// (parley.game.v1.privacy) option, see referee/games/privacy) and test it by non-interference:
// a value private to a seat is varied within the rules (a copy of the parameters that Resolve
// accepts and that differs in that value alone), and two matches with the same seed and the
// same actions, one with each value, must show every other seat the same observations, and a
// spectator the same redacted record. A family need not write its secrets out, nor in the form
// its briefings use: any way a secret reaches another seat, a scaled number or a sum included,
// shows as a difference.

// maxVariations bounds the candidate changes tried on one parameter.
const maxVariations = 48

// secret is a field declared private, with the leaves it holds.
type secret struct {
	path   privacy.Path
	seat   games.Seat // privacy.NoSeat: nobody's
	leaves []privacy.Path
	varied *matchv1.GameParams // the params with it varied alone, if it could be
}

// key names a declared field across variants and list elements, e.g.
// parley.games.deliberation.v1.Party.threshold.
func (s secret) key() string { return string(s.path[len(s.path)-1].Field.FullName()) }

// privacyCoverage collects, over a Suite's variants, which secrets were varied, checked and seen
// by their owner, and which public fields were checked.
type privacyCoverage struct {
	present, varied, checked, seen, public map[string]bool
	owner                                  map[string]games.Seat
}

func newPrivacyCoverage() *privacyCoverage {
	return &privacyCoverage{present: map[string]bool{}, varied: map[string]bool{}, checked: map[string]bool{},
		seen: map[string]bool{}, public: map[string]bool{}, owner: map[string]games.Seat{}}
}

// check reports a secret set in some variant that could never be varied, and one that never
// reached its owner: the suite proved nothing about the first, and the second is declared
// private to a seat that does not see it (declare it no_seat, or show it to its owner).
func (c *privacyCoverage) check(t *testing.T) {
	t.Helper()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range c.present {
			if !yield(k) {
				return
			}
		}
	}) {
		switch {
		case !c.varied[k]:
			t.Errorf("privacy: %s is declared private, but no variant let the suite vary it within the rules; add a variant in which it can change", k)
		case c.owner[k] != privacy.NoSeat && c.checked[k] && !c.seen[k]:
			t.Errorf("privacy: %s is declared private to seat %d, but varying it never changed that seat's observation: a secret its owner cannot see is declared wrongly", k, c.owner[k])
		}
	}
}

// lightOwners is how many owners' secrets are checked per variant under -race or -short,
// taking turns over the variants; then, too, each public field is checked once per Run, not
// once per list element and variant.
const lightOwners = 2

// variation is params in which some secrets of one owner are varied.
type variation struct {
	seat    games.Seat
	secrets []*secret
	params  *matchv1.GameParams
}

// describe names v's secrets, their owner and how they were varied, for failure messages.
func (m *match) describe(v *variation) string {
	names := make([]string, len(v.secrets))
	values := make([]string, len(v.secrets))
	for i, s := range v.secrets {
		names[i] = s.path.String()
		values[i] = fmt.Sprintf("%s varied to %s", valueAt(m.params, s.path), valueAt(v.params, s.path))
	}
	return fmt.Sprintf("%s, private to %s (%s)", strings.Join(names, ", "), owner(v.seat), strings.Join(values, "; "))
}

// checkParamPrivacy runs the privacy checks on resolved params, the suite's variant-th. Each
// secret is varied alone and checked on the first observations; then all the secrets of its
// owner are varied at once and checked over whole matches of the given seeds. Under -race or
// -short this is done for lightOwners owners only, a different pair in each variant. Each
// public leaf is varied and checked on the first observations.
func (m *match) checkParamPrivacy(cov *privacyCoverage, seeds, variant int) {
	t := m.t
	light := Race || testing.Short()
	leaves, err := privacy.Leaves(m.params.ProtoReflect())
	if err != nil {
		t.Fatal(err)
	}
	var secrets []*secret
	for _, l := range leaves {
		if l.Secret == nil {
			key := string(l.Path[len(l.Path)-1].Field.FullName())
			if !l.Unequal && !(light && cov.public[key]) {
				cov.public[key] = true
				m.checkPublicLeaf(l.Path)
			}
			continue
		}
		if l.Seat >= games.Seat(m.nSeats) {
			t.Fatalf("privacy: %s is declared private to seat %d, but the game has %d seats", l.Secret, l.Seat, m.nSeats)
		}
		if n := len(secrets); n > 0 && secrets[n-1].path.String() == l.Secret.String() {
			secrets[n-1].leaves = append(secrets[n-1].leaves, l.Path)
			continue
		}
		secrets = append(secrets, &secret{path: l.Secret, seat: l.Seat, leaves: []privacy.Path{l.Path}})
	}
	var owners []*variation // each owner's secrets that could be varied
	for _, s := range secrets {
		k := s.key()
		cov.present[k], cov.owner[k] = true, s.seat
		if s.varied = m.vary(s.path, s.leaves); s.varied == nil {
			t.Logf("privacy: no variation of %s within the rules in this variant", s.path)
			continue
		}
		cov.varied[k] = true
		i := slices.IndexFunc(owners, func(v *variation) bool { return v.seat == s.seat })
		if i < 0 {
			owners = append(owners, &variation{seat: s.seat})
			i = len(owners) - 1
		}
		owners[i].secrets = append(owners[i].secrets, s)
	}
	slices.SortFunc(owners, func(a, b *variation) int { return int(a.seat) - int(b.seat) })
	if light && len(owners) > lightOwners {
		var some []*variation
		for j := range lightOwners {
			some = append(some, owners[(variant*lightOwners+j)%len(owners)])
		}
		owners = some
	}
	for _, v := range owners {
		for _, s := range v.secrets {
			k := s.key()
			cov.checked[k] = true
			// A secret its owner does not see at once may still reach it later.
			alone := &variation{seat: s.seat, secrets: []*secret{s}, params: s.varied}
			if m.lockstep(alone, 0, 0) || (!cov.seen[k] && m.lockstep(alone, 0, MaxSteps)) {
				cov.seen[k] = true
			}
		}
		m.combine(v)
		for seed := range uint64(seeds) {
			m.lockstep(v, seed, MaxSteps)
		}
	}
}

// combine sets v.params to m.params with every secret of v varied at once, as each was alone,
// when Resolve accepts that; else to the first secret's variation alone.
func (m *match) combine(v *variation) {
	first := v.secrets[0].varied
	v.params = first
	if len(v.secrets) == 1 {
		return
	}
	all := proto.CloneOf(m.params)
	for _, s := range v.secrets {
		fd := s.path[len(s.path)-1].Field
		holder(all.ProtoReflect(), s.path).Set(fd, holder(proto.CloneOf(s.varied).ProtoReflect(), s.path).Get(fd))
	}
	resolved, err := m.g.Resolve(all)
	if err != nil {
		v.secrets = v.secrets[:1]
		return
	}
	for _, s := range v.secrets {
		fd := s.path[len(s.path)-1].Field
		got, want := holder(resolved.ProtoReflect(), s.path), holder(s.varied.ProtoReflect(), s.path)
		if got == nil || !got.Get(fd).Equal(want.Get(fd)) {
			v.secrets = v.secrets[:1]
			return
		}
	}
	v.params = resolved
}

// checkPublicLeaf varies a public leaf and checks that the first observations of every seat
// change, or of none: a parameter that reaches some seats only is a secret nobody declared.
func (m *match) checkPublicLeaf(leaf privacy.Path) {
	t := m.t
	varied := m.vary(leaf, []privacy.Path{leaf})
	if varied == nil {
		return
	}
	a, b := m.start(m.params, 0), m.start(varied, 0)
	var changed []games.Seat
	for s := range games.Seat(m.nSeats) {
		if !proto.Equal(safeObserve(t, a, s), safeObserve(t, b, s)) {
			changed = append(changed, s)
		}
	}
	if len(changed) > 0 && len(changed) < m.nSeats {
		t.Fatalf("privacy: parameter %s reaches seat(s) %v only (varied from %v to %v): if it is a seat's secret, declare it with (parley.game.v1.privacy).seat; if it is public though shown unequally, declare it unequal",
			leaf, changed, valueAt(m.params, leaf), valueAt(varied, leaf))
	}
}

// lockstep plays a match with m.params and one with v.params from the same seed with the same
// random actions, for up to maxMoves actions, comparing after each: no seat but v's owner may
// see a difference, nor may a spectator in the redacted record. It stops where the rules make
// a consequence of the secrets public (the two matches' redacted events differ, or a move is
// legal in one and not the other). It reports whether the owner's observation ever differed.
func (m *match) lockstep(v *variation, seed uint64, maxMoves int) (ownerSaw bool) {
	t := m.t
	a, b := m.start(m.params, seed), m.start(v.params, seed)
	if !m.sameEvents(startEvents(m.params, a), startEvents(v.params, b)) {
		t.Fatalf("privacy: %s: the spectator's redacted record depends on %s:\nwith the first:  %v\nwith the second: %v",
			m.name, m.describe(v), record.RedactAll(startEvents(m.params, a), record.Spectator), record.RedactAll(startEvents(v.params, b), record.Spectator))
	}
	rng := rand.New(rand.NewPCG(seed, 0x5ec7e7))
	moves := 0
	for {
		obsA := make([]*agentv1.Observation, m.nSeats)
		for seat := range games.Seat(m.nSeats) {
			obsA[seat] = safeObserve(t, a, seat)
			obsB := safeObserve(t, b, seat)
			if proto.Equal(obsA[seat], obsB) {
				continue
			}
			if seat == v.seat {
				ownerSaw = true
				continue
			}
			t.Fatalf("privacy: %s, seed %d, after %d actions: seat %d's observation depends on %s:\nwith the first:  %s\nwith the second: %s",
				m.name, seed, moves, seat, m.describe(v), prototext.Format(obsA[seat]), prototext.Format(obsB))
		}
		toMove := a.ToMove()
		if len(toMove) == 0 || moves >= maxMoves || !slices.Equal(toMove, b.ToMove()) {
			return ownerSaw
		}
		actions := make([]*agentv1.Action, len(toMove))
		for i, seat := range toMove {
			actions[i] = games.RandomAction(obsA[seat], rng)
		}
		for i, seat := range toMove {
			if !slices.Contains(a.ToMove(), seat) {
				continue
			}
			evA, errA := safeApplyEvents(t, a, seat, proto.CloneOf(actions[i]))
			evB, errB := safeApplyEvents(t, b, seat, proto.CloneOf(actions[i]))
			if errA != nil && errB != nil {
				d := a.Default(seat)
				evA, errA = safeApplyEvents(t, a, seat, proto.CloneOf(d))
				evB, errB = safeApplyEvents(t, b, seat, d)
			}
			if (errA == nil) != (errB == nil) || !m.sameEvents(evA, evB) {
				return ownerSaw
			}
			moves++
		}
	}
}

// start returns a new state of params at seed.
func (m *match) start(params *matchv1.GameParams, seed uint64) games.State {
	st, err := m.g.NewState(params, seed)
	if err != nil {
		m.t.Fatalf("privacy: NewState(%v): %v", params, err)
	}
	return st
}

// startEvents are what a match's record opens with: MatchStarted, then the opening events.
func startEvents(params *matchv1.GameParams, st games.State) []*eventsv1.MatchEvent {
	evs := []*eventsv1.MatchEvent{{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{Params: params}}}}
	if o, ok := st.(games.Opener); ok {
		evs = append(evs, o.OpeningEvents()...)
	}
	return evs
}

// sameEvents reports whether a spectator sees the same redacted events.
func (m *match) sameEvents(a, b []*eventsv1.MatchEvent) bool {
	ra, rb := record.RedactAll(a, record.Spectator), record.RedactAll(b, record.Spectator)
	return slices.EqualFunc(ra, rb, func(x, y *eventsv1.MatchEvent) bool { return proto.Equal(x, y) })
}

// vary returns a copy of m.params that Resolve accepts and that differs from m.params in
// exactly the field at path (one of its leaves changed), or nil when no candidate qualifies.
func (m *match) vary(path privacy.Path, leaves []privacy.Path) *matchv1.GameParams {
	tried := 0
	for _, leaf := range leaves {
		for _, v := range variations(m.params, leaf) {
			if tried++; tried > maxVariations {
				return nil
			}
			resolved, err := m.g.Resolve(v)
			if err != nil || proto.Equal(resolved, m.params) || !equalBut(resolved, m.params, path) {
				continue
			}
			return resolved
		}
	}
	return nil
}

// equalBut reports whether a and b are equal once the field at path is cleared in both.
func equalBut(a, b *matchv1.GameParams, path privacy.Path) bool {
	a, b = proto.CloneOf(a), proto.CloneOf(b)
	for _, m := range []protoreflect.Message{a.ProtoReflect(), b.ProtoReflect()} {
		last := path[len(path)-1]
		if h := holder(m, path); h != nil {
			h.Clear(last.Field)
		}
	}
	return proto.Equal(a, b)
}

// holder returns the message holding path's last field in m, or nil when m has no such message
// (a list shorter, a map without the key).
func holder(m protoreflect.Message, path privacy.Path) protoreflect.Message {
	for _, s := range path[:len(path)-1] {
		if !m.Has(s.Field) {
			return nil
		}
		v := m.Get(s.Field)
		switch {
		case s.Field.IsList():
			if s.Index >= v.List().Len() {
				return nil
			}
			m = v.List().Get(s.Index).Message()
		case s.Field.IsMap():
			if !v.Map().Has(s.Key) {
				return nil
			}
			m = v.Map().Get(s.Key).Message()
		default:
			m = v.Message()
		}
	}
	return m
}

// valueAt writes the value at path in params, for failure messages.
func valueAt(params *matchv1.GameParams, path privacy.Path) string {
	h := holder(params.ProtoReflect(), path)
	if h == nil {
		return "(none)"
	}
	fd := path[len(path)-1].Field
	v := h.Get(fd)
	switch {
	case fd.IsList():
		var parts []string
		for i := range v.List().Len() {
			parts = append(parts, text(fd, v.List().Get(i)))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case fd.IsMap():
		var parts []string
		for _, k := range privacy.SortedKeys(v.Map()) {
			parts = append(parts, fmt.Sprintf("%v:%v", k.Interface(), v.Map().Get(k).Interface()))
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	return text(fd, v)
}

// text writes one value of fd's kind.
func text(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	if fd.Message() != nil {
		return "{" + prototext.Format(v.Message().Interface()) + "}"
	}
	return fmt.Sprint(v.Interface())
}

func owner(seat games.Seat) string {
	if seat == privacy.NoSeat {
		return "no seat"
	}
	return fmt.Sprintf("seat %d", seat)
}

// variations returns copies of params, each with one small change at the scalar leaf at path
// (a field of scalar kind, a list or a map of them): a number one up or down, a flipped bool, a
// neighbouring enum value, a string with a character added; and in lists and maps, two entries
// swapped or moved one up and one down, which keeps their total (some rules tie totals).
func variations(params *matchv1.GameParams, path privacy.Path) []*matchv1.GameParams {
	fd := path[len(path)-1].Field
	var out []*matchv1.GameParams
	edit := func(f func(h protoreflect.Message)) {
		c := proto.CloneOf(params)
		f(path.Holder(c.ProtoReflect()))
		out = append(out, c)
	}
	h := holder(params.ProtoReflect(), path)
	if h == nil {
		return nil
	}
	v := h.Get(fd)
	switch {
	case fd.IsList():
		l := v.List()
		n := min(l.Len(), 8)
		for i := range n {
			for _, x := range nudges(fd, l.Get(i)) {
				edit(func(h protoreflect.Message) { h.Mutable(fd).List().Set(i, x) })
			}
		}
		for i := range n {
			for j := i + 1; j < n; j++ {
				vi, vj := l.Get(i), l.Get(j)
				if !vi.Equal(vj) {
					edit(func(h protoreflect.Message) { l := h.Mutable(fd).List(); l.Set(i, vj); l.Set(j, vi) })
				}
				for _, d := range [][2]int64{{1, -1}, {-1, 1}} {
					xi, okI := add(fd, vi, d[0])
					xj, okJ := add(fd, vj, d[1])
					if okI && okJ {
						edit(func(h protoreflect.Message) { l := h.Mutable(fd).List(); l.Set(i, xi); l.Set(j, xj) })
					}
				}
			}
		}
	case fd.IsMap():
		mp := v.Map()
		keys := privacy.SortedKeys(mp)
		keys = keys[:min(len(keys), 8)]
		for _, k := range keys {
			for _, x := range nudges(fd.MapValue(), mp.Get(k)) {
				edit(func(h protoreflect.Message) { h.Mutable(fd).Map().Set(k, x) })
			}
		}
		for i, ki := range keys {
			for _, kj := range keys[i+1:] {
				for _, d := range [][2]int64{{1, -1}, {-1, 1}} {
					xi, okI := add(fd.MapValue(), mp.Get(ki), d[0])
					xj, okJ := add(fd.MapValue(), mp.Get(kj), d[1])
					if okI && okJ {
						edit(func(h protoreflect.Message) { m := h.Mutable(fd).Map(); m.Set(ki, xi); m.Set(kj, xj) })
					}
				}
			}
		}
	default:
		for _, x := range nudges(fd, v) {
			edit(func(h protoreflect.Message) { h.Set(fd, x) })
		}
	}
	return out
}

// nudges returns values of fd's kind near v.
func nudges(fd protoreflect.FieldDescriptor, v protoreflect.Value) []protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return []protoreflect.Value{protoreflect.ValueOfBool(!v.Bool())}
	case protoreflect.StringKind:
		return []protoreflect.Value{protoreflect.ValueOfString(v.String() + "q")}
	case protoreflect.BytesKind:
		return []protoreflect.Value{protoreflect.ValueOfBytes(append(slices.Clone(v.Bytes()), 'q'))}
	case protoreflect.EnumKind:
		var out []protoreflect.Value
		values := fd.Enum().Values()
		for i := range values.Len() {
			if n := values.Get(i).Number(); n == v.Enum()+1 || n == v.Enum()-1 {
				out = append(out, protoreflect.ValueOfEnum(n))
			}
		}
		return out
	}
	var out []protoreflect.Value
	for _, d := range []int64{1, -1} {
		if x, ok := add(fd, v, d); ok {
			out = append(out, x)
		}
	}
	return out
}

// add returns v plus d for a numeric fd, and false for other kinds or on overflow.
func add(fd protoreflect.FieldDescriptor, v protoreflect.Value, d int64) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		x := v.Int() + d
		return protoreflect.ValueOfInt32(int32(x)), x == int64(int32(x))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		x := v.Int() + d
		return protoreflect.ValueOfInt64(x), (d > 0) == (x > v.Int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		x := int64(v.Uint()) + d
		return protoreflect.ValueOfUint32(uint32(x)), x >= 0 && x == int64(uint32(x))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if d < 0 && v.Uint() == 0 {
			return v, false
		}
		return protoreflect.ValueOfUint64(v.Uint() + uint64(d)), true
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(v.Float()) + float32(d)), true
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(v.Float() + float64(d)), true
	}
	return v, false
}
