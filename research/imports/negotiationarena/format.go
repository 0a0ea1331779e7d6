// Package negotiationarena reads the published runs of the NegotiationArena study (seed 002):
// one game_state.json per game, as the platform wrote it, in either of its schema generations
// (goals as plain text or as typed values, answers with or without a proposal count). It is
// the study's imports.Format: which files are games, how one reads into a Parley game, and
// Parley's own parser of the answers (the language-model agent's negotiationarena style).
//
// A log holds its game's class (TradingGame, BuySellGame, MultiTurnUltimatumGame), the
// settings (resources, goals, valuations, the persona text of each player), each answer with
// what the platform made of it, and, once the game ended, a summary with the final resources
// and outcome. Everything the import stores comes from that content, never from folder names:
//
//   - the game and its parameters from the class and the settings (holdings, goals, the
//     seller's cost and buyer's willingness, the amount to split, the turn limit);
//   - the seats from the players (model; persona from the persona text: cunning, desperate,
//     self-interested, or the amount a scripted proposer is told to offer);
//   - each move as the platform played it: "ACCEPT" accepts, "REJECT" rejects (not in the
//     resource exchange), a trade proposes, anything else waits — exactly as the platform
//     compared the answer word, so "Player BLUE ACCEPT" did not end its game;
//   - the outcome from the summary: payoffs as logged (the resource exchange: the change in the
//     total held; the ultimatum: the dollars held at the end; buyer and seller: the logged
//     gains), a deal when the last answer is "ACCEPT".
//
// A log without the summary is a game that crashed or was stopped: void, with the turn it got
// to. Known quirks of the platform tag the outcome disagreements Parley's rules find:
// "negative_holdings" (a trade executed although a side gave more than it held),
// "swapped_trade" (a trade executed with the sides swapped), "rejection_keeps_holdings" and
// "no_deal_keeps_holdings" (an ultimatum that ended without a deal logged as if the first
// player kept the money, although its rules take it from both).
package negotiationarena

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/llm"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/referee/games/trading"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/research/imports"
)

// Study is the study's name, as research/studies has it.
const Study = "negotiationarena"

// Where the published logs come from.
const (
	Repository = "https://github.com/vinid/NegotiationArena"
	// Commit is the commit whose log folders the paper's figures were computed from.
	Commit = "2746b3cc93810d138d8ab712a5fdb60ce733c7c7"
)

// LogName is the name of a game's log file.
const LogName = "game_state.json"

// Format is NegotiationArena's log format (imports.Format).
type Format struct{}

var _ imports.Format = Format{}

// Study names the study.
func (Format) Study() string { return Study }

// Kind: every game_state.json is a game; nothing else is read.
func (Format) Kind(p string) imports.FileKind {
	if path.Base(p) == LogName {
		return imports.GameLog
	}
	return imports.Skip
}

// Folder: a game's log is FOLDER/<epoch>/game_state.json; its games' folder is FOLDER.
func (Format) Folder(p string) string { return path.Dir(path.Dir(p)) }

// refusalTags name the refusals of the bargaining rules by what their reasons say.
var refusalTags = []struct {
	re  *regexp.Regexp
	tag string
}{
	{regexp.MustCompile(`has no pass move`), "no_wait_in_this_game"},
	{regexp.MustCompile(`has no reject move`), "no_reject_in_this_game"},
	{regexp.MustCompile(`has made all \d+ of its proposals`), "proposal_limit"},
	{regexp.MustCompile(`is the last turn, on which no proposal`), "proposal_on_last_turn"},
	{regexp.MustCompile(`no proposal to accept`), "nothing_to_accept"},
	{regexp.MustCompile(`there is no resource`), "resource_not_in_play"},
	{regexp.MustCompile(`^P2 holds no`), "second_player_gives"}, // the ultimatum's P2 holds nothing
	{regexp.MustCompile(`does not hold|holds? only|have no|holds no`), "gives_more_than_held"},
	{regexp.MustCompile(`must give its 1`), "seller_gives_no_item"},
}

// RefusalTag names a refusal of the rules by its reason (imports.RefusalTagger).
func (Format) RefusalTag(r *games.Rejection) string {
	for _, t := range refusalTags {
		if t.re.MatchString(r.Message) {
			return t.tag
		}
	}
	return ""
}

