package games

import (
	"fmt"
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
		v, err := parseValue(fd, value)
		if err != nil {
			return nil, fmt.Errorf("parameter %s=%q: %w", key, value, err)
		}
		msg.Set(fd, v)
	}
	return gp, nil
}

func fieldNames(fields protoreflect.FieldDescriptors) []string {
	names := make([]string, fields.Len())
	for i := range fields.Len() {
		names[i] = string(fields.Get(i).Name())
	}
	return names
}

func parseValue(fd protoreflect.FieldDescriptor, s string) (protoreflect.Value, error) {
	if fd.IsList() || fd.IsMap() {
		return protoreflect.Value{}, fmt.Errorf("list parameters cannot be set this way")
	}
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
			if msg.Has(fd) {
				out = append(out, fmt.Sprintf("%s=%s", fd.Name(), formatValue(fd, msg.Get(fd))))
			}
		}
		return true
	})
	return out
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
