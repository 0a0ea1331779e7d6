package games

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// A family declares each parameter once, on its field of the family's Params message: the
// (parley.game.v1.param) option (proto/parley/game/v1/param.proto) carries the help text, the
// default or the rule the family derives it by, and the limits of legal values. What the
// referee shows (ParamInfos), fills in (FillParams) and checks (FillParams, CheckResolved) all
// comes from there, and gametest checks that the family's Resolve behaves as declared.

// ErrNotResolved says params given to NewState (or another reader of resolved params) lack a
// value Resolve would have filled in: resolve them first.
var ErrNotResolved = errors.New("params are not resolved")

// Declared returns fd's parameter declaration; an empty one when it has none (the conformance
// suite refuses that).
func Declared(fd protoreflect.FieldDescriptor) *gamev1.Param {
	if opts := fd.Options(); opts != nil && proto.HasExtension(opts, gamev1.E_Param) {
		if p, ok := proto.GetExtension(opts, gamev1.E_Param).(*gamev1.Param); ok && p != nil {
			return p
		}
	}
	return &gamev1.Param{}
}

// IsDeclared reports whether fd carries a parameter declaration.
func IsDeclared(fd protoreflect.FieldDescriptor) bool {
	opts := fd.Options()
	return opts != nil && proto.HasExtension(opts, gamev1.E_Param)
}

// ParamsField returns the field of GameParams that holds game's params (its family branch),
// or nil when game takes none.
func ParamsField(game string) protoreflect.FieldDescriptor {
	fd := (&matchv1.GameParams{}).ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(game))
	if fd == nil || fd.Message() == nil {
		return nil
	}
	return fd
}

// ParamInfos describes game's parameters from their declarations, in field order: every field
// of its Params message but those holding messages (data the family fills in, which --param
// cannot set). defaults is game's params resolved with nothing set; it gives the value shown
// for a default the family derives (nil shows none).
func ParamInfos(game string, defaults *matchv1.GameParams) []*gamev1.ParamInfo {
	branch := ParamsField(game)
	if branch == nil {
		return nil
	}
	var resolved protoreflect.Message
	if defaults.ProtoReflect().Has(branch) {
		resolved = defaults.ProtoReflect().Get(branch).Message()
	}
	return describe(branch.Message(), resolved)
}

func describe(md protoreflect.MessageDescriptor, resolved protoreflect.Message) []*gamev1.ParamInfo {
	var out []*gamev1.ParamInfo
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() != nil && !fd.IsMap() {
			continue
		}
		d := Declared(fd)
		info := &gamev1.ParamInfo{Name: string(fd.Name()), Kind: paramKind(fd), Description: Help(fd)}
		switch {
		case d.GetUnset() == nil:
		case d.GetDerived() != "":
			if resolved != nil && isSet(resolved, fd) {
				info.DefaultValue = formatField(fd, resolved.Get(fd))
			}
		default:
			info.DefaultValue = d.GetDefault()
		}
		out = append(out, info)
	}
	return out
}

// paramKind is the kind a person types: lists and maps are written as text.
func paramKind(fd protoreflect.FieldDescriptor) gamev1.ParamKind {
	if fd.IsList() || fd.IsMap() {
		return gamev1.ParamKind_PARAM_KIND_STRING
	}
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return gamev1.ParamKind_PARAM_KIND_INT
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return gamev1.ParamKind_PARAM_KIND_FLOAT
	case protoreflect.BoolKind:
		return gamev1.ParamKind_PARAM_KIND_BOOL
	default:
		return gamev1.ParamKind_PARAM_KIND_STRING
	}
}