// Parse is Parley's parser of the format (the language-model agent's negotiationarena style),
// told the game's resources by the observation.
func (Format) Parse(obs *agentv1.Observation, answer string) (*agentv1.Action, error) {
	return llm.ArenaAction(withResources(obs), answer)
}

// withResources returns obs with proposal bounds naming the game's resources when it has none
// (the seat may not propose now, or the game is over), so the parser knows them all the same.
func withResources(obs *agentv1.Observation) *agentv1.Observation {
	if len(obs.GetProposalBounds()) > 0 {
		return obs
	}
	var res []string
	switch {
	case obs.GetTrading() != nil:
		res = obs.GetTrading().GetResources()
	case obs.GetBuysell() != nil:
		res = []string{obs.GetBuysell().GetItem(), obs.GetBuysell().GetCurrency()}
	case obs.GetUltimatum() != nil:
		res = []string{obs.GetUltimatum().GetParams().GetCurrency()}
	}
	out := proto.CloneOf(obs)
	for _, r := range res {
		out.ProposalBounds = append(out.ProposalBounds, &gamev1.Bound{Seat: 0, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: r})
	}
	return out
}

// The log's shape: only what the import reads. The rest (each turn's copy of both players'
// conversations, which makes most of a file) is skipped.
type logFile struct {
	Class      string          `json:"class"`
	RunEpoch   json.RawMessage `json:"run_epoch_time_ms"`
	Players    []logPlayer     `json:"players"`
	GameState  []logTurn       `json:"game_state"`
	Iterations *int            `json:"iterations"`
}

type logPlayer struct {
	Class       string          `json:"class"`
	Model       json.RawMessage `json:"model"`
	AgentName   string          `json:"agent_name"`
	Temperature *float64        `json:"temperature"`
	MaxTokens   *int            `json:"max_tokens"`
}

type logTurn struct {
	Iteration json.RawMessage `json:"current_iteration"`
	Turn      json.RawMessage `json:"turn"`
	Settings  *logSettings    `json:"settings"`
	Public    *struct {
		Message json.RawMessage `json:"message"`
		Answer  json.RawMessage `json:"player answer"`
		Trade   json.RawMessage `json:"newly proposed trade"`
	} `json:"player_public_info_dict"`
	Complete *string     `json:"player_complete_answer"`
	Summary  *logSummary `json:"summary"`
}

type logSettings struct {
	Support   json.RawMessage   `json:"resources_support_set"`
	Goals     []json.RawMessage `json:"player_goals"`
	Initial   []json.RawMessage `json:"player_initial_resources"`
	Social    []string          `json:"player_social_behaviour"`
	Valuation []json.RawMessage `json:"player_valuation"`
}

type logSummary struct {
	FinalResponse  json.RawMessage   `json:"final_response"`
	FinalResources []json.RawMessage `json:"final_resources"`
	Outcome        []json.RawMessage `json:"player_outcome"`
	Trade          json.RawMessage   `json:"proposed_trade"`
	Initial        []json.RawMessage `json:"initial_resources"`
}

// typed unwraps the platform's {"_type": T, "_value": V} values, however deeply nested: it
// returns the innermost value and the outermost type but one (e.g. "seller_goal" for a goal).
func typed(raw json.RawMessage) (kinds []string, value json.RawMessage) {
	value = raw
	for range 8 {
		var t struct {
			Type  *string         `json:"_type"`
			Value json.RawMessage `json:"_value"`
		}
		if len(value) == 0 || value[0] != '{' || json.Unmarshal(value, &t) != nil || t.Type == nil {
			return kinds, value
		}
		kinds = append(kinds, *t.Type)
		value = t.Value
	}
	return kinds, value
}

// amounts reads a resource bundle {"X": 25, "Y": 5}.
func amounts(raw json.RawMessage) (map[string]int64, error) {
	_, v := typed(raw)
	var m map[string]json.Number
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a bundle of resources: %s", clip(string(v), 60))
	}
	out := make(map[string]int64, len(m))
	for k, n := range m {
		i, err := n.Int64()
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != float64(int64(f)) {
				return nil, fmt.Errorf("%s: %s is not a whole amount", k, n)
			}
			i = int64(f)
		}
		out[k] = i
	}
	return out, nil
}

