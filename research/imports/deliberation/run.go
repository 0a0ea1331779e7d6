// Package deliberation reads the published runs of the LLM-Deliberation platform (the study
// seed 003 reproduces, and the reproduction's own runs): one history*.json per run, with the
// run folder's config.txt and score sheets and the game folder above it (config.txt,
// scores_files/, initial_deal.txt, global_instructions.txt, individual_instructions/).
//
// Everything comes from the files' content, never from folder names: the game folder is the
// nearest folder above the log that holds an initial_deal.txt; the parties, their roles (p1,
// p2, the target of a targeted adversary) and score sheets come from the run folder's config
// and sheets (the game folder's when the run folder has none); the speaking order from the
// log's rounds; a solo baseline from a slot assignment that names p1 alone; each seat's model
// and incentive from the log's agents, else from the config; p1's bonus and the history
// window from the prompts the log kept.
//
// Each answer is kept with the move the platform made of it, as the study's tables read it
// (metrics/deliberation.PublicPart, StudyDeal); the outcome is the vote on p1's final deal so read. A run that
// stops before p1's final answer, or whose final answer names no deal the study's code can
// read, is a failed run (the study's Table 2 counts them): it ends with an agent fault and
// every party at its minimum.
package deliberation

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	rules "github.com/parley-arena/parley/referee/games/deliberation"
	dmetrics "github.com/parley-arena/parley/services/analytics/metrics/deliberation"
)

// Files of the platform's layout.
const (
	configFile  = "config.txt"
	scoresDir   = "scores_files"
	openingFile = "initial_deal.txt"
)

// DefaultIncentive is the incentive of a party that plays it straight; a seat's label names
// any other ("greedy", "untargeted_adv", "targeted_adv").
const DefaultIncentive = "cooperative"

// ReadAux reads a file beside the runs by its slash-separated path; a file that is not there
// gives an error.
type ReadAux func(name string) ([]byte, error)

// Run is one run as the platform played it.
type Run struct {
	// GameDir is the game folder's path; Setup and Params the match it makes (Params resolved:
	// the scenario, the speaking order or solo turns, p1's bonus, the history window).
	GameDir string
	Setup   *rules.Setup
	Params  *matchv1.GameParams
	// Seats are who played, in Parley's seat order (p1, p2, then the config's order).
	Seats []Seat
	// Answers are the logged answers in order, each with the platform's move.
	Answers []Answer
	// Outcome is the vote on p1's final deal as the study reads it.
	Outcome *matchv1.Outcome
	// Failed says why the run is a failed run; "" when it is not.
	Failed string
	// Expected is how many answers a complete run has.
	Expected int

	// Notes are inconsistencies between the log and the files beside it.
	Notes []string
}

// Seat is one party's player.
type Seat struct {
	// Party is the party's display name; Model the model as the log names it (the platform's
	// "hf_" marker and the organisation of a Hugging Face model dropped); Incentive its
	// incentive.
	Party, Model, Incentive string
	// Spoke is set when the seat answered a prompt of the discussion (a solo run's other
	// parties never do); Steps are then the reasoning steps those prompts asked for, in
	// Parley's names (restate: score the deals on the table; infer: the others' preferences;
	// candidates: several proposals to choose from; plan: notes for the next turn), in that
	// order.
	Spoke bool
	Steps []string
}

// Answer is one logged answer.
type Answer struct {
	Seat int32
	// Full is the answer as the model wrote it.
	Full string
	// Public is its public part as the platform logged it; Deal the deal the study read in it.
	Public string
	Deal   rules.Deal
	// Played is the platform's move for it: the opening and final deals as proposals, talk as
	// say with the deal attached to the message.
	Played *agentv1.Action
}

// log is the JSON of a history file. Two generations occur: with agents (name, role, model,
// incentive, prompts) and without.
type log struct {
	Agents []struct {
		Agent         string `json:"agent"`
		Role          string `json:"role"`
		Model         string `json:"model"`
		Incentive     string `json:"incentive"`
		InitialPrompt string `json:"initial_prompt"`
	} `json:"agents"`
	SlotAssignment []string `json:"slot_assignment"`
	Rounds         []struct {
		Agent        string `json:"agent"`
		Prompt       string `json:"prompt"`
		FullAnswer   string `json:"full_answer"`
		PublicAnswer string `json:"public_answer"`
	} `json:"rounds"`
	FinishedRounds *int `json:"finished_rounds"`
}

// configLine is one party of a config.txt: NAME,STEM,ROLE,INCENTIVE,MODEL.
type configLine struct {
	name, stem, role, incentive, model string
}

