package games

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// ParseParams turns "key=value" strings into the GameParams branch named after game, one
// mechanism for every family: each key is a field of the family's Params message and the
// value is parsed by the field's type. Unknown keys, repeated keys and unparsable values are
// errors that name the parameter and what would be legal.
func ParseParams(game string, kvs []string) (*matchv1.GameParams, error) {
	gp := &matchv1.GameParams{}
	branch := gp.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(game))
	if branch == nil || branch.Message() == nil {
		if len(kvs) == 0 {
			return gp, nil
		}
		return nil, fmt.Errorf("game %q takes no parameters", game)
	}
	msg := gp.ProtoReflect().Mutable(branch).Message()
	fields := msg.Descriptor().Fields()
	seen := make(map[string]bool, len(kvs))
	for _, kv := range kvs {
		key, value, ok := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("parameter %q is not of the form key=value", kv)
		}
		fd := fields.ByName(protoreflect.Name(key))
		if fd == nil {
			return nil, fmt.Errorf("unknown parameter %q for %s (known: %s)", key, game, strings.Join(fieldNames(fields), ", "))
		}
		if seen[key] {
			return nil, fmt.Errorf("parameter %q given twice", key)
		}
		seen[key] = true
		var err error
		switch {
		case fd.IsMap():
			err = parseMap(msg.Mutable(fd).Map(), fd, value)
		case fd.IsList():
			err = parseList(msg.Mutable(fd).List(), fd, value)
		default:
			var v protoreflect.Value
			if v, err = parseValue(fd, value); err == nil {
				msg.Set(fd, v)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("parameter %s=%q: %w", key, value, err)
		}
	}
	return gp, nil
}

// parseMap reads "key:value,key:value" into a map parameter (keys are strings).
func parseMap(m protoreflect.Map, fd protoreflect.FieldDescriptor, s string) error {
	if fd.MapKey().Kind() != protoreflect.StringKind {
		return fmt.Errorf("map parameters with non-text keys cannot be set this way")
	}
	for _, item := range splitList(s) {
		k, v, ok := strings.Cut(item, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("want key:value pairs separated by commas, e.g. a:1,b:2")
		}
		key := protoreflect.ValueOfString(k).MapKey()
		if m.Has(key) {
			return fmt.Errorf("key %q given twice", k)
		}
		val, err := parseValue(fd.MapValue(), strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		m.Set(key, val)
	}
	return nil
}

// parseList reads "a,b,c" into a repeated parameter.
func parseList(l protoreflect.List, fd protoreflect.FieldDescriptor, s string) error {
	for _, item := range splitList(s) {
		v, err := parseValue(fd, strings.TrimSpace(item))
		if err != nil {
			return fmt.Errorf("%q: %w", item, err)
		}
		l.Append(v)
	}
	return nil
}

func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func fieldNames(fields protoreflect.FieldDescriptors) []string {
	names := make([]string, fields.Len())
	for i := range fields.Len() {
		names[i] = string(fields.Get(i).Name())
	}
	return names
}

// parseValue parses one scalar of fd's kind (for lists and maps, of one element's kind).
func parseValue(fd protoreflect.FieldDescriptor, s string) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return protoreflect.Value{}, fmt.Errorf("want a whole number")
		}
		return protoreflect.ValueOfInt32(int32(n)), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return protoreflect.Value{}, fmt.Errorf("want a whole number")
		}
		return protoreflect.ValueOfInt64(n), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return protoreflect.Value{}, fmt.Errorf("want a non-negative whole number")
		}
		return protoreflect.ValueOfUint32(uint32(n)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return protoreflect.Value{}, fmt.Errorf("want a non-negative whole number")
		}
		return protoreflect.ValueOfUint64(n), nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return protoreflect.Value{}, fmt.Errorf("want a number")
		}
		if fd.Kind() == protoreflect.FloatKind {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
		return protoreflect.ValueOfFloat64(f), nil
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return protoreflect.Value{}, fmt.Errorf("want true or false")
		}
		return protoreflect.ValueOfBool(b), nil
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(s), nil
	case protoreflect.EnumKind:
		ev := fd.Enum().Values().ByName(protoreflect.Name(s))
		if ev == nil {
			return protoreflect.Value{}, fmt.Errorf("not one of the allowed values")
		}
		return protoreflect.ValueOfEnum(ev.Number()), nil
	default:
		return protoreflect.Value{}, fmt.Errorf("parameters of type %s cannot be set this way", fd.Kind())
	}
}

// FormatParams writes the set fields of a GameParams as "key=value" strings, in field order.
// Message fields, which ParseParams cannot set (data a game fills in when it resolves its
// parameters), are left out.
func FormatParams(gp *matchv1.GameParams) []string {
	var out []string
	r := gp.ProtoReflect()
	r.Range(func(branch protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if branch.Message() == nil {
			return true
		}
		msg := v.Message()
		fields := msg.Descriptor().Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			// Message fields (data a game resolves, e.g. a scenario) cannot be set with
			// key=value and would not read back: leave them out.
			if fd.Message() != nil && !fd.IsMap() {
				continue
			}
			if msg.Has(fd) {
				out = append(out, fmt.Sprintf("%s=%s", fd.Name(), formatField(fd, msg.Get(fd))))
			}
		}
		return true
	})
	return out
}

// formatField writes a field's value as ParseParams reads it: maps as sorted key:value pairs,
// lists comma-separated.
func formatField(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch {
	case fd.IsMap():
		var items []string
		v.Map().Range(func(k protoreflect.MapKey, val protoreflect.Value) bool {
			items = append(items, k.String()+":"+formatValue(fd.MapValue(), val))
			return true
		})
		sort.Strings(items)
		return strings.Join(items, ",")
	case fd.IsList():
		items := make([]string, v.List().Len())
		for i := range items {
			items[i] = formatValue(fd, v.List().Get(i))
		}
		return strings.Join(items, ",")
	default:
		return formatValue(fd, v)
	}
}

// formatValue writes v so that parseValue reads it back: enums by name, everything else as
// fmt prints it.
func formatValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	if fd.Kind() == protoreflect.EnumKind {
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	}
	return fmt.Sprint(v.Interface())
}
