package llm

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/sashabaranov/go-openai"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

//go:embed prompts
var shippedPrompts embed.FS

// Template paths inside a prompt set.
const (
	systemTemplate     = "system.tmpl"
	turnTemplate       = "turn.tmpl"
	correctionTemplate = "correction.tmpl"
	personaDir         = "personas"
	stepDir            = "steps"
	styleDir           = "styles"
)

// ErrPrompt is wrapped by errors about prompt templates, personas, styles and steps.
var ErrPrompt = errors.New("llm: prompt")

// Prompts is a set of prompt templates (Go text/template): the ones shipped in the binary, each
// replaced by the file of the same relative path under an override directory, which may also
// add personas (personas/NAME.tmpl) and reasoning steps (steps/NAME.tmpl). The files are:
//
//	system.tmpl           the system message: role, persona, reasoning steps, output format
//	turn.tmpl             the user message of each move: briefing, notes, history, moves
//	correction.tmpl       sent after a reply that could not be used
//	styles/tagged.tmpl    output format instructions of the tagged style
//	styles/json.tmpl      output format instructions of the JSON style
//	styles/deliberation.tmpl  output format of the LLM-Deliberation study's answers
//	personas/NAME.tmpl    one per persona
//	steps/NAME.tmpl       one per reasoning step or game-theory workflow
//
// Every template receives a PromptData.
type Prompts struct {
	files map[string]string
	tmpls map[string]*template.Template
	hash  string
}

// LoadPrompts returns the shipped templates overridden by those under dir ("" for none). Every
// template is parsed now, so a broken override is reported at once.
func LoadPrompts(dir string) (*Prompts, error) {
	p := &Prompts{files: map[string]string{}, tmpls: map[string]*template.Template{}}
	err := fs.WalkDir(shippedPrompts, "prompts", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := shippedPrompts.ReadFile(name)
		if err != nil {
			return err
		}
		p.files[strings.TrimPrefix(name, "prompts/")] = string(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: shipped templates: %v", ErrPrompt, err)
	}
	if dir != "" {
		err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(name, ".tmpl") {
				return nil
			}
			rel, err := filepath.Rel(dir, name)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			p.files[filepath.ToSlash(rel)] = string(b)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%w: --prompt-dir %s: %v", ErrPrompt, dir, err)
		}
	}
	names := make([]string, 0, len(p.files))
	for name := range p.files {
		names = append(names, name)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, name := range names {
		t, err := parseTemplate(name, p.files[name])
		if err != nil {
			return nil, err
		}
		p.tmpls[name] = t
		fmt.Fprintf(h, "%s\x00%d\x00%s", name, len(p.files[name]), p.files[name])
	}
	for _, required := range []string{systemTemplate, turnTemplate, correctionTemplate} {
		if p.tmpls[required] == nil {
			return nil, fmt.Errorf("%w: template %s is missing", ErrPrompt, required)
		}
	}
	p.hash = hex.EncodeToString(h.Sum(nil))
	return p, nil
}

var templateFuncs = template.FuncMap{
	"join":  strings.Join,
	"lower": strings.ToLower,
	"upper": strings.ToUpper,
	"trim":  strings.TrimSpace,
}

func parseTemplate(name, text string) (*template.Template, error) {
	t, err := template.New(name).Funcs(templateFuncs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPrompt, err)
	}
	return t, nil
}

// Hash is the SHA-256 (hex) of every template of the set, names included. It identifies the
// templates, not which persona, style or steps an agent picked from them.
func (p *Prompts) Hash() string { return p.hash }

// Personas lists the personas of the set.
func (p *Prompts) Personas() []string { return p.list(personaDir) }

// Steps lists the reasoning steps and workflows of the set.
func (p *Prompts) Steps() []string { return p.list(stepDir) }

func (p *Prompts) list(dir string) []string {
	var out []string
	for name := range p.files {
		if rest, ok := strings.CutPrefix(name, dir+"/"); ok && !strings.Contains(rest, "/") {
			out = append(out, strings.TrimSuffix(rest, ".tmpl"))
		}
	}
	slices.Sort(out)
	return out
}

func (p *Prompts) has(name string) bool { return p.tmpls[name] != nil }

