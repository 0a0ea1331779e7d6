package games

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// declaredDescriptor builds a Params-like message whose fields carry declarations of every
// sort: a number with a range and a default, a derived one, a word, a list with counts, a map
// with word keys and bounded values, a field with no default and a message field.
func declaredDescriptor(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	opts := func(p *gamev1.Param) *descriptorpb.FieldOptions {
		o := &descriptorpb.FieldOptions{}
		proto.SetExtension(o, gamev1.E_Param, p)
		return o
	}
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, p *gamev1.Param) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{
			Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(num),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: typ.Enum(),
			Proto3Optional: proto.Bool(true), OneofIndex: proto.Int32(num - 1), Options: opts(p),
		}
	}
	repeated := func(f *descriptorpb.FieldDescriptorProto) *descriptorpb.FieldDescriptorProto {
		f.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		f.Proto3Optional, f.OneofIndex = nil, nil
		return f
	}
	i64 := descriptorpb.FieldDescriptorProto_TYPE_INT64
	i32 := descriptorpb.FieldDescriptorProto_TYPE_INT32
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING
	mapField := repeated(field("stock", 6, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE,
		&gamev1.Param{Help: "Stock by name.", Unset: &gamev1.Param_Default{Default: "X:2,Y:3"}, Word: true, Min: proto.Int64(0), Max: proto.Int64(9)}))
	mapField.TypeName = proto.String(".declaredtest.P.StockEntry")
	note := field("note", 7, str, &gamev1.Param{Help: "A note; unset: none."})
	note.OneofIndex = proto.Int32(3)
	msgField := field("data", 8, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, &gamev1.Param{Help: "Data the game fills in."})
	msgField.TypeName = proto.String(".declaredtest.P")
	msgField.Proto3Optional, msgField.OneofIndex = nil, nil
	var oneofs []*descriptorpb.OneofDescriptorProto
	for _, n := range []string{"_turns", "_limit", "_name", "_note"} {
		oneofs = append(oneofs, &descriptorpb.OneofDescriptorProto{Name: proto.String(n)})
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("declaredtest/p.proto"), Package: proto.String("declaredtest"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("P"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("turns", 1, i32, &gamev1.Param{Help: "Turns.", Unset: &gamev1.Param_Default{Default: "8"}, Min: proto.Int64(1), Max: proto.Int64(100)}),
				field("limit", 2, i32, &gamev1.Param{Help: "Limit; 0: none.", Unset: &gamev1.Param_Derived{Derived: "turns/2"}, Min: proto.Int64(0)}),
				field("name", 3, str, &gamev1.Param{Help: "A name.", Unset: &gamev1.Param_Default{Default: "Ann"}, Word: true, MaxLen: proto.Int32(5)}),
				repeated(field("counts", 4, i64, &gamev1.Param{Help: "Counts.", Unset: &gamev1.Param_Default{Default: "1,2"}, Min: proto.Int64(1), MaxCount: proto.Int32(3)})),
				repeated(field("tags", 5, str, &gamev1.Param{Help: "Tags.", MinCount: proto.Int32(2), MaxLen: proto.Int32(3)})),
				mapField,
				note,
				msgField,
			},
			NestedType: []*descriptorpb.DescriptorProto{{
				Name: proto.String("StockEntry"),
				Field: []*descriptorpb.FieldDescriptorProto{
					{Name: proto.String("key"), JsonName: proto.String("key"), Number: proto.Int32(1), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: str.Enum()},
					{Name: proto.String("value"), JsonName: proto.String("value"), Number: proto.Int32(2), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: i64.Enum()},
				},
				Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
			}},
			OneofDecl: oneofs,
		}},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatalf("build test descriptor: %v", err)
	}
	return fd.Messages().ByName("P")
}

// set parses kvs into a new message of md, as --param would.
func set(t *testing.T, md protoreflect.MessageDescriptor, kvs ...string) protoreflect.Message {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		if err := setText(m, md.Fields().ByName(protoreflect.Name(k)), v); err != nil {
			t.Fatalf("%s: %v", kv, err)
		}
	}
	return m
}