// promptSteps are the reasoning steps as the platform's prompts ask for them, matched in the
// lower-cased instructions. Each has a literal its match contains, looked for first: a
// prompt is tens of kilobytes, and a pattern that starts with no literal is run at each byte.
var promptSteps = []struct {
	step, literal string
	re            *regexp.Regexp
}{
	{"restate", "intermediate calculations", nil},
	{"infer", "think about", regexp.MustCompile(`think about[^.\n]{0,30}others`)},
	{"candidates", " different proposals", regexp.MustCompile(`(three|3|several) different proposals`)},
	{"plan", "notes between <plan>", nil},
}

// The platform writes these in lower case (every one of the released runs' prompts does); a
// pattern that starts with a case-sensitive literal is searched for by that literal, where a
// case-folded one is run at each byte of the prompt.
var (
	bonusRe  = regexp.MustCompile(`bonus of (\d{1,6}) points`)
	windowRe = regexp.MustCompile(`history of up to (\d{1,4}) interactions`)
)

// Read reads the run logged in file (slash-separated path, its content data), with the files
// around it read by aux. An error says why the file is no run.
func Read(file string, data []byte, aux ReadAux) (*Run, error) {
	var lg log
	if err := json.Unmarshal(data, &lg); err != nil {
		return nil, fmt.Errorf("not a history file: %v", err)
	}
	if len(lg.Rounds) == 0 {
		return nil, errors.New("the history has no rounds")
	}
	r := &Run{}
	dir := path.Dir(file)
	var err error
	if r.GameDir, err = gameDir(dir, aux); err != nil {
		return nil, err
	}
	cfgDir := dir
	cfgData, err := aux(path.Join(dir, configFile))
	if err != nil {
		cfgDir = r.GameDir
		if cfgData, err = aux(path.Join(r.GameDir, configFile)); err != nil {
			return nil, fmt.Errorf("no %s beside the history or in the game folder %s", configFile, r.GameDir)
		}
	}
	cfg, err := parseConfig(cfgData)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path.Join(cfgDir, configFile), err)
	}
	sc, err := scenario(r.GameDir, dir, cfgDir, aux)
	if err != nil {
		return nil, err
	}
	if err := r.resolve(&lg, sc); err != nil {
		return nil, err
	}
	if err := r.seats(&lg, cfg); err != nil {
		return nil, err
	}
	if err := r.answers(&lg); err != nil {
		return nil, err
	}
	r.outcome()
	return r, nil
}

// gameDir finds the game folder: the nearest folder at or above dir with an initial deal.
func gameDir(dir string, aux ReadAux) (string, error) {
	for d := dir; ; d = path.Dir(d) {
		if _, err := aux(path.Join(d, openingFile)); err == nil {
			return d, nil
		}
		if d == "." || d == "/" || d == path.Dir(d) {
			return "", fmt.Errorf("no game folder: no folder above the history holds %s", openingFile)
		}
	}
}

func parseConfig(data []byte) ([]configLine, error) {
	var out []configLine
	for i, l := range strings.Split(strings.TrimPrefix(string(data), "\uFEFF"), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		f := strings.Split(l, ",")
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: want NAME,STEM,ROLE,INCENTIVE,MODEL, got %q", i+1, l)
		}
		for len(f) < 5 {
			f = append(f, "")
		}
		c := configLine{name: strings.TrimSpace(f[0]), stem: strings.TrimSpace(f[1]), role: strings.TrimSpace(f[2]),
			incentive: strings.TrimSpace(f[3]), model: strings.TrimSpace(strings.Join(f[4:], ","))}
		out = append(out, c)
	}
	return out, nil
}

// scenario imports the game: the game folder's files, with the config and score sheets of the
// run folder where it has them (a run may change roles or sheets).
func scenario(game, run, cfgDir string, aux ReadAux) (*deliberationv1.Scenario, error) {
	read := func(p string) ([]byte, error) {
		rel := strings.TrimPrefix(strings.TrimPrefix(filepath.ToSlash(p), game), "/")
		var b []byte
		var err error
		switch {
		case rel == configFile:
			b, err = aux(path.Join(cfgDir, configFile))
		case strings.HasPrefix(rel, scoresDir+"/"):
			if b, err = aux(path.Join(run, rel)); err != nil {
				b, err = aux(path.Join(game, rel))
			}
		default:
			b, err = aux(path.Join(game, rel))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, fs.ErrNotExist)
		}
		return b, nil
	}
	sc, err := rules.ImportFiles(read, game)
	if err != nil {
		return nil, err
	}
	return sc, nil
}

