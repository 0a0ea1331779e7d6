package gametest

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// The parameter checks hold the family to what its Params message declares (the
// (parley.game.v1.param) option on every field; see referee/games/declare.go):
//
//   - every field is declared, with help text, and its limits suit its type;
//   - Info().Params is what the declarations give (games.ParamInfos), so no parameter is
//     described anywhere else;
//   - Resolve with nothing set fills every declared default in, leaves a field that declares
//     none unset, and setting a field to its declared default changes nothing; a derived
//     default is filled in and, set back, changes nothing either;
//   - NewState refuses params Resolve has not filled in, instead of filling them itself;
//   - a number just outside its declared limits is refused with an error naming the
//     parameter, and just inside it is accepted (by Resolve and NewState) on the defaults, on
//     every limited parameter at that same bound, or on one of the suite's variants; a text
//     that breaks its declared word or length rule, and a list with too few or too many
//     entries, are refused naming the parameter.
func checkParams(t *testing.T, g games.Game, variants []*matchv1.GameParams) {
	t.Helper()
	name := g.Info().GetName()
	branch := games.ParamsField(name)
	if branch == nil {
		if len(g.Info().GetParams()) > 0 {
			t.Errorf("Info().Params lists parameters, but GameParams has no %s branch to hold them", name)
		}
		return
	}
	pc := &paramCheck{t: t, g: g, name: name, branch: branch, variants: variants}
	pc.declarations()
	r0, err := g.Resolve(nil)
	if err != nil {
		t.Fatalf("Resolve(nil): %v", err)
	}
	pc.r0 = r0
	for _, empty := range []*matchv1.GameParams{{}, pc.with(nil, nil, protoreflect.Value{})} {
		if got, err := g.Resolve(empty); err != nil || !proto.Equal(got, r0) {
			t.Errorf("Resolve(%v) = %v, %v; want what Resolve(nil) gives, %v", empty, got, err, r0)
		}
	}
	pc.info()
	pc.defaults()
	pc.together()
	pc.trust()
	fields := branch.Message().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() != nil && !fd.IsMap() {
			continue
		}
		pc.numberLimits(fd)
		pc.textLimits(fd)
		pc.countLimits(fd)
	}
}

type paramCheck struct {
	t        *testing.T
	g        games.Game
	name     string
	branch   protoreflect.FieldDescriptor
	variants []*matchv1.GameParams
	r0       *matchv1.GameParams // Resolve(nil)
}

// declarations checks that every field is declared, with help, and limits its type can have.
func (pc *paramCheck) declarations() {
	t := pc.t
	fields := pc.branch.Message().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !games.IsDeclared(fd) {
			t.Errorf("%s has no (parley.game.v1.param) declaration: declare its help, default and limits there", fd.FullName())
			continue
		}
		d := games.Declared(fd)
		number, text := isNumber(fd), isText(fd)
		message := fd.Message() != nil && !fd.IsMap()
		switch {
		case strings.TrimSpace(d.GetHelp()) == "":
			t.Errorf("%s: the declaration has no help text", fd.FullName())
		case message && (d.GetUnset() != nil || d.Min != nil || d.Max != nil || d.GetWord() || d.MaxLen != nil || d.MinCount != nil || d.MaxCount != nil):
			t.Errorf("%s holds a message, which --param cannot set: declare help only", fd.FullName())
		case d.GetUnset() != nil && d.GetDefault() == "" && d.GetDerived() == "":
			t.Errorf("%s: a default or derived rule is declared empty", fd.FullName())
		case d.GetConditional() && d.GetDefault() == "":
			t.Errorf("%s: conditional is declared without a default", fd.FullName())
		case (d.Min != nil || d.Max != nil) && !number:
			t.Errorf("%s: min and max are for whole numbers", fd.FullName())
		case d.Min != nil && d.Max != nil && d.GetMin() > d.GetMax():
			t.Errorf("%s: min %d is above max %d", fd.FullName(), d.GetMin(), d.GetMax())
		case (d.GetWord() || d.MaxLen != nil) && !text:
			t.Errorf("%s: word and max_len are for text", fd.FullName())
		case d.MaxLen != nil && d.GetMaxLen() < 1:
			t.Errorf("%s: max_len %d allows no text", fd.FullName(), d.GetMaxLen())
		case (d.MinCount != nil || d.MaxCount != nil) && !fd.IsList() && !fd.IsMap():
			t.Errorf("%s: min_count and max_count are for repeated and map fields", fd.FullName())
		case d.MinCount != nil && d.MaxCount != nil && d.GetMinCount() > d.GetMaxCount():
			t.Errorf("%s: min_count %d is above max_count %d", fd.FullName(), d.GetMinCount(), d.GetMaxCount())
		case d.GetTogether() != "" && (d.GetDefault() == "" || d.GetConditional()):
			t.Errorf("%s: a parameter given together with others needs a plain default, taken when none of them is given", fd.FullName())
		case d.GetTogether() != "" && len(pc.group(d.GetTogether())) < 2:
			t.Errorf("%s: the group %q has no other member", fd.FullName(), d.GetTogether())
		}
	}
}