// Help returns what people are told about the parameter fd: its declared help, then its limits
// and the rule of a derived default, written out from the declaration.
func Help(fd protoreflect.FieldDescriptor) string {
	d := Declared(fd)
	parts := []string{strings.TrimSpace(d.GetHelp())}
	if d.Min != nil || d.Max != nil {
		rng := numberRange(d) + "."
		switch {
		case fd.IsList():
			rng = "Each " + rng
		case fd.IsMap():
			rng = "Each value " + rng
		default:
			rng = strings.ToUpper(rng[:1]) + rng[1:]
		}
		parts = append(parts, rng)
	}
	if d.GetWord() || d.MaxLen != nil {
		who := ""
		switch {
		case fd.IsList():
			who = "Each "
		case fd.IsMap():
			who = "Each key "
		}
		var text string
		switch {
		case d.GetWord() && d.MaxLen != nil:
			text = fmt.Sprintf("one word of at most %d characters: letters, digits, '_' or '-', starting with a letter.", d.GetMaxLen())
		case d.GetWord():
			text = "one word: letters, digits, '_' or '-', starting with a letter."
		default:
			text = fmt.Sprintf("at most %d characters.", d.GetMaxLen())
		}
		if who != "" {
			text = who + text
		} else {
			text = strings.ToUpper(text[:1]) + text[1:]
		}
		parts = append(parts, text)
	}
	switch {
	case d.MinCount != nil && d.MaxCount != nil:
		parts = append(parts, fmt.Sprintf("%d to %d entries.", d.GetMinCount(), d.GetMaxCount()))
	case d.MinCount != nil:
		parts = append(parts, fmt.Sprintf("At least %d entries.", d.GetMinCount()))
	case d.MaxCount != nil:
		parts = append(parts, fmt.Sprintf("At most %d entries.", d.GetMaxCount()))
	}
	if r := d.GetDerived(); r != "" {
		parts = append(parts, "Unset: "+strings.TrimSuffix(strings.TrimSpace(r), ".")+".")
	}
	if others := partners(fd); len(others) > 0 {
		parts = append(parts, "Given together with "+andList(others)+", or none of them.")
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// FillParams returns a copy of params with game's branch set, every value given checked
// against its declared limits, and every unset field that declares a default set to it. It
// refuses params for another game. Defaults the family derives, and rules across fields, are
// the family's to apply after it. The error names the parameter and what is legal.
func FillParams(game string, params *matchv1.GameParams) (*matchv1.GameParams, error) {
	branch, err := branchOf(game, params)
	if err != nil {
		return nil, err
	}
	out := &matchv1.GameParams{}
	if params.ProtoReflect().Has(branch) {
		out = proto.CloneOf(params)
	}
	msg := out.ProtoReflect().Mutable(branch).Message()
	if err := checkLimits(game, msg); err != nil {
		return nil, err
	}
	if err := checkTogether(game, msg); err != nil {
		return nil, err
	}
	if err := fillDefaults(msg); err != nil {
		return nil, fmt.Errorf("%s: %w", game, err)
	}
	return out, nil
}

// CheckResolved checks params as NewState takes them, resolved: for game, every field that
// declares a default (or a derived one) set unless declared conditional, and every value
// within its declared limits. It fills nothing in; an error wraps ErrNotResolved when a value
// is missing.
func CheckResolved(game string, params *matchv1.GameParams) error {
	branch, err := branchOf(game, params)
	if err != nil {
		return err
	}
	if !params.ProtoReflect().Has(branch) {
		return fmt.Errorf("%s: %w (no %s params): resolve them first", game, ErrNotResolved, game)
	}
	msg := params.ProtoReflect().Get(branch).Message()
	fields := msg.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		d := Declared(fd)
		if d.GetUnset() != nil && !d.GetConditional() && !isSet(msg, fd) {
			return fmt.Errorf("%s: %w (%s is unset): resolve them first", game, ErrNotResolved, fd.Name())
		}
	}
	return checkLimits(game, msg)
}

// branchOf returns game's branch of GameParams, refusing params set for another game. It
// looks at the oneof reflectively, so that a branch added for a future family is named in the
// error instead of being mistaken for "all defaults".
func branchOf(game string, params *matchv1.GameParams) (protoreflect.FieldDescriptor, error) {
	branch := ParamsField(game)
	if branch == nil {
		return nil, fmt.Errorf("%s: no such game takes parameters", game)
	}
	if fd := params.ProtoReflect().WhichOneof(branch.ContainingOneof()); fd != nil && fd != branch {
		return nil, fmt.Errorf("%s: params are for the %q game, not %q", game, fd.Name(), game)
	}
	return branch, nil
}

// partners are the names of the other parameters declared together with fd, in field order.
func partners(fd protoreflect.FieldDescriptor) []string {
	group := Declared(fd).GetTogether()
	if group == "" {
		return nil
	}
	var out []string
	fields := fd.ContainingMessage().Fields()
	for i := range fields.Len() {
		if f := fields.Get(i); f != fd && Declared(f).GetTogether() == group {
			out = append(out, string(f.Name()))
		}
	}
	return out
}

// checkTogether refuses a group of parameters declared together that is given in part.
func checkTogether(game string, m protoreflect.Message) error {
	fields := m.Descriptor().Fields()
	seen := map[string]bool{}
	for i := range fields.Len() {
		group := Declared(fields.Get(i)).GetTogether()
		if group == "" || seen[group] {
			continue
		}
		seen[group] = true
		var all, missing []string
		for j := i; j < fields.Len(); j++ {
			if f := fields.Get(j); Declared(f).GetTogether() == group {
				all = append(all, string(f.Name()))
				if !isSet(m, f) {
					missing = append(missing, string(f.Name()))
				}
			}
		}
		if len(missing) > 0 && len(missing) < len(all) {
			verb := "are"
			if len(missing) == 1 {
				verb = "is"
			}
			return fmt.Errorf("%s: %s go together, and %s %s missing: give all of them, or none for their defaults",
				game, andList(all), andList(missing), verb)
		}
	}
	return nil
}

// andList joins words as a sentence lists them: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// isSet reports whether fd holds a value in m: an empty list or map is unset.
func isSet(m protoreflect.Message, fd protoreflect.FieldDescriptor) bool {
	switch {
	case fd.IsList():
		return m.Get(fd).List().Len() > 0
	case fd.IsMap():
		return m.Get(fd).Map().Len() > 0
	default:
		return m.Has(fd)
	}
}

// fillDefaults sets every unset field of m that declares a default to it.
func fillDefaults(m protoreflect.Message) error {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		d := Declared(fd)
		if _, ok := d.GetUnset().(*gamev1.Param_Default); !ok || isSet(m, fd) {
			continue
		}
		if err := setText(m, fd, d.GetDefault()); err != nil {
			return fmt.Errorf("the declared default of %s, %q: %w", fd.Name(), d.GetDefault(), err)
		}
	}
	return nil
}

