package games_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// ultParams wraps ultimatum params in a GameParams.
func ultParams(p *ultimatumv1.Params) *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: p}}
}

func TestParseParams(t *testing.T) {
	tests := []struct {
		name string
		game string
		kvs  []string
		want *matchv1.GameParams
		// wantErr lists substrings the error must contain; empty means no error.
		wantErr []string
	}{
		{
			name: "every kind: int64, int32, string",
			game: "ultimatum",
			kvs:  []string{"total=250", "max_turns=6", "currency=Euros"},
			want: ultParams(&ultimatumv1.Params{Total: proto.Int64(250), MaxTurns: proto.Int32(6), Currency: proto.String("Euros")}),
		},
		{
			name: "order of keys does not matter",
			game: "ultimatum",
			kvs:  []string{"currency=Yen", "total=7"},
			want: ultParams(&ultimatumv1.Params{Total: proto.Int64(7), Currency: proto.String("Yen")}),
		},
		{
			name: "int64 beyond the int32 range",
			game: "ultimatum",
			kvs:  []string{"total=10000000000"},
			want: ultParams(&ultimatumv1.Params{Total: proto.Int64(10_000_000_000)}),
		},
		{
			name: "negative numbers parse; their range is Resolve's job",
			game: "ultimatum",
			kvs:  []string{"total=-5", "max_turns=-1"},
			want: ultParams(&ultimatumv1.Params{Total: proto.Int64(-5), MaxTurns: proto.Int32(-1)}),
		},
		{
			name: "int32 limits",
			game: "ultimatum",
			kvs:  []string{"max_turns=2147483647"},
			want: ultParams(&ultimatumv1.Params{MaxTurns: proto.Int32(2147483647)}),
		},
		{
			name: "spaces around the key are trimmed",
			game: "ultimatum",
			kvs:  []string{"  total=3"},
			want: ultParams(&ultimatumv1.Params{Total: proto.Int64(3)}),
		},
		{
			name: "the value may contain '='",
			game: "ultimatum",
			kvs:  []string{"currency=a=b"},
			want: ultParams(&ultimatumv1.Params{Currency: proto.String("a=b")}),
		},
		{
			name: "an empty string value is set, not left out",
			game: "ultimatum",
			kvs:  []string{"currency="},
			want: ultParams(&ultimatumv1.Params{Currency: proto.String("")}),
		},
		{
			name: "empty list sets nothing",
			game: "ultimatum",
			kvs:  nil,
			want: ultParams(&ultimatumv1.Params{}),
		},
		{
			name:    "unknown key lists the known keys",
			game:    "ultimatum",
			kvs:     []string{"pot=5"},
			wantErr: []string{`unknown parameter "pot"`, "ultimatum", "known: total, max_turns, currency"},
		},
		{
			name:    "key given twice",
			game:    "ultimatum",
			kvs:     []string{"total=1", "max_turns=4", "total=2"},
			wantErr: []string{`"total" given twice`},
		},
		{
			name:    "missing '='",
			game:    "ultimatum",
			kvs:     []string{"total"},
			wantErr: []string{`"total" is not of the form key=value`},
		},
		{
			name:    "empty key",
			game:    "ultimatum",
			kvs:     []string{"=5"},
			wantErr: []string{`"=5" is not of the form key=value`},
		},
		{
			name:    "empty entry",
			game:    "ultimatum",
			kvs:     []string{""},
			wantErr: []string{"not of the form key=value"},
		},
		{
			name:    "int64 that is not a number",
			game:    "ultimatum",
			kvs:     []string{"total=ten"},
			wantErr: []string{`total="ten"`, "want a whole number"},
		},
		{
			name:    "int64 given as a fraction",
			game:    "ultimatum",
			kvs:     []string{"total=1.5"},
			wantErr: []string{`total="1.5"`, "want a whole number"},
		},
		{
			name:    "int64 overflow",
			game:    "ultimatum",
			kvs:     []string{"total=9223372036854775808"},
			wantErr: []string{`total="9223372036854775808"`, "want a whole number"},
		},
		{
			name:    "int32 overflow",
			game:    "ultimatum",
			kvs:     []string{"max_turns=2147483648"},
			wantErr: []string{`max_turns="2147483648"`, "want a whole number"},
		},
		{
			name:    "int32 empty",
			game:    "ultimatum",
			kvs:     []string{"max_turns="},
			wantErr: []string{`max_turns=""`, "want a whole number"},
		},
		{
			name: "game with no params branch and no params",
			game: "chess",
			kvs:  nil,
			want: &matchv1.GameParams{},
		},
		{
			name:    "game with no params branch given params",
			game:    "chess",
			kvs:     []string{"total=5"},
			wantErr: []string{`game "chess" takes no parameters`},
		},
		{
			name:    "empty game name given params",
			game:    "",
			kvs:     []string{"total=5"},
			wantErr: []string{`game "" takes no parameters`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := games.ParseParams(tc.game, tc.kvs)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("ParseParams(%q, %q) = %v, want an error", tc.game, tc.kvs, got)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseParams(%q, %q): %v", tc.game, tc.kvs, err)
			}
			if !proto.Equal(got, tc.want) {
				t.Errorf("ParseParams(%q, %q) = %v, want %v", tc.game, tc.kvs, got, tc.want)
			}
		})
	}
}