// isNumber reports whether fd holds whole numbers (itself, its elements or its map values).
func isNumber(fd protoreflect.FieldDescriptor) bool {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return true
	}
	return false
}

// isText reports whether fd holds text (itself, its elements or its map keys).
func isText(fd protoreflect.FieldDescriptor) bool {
	if fd.IsMap() {
		fd = fd.MapKey()
	}
	return fd.Kind() == protoreflect.StringKind
}

// info checks that Info().Params is exactly what the declarations describe.
func (pc *paramCheck) info() {
	t := pc.t
	got := pc.g.Info().GetParams()
	want := games.ParamInfos(pc.name, pc.r0)
	byName := map[string]*gamev1.ParamInfo{}
	for _, p := range got {
		byName[p.GetName()] = p
		if pc.branch.Message().Fields().ByName(protoreflect.Name(p.GetName())) == nil {
			t.Errorf("Info().Params lists %q, which is no field of %s", p.GetName(), pc.branch.Message().FullName())
		}
	}
	for _, w := range want {
		p := byName[w.GetName()]
		switch {
		case p == nil:
			t.Errorf("Info().Params leaves out %s, a field of %s", w.GetName(), pc.branch.Message().FullName())
		case !proto.Equal(p, w):
			t.Errorf("Info().Params describes %s as %v; its declaration says %v (describe parameters with games.ParamInfos only)", w.GetName(), p, w)
		}
	}
	if len(got) == len(want) {
		for i := range got {
			if got[i].GetName() != want[i].GetName() {
				t.Errorf("Info().Params lists %s at %d, the declarations %s (field order)", got[i].GetName(), i, want[i].GetName())
				break
			}
		}
	}
	for _, p := range got {
		if p.GetName() == "" || p.GetKind() == 0 || p.GetDescription() == "" {
			t.Errorf("Info().Params has an incomplete entry: %v", p)
		}
	}
}

// defaults checks Resolve against the declared defaults.
func (pc *paramCheck) defaults() {
	t := pc.t
	r0 := pc.r0.ProtoReflect().Get(pc.branch).Message()
	fields := pc.branch.Message().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() != nil && !fd.IsMap() {
			continue
		}
		d := games.Declared(fd)
		set := isSetIn(r0, fd)
		switch {
		case d.GetUnset() == nil:
			if set {
				t.Errorf("%s declares no default, but Resolve(nil) fills in %v: declare the default", fd.Name(), r0.Get(fd))
			}
		case d.GetDerived() != "":
			if !set {
				t.Errorf("%s declares a derived default (%s), but Resolve(nil) leaves it unset", fd.Name(), d.GetDerived())
				continue
			}
			pc.sameAsDefaults(fd, r0.Get(fd), "its derived default")
		default:
			if !set && !d.GetConditional() {
				t.Errorf("%s declares the default %q, but Resolve(nil) leaves it unset", fd.Name(), d.GetDefault())
			}
			p, err := games.ParseParams(pc.name, []string{string(fd.Name()) + "=" + d.GetDefault()})
			if err != nil {
				t.Errorf("%s: the declared default %q does not parse: %v", fd.Name(), d.GetDefault(), err)
				continue
			}
			pc.sameAsDefaults(fd, p.ProtoReflect().Get(pc.branch).Message().Get(fd), fmt.Sprintf("its declared default %q", d.GetDefault()))
		}
	}
}

// sameAsDefaults checks that setting fd to v alone resolves to what Resolve(nil) gives.
func (pc *paramCheck) sameAsDefaults(fd protoreflect.FieldDescriptor, v protoreflect.Value, what string) {
	p := pc.with(nil, fd, v)
	got, err := pc.g.Resolve(p)
	switch {
	case err != nil:
		pc.t.Errorf("%s set to %s: Resolve refuses it: %v", fd.Name(), what, err)
	case !proto.Equal(got, pc.r0):
		pc.t.Errorf("%s set to %s resolves to %v, but unset to %v: the declaration and Resolve disagree", fd.Name(), what, got, pc.r0)
	}
}