func TestFillDefaults(t *testing.T) {
	md := declaredDescriptor(t)
	m := set(t, md, "name=Bo")
	if err := fillDefaults(m); err != nil {
		t.Fatal(err)
	}
	f := md.Fields()
	got := map[string]string{}
	for _, name := range []string{"turns", "limit", "name", "counts", "tags", "stock", "note"} {
		fd := f.ByName(protoreflect.Name(name))
		if isSet(m, fd) {
			got[name] = formatField(fd, m.Get(fd))
		}
	}
	// Declared defaults fill unset fields; a given value, a derived default (the family's) and
	// a field declaring none stay as they are.
	want := map[string]string{"turns": "8", "name": "Bo", "counts": "1,2", "stock": "X:2,Y:3"}
	if len(got) != len(want) {
		t.Errorf("filled %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestCheckLimits(t *testing.T) {
	md := declaredDescriptor(t)
	tests := []struct {
		kvs     []string
		wantErr string // "" for none
	}{
		{kvs: []string{"turns=1", "limit=0", "name=Abcde", "counts=1,9,9", "tags=a,bcd", "stock=A:0,B:9", "note=any text at all"}},
		{kvs: []string{"turns=0"}, wantErr: "g: turns must be from 1 to 100, got 0"},
		{kvs: []string{"turns=101"}, wantErr: "g: turns must be from 1 to 100, got 101"},
		{kvs: []string{"limit=-1"}, wantErr: "g: limit must be at least 0, got -1"},
		{kvs: []string{"name=Abcdef"}, wantErr: "g: name must be at most 5 characters, got 6"},
		{kvs: []string{"name=A b"}, wantErr: `g: name must be one word of letters, digits, '_' or '-' starting with a letter, got "A b"`},
		{kvs: []string{"name="}, wantErr: "g: name must not be empty"},
		{kvs: []string{"counts=1,0"}, wantErr: "g: counts entry 2 must be at least 1, got 0"},
		{kvs: []string{"counts=1,1,1,1"}, wantErr: "g: counts must have at most 3 entries, got 4"},
		{kvs: []string{"tags=a"}, wantErr: "g: tags must have at least 2 entries, got 1"},
		{kvs: []string{"tags=a,long"}, wantErr: "g: tags entry 2 must be at most 3 characters, got 4"},
		{kvs: []string{"stock=A:10"}, wantErr: "g: stock A must be from 0 to 9, got 10"},
		{kvs: []string{"stock=2A:1"}, wantErr: `g: stock key must be one word`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.kvs, " "), func(t *testing.T) {
			err := checkLimits("g", set(t, md, tc.kvs...))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	md := declaredDescriptor(t)
	resolved := set(t, md, "turns=8", "limit=4")
	infos := describe(md, resolved)
	want := []*gamev1.ParamInfo{
		{Name: "turns", Kind: gamev1.ParamKind_PARAM_KIND_INT, DefaultValue: "8", Description: "Turns. From 1 to 100."},
		{Name: "limit", Kind: gamev1.ParamKind_PARAM_KIND_INT, DefaultValue: "4", Description: "Limit; 0: none. At least 0. Unset: turns/2."},
		{Name: "name", Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: "Ann", Description: "A name. One word of at most 5 characters: letters, digits, '_' or '-', starting with a letter."},
		{Name: "counts", Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: "1,2", Description: "Counts. Each at least 1. At most 3 entries."},
		{Name: "tags", Kind: gamev1.ParamKind_PARAM_KIND_STRING, Description: "Tags. Each at most 3 characters. At least 2 entries."},
		{Name: "stock", Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: "X:2,Y:3", Description: "Stock by name. Each value from 0 to 9. Each key one word: letters, digits, '_' or '-', starting with a letter."},
		{Name: "note", Kind: gamev1.ParamKind_PARAM_KIND_STRING, Description: "A note; unset: none."},
	}
	if len(infos) != len(want) {
		t.Fatalf("%d params described (the message field left out), want %d: %v", len(infos), len(want), infos)
	}
	for i := range want {
		if !proto.Equal(infos[i], want[i]) {
			t.Errorf("param %d = %v, want %v", i, infos[i], want[i])
		}
	}
}