// setText sets fd in m from text as --param writes it.
func setText(m protoreflect.Message, fd protoreflect.FieldDescriptor, text string) error {
	switch {
	case fd.IsMap():
		m.Clear(fd)
		return parseMap(m.Mutable(fd).Map(), fd, text)
	case fd.IsList():
		m.Clear(fd)
		return parseList(m.Mutable(fd).List(), fd, text)
	default:
		v, err := parseValue(fd, text)
		if err != nil {
			return err
		}
		m.Set(fd, v)
		return nil
	}
}

// checkLimits checks every set field of m against its declared limits.
func checkLimits(game string, m protoreflect.Message) error {
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		err = checkField(fd, v)
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", game, err)
	}
	return nil
}

// checkField checks one field's value against its declaration.
func checkField(fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	d := Declared(fd)
	name := string(fd.Name())
	switch {
	case fd.IsList():
		l := v.List()
		if err := checkCount(d, name, l.Len()); err != nil {
			return err
		}
		for i := range l.Len() {
			if err := checkOne(d, fd, fmt.Sprintf("%s entry %d", name, i+1), l.Get(i)); err != nil {
				return err
			}
		}
	case fd.IsMap():
		mp := v.Map()
		if err := checkCount(d, name, mp.Len()); err != nil {
			return err
		}
		var err error
		mp.Range(func(k protoreflect.MapKey, val protoreflect.Value) bool {
			what := name + " " + k.String()
			if err = checkOne(d, fd.MapKey(), name+" key", k.Value()); err == nil {
				err = checkOne(d, fd.MapValue(), what, val)
			}
			return err == nil
		})
		return err
	default:
		return checkOne(d, fd, name, v)
	}
	return nil
}