// group returns the fields declared together in group, in field order.
func (pc *paramCheck) group(group string) []protoreflect.FieldDescriptor {
	var out []protoreflect.FieldDescriptor
	fields := pc.branch.Message().Fields()
	for i := range fields.Len() {
		if f := fields.Get(i); games.Declared(f).GetTogether() == group {
			out = append(out, f)
		}
	}
	return out
}

// together checks that a group of parameters declared together and given in part is refused,
// naming a missing member: each member set alone to its resolved default.
func (pc *paramCheck) together() {
	fields := pc.branch.Message().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		group := games.Declared(fd).GetTogether()
		if group == "" {
			continue
		}
		p := pc.with(nil, nil, protoreflect.Value{})
		p.ProtoReflect().Mutable(pc.branch).Message().Set(fd, proto.CloneOf(pc.r0).ProtoReflect().Get(pc.branch).Message().Get(fd))
		_, err := pc.g.Resolve(p)
		missing := pc.group(group)[0]
		if missing == fd {
			missing = pc.group(group)[1]
		}
		if err == nil || !strings.Contains(err.Error(), string(missing.Name())) {
			pc.t.Errorf("%s given without the rest of its group %q: Resolve = %v; want a refusal naming %s", fd.Name(), group, err, missing.Name())
		}
	}
}

// trust checks that NewState takes resolved params as they are: it starts from Resolve's,
// and refuses params missing what Resolve fills in instead of filling it itself.
func (pc *paramCheck) trust() {
	t := pc.t
	if _, err := pc.g.NewState(pc.r0, 1); err != nil {
		t.Errorf("NewState(Resolve(nil)): %v", err)
	}
	required := false
	fields := pc.branch.Message().Fields()
	for i := range fields.Len() {
		if d := games.Declared(fields.Get(i)); d.GetUnset() != nil && !d.GetConditional() {
			required = true
		}
	}
	if !required {
		return
	}
	for _, p := range []*matchv1.GameParams{nil, pc.with(nil, nil, protoreflect.Value{})} {
		if _, err := safeNewState(pc.g, p); !errors.Is(err, games.ErrNotResolved) {
			t.Errorf("NewState(%v) = %v; want games.ErrNotResolved: NewState takes resolved params and fills nothing in", p, err)
		}
	}
}

// safeNewState is NewState, with a panic turned into an error.
func safeNewState(g games.Game, p *matchv1.GameParams) (st games.State, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("NewState panicked: %v", r)
		}
	}()
	return g.NewState(p, 1)
}

// with returns a copy of base (nil: no params) with game's branch set and, when fd is not
// nil, fd set to v and the parameters declared together with it that base leaves unset set
// to their defaults, so that a check of fd is not refused for the group given in part.
func (pc *paramCheck) with(base *matchv1.GameParams, fd protoreflect.FieldDescriptor, v protoreflect.Value) *matchv1.GameParams {
	out := &matchv1.GameParams{}
	if base.ProtoReflect().Has(pc.branch) {
		out = proto.CloneOf(base)
	}
	msg := out.ProtoReflect().Mutable(pc.branch).Message()
	if fd == nil {
		return out
	}
	msg.Set(fd, v)
	if group := games.Declared(fd).GetTogether(); group != "" && pc.r0 != nil {
		r0 := proto.CloneOf(pc.r0).ProtoReflect().Get(pc.branch).Message()
		fields := pc.branch.Message().Fields()
		for i := range fields.Len() {
			if f := fields.Get(i); games.Declared(f).GetTogether() == group && !isSetIn(msg, f) {
				msg.Set(f, r0.Get(f))
			}
		}
	}
	return out
}

func isSetIn(m protoreflect.Message, fd protoreflect.FieldDescriptor) bool {
	switch {
	case fd.IsList():
		return m.Get(fd).List().Len() > 0
	case fd.IsMap():
		return m.Get(fd).Map().Len() > 0
	default:
		return m.Has(fd)
	}
}

