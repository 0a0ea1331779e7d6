package games_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// TestFillParamsAndCheckResolved runs the two on the ultimatum's declared Params: fill sets the
// declared defaults (100, 8, Dollars: the spec's) around what is given, refuses another game's
// params and values outside the limits; CheckResolved refuses what fill would have filled in.
func TestFillParamsAndCheckResolved(t *testing.T) {
	given := &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{MaxTurns: proto.Int32(3)}}}
	keep := proto.CloneOf(given)
	got, err := games.FillParams("ultimatum", given)
	if err != nil {
		t.Fatal(err)
	}
	want := &ultimatumv1.Params{Total: proto.Int64(100), MaxTurns: proto.Int32(3), Currency: proto.String("Dollars")}
	if !proto.Equal(got.GetUltimatum(), want) {
		t.Errorf("FillParams = %v, want %v", got, want)
	}
	if !proto.Equal(given, keep) {
		t.Errorf("FillParams changed its input to %v", given)
	}
	if err := games.CheckResolved("ultimatum", got); err != nil {
		t.Errorf("CheckResolved(filled) = %v", err)
	}
	for _, p := range []*matchv1.GameParams{nil, {}, given} {
		if err := games.CheckResolved("ultimatum", p); !errors.Is(err, games.ErrNotResolved) {
			t.Errorf("CheckResolved(%v) = %v, want ErrNotResolved", p, err)
		}
	}
	nilFilled, err := games.FillParams("ultimatum", nil)
	if err != nil || nilFilled.GetUltimatum().GetTotal() != 100 {
		t.Errorf("FillParams(nil) = %v, %v", nilFilled, err)
	}
	other := &matchv1.GameParams{Family: &matchv1.GameParams_Trading{Trading: &tradingv1.Params{}}}
	for name, check := range map[string]func() error{
		"fill":  func() error { _, err := games.FillParams("ultimatum", other); return err },
		"check": func() error { return games.CheckResolved("ultimatum", other) },
	} {
		if err := check(); err == nil || !strings.Contains(err.Error(), `params are for the "trading" game`) {
			t.Errorf("%s of trading params as ultimatum's: %v", name, err)
		}
	}
	bad := proto.CloneOf(got)
	bad.GetUltimatum().Total = proto.Int64(0)
	if err := games.CheckResolved("ultimatum", bad); err == nil || !strings.Contains(err.Error(), "total must be at least 1") {
		t.Errorf("CheckResolved(total=0) = %v", err)
	}
	if infos := games.ParamInfos("nosuchgame", nil); infos != nil {
		t.Errorf("ParamInfos of a game without params = %v", infos)
	}
}