// resolve makes the match's params: the scenario, the speaking order of the log (or the solo
// baseline), and what the prompts say of p1's bonus and the history window.
func (r *Run) resolve(lg *log, sc *deliberationv1.Scenario) error {
	p := &deliberationv1.Params{Game: proto.String(r.GameDir), Scenario: sc}
	p1 := sc.GetParties()[0].GetName()
	slots := lg.SlotAssignment
	solo := len(slots) > 0
	for _, s := range slots {
		solo = solo && strings.TrimSpace(s) == p1
	}
	switch {
	case len(slots) == 0:
		return errors.New("the history has no slot assignment (who speaks when)")
	case solo:
		// The platform's solo runs give p1 every slot, the last being its final answer.
		p.SoloTurns = proto.Int32(int32(len(slots) - 1))
		r.Expected = len(slots) + 1
	default:
		order := make([]string, len(slots))
		for i, s := range slots {
			order[i] = strings.TrimSpace(s)
			if i+1 < len(lg.Rounds) {
				if who := strings.TrimSpace(lg.Rounds[i+1].Agent); who != order[i] {
					r.Notes = append(r.Notes, fmt.Sprintf("round %d is %s's although the slot assignment gives it to %s; the rounds are followed", i+1, who, order[i]))
					order[i] = who
				}
			}
		}
		p.SpeakingOrder = order
		r.Expected = len(slots) + 2
	}
	for _, a := range lg.Agents {
		if strings.TrimSpace(a.Agent) != p1 {
			continue
		}
		if m := bonusRe.FindStringSubmatch(a.InitialPrompt); m != nil {
			n, _ := strconv.Atoi(m[1])
			p.P1Bonus = proto.Int32(int32(n))
		}
	}
	for _, rd := range lg.Rounds {
		if m := windowRe.FindStringSubmatch(rd.Prompt); m != nil {
			n, _ := strconv.Atoi(m[1])
			p.HistoryWindow = proto.Int32(int32(n))
			break
		}
	}
	gp := &matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: p}}
	resolved, err := rules.New().Resolve(gp)
	if err != nil {
		return err
	}
	if r.Setup, err = rules.NewSetup(resolved); err != nil {
		return err
	}
	r.Params = resolved
	return nil
}

// instructionsOf is the part of a round's prompt that instructs, after the history and the
// earlier plans it quotes (whose words are the models').
func instructionsOf(prompt string) string {
	for _, marker := range []string{"Now it is your turn", "</PREV_PLAN>", "</HISTORY>"} {
		if i := strings.LastIndex(prompt, marker); i >= 0 {
			return prompt[i:]
		}
	}
	return prompt
}

// seats names each party's player: the log's agents where it has them, else the config.
func (r *Run) seats(lg *log, cfg []configLine) error {
	s := r.Setup
	r.Seats = make([]Seat, s.N())
	for i, party := range s.Parties {
		seat := Seat{Party: party.Name, Incentive: DefaultIncentive}
		for _, c := range cfg {
			if strings.EqualFold(c.name, party.Name) {
				seat.Model, seat.Incentive = c.model, c.incentive
			}
		}
		for _, a := range lg.Agents {
			if !strings.EqualFold(strings.TrimSpace(a.Agent), party.Name) {
				continue
			}
			if a.Model != "" && a.Model != seat.Model && seat.Model != "" {
				r.Notes = append(r.Notes, fmt.Sprintf("%s: the log says model %s, the config %s; the log is followed", party.Name, a.Model, seat.Model))
			}
			if a.Model != "" {
				seat.Model = a.Model
			}
			if a.Incentive != "" {
				seat.Incentive = a.Incentive
			}
		}
		seat.Model = path.Base(strings.TrimPrefix(seat.Model, "hf_"))
		asked := map[string]bool{}
		read := map[string]bool{} // a seat's instructions mostly repeat from turn to turn
		for k, rd := range lg.Rounds {
			if k == 0 || !strings.EqualFold(strings.TrimSpace(rd.Agent), party.Name) {
				continue // the opening's prompt asks for the deal alone
			}
			seat.Spoke = true
			instructions := instructionsOf(rd.Prompt)
			if read[instructions] {
				continue
			}
			read[instructions] = true
			lower := strings.ToLower(instructions)
			for _, ps := range promptSteps {
				asked[ps.step] = asked[ps.step] || strings.Contains(lower, ps.literal) && (ps.re == nil || ps.re.MatchString(lower))
			}
		}
		for _, ps := range promptSteps {
			if asked[ps.step] {
				seat.Steps = append(seat.Steps, ps.step)
			}
		}
		if seat.Model == "" || seat.Model == "." {
			return fmt.Errorf("no model named for %s", party.Name)
		}
		if seat.Incentive == "" {
			seat.Incentive = DefaultIncentive
		}
		r.Seats[i] = seat
	}
	return nil
}