// bases are the params a value just inside a limit is tried on: nothing set, every limited
// number at the same bound (low or high), and the suite's variants.
func (pc *paramCheck) bases(high bool) []*matchv1.GameParams {
	corner := pc.with(nil, nil, protoreflect.Value{})
	msg := corner.ProtoReflect().Mutable(pc.branch).Message()
	fields := pc.branch.Message().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		d := games.Declared(fd)
		bound := d.Min
		if high {
			bound = d.Max
		}
		if bound == nil || !isNumber(fd) {
			continue
		}
		if v, ok := pc.withNumber(nil, fd, *bound, true); ok {
			msg.Set(fd, v)
		}
	}
	return append([]*matchv1.GameParams{nil, corner}, pc.variants...)
}

// current returns fd's value in base resolved, or in the defaults when base does not
// resolve.
func (pc *paramCheck) current(base *matchv1.GameParams, fd protoreflect.FieldDescriptor) protoreflect.Value {
	r, err := pc.g.Resolve(base)
	if err != nil {
		r = pc.r0
	}
	return r.ProtoReflect().Get(pc.branch).Message().Get(fd)
}

// withNumber returns fd's value with n in it: the number itself, or base's resolved list (map)
// with its first element (value of its first key) replaced, or every one when all is set.
// It fails when n does not fit fd's type, or the list or map is empty.
func (pc *paramCheck) withNumber(base *matchv1.GameParams, fd protoreflect.FieldDescriptor, n int64, all bool) (protoreflect.Value, bool) {
	kind := fd.Kind()
	if fd.IsMap() {
		kind = fd.MapValue().Kind()
	}
	var one protoreflect.Value
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return protoreflect.Value{}, false
		}
		one = protoreflect.ValueOfInt32(int32(n))
	default:
		one = protoreflect.ValueOfInt64(n)
	}
	return pc.replace(base, fd, one, all)
}

// replace returns fd's value with one put in: the value itself for a singular field, else
// base's resolved list or map with its first element or first key's value (or, with all,
// every one) replaced.
func (pc *paramCheck) replace(base *matchv1.GameParams, fd protoreflect.FieldDescriptor, one protoreflect.Value, all bool) (protoreflect.Value, bool) {
	scratch := pc.with(nil, nil, protoreflect.Value{}).ProtoReflect().Mutable(pc.branch).Message()
	switch {
	case fd.IsList():
		from := pc.current(base, fd).List()
		if from.Len() == 0 {
			return protoreflect.Value{}, false
		}
		l := scratch.Mutable(fd).List()
		for i := range from.Len() {
			if i == 0 || all {
				l.Append(one)
			} else {
				l.Append(from.Get(i))
			}
		}
		return scratch.Get(fd), true
	case fd.IsMap():
		from := pc.current(base, fd).Map()
		if from.Len() == 0 {
			return protoreflect.Value{}, false
		}
		first := firstKey(from)
		m := scratch.Mutable(fd).Map()
		from.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			if all || k.String() == first.String() {
				v = one
			}
			m.Set(k, v)
			return true
		})
		return scratch.Get(fd), true
	default:
		return one, true
	}
}

func firstKey(m protoreflect.Map) protoreflect.MapKey {
	var first protoreflect.MapKey
	m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		if !first.IsValid() || k.String() < first.String() {
			first = k
		}
		return true
	})
	return first
}

// numberLimits checks fd's declared min and max: just outside refused naming fd, just inside
// accepted on some base.
func (pc *paramCheck) numberLimits(fd protoreflect.FieldDescriptor) {
	d := games.Declared(fd)
	if !isNumber(fd) {
		return
	}
	for _, high := range []bool{false, true} {
		bound, step, side := d.Min, int64(-1), "min"
		if high {
			bound, step, side = d.Max, 1, "max"
		}
		if bound == nil {
			continue
		}
		if (step < 0 && *bound == math.MinInt64) || (step > 0 && *bound == math.MaxInt64) {
			continue
		}
		if v, ok := pc.withNumber(nil, fd, *bound+step, false); ok {
			pc.refused(fd, v, fmt.Sprintf("%d, just outside its declared %s", *bound+step, side))
		}
		var errs []string
		accepted := false
		for _, base := range pc.bases(high) {
			v, ok := pc.withNumber(base, fd, *bound, false)
			if !ok {
				continue
			}
			err := pc.accepts(pc.with(base, fd, v))
			if err == nil {
				accepted = true
				break
			}
			errs = append(errs, err.Error())
		}
		if !accepted && len(errs) > 0 {
			pc.t.Errorf("%s = %d, its declared %s, is refused on every base tried: %s", fd.Name(), *bound, side, strings.Join(errs, "; "))
		}
	}
}