func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// Read reads one game's log.
func (Format) Read(f imports.File, _ imports.AuxReader) (*imports.Game, error) {
	var lf logFile
	// The logs are large (each answer carries copies of both conversations) and only a little
	// of them is read: the JSON v2 decoder skips the rest an order of magnitude faster than
	// encoding/json (18 ms → 1.4 ms for a 64 KB log).
	if err := jsonv2.Unmarshal(f.Data, &lf, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)); err != nil {
		return nil, fmt.Errorf("not a game log: %s", jsonProblem(err))
	}
	if lf.Class == "" {
		return nil, errors.New("not a game log: it names no game class")
	}
	if len(lf.Players) != 2 {
		return nil, fmt.Errorf("%d players; the games have two", len(lf.Players))
	}
	turns := lf.GameState
	if len(turns) == 0 || turns[0].Settings == nil {
		return nil, errors.New("the log has no settings (its first game_state entry)")
	}
	st := turns[0].Settings
	if len(st.Initial) != 2 {
		return nil, fmt.Errorf("settings give %d players' resources; the games have two", len(st.Initial))
	}
	var init [2]map[string]int64
	for i := range init {
		m, err := amounts(st.Initial[i])
		if err != nil {
			return nil, fmt.Errorf("player %d's resources: %w", i+1, err)
		}
		init[i] = m
	}
	g := &imports.Game{
		Source: imports.Source{OriginalID: strings.Trim(string(lf.RunEpoch), `"`), Format: "negotiationarena " + lf.Class, Repository: Repository, Commit: Commit},
		Style:  llm.ArenaStyle,
	}
	iterations := 0
	if lf.Iterations != nil {
		iterations = *lf.Iterations
	}
	var err error
	switch lf.Class {
	case "TradingGame":
		err = readTrading(g, st, init, iterations)
	case "BuySellGame":
		err = readBuySell(g, st, init, iterations)
	case "MultiTurnUltimatumGame":
		err = readUltimatum(g, init, iterations)
	default:
		return nil, fmt.Errorf("unknown game class %q (this reader knows TradingGame, BuySellGame and MultiTurnUltimatumGame)", lf.Class)
	}
	if err != nil {
		return nil, err
	}
	for i, p := range lf.Players {
		persona := ""
		if i < len(st.Social) {
			persona = personaName(st.Social[i])
		}
		g.Seats = append(g.Seats, imports.Seat{Model: modelName(p), Persona: persona, Description: describe(p, st, i)})
	}
	// The answers, and what the platform made of them.
	var summary *logSummary
	for i, t := range turns[1:] {
		if t.Summary != nil {
			summary = t.Summary
			break
		}
		if t.Public == nil {
			return nil, fmt.Errorf("game_state entry %d holds neither an answer nor a summary", i+1)
		}
		seat := int32(len(g.Turns) % 2)
		if s, err := strconv.Atoi(strings.Trim(string(t.Turn), `"`)); err == nil && (s == 0 || s == 1) {
			seat = int32(s)
		}
		answer := ""
		if t.Complete != nil {
			answer = *t.Complete
		}
		played, err := platformMove(lf.Class, t.Public.Answer, t.Public.Trade, text(t.Public.Message))
		if err != nil {
			g.Void = "broke the format: " + err.Error()
			played = &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}
		}
		g.Turns = append(g.Turns, imports.Turn{Seat: seat, Answer: answer, Played: played})
	}
	if iterations > 0 && len(g.Turns) > iterations && g.Void == "" {
		g.Void = fmt.Sprintf("broke the format: %d answers for %d turns", len(g.Turns), iterations)
	}
	switch {
	case summary == nil && g.Void == "":
		g.Void = fmt.Sprintf("cut short: the log ends after %d %s with no summary (the game crashed or was stopped)", len(g.Turns), plural(len(g.Turns), "answer", "answers"))
	case summary != nil:
		out, tag, err := readOutcome(lf.Class, summary, init, g)
		if err != nil {
			if g.Void == "" {
				g.Void = "broke the format: " + err.Error()
			}
		} else {
			g.Outcome, g.OutcomeTag = out, tag
		}
	}
	return g, nil
}

func jsonProblem(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON is cut short"
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return fmt.Sprintf("broken JSON at byte %d: %v", se.ByteOffset, se.Err)
	}
	var te *jsonv2.SemanticError
	if errors.As(err, &te) {
		return fmt.Sprintf("unexpected JSON at %s: %v", te.JSONPointer, err)
	}
	return err.Error()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// modelName is the model a player was: the logged model, or where the platform logged an