func checkCount(d *gamev1.Param, name string, n int) error {
	switch {
	case n == 0:
		return nil // unset
	case d.MinCount != nil && n < int(d.GetMinCount()), d.MaxCount != nil && n > int(d.GetMaxCount()):
		return fmt.Errorf("%s must have %s, got %d", name, countRange(d), n)
	}
	return nil
}

func countRange(d *gamev1.Param) string {
	switch {
	case d.MinCount != nil && d.MaxCount != nil:
		return fmt.Sprintf("%d to %d entries", d.GetMinCount(), d.GetMaxCount())
	case d.MinCount != nil:
		return fmt.Sprintf("at least %d entries", d.GetMinCount())
	default:
		return fmt.Sprintf("at most %d entries", d.GetMaxCount())
	}
}

// checkOne checks one value (a field's, a list element's, a map key's or value's) of kind
// fd.Kind(); what names it in the error.
func checkOne(d *gamev1.Param, fd protoreflect.FieldDescriptor, what string, v protoreflect.Value) error {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return checkParamText(d, what, v.String())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return checkNumber(d, what, v.Int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n := v.Uint()
		if n > 1<<63-1 {
			if d.Max != nil {
				return fmt.Errorf("%s must be %s, got %d", what, numberRange(d), n)
			}
			return nil
		}
		return checkNumber(d, what, int64(n))
	}
	return nil
}

// exactLimit is 2^53, the largest amount the record's float64 payoffs hold exactly: a maximum
// this large is a limit of the machine, not one a person chooses, so a value below the minimum
// is told only the minimum.
const exactLimit = 1 << 53

func checkNumber(d *gamev1.Param, what string, n int64) error {
	switch {
	case d.Min != nil && n < d.GetMin():
		if d.Max == nil || d.GetMax() >= exactLimit {
			return fmt.Errorf("%s must be at least %d, got %d", what, d.GetMin(), n)
		}
	case d.Max != nil && n > d.GetMax():
	default:
		return nil
	}
	return fmt.Errorf("%s must be %s, got %d", what, numberRange(d), n)
}

func numberRange(d *gamev1.Param) string {
	switch {
	case d.Min != nil && d.Max != nil:
		return fmt.Sprintf("from %d to %d", d.GetMin(), d.GetMax())
	case d.Min != nil:
		return fmt.Sprintf("at least %d", d.GetMin())
	default:
		return fmt.Sprintf("at most %d", d.GetMax())
	}
}

func checkParamText(d *gamev1.Param, what, s string) error {
	if d.GetWord() {
		if err := CheckWord(s); err != nil {
			return fmt.Errorf("%s %w", what, err)
		}
	}
	if d.MaxLen != nil {
		if n := utf8.RuneCountInString(s); n > int(d.GetMaxLen()) {
			return fmt.Errorf("%s must be at most %d characters, got %d", what, d.GetMaxLen(), n)
		}
	}
	return nil
}

// CheckWord insists that s is one plain word: letters, digits, '_' or '-', starting with a
// letter. Names agents type back in their moves, and that briefings splice into sentences, are
// words. The error reads after the name of what was checked ("currency must ...").
func CheckWord(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("must be valid UTF-8")
	}
	if s == "" {
		return errors.New("must not be empty")
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || r == '_' || r == '-'))) {
			return fmt.Errorf("must be one word of letters, digits, '_' or '-' starting with a letter, got %s", strconv.Quote(s))
		}
	}
	return nil
}