func TestFormatParams(t *testing.T) {
	tests := []struct {
		name string
		gp   *matchv1.GameParams
		want []string
	}{
		{name: "nil", gp: nil, want: nil},
		{name: "no branch", gp: &matchv1.GameParams{}, want: nil},
		{name: "empty branch", gp: ultParams(&ultimatumv1.Params{}), want: nil},
		{
			name: "all fields, in field order",
			gp:   ultParams(&ultimatumv1.Params{Currency: proto.String("Euros"), MaxTurns: proto.Int32(3), Total: proto.Int64(42)}),
			want: []string{"total=42", "max_turns=3", "currency=Euros"},
		},
		{
			name: "only the set fields",
			gp:   ultParams(&ultimatumv1.Params{MaxTurns: proto.Int32(9)}),
			want: []string{"max_turns=9"},
		},
		{
			name: "explicit zero and empty string are set",
			gp:   ultParams(&ultimatumv1.Params{Total: proto.Int64(0), Currency: proto.String("")}),
			want: []string{"total=0", "currency="},
		},
		{
			name: "negative and large numbers",
			gp:   ultParams(&ultimatumv1.Params{Total: proto.Int64(-9007199254740993), MaxTurns: proto.Int32(-2)}),
			want: []string{"total=-9007199254740993", "max_turns=-2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := games.FormatParams(tc.gp)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("FormatParams(%v) = %q, want %q", tc.gp, got, tc.want)
			}
		})
	}
}

func TestParamsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		kvs  []string
		// want is what FormatParams should give back: the same pairs in field order.
		want []string
	}{
		{name: "none", kvs: nil, want: nil},
		{name: "all", kvs: []string{"total=100", "max_turns=8", "currency=Dollars"}, want: []string{"total=100", "max_turns=8", "currency=Dollars"}},
		{name: "reordered", kvs: []string{"currency=Kr", "total=5"}, want: []string{"total=5", "currency=Kr"}},
		{name: "odd string", kvs: []string{"currency=a b=c"}, want: []string{"currency=a b=c"}},
		{name: "extremes", kvs: []string{"total=-9223372036854775808", "max_turns=2147483647"}, want: []string{"total=-9223372036854775808", "max_turns=2147483647"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gp, err := games.ParseParams("ultimatum", tc.kvs)
			if err != nil {
				t.Fatalf("ParseParams: %v", err)
			}
			got := games.FormatParams(gp)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Fatalf("FormatParams(ParseParams(%q)) = %q, want %q", tc.kvs, got, tc.want)
			}
			again, err := games.ParseParams("ultimatum", got)
			if err != nil {
				t.Fatalf("ParseParams(FormatParams(...)): %v", err)
			}
			if !proto.Equal(again, gp) {
				t.Errorf("Parse->Format->Parse = %v, want %v", again, gp)
			}
		})
	}
}