func (p *Prompts) render(name string, data any) (string, error) {
	t := p.tmpls[name]
	if t == nil {
		return "", fmt.Errorf("%w: template %s is missing", ErrPrompt, name)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%w: %v", ErrPrompt, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// persona resolves a persona setting: "" or "none" for none, a persona name of the set, or
// the path of a file holding the persona's text (a template too).
func (p *Prompts) persona(v string) (*template.Template, error) {
	switch v {
	case "", "none":
		return nil, nil
	}
	if t := p.tmpls[path.Join(personaDir, v+".tmpl")]; t != nil && !strings.ContainsAny(v, `/\`) {
		return t, nil
	}
	b, err := os.ReadFile(v)
	if err != nil {
		return nil, fmt.Errorf("%w: persona %q is neither one of %s nor a readable file", ErrPrompt, v, strings.Join(p.Personas(), ", "))
	}
	return parseTemplate("persona "+filepath.Base(v), string(b))
}

// Reasoning presets: names that stand for several steps.
var reasoningPresets = map[string][]string{
	"none":        {},
	"default":     {"think"},
	"cot":         {"restate", "infer", "candidates", "plan"},
	"game-theory": {"best-response", "backward-induction", "belief-update", "plan"},
}

// ReasoningPresets describes the presets, e.g. "cot (restate, infer, candidates, plan)".
func ReasoningPresets() []string {
	var out []string
	for name, steps := range reasoningPresets {
		out = append(out, fmt.Sprintf("%s (%s)", name, strings.Join(steps, ", ")))
	}
	slices.Sort(out)
	return out
}

// DefaultReasoning is the reasoning setting when none is given.
const DefaultReasoning = "default"

// steps resolves a reasoning setting (comma-separated step names and presets).
func (p *Prompts) steps(setting string) ([]string, error) {
	if strings.TrimSpace(setting) == "" {
		setting = DefaultReasoning
	}
	var out []string
	for _, name := range strings.Split(setting, ",") {
		name = strings.TrimSpace(name)
		if preset, ok := reasoningPresets[name]; ok {
			for _, s := range preset {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
			continue
		}
		if !p.has(path.Join(stepDir, name+".tmpl")) {
			presets := make([]string, 0, len(reasoningPresets))
			for k := range reasoningPresets {
				presets = append(presets, k)
			}
			slices.Sort(presets)
			return nil, fmt.Errorf("%w: unknown reasoning step %q (steps: %s; presets: %s)", ErrPrompt, name, strings.Join(p.Steps(), ", "), strings.Join(presets, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// PromptData is what every template receives.
type PromptData struct {
	// Game is the game's name, e.g. "ultimatum".
	Game string
	// Phase is the current phase, when the game has phases.
	Phase string
	// Turn and MaxTurns (0 when the game has no fixed limit).
	Turn, MaxTurns int32
	// Attempt is 1 for the first request of this move, 2 after one refused action, ...
	Attempt int32
	// Self is the agent's seat; Seats every seat; Others the seats but the agent's.
	Self   SeatData
	Seats  []SeatData
	Others []SeatData
	// Briefing is the referee's plain-language account of the rules and the situation.
	Briefing string
	// History lists what happened that this seat may see, one line (or a few) per entry.
	History []string
	// Notes are the agent's own private notes from its earlier turns.
	Notes []string
	// Rejection is why the referee refused the previous answer to this move, if it did.
	Rejection string
	// Moves are the legal moves, each with an example in the output style.
	Moves []MoveData
	// Amounts are the amounts a proposal fills in, when proposals take no particular form.
	Amounts []AmountData
	// Forms are the shapes a proposal must take, when the game prescribes them.
	Forms []FormData
	// Options are the options of a choose move.
	Options []OptionData
	// Slots are the messages this move must carry.
	Slots []SlotData
	// TermForms are the shapes non-binding terms in a message may take.
	TermForms []FormData

	// Style is the output style's name ("tagged", "json" or "deliberation").
	Style string
	// Plan is true when the plan step is on (the format then asks for a plan).
	Plan bool
	// Target is the party a targeted persona works against (Config.Target), or "".
	Target string
	// Persona, Steps and Format are rendered from their templates before system.tmpl.
	Persona string
	Steps   []string
	Format  string
}

// SeatData is one seat.
type SeatData struct {
	Seat  int32
	Name  string
	Role  string
	Agent string
	You   bool
}

// MoveData is one legal move.
type MoveData struct {
	Kind    string
	Example string
	Help    string
}

// AmountData is one amount a proposal fills in.
type AmountData struct {
	Name     string // e.g. "P1 gives Dollars"
	Seat     string
	Side     string
	Resource string
	Min, Max int64
	// MaxUnknown: the rules' upper limit is hidden from this seat (another's holdings); Max
	// is then no limit.
	MaxUnknown bool
	// Range says what is legal in words: "from 0 to 25", or "0 or more" with the reason
	// when the upper limit is unknown.
	Range string
}

// FormData is one form a proposal (or message terms) may take.
type FormData struct {
	Label   string
	Example string
	Amounts []AmountData
	// Ranges states the amounts' ranges in words, e.g. "each amount from 0 to 750".
	Ranges string
	// Totals are the sums the form requires, in words, e.g. "the amounts of g received add
	// up to exactly 750".
	Totals []string
}

// OptionData is one option of a choose move.
type OptionData struct {
	ID, Label, Description string
}

// SlotData is one message the move must carry.
type SlotData struct {
	To      string // "to B" or "to everyone"
	Example string
}

// CorrectionData is what correction.tmpl receives besides PromptData.
type CorrectionData struct {
	PromptData
	// Problem says what was wrong with the reply.
	Problem string
	// Legal lists the legal moves.
	Legal string
}

// outputStyle writes examples in its format and reads replies.
type outputStyle interface {
	parse(reply string, t *turn) (*draft, *formatError)
	moveExample(t *turn, k gamev1.MoveKind, bounds []*gamev1.Bound) string
	messageExample(t *turn, to []int32) string
	termsExample(t *turn, bounds []*gamev1.Bound) string
	responseFormat(t *turn, level structured) *openai.ChatCompletionResponseFormat
}

// Styles lists the output styles.
func Styles() []string { return []string{"deliberation", "json", ArenaStyle, "tagged"} }

func styleByName(name string) (outputStyle, error) {
	switch name {
	case "", "tagged":
		return taggedStyle{}, nil
	case "json":
		return jsonStyle{}, nil
	case "deliberation":
		return deliberationStyle{}, nil
	case ArenaStyle:
		return arenaStyle{}, nil
	}
	return nil, fmt.Errorf("%w: unknown style %q (styles: %s)", ErrPrompt, name, strings.Join(Styles(), ", "))
}

// promptData builds the data of one observation.
func promptData(t *turn, style outputStyle, styleName string) PromptData {
	obs := t.obs
	d := PromptData{
		Game: obs.GetGame(), Phase: obs.GetPhase(), Turn: obs.GetTurn(), MaxTurns: obs.GetMaxTurns(), Attempt: obs.GetAttempt(),
		Briefing: strings.TrimSpace(obs.GetBriefing()),
		Notes:    obs.GetNotes(),
		Style:    styleName,
	}
	for i, name := range t.names {
		sd := SeatData{Seat: int32(i), Name: name, Role: t.roles[i], You: int32(i) == t.self}
		for _, s := range obs.GetSeats() {
			if s.GetSeat() == int32(i) {
				sd.Agent = s.GetAgent().GetName()
			}
		}
		d.Seats = append(d.Seats, sd)
		if sd.You {
			d.Self = sd
		} else {
			d.Others = append(d.Others, sd)
		}
	}
	for _, e := range obs.GetHistory() {
		d.History = append(d.History, t.historyLine(e))
	}
	if r := obs.GetLastRejection(); r != nil {
		d.Rejection = r.GetMessage()
		if d.Rejection == "" {
			d.Rejection = strings.ToLower(strings.TrimPrefix(r.GetCode().String(), "REJECTION_CODE_"))
		}
	}
	for _, k := range t.legal {
		md := MoveData{Kind: games.KindWord(k)}
		switch k {
		case gamev1.MoveKind_MOVE_KIND_PROPOSE:
			bounds := t.bounds
			if len(t.forms) > 0 {
				bounds = t.forms[0].GetBounds()
				md.Help = "or any other of the forms below"
			}
			md.Example = style.moveExample(t, k, bounds)
		case gamev1.MoveKind_MOVE_KIND_CHOOSE:
			md.Example = style.moveExample(t, k, nil)
			md.Help = "OPTION is the id of one of the options below"
		case gamev1.MoveKind_MOVE_KIND_SAY:
			md.Example = style.moveExample(t, k, nil)
			md.Help = "talk only: your messages are your turn"
		default:
			md.Example = style.moveExample(t, k, nil)
		}
		d.Moves = append(d.Moves, md)
	}
	if t.isLegal(gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		if len(t.forms) == 0 {
			d.Amounts = t.amountData(t.bounds)
		}
		for _, f := range t.forms {
			d.Forms = append(d.Forms, t.formData(f, style.moveExample(t, gamev1.MoveKind_MOVE_KIND_PROPOSE, f.GetBounds())))
		}
	}
	for _, f := range t.termForms {
		d.TermForms = append(d.TermForms, t.formData(f, style.termsExample(t, f.GetBounds())))
	}
	for _, o := range t.choices {
		d.Options = append(d.Options, OptionData{ID: o.GetId(), Label: o.GetLabel(), Description: o.GetDescription()})
	}
	for _, s := range t.slots {
		d.Slots = append(d.Slots, SlotData{To: t.addressed(s.GetTo()), Example: style.messageExample(t, s.GetTo())})
	}
	return d
}

func (t *turn) amountData(bounds []*gamev1.Bound) []AmountData {
	out := make([]AmountData, len(bounds))
	for i, b := range bounds {
		out[i] = AmountData{Name: t.amountName(b), Seat: t.name(b.GetSeat()), Side: sideWord(b.GetSide()), Resource: b.GetResource(),
			Min: b.GetMin(), Max: b.GetMax(), MaxUnknown: b.GetMaxUnknown(), Range: t.rangeText(b)}
	}
	return out
}

// rangeText says in words which amounts a bound allows.
func (t *turn) rangeText(b *gamev1.Bound) string {
	if b.GetMaxUnknown() {
		return fmt.Sprintf("%d or more, with no upper limit you can know: what %s holds is hidden from you, and the referee refuses more than that", b.GetMin(), t.name(b.GetSeat()))
	}
	return fmt.Sprintf("from %d to %d", b.GetMin(), b.GetMax())
}

func (t *turn) formData(f *gamev1.ProposalForm, example string) FormData {
	fd := FormData{Label: formName(f, t), Example: example, Amounts: t.amountData(f.GetBounds())}
	if len(f.GetIssues()) > 0 {
		fd.Ranges = dealRanges(f)
		return fd
	}
	var ranges []string
	same := true
	for _, a := range fd.Amounts {
		ranges = append(ranges, a.Name+" "+a.Range)
		same = same && a.Range == fd.Amounts[0].Range
	}
	switch {
	case len(fd.Amounts) > 1 && same:
		fd.Ranges = "each amount " + fd.Amounts[0].Range
	default:
		fd.Ranges = strings.Join(ranges, ", ")
	}
	for _, total := range f.GetTotals() {
		fd.Totals = append(fd.Totals, fmt.Sprintf("the amounts of %s %s add up to exactly %d", total.GetResource(), pastParticiple(total.GetSide()), total.GetTotal()))
	}
	return fd
}

// historyLine writes one history entry: its summary, then the messages this seat may read.
func (t *turn) historyLine(e *agentv1.HistoryEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d", e.GetTurn())
	switch {
	case e.GetFromReferee():
		fmt.Fprintf(&b, ", referee: %s", e.GetSummary())
	case e.GetSummary() != "":
		fmt.Fprintf(&b, ": %s", e.GetSummary())
	case e.GetMove() != nil:
		fmt.Fprintf(&b, ": %s %s", t.who(e.GetSeat()), games.DescribeMove(e.GetMove(), t.names))
	default:
		fmt.Fprintf(&b, ": %s", t.who(e.GetSeat()))
	}
	for _, m := range e.GetMessages() {
		fmt.Fprintf(&b, "\n  %s %s: %q", t.who(e.GetSeat()), t.addressed(m.GetTo()), m.GetText())
		if p := m.GetProposal(); p != nil {
			fmt.Fprintf(&b, " (non-binding terms: %s)", games.DescribeProposal(p, t.names))
		}
	}
	return b.String()
}

func (t *turn) who(seat int32) string {
	if seat == t.self {
		return t.name(seat) + " (you)"
	}
	return t.name(seat)
}