// object instead of a name (Gemini and AnyScale clients), its agent class.
func modelName(p logPlayer) string {
	var m string
	if json.Unmarshal(p.Model, &m) == nil && m != "" && m != "ClientObject" && m != "GenerativeModel" {
		return m
	}
	class := strings.TrimSuffix(p.Class, "Agent")
	if class == "" {
		class = "unknown"
	}
	return strings.ToLower(class) + " (model not logged)"
}

func describe(p logPlayer, st *logSettings, seat int) string {
	var parts []string
	parts = append(parts, "NegotiationArena "+p.Class+" as Player "+[]string{"RED", "BLUE"}[seat])
	if p.Temperature != nil {
		parts = append(parts, "temperature "+strconv.FormatFloat(*p.Temperature, 'g', -1, 64))
	}
	if p.MaxTokens != nil {
		parts = append(parts, fmt.Sprintf("at most %d tokens per answer", *p.MaxTokens))
	}
	if seat < len(st.Social) && strings.TrimSpace(st.Social[seat]) != "" {
		parts = append(parts, "told: "+clip(strings.TrimSpace(st.Social[seat]), 300))
	}
	return strings.Join(parts, "; ")
}

var offerRe = regexp.MustCompile(`(?i)only\s+propose\s+to\s+give\s+(\d+)`)

// personaName names the persona a player's text sets: cunning, desperate, self-interested, the
// amount a scripted proposer is told to offer (offers-3), or "persona-" and a hash of the text.
func personaName(social string) string {
	s := strings.ToLower(strings.TrimSpace(social))
	switch {
	case s == "":
		return ""
	case strings.Contains(s, "cunning") || strings.Contains(s, "sly"):
		return "cunning"
	case strings.Contains(s, "desperat"):
		return "desperate"
	case strings.Contains(s, "self-interested") || strings.Contains(s, "self interested"):
		return "self-interested"
	}
	if m := offerRe.FindStringSubmatch(s); m != nil {
		return "offers-" + m[1]
	}
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return fmt.Sprintf("persona-%08x", h)
}

func readTrading(g *imports.Game, st *logSettings, init [2]map[string]int64, iterations int) error {
	holdings := [2]map[string]int64{maps.Clone(init[0]), maps.Clone(init[1])}
	// Resources in play with nobody holding any still count.
	if support, err := amounts(st.Support); err == nil {
		for r := range support {
			if _, a := holdings[0][r]; !a {
				if _, b := holdings[1][r]; !b {
					holdings[0][r] = 0
				}
			}
		}
	}
	var goals [2]map[string]int64
	for i, raw := range st.Goals {
		if i > 1 {
			break
		}
		kinds, v := typed(raw)
		switch {
		case slices.Contains(kinds, "maximisation_goal"), len(kinds) == 0 && strings.Contains(strings.ToLower(text(v)), "as many"):
			// The default goal: end with as many resources as possible.
		case slices.Contains(kinds, "resource_goal"), slices.Contains(kinds, "minimum_goal"):
			m, err := amounts(v)
			if err != nil {
				return fmt.Errorf("player %d's goal: %w", i+1, err)
			}
			goals[i] = m
		default:
			return fmt.Errorf("player %d's goal is of a kind this reader does not know (%s)", i+1, strings.Join(kinds, "/"))
		}
	}
	p := &tradingv1.Params{P1Holdings: holdings[0], P2Holdings: holdings[1], P1Goal: goals[0], P2Goal: goals[1]}
	if iterations > 0 {
		p.MaxTurns = proto.Int32(int32(iterations))
		p.MaxProposals = proto.Int32(int32(max(iterations/2-1, 0)))
	}
	g.Game, g.Params = trading.Name, &matchv1.GameParams{Family: &matchv1.GameParams_Trading{Trading: p}}
	return nil
}