// answers reads every round: its seat and the platform's move.
func (r *Run) answers(lg *log) error {
	s := r.Setup
	if len(lg.Rounds) > r.Expected {
		return fmt.Errorf("the history logs %d rounds; its slot assignment makes %d", len(lg.Rounds), r.Expected)
	}
	for i, rd := range lg.Rounds {
		seat, ok := s.PartyByName(strings.TrimSpace(rd.Agent))
		if !ok || strings.EqualFold(strings.TrimSpace(rd.Agent), "p1") || strings.EqualFold(strings.TrimSpace(rd.Agent), "p2") {
			return fmt.Errorf("round %d: %q is no party of the game", i+1, rd.Agent)
		}
		turn := i + 1
		final := turn == r.Expected
		if (turn == 1 || final) && seat != 0 {
			return fmt.Errorf("round %d is %s's; the opening and the final deal are p1's (%s)", turn, s.Parties[seat].Name, s.Parties[0].Name)
		}
		public := dmetrics.PublicPart(rd.FullAnswer)
		if rd.PublicAnswer != public && rd.PublicAnswer != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("round %d: the logged public answer is not the one the platform extracts from the answer; the extracted one is used", turn))
		}
		deal, hasDeal := StudyDeal(s, public)
		a := Answer{Seat: int32(seat), Full: rd.FullAnswer, Public: public}
		if hasDeal {
			a.Deal = deal
		}
		a.Played = played(s, turn, final, public, a.Deal)
		r.Answers = append(r.Answers, a)
	}
	return nil
}

// played is the platform's move for an answer.
func played(s *rules.Setup, turn int, final bool, public string, deal rules.Deal) *agentv1.Action {
	msg := &gamev1.Message{Text: clipText(strings.TrimSpace(public))}
	var move *gamev1.Move
	switch {
	case (turn == 1 || final) && deal != nil:
		move = &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: dealProposal(s, deal)}}}
	case final:
		move = &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}
	default:
		move = &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}
		if deal != nil && turn != 1 {
			msg.Proposal = dealProposal(s, deal)
		}
	}
	return &agentv1.Action{Move: move, Messages: []*gamev1.Message{msg}}
}

func dealProposal(s *rules.Setup, d rules.Deal) *gamev1.Proposal {
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: s.DealProto(d)}}
}

// clipText keeps a public message within what a message may hold; the whole answer stays in
// the seat's raw output.
func clipText(s string) string {
	if len(s) <= games.MaxTextBytes {
		return s
	}
	const mark = " …[cut]"
	cut := games.MaxTextBytes - len(mark)
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// outcome decides the run: failed when it stops before p1's final answer or that answer names
// no deal the study reads, else the vote on the final deal.
func (r *Run) outcome() {
	s := r.Setup
	thresholds := func() []float64 {
		out := make([]float64, s.N())
		for i, t := range s.Thresholds() {
			out[i] = float64(t)
		}
		return out
	}
	if n := len(r.Answers); n < r.Expected {
		next := "p1"
		if order := s.Order; n >= 1 && n-1 < len(order) {
			next = s.Parties[order[n-1]].Name
		}
		r.Failed = fmt.Sprintf("the run stops after answer %d of %d (the platform's run was cut short before %s's answer)", n, r.Expected, next)
		r.Outcome = &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_AGENT_FAULT, Payoffs: thresholds(),
			Summary: "Failed run: " + r.Failed + "; every party gets its minimum score."}
		return
	}
	final := r.Answers[len(r.Answers)-1]
	if final.Deal == nil {
		r.Failed = fmt.Sprintf("%s's final answer names no deal the study's scoring code can read", s.Parties[0].Name)
		r.Outcome = &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_AGENT_FAULT, Payoffs: thresholds(), FaultedSeats: []int32{0},
			Summary: "Failed run: " + r.Failed + "; every party gets its minimum score."}
		return
	}
	v := s.Vote(final.Deal)
	out := &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_TURN_LIMIT, Agreement: v.Passed}
	for _, x := range v.Payoffs(s) {
		out.Payoffs = append(out.Payoffs, float64(x))
	}
	switch {
	case v.Passed && v.Unanimous:
		out.Cause = matchv1.EndCause_END_CAUSE_AGREEMENT
		out.Summary = fmt.Sprintf("The final deal %s passed unanimously (%d-way), as the study reads p1's final answer.", s.DealString(final.Deal), s.N())
	case v.Passed:
		out.Cause = matchv1.EndCause_END_CAUSE_AGREEMENT
		out.Summary = fmt.Sprintf("The final deal %s passed, %d-way, as the study reads p1's final answer.", s.DealString(final.Deal), v.YesCount)
	default:
		out.Summary = fmt.Sprintf("The final deal %s failed the vote (%d of %d yes-votes), as the study reads p1's final answer.", s.DealString(final.Deal), v.YesCount, s.N())
	}
	r.Outcome = out
}
