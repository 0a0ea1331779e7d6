package negotiationarena_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/importtest"
	"github.com/parley-arena/parley/research/imports/negotiationarena"
)

// A small log in the platform's layout (typed values), written for these tests: a seller and a
// buyer, the seller asks 50, the buyer accepts. answer is the buyer's whole answer.
func buySellLog(class, answer string, end bool) string {
	turn := func(it, seat int, word, trade, complete string) string {
		return fmt.Sprintf(`{"current_iteration": %d, "turn": %d,
		 "player_public_info_dict": {"message": "hi", "player answer": %q, "newly proposed trade": %s},
		 "player_complete_answer": %q}`, it, seat, word, trade, complete)
	}
	trade := `{"_type": "trade", "_value": {"RED": {"_type": "resource", "_value": {"X": 1}}, "BLUE": {"_type": "resource", "_value": {"ZUP": 50}}}}`
	states := []string{
		`{"current_iteration": "START", "turn": "None", "settings": {
		  "resources_support_set": {"_type": "resource", "_value": {"X": 0}},
		  "player_goals": [{"_type": "goal", "_value": {"_type": "seller_goal", "_value": {"_type": "valuation", "_value": {"X": 40}}}},
		                   {"_type": "goal", "_value": {"_type": "buyer_goal", "_value": {"_type": "valuation", "_value": {"X": 60}}}}],
		  "player_initial_resources": [{"_type": "resource", "_value": {"X": 1}}, {"_type": "resource", "_value": {"ZUP": 100}}],
		  "player_social_behaviour": ["", "You must fake being desperate."],
		  "player_roles": ["You are Player RED.", "You are Player BLUE."],
		  "player_valuation": [{"_type": "valuation", "_value": {"X": 40}}, {"_type": "valuation", "_value": {"X": 60}}]}}`,
		turn(1, 0, "PROPOSAL", trade, "<player answer> PROPOSAL </player answer>\n<newly proposed trade> Player RED Gives X: 1 | Player BLUE Gives ZUP: 50 </newly proposed trade>\n<message> hi </message>"),
		turn(2, 1, "ACCEPT", `"NONE"`, answer),
	}
	if end {
		states = append(states, `{"current_iteration": "END", "turn": "None", "summary": {
		  "final_response": "ACCEPT", "proposed_trade": `+trade+`,
		  "initial_resources": [{"_type": "resource", "_value": {"X": 1}}, {"_type": "resource", "_value": {"ZUP": 100}}],
		  "final_resources": [{"_type": "resource", "_value": {"X": 0, "ZUP": 50}}, {"_type": "resource", "_value": {"X": 1, "ZUP": 50}}],
		  "player_outcome": [10, 10]}}`)
	}
	return fmt.Sprintf(`{"class": %q, "run_epoch_time_ms": "1700000000000", "iterations": 10,
	  "players": [{"class": "ChatGPTAgent", "model": "gpt-4-1106-preview", "agent_name": "Player RED", "temperature": 0.7, "max_tokens": 400, "conversation": []},
	              {"class": "ChatGPTAgent", "model": "gpt-4-1106-preview", "agent_name": "Player BLUE", "temperature": 0.7, "max_tokens": 400, "conversation": []}],
	  "game_state": [%s]}`, class, strings.Join(states, ",\n"))
}

const acceptAnswer = "<player answer> ACCEPT </player answer>\n<newly proposed trade> NONE </newly proposed trade>\n<message> hi </message>"

// Bad input: each file is refused in one line (or, cut short, imported void), and the others are
// imported.
func TestImportOfBadLogsRefusesEachInOneLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	good := buySellLog("BuySellGame", acceptAnswer, true)
	files := map[string]string{
		"runs/good/1/game_state.json":        good,
		"runs/good/2/game_state.json":        buySellLog("BuySellGame", "<player answer>  ACCEPT</player answer>", true),
		"runs/bad/truncated/game_state.json": good[:len(good)/2],
		"runs/bad/unknown/game_state.json":   buySellLog("ChessGame", acceptAnswer, true),
		"runs/bad/huge/game_state.json":      buySellLog("BuySellGame", acceptAnswer+strings.Repeat(" I accept.", 110_000), true),
		"runs/bad/noend/game_state.json":     buySellLog("BuySellGame", acceptAnswer, false),
		"runs/bad/notjson/game_state.json":   "<html>not a log</html>",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	im := &imports.Importer{Format: negotiationarena.Format{}, Games: families.New(), Prefix: "na"}
	sum, err := im.Import(ctx, b, []string{filepath.Join(dir, "runs"), filepath.Join(dir, "missing")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"truncated": "cut short", "unknown": `unknown game class "ChessGame"`, "huge": "bytes; an answer is at most",
		"notjson": "not a game log", "missing": "no such file",
	}
	importtest.CheckRefused(t, sum, want)
	if sum.Imported != 3 || sum.Void["cut short"] != 1 {
		t.Fatalf("imported %d (void %v); want the two good games and the one without its summary, void", sum.Imported, sum.Void)
	}
	// The good game, read back: a buyer/seller match at 50 with the logged payoffs, the buyer
	// labelled with its persona.
	var checked bool
	for _, rec := range importtest.Records(ctx, t, b.JetStream(), sum) {
		start := rec.Events[0].GetMatchStarted()
		if !strings.HasSuffix(start.GetImported().GetSourceFile(), "good/1/game_state.json") {
			continue
		}
		checked = true
		bs := start.GetParams().GetBuysell()
		if start.GetGame() != "buysell" || bs.GetCost() != 40 || bs.GetWillingness() != 60 || bs.GetBudget() != 100 || bs.GetMaxTurns() != 10 {
			t.Errorf("params %v of game %s", bs, start.GetGame())
		}
		if l := start.GetSeats()[1].GetLabel(); l != "gpt-4-1106-preview/desperate" {
			t.Errorf("buyer labelled %q", l)
		}
		end := rec.Events[len(rec.Events)-1].GetMatchEnded()
		if p := end.GetOutcome().GetPayoffs(); !end.GetOutcome().GetAgreement() || !slices.Equal(p, []float64{10, 10}) {
			t.Errorf("outcome %v", end.GetOutcome())
		}
		if au := end.GetImportAudit(); au.GetAnswers() != 2 || au.GetAnswersAgreed() != 2 || len(au.GetDisagreements()) != 0 {
			t.Errorf("audit %v", au)
		}
	}
	if !checked {
		t.Error("the good game is not in the store")
	}
}