func readBuySell(g *imports.Game, st *logSettings, init [2]map[string]int64, iterations int) error {
	if len(init[0]) != 1 || len(init[1]) != 1 {
		return fmt.Errorf("the seller holds %d kinds of resources and the buyer %d; the game has one each", len(init[0]), len(init[1]))
	}
	item, currency := onlyKey(init[0]), onlyKey(init[1])
	if init[0][item] != 1 {
		return fmt.Errorf("the seller holds %d %s; the game sells one", init[0][item], item)
	}
	value := func(i int) (int64, error) {
		if i < len(st.Valuation) {
			if m, err := amounts(st.Valuation[i]); err == nil {
				if v, ok := m[item]; ok {
					return v, nil
				}
			}
		}
		if i < len(st.Goals) {
			// The older logs state the value in the goal's text only: "It costed X: 40 ZUP".
			_, v := typed(st.Goals[i])
			if m, err := amounts(v); err == nil {
				if n, ok := m[item]; ok {
					return n, nil
				}
			}
			if m := regexp.MustCompile(regexp.QuoteMeta(item) + `\s*:\s*(\d+)`).FindStringSubmatch(text(v)); m != nil {
				return strconv.ParseInt(m[1], 10, 64)
			}
		}
		return 0, fmt.Errorf("no valuation of %s for player %d", item, i+1)
	}
	cost, err := value(0)
	if err != nil {
		return err
	}
	willingness, err := value(1)
	if err != nil {
		return err
	}
	p := &buysellv1.Params{
		Cost: proto.Int64(cost), Willingness: proto.Int64(willingness), Budget: proto.Int64(init[1][currency]),
		Item: proto.String(item), Currency: proto.String(currency), Scale: proto.Int64(1), Draw: proto.Bool(false),
	}
	if iterations > 0 {
		p.MaxTurns = proto.Int32(int32(iterations))
		p.MaxProposals = proto.Int32(int32(max(iterations/2-1, 0)))
	}
	g.Game, g.Params = buysell.Name, &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: p}}
	return nil
}

func readUltimatum(g *imports.Game, init [2]map[string]int64, iterations int) error {
	if len(init[0]) != 1 {
		return fmt.Errorf("the first player holds %d kinds of resources; the ultimatum splits one", len(init[0]))
	}
	currency := onlyKey(init[0])
	for r, n := range init[1] {
		if n != 0 {
			return fmt.Errorf("the second player holds %d %s; in the ultimatum it holds nothing", n, r)
		}
	}
	p := &ultimatumv1.Params{Total: proto.Int64(init[0][currency]), Currency: proto.String(currency)}
	if iterations > 0 {
		p.MaxTurns = proto.Int32(int32(iterations))
	}
	g.Game, g.Params = ultimatum.Name, &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: p}}
	return nil
}

func onlyKey(m map[string]int64) string {
	for k := range m {
		return k
	}
	return ""
}

// platformMove is the move the platform played for an answer: it compared the answer word
// exactly, so only "ACCEPT" accepted and "REJECT" rejected (the resource exchange has no
// reject); a trade proposed; anything else waited. message is the public message it passed on.
func platformMove(class string, answerRaw, tradeRaw json.RawMessage, message string) (*agentv1.Action, error) {
	answer := text(answerRaw)
	action := &agentv1.Action{}
	if strings.TrimSpace(message) != "" {
		action.Messages = []*gamev1.Message{{Text: clip(strings.TrimSpace(message), games.MaxTextBytes-16)}}
	}
	switch {
	case answer == "ACCEPT":
		action.Move = &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}
		return action, nil
	case answer == "REJECT" && class != "TradingGame":
		action.Move = &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}
		return action, nil
	}
	kinds, v := typed(tradeRaw)
	if len(kinds) == 0 || kinds[0] != "trade" {
		action.Move = &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}
		return action, nil
	}
	var sides map[string]json.RawMessage
	if err := json.Unmarshal(v, &sides); err != nil {
		return nil, fmt.Errorf("a trade that is no object: %s", clip(string(v), 80))
	}
	alloc := &gamev1.Allocation{}
	for _, who := range slices.Sorted(maps.Keys(sides)) {
		seat, ok := map[string]int32{"RED": 0, "BLUE": 1}[who]
		if !ok {
			return nil, fmt.Errorf("a trade names player %q, neither RED nor BLUE", who)
		}
		m, err := amounts(sides[who])
		if err != nil {
			return nil, fmt.Errorf("a trade's side %s: %w", who, err)
		}
		share := &gamev1.SeatShare{Seat: seat}
		for r, n := range m {
			if n < 0 {
				return nil, fmt.Errorf("a trade gives %d %s", n, r)
			}
			if n == 0 {
				continue
			}
			if share.Gives == nil {
				share.Gives = map[string]int64{}
			}
			share.Gives[r] = n
		}
		alloc.Shares = append(alloc.Shares, share)
	}
	slices.SortFunc(alloc.Shares, func(a, b *gamev1.SeatShare) int { return int(a.GetSeat() - b.GetSeat()) })
	action.Move = &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: alloc},
	}}}}
	return action, nil
}

