package games

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// kindsDescriptor builds a message with one field of every kind a parameter could have, so
// parseValue and formatValue can be checked beyond the kinds the ultimatum game uses.
func kindsDescriptor(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{
			Name:     proto.String(name),
			JsonName: proto.String(name),
			Number:   proto.Int32(num),
			Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:     typ.Enum(),
		}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	repeated := func(f *descriptorpb.FieldDescriptorProto) *descriptorpb.FieldDescriptorProto {
		f.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		return f
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("paramstest/kinds.proto"),
		Package: proto.String("paramstest"),
		Syntax:  proto.String("proto3"),
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("Color"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)},
				{Name: proto.String("COLOR_RED"), Number: proto.Int32(1)},
			},
		}},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Kinds"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("i32", 1, descriptorpb.FieldDescriptorProto_TYPE_INT32, ""),
				field("si32", 2, descriptorpb.FieldDescriptorProto_TYPE_SINT32, ""),
				field("sf32", 3, descriptorpb.FieldDescriptorProto_TYPE_SFIXED32, ""),
				field("i64", 4, descriptorpb.FieldDescriptorProto_TYPE_INT64, ""),
				field("si64", 5, descriptorpb.FieldDescriptorProto_TYPE_SINT64, ""),
				field("sf64", 6, descriptorpb.FieldDescriptorProto_TYPE_SFIXED64, ""),
				field("u32", 7, descriptorpb.FieldDescriptorProto_TYPE_UINT32, ""),
				field("fx32", 8, descriptorpb.FieldDescriptorProto_TYPE_FIXED32, ""),
				field("u64", 9, descriptorpb.FieldDescriptorProto_TYPE_UINT64, ""),
				field("fx64", 10, descriptorpb.FieldDescriptorProto_TYPE_FIXED64, ""),
				field("flt", 11, descriptorpb.FieldDescriptorProto_TYPE_FLOAT, ""),
				field("dbl", 12, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, ""),
				field("b", 13, descriptorpb.FieldDescriptorProto_TYPE_BOOL, ""),
				field("s", 14, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
				field("e", 15, descriptorpb.FieldDescriptorProto_TYPE_ENUM, ".paramstest.Color"),
				field("by", 16, descriptorpb.FieldDescriptorProto_TYPE_BYTES, ""),
				field("msg", 17, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".paramstest.Kinds"),
				repeated(field("list", 18, descriptorpb.FieldDescriptorProto_TYPE_INT32, "")),
				repeated(field("m", 19, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".paramstest.Kinds.MEntry")),
			},
			NestedType: []*descriptorpb.DescriptorProto{{
				Name: proto.String("MEntry"),
				Field: []*descriptorpb.FieldDescriptorProto{
					field("key", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
					field("value", 2, descriptorpb.FieldDescriptorProto_TYPE_INT32, ""),
				},
				Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
			}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatalf("build test descriptor: %v", err)
	}
	return fd.Messages().ByName("Kinds")
}

func TestParseValue(t *testing.T) {
	md := kindsDescriptor(t)
	tests := []struct {
		name  string
		field string
		in    string
		want  any // the parsed value's Interface(); nil when an error is wanted
		// wantErr is a substring of the error; empty means no error.
		wantErr string
		// formatted is what formatValue should write for the parsed value; empty means in.
		formatted string
	}{
		{name: "int32", field: "i32", in: "-2147483648", want: int32(-2147483648)},
		{name: "int32 too big", field: "i32", in: "2147483648", wantErr: "want a whole number"},
		{name: "int32 hex is refused", field: "i32", in: "0x10", wantErr: "want a whole number"},
		{name: "sint32", field: "si32", in: "-5", want: int32(-5)},
		{name: "sfixed32", field: "sf32", in: "7", want: int32(7)},
		{name: "int64", field: "i64", in: "-9223372036854775808", want: int64(-9223372036854775808)},
		{name: "int64 too big", field: "i64", in: "9223372036854775808", wantErr: "want a whole number"},
		{name: "sint64", field: "si64", in: "123456789012", want: int64(123456789012)},
		{name: "sfixed64", field: "sf64", in: "-1", want: int64(-1)},
		{name: "uint32", field: "u32", in: "4294967295", want: uint32(4294967295)},
		{name: "uint32 too big", field: "u32", in: "4294967296", wantErr: "want a non-negative whole number"},
		{name: "uint32 negative", field: "u32", in: "-1", wantErr: "want a non-negative whole number"},
		{name: "fixed32", field: "fx32", in: "3", want: uint32(3)},
		{name: "uint64", field: "u64", in: "18446744073709551615", want: uint64(18446744073709551615)},
		{name: "uint64 negative", field: "u64", in: "-3", wantErr: "want a non-negative whole number"},
		{name: "fixed64", field: "fx64", in: "0", want: uint64(0)},
		{name: "float", field: "flt", in: "0.1", want: float32(0.1)},
		{name: "float not a number", field: "flt", in: "abc", wantErr: "want a number"},
		{name: "double", field: "dbl", in: "0.0025", want: 0.0025},
		{name: "double exponent", field: "dbl", in: "1e+21", want: 1e21},
		{name: "double not a number", field: "dbl", in: "1,5", wantErr: "want a number"},
		{name: "bool true", field: "b", in: "true", want: true},
		{name: "bool 0", field: "b", in: "0", want: false, formatted: "false"},
		{name: "bool yes", field: "b", in: "yes", wantErr: "want true or false"},
		{name: "string", field: "s", in: "héllo wörld", want: "héllo wörld"},
		{name: "string empty", field: "s", in: "", want: ""},
		{name: "enum by name", field: "e", in: "COLOR_RED", want: protoreflect.EnumNumber(1)},
		{name: "enum short name", field: "e", in: "RED", wantErr: "not one of the allowed values"},
		{name: "enum by number", field: "e", in: "1", wantErr: "not one of the allowed values"},
		{name: "bytes", field: "by", in: "abc", wantErr: "cannot be set this way"},
		{name: "message", field: "msg", in: "x", wantErr: "cannot be set this way"},
		{name: "list element", field: "list", in: "1", want: int32(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fd := md.Fields().ByName(protoreflect.Name(tc.field))
			if fd == nil {
				t.Fatalf("no field %q in the test descriptor", tc.field)
			}
			v, err := parseValue(fd, tc.in)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("parseValue(%s, %q) = %v, want an error", tc.field, tc.in, v)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("parseValue(%s, %q) error %q, want it to contain %q", tc.field, tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseValue(%s, %q): %v", tc.field, tc.in, err)
			}
			if got := v.Interface(); got != tc.want {
				t.Fatalf("parseValue(%s, %q) = %v (%T), want %v (%T)", tc.field, tc.in, got, got, tc.want, tc.want)
			}
			// formatValue must write what parseValue reads back.
			wantText := tc.formatted
			if wantText == "" {
				wantText = tc.in
			}
			if got := formatValue(fd, v); got != wantText {
				t.Errorf("formatValue(%s, %v) = %q, want %q", tc.field, v, got, wantText)
			}
			back, err := parseValue(fd, formatValue(fd, v))
			if err != nil {
				t.Fatalf("parseValue(formatValue(...)): %v", err)
			}
			if back.Interface() != v.Interface() {
				t.Errorf("round trip of %s=%q gives %v, want %v", tc.field, tc.in, back.Interface(), v.Interface())
			}
		})
	}
}
