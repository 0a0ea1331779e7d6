package games_test

import (
	"strings"
	"testing"

	"github.com/parley-arena/parley/referee/games"
)

func TestParseParamsListsAndMaps(t *testing.T) {
	gp, err := games.ParseParams("coalition", []string{"players=A, B,C,D", "values=AB:750,A+C:700, ABCD:1200"})
	if err != nil {
		t.Fatal(err)
	}
	c := gp.GetCoalition()
	if got := strings.Join(c.GetPlayers(), "|"); got != "A|B|C|D" {
		t.Errorf("players = %q, want A|B|C|D", got)
	}
	want := map[string]int64{"AB": 750, "A+C": 700, "ABCD": 1200}
	if len(c.GetValues()) != len(want) {
		t.Fatalf("values = %v, want %v", c.GetValues(), want)
	}
	for k, v := range want {
		if c.GetValues()[k] != v {
			t.Errorf("values[%q] = %d, want %d", k, c.GetValues()[k], v)
		}
	}
	// Formatting and parsing again gives the same parameters.
	again, err := games.ParseParams("coalition", games.FormatParams(gp))
	if err != nil {
		t.Fatalf("parse of %v: %v", games.FormatParams(gp), err)
	}
	if got, want := strings.Join(games.FormatParams(again), " "), strings.Join(games.FormatParams(gp), " "); got != want {
		t.Errorf("round trip: %q, want %q", got, want)
	}
	if got := strings.Join(games.FormatParams(gp), " "); got != "players=A,B,C,D values=A+C:700,AB:750,ABCD:1200" {
		t.Errorf("FormatParams = %q (maps must be written sorted)", got)
	}
}

func TestParseParamsCollectionErrors(t *testing.T) {
	tests := []struct {
		name    string
		game    string
		kv      string
		wantErr string
	}{
		{"map item without colon", "trading", "p1_holdings=X25", "key:value"},
		{"map key twice", "trading", "p1_holdings=X:1,X:2", `"X" given twice`},
		{"map value not a number", "trading", "p2_holdings=X:lots", "whole number"},
		{"map empty key", "trading", "p2_goal=:3", "key:value"},
		{"list element of the wrong type", "coalition", "rounds=1,2", "whole number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := games.ParseParams(tc.game, []string{tc.kv})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ParseParams(%q) error = %v, want one mentioning %q", tc.kv, err, tc.wantErr)
			}
		})
	}
}