// readOutcome is the outcome the platform logged, and the tag of a known quirk in it.
func readOutcome(class string, s *logSummary, init [2]map[string]int64, g *imports.Game) (*matchv1.Outcome, string, error) {
	response := text(s.FinalResponse)
	out := &matchv1.Outcome{Agreement: response == "ACCEPT"}
	switch {
	case response == "ACCEPT":
		out.Cause = matchv1.EndCause_END_CAUSE_AGREEMENT
	case response == "REJECT" && class != "TradingGame":
		out.Cause = matchv1.EndCause_END_CAUSE_REJECTED
	default:
		out.Cause = matchv1.EndCause_END_CAUSE_TURN_LIMIT
	}
	if len(s.Outcome) != 2 {
		return nil, "", fmt.Errorf("the summary gives %d outcomes for two players", len(s.Outcome))
	}
	var final [2]map[string]int64
	for i := range final {
		if i < len(s.FinalResources) {
			final[i], _ = amounts(s.FinalResources[i])
		}
	}
	tag := ""
	for i, raw := range s.Outcome {
		switch class {
		case "BuySellGame":
			var n float64
			if err := json.Unmarshal(raw, &n); err != nil {
				return nil, "", fmt.Errorf("player %d's outcome %s is no number", i+1, clip(string(raw), 40))
			}
			out.Payoffs = append(out.Payoffs, n)
		case "MultiTurnUltimatumGame":
			m, err := amounts(raw)
			if err != nil {
				return nil, "", fmt.Errorf("player %d's outcome: %w", i+1, err)
			}
			out.Payoffs = append(out.Payoffs, float64(m[g.Params.GetUltimatum().GetCurrency()]))
		default: // TradingGame: the change in each resource; the payoff is the change in total
			m, err := amounts(raw)
			if err != nil {
				return nil, "", fmt.Errorf("player %d's outcome: %w", i+1, err)
			}
			var sum int64
			for _, n := range m {
				sum += n
			}
			out.Payoffs = append(out.Payoffs, float64(sum))
		}
	}
	for _, m := range final {
		for _, n := range m {
			if n < 0 {
				tag = "negative_holdings"
			}
		}
	}
	if tag == "" && out.Agreement && swapped(s.Trade, init, final) {
		tag = "swapped_trade"
	}
	if tag == "" && class == "MultiTurnUltimatumGame" && !out.Agreement && out.Payoffs[0] != 0 {
		tag = "no_deal_keeps_holdings"
		if out.Cause == matchv1.EndCause_END_CAUSE_REJECTED {
			tag = "rejection_keeps_holdings"
		}
	}
	out.Summary = fmt.Sprintf("As the platform logged it: final answer %q, final resources %s.", response, bundles(final))
	return out, tag, nil
}

// swapped reports whether the final resources are the trade executed with its sides swapped
// (and not as written).
func swapped(trade json.RawMessage, init, final [2]map[string]int64) bool {
	kinds, v := typed(trade)
	if len(kinds) == 0 || kinds[0] != "trade" {
		return false
	}
	var sides map[string]json.RawMessage
	if json.Unmarshal(v, &sides) != nil {
		return false
	}
	red, err1 := amounts(sides["RED"])
	blue, err2 := amounts(sides["BLUE"])
	if err1 != nil || err2 != nil {
		return false
	}
	exec := func(give0, give1 map[string]int64) [2]map[string]int64 {
		out := [2]map[string]int64{maps.Clone(init[0]), maps.Clone(init[1])}
		for r, n := range give0 {
			out[0][r] -= n
			out[1][r] += n
		}
		for r, n := range give1 {
			out[1][r] -= n
			out[0][r] += n
		}
		return out
	}
	same := func(a, b [2]map[string]int64) bool {
		for i := range a {
			for _, k := range append(slices.Collect(maps.Keys(a[i])), slices.Collect(maps.Keys(b[i]))...) {
				if a[i][k] != b[i][k] {
					return false
				}
			}
		}
		return true
	}
	return !same(exec(red, blue), final) && same(exec(blue, red), final)
}

func bundles(b [2]map[string]int64) string {
	parts := make([]string, 2)
	for i, m := range b {
		var items []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			items = append(items, fmt.Sprintf("%s %d", k, m[k]))
		}
		parts[i] = []string{"RED", "BLUE"}[i] + " {" + strings.Join(items, ", ") + "}"
	}
	return strings.Join(parts, ", ")
}