// refused checks that fd set to v alone is refused by Resolve with an error naming fd.
func (pc *paramCheck) refused(fd protoreflect.FieldDescriptor, v protoreflect.Value, what string) {
	p := pc.with(nil, fd, v)
	_, err := pc.g.Resolve(p)
	switch {
	case err == nil:
		pc.t.Errorf("%s set to %s: Resolve accepts it, so the declaration and Resolve disagree", fd.Name(), what)
	case !strings.Contains(err.Error(), string(fd.Name())):
		pc.t.Errorf("%s set to %s: Resolve refuses it with %q, which does not name the parameter", fd.Name(), what, err)
	}
}

// accepts reports why p is refused, by Resolve or by NewState on what Resolve gives; nil when
// it is not.
func (pc *paramCheck) accepts(p *matchv1.GameParams) error {
	r, err := pc.g.Resolve(p)
	if err != nil {
		return err
	}
	if _, err := safeNewState(pc.g, r); err != nil {
		return fmt.Errorf("NewState: %w", err)
	}
	return nil
}

// textLimits checks fd's declared word and max_len rules: a text breaking one is refused
// naming fd. A text just inside them is tried too, and only logged when every base refuses
// it, since names may be tied to other parameters (coalition values name the players).
func (pc *paramCheck) textLimits(fd protoreflect.FieldDescriptor) {
	d := games.Declared(fd)
	if !isText(fd) {
		return
	}
	if d.GetWord() {
		if v, ok := pc.withText(nil, fd, "9lives"); ok {
			pc.refused(fd, v, `"9lives", not a word`)
		}
	}
	if d.MaxLen == nil {
		return
	}
	long := strings.Repeat("q", int(d.GetMaxLen())+1)
	if v, ok := pc.withText(nil, fd, long); ok {
		pc.refused(fd, v, fmt.Sprintf("a word of %d letters, one more than its declared max_len", len(long)))
	}
	var errs []string
	for _, base := range pc.bases(false) {
		v, ok := pc.withText(base, fd, long[1:])
		if !ok {
			continue
		}
		err := pc.accepts(pc.with(base, fd, v))
		if err == nil {
			return
		}
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		pc.t.Logf("%s: a word of its declared max_len, %d letters, is refused on every base tried (rules across parameters?): %s", fd.Name(), d.GetMaxLen(), strings.Join(errs, "; "))
	}
}

// withText returns fd's value with s in it: the text itself, or base's resolved list with its
// first element replaced, or its map with its first key renamed.
func (pc *paramCheck) withText(base *matchv1.GameParams, fd protoreflect.FieldDescriptor, s string) (protoreflect.Value, bool) {
	if !fd.IsMap() {
		return pc.replace(base, fd, protoreflect.ValueOfString(s), false)
	}
	from := pc.current(base, fd).Map()
	if from.Len() == 0 {
		return protoreflect.Value{}, false
	}
	first := firstKey(from)
	scratch := pc.with(nil, nil, protoreflect.Value{}).ProtoReflect().Mutable(pc.branch).Message()
	m := scratch.Mutable(fd).Map()
	from.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		if k.String() == first.String() {
			k = protoreflect.ValueOfString(s).MapKey()
		}
		m.Set(k, v)
		return true
	})
	return scratch.Get(fd), true
}

// countLimits checks a list's declared min_count and max_count: one entry fewer or more is
// refused naming fd.
func (pc *paramCheck) countLimits(fd protoreflect.FieldDescriptor) {
	d := games.Declared(fd)
	if !fd.IsList() {
		return
	}
	from := pc.current(nil, fd).List()
	if from.Len() == 0 {
		return
	}
	list := func(n int) protoreflect.Value {
		scratch := pc.with(nil, nil, protoreflect.Value{}).ProtoReflect().Mutable(pc.branch).Message()
		l := scratch.Mutable(fd).List()
		for range n {
			l.Append(from.Get(0))
		}
		return scratch.Get(fd)
	}
	if d.MinCount != nil && d.GetMinCount() > 1 {
		pc.refused(fd, list(int(d.GetMinCount())-1), fmt.Sprintf("%d entries, one fewer than its declared min_count", d.GetMinCount()-1))
	}
	if d.MaxCount != nil {
		pc.refused(fd, list(int(d.GetMaxCount())+1), fmt.Sprintf("%d entries, one more than its declared max_count", d.GetMaxCount()+1))
	}
}
