// Package deliberation computes the deliberation games' metrics (specs/deliberation.md,
// "Metrics") from a match's event record: whether the final deal passed (5-way) and passed
// unanimously (6-way), whether any deal p1 tabled would have passed, the share of wrong deals,
// information leaks judged by a pluggable Judge, structure leakage in language models' raw
// replies, failed matches, whether the final deal is on the Pareto front, its inequality, and
// the trajectory of p1's deals. Summarize averages them over a set of matches.
package deliberation

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	rules "github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/referee/games/deliberation/dealspace"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Metric names, as Value.Name.
const (
	// Final5Way is 1 when the final deal passed (quorum and vetoes).
	Final5Way = "final_5way"
	// Final6Way is 1 when it passed with every party saying yes (p1 possibly by its bonus).
	Final6Way = "final_6way"
	// Any is 1 when some deal p1 tabled (opening, discussion or final) would pass.
	Any = "any"
	// Wrong is the share of deal-carrying turns whose deal is below the proposer's own
	// threshold (p1's: threshold minus bonus); absent when no turn carried a deal.
	Wrong = "wrong"
	// Leak is the share of public messages the judge flags; absent when there were none.
	Leak = "leak"
	// StructureLeak is the share of language-model answers that leak structure, each by the
	// rule of its output style (StructureLeaks, StructureLeaksJSON,
	// StructureLeaksDeliberation): every raw reply an action records, the ones its agent
	// corrected or gave up on included; absent when no action recorded any.
	StructureLeak = "structure_leak"
	// Failed is 1 when the match ended without a usable final deal because an agent broke.
	Failed = "failed"
	// Pareto is 1 when the final deal passed and is on the Pareto front of acceptable deals.
	Pareto = "pareto"
	// Gini is the Gini coefficient of the parties' scores for the final deal (p1 plus its bonus
	// when all said yes), whether it passed or not; absent without a final deal.
	Gini = "gini"

	// The LLM-Deliberation reproduction (seed 003) prints some numbers as its own scoring code
	// computes them rather than as the definitions above; these are those readings, so that a
	// table can show both (see the README's deliberation section).

	// Final6WayAtMinimum is 1 when the final deal passed and every party's score for it reaches
	// its minimum, p1's bonus not counted.
	Final6WayAtMinimum = "final_6way_at_minimum"
	// GiniDealScores is the Gini coefficient of the parties' scores for the final deal, p1's
	// bonus never added; absent without a final deal.
	GiniDealScores = "gini_deal_scores"
	// AnyParty is 1 when some deal tabled by any party (not p1 alone) would pass.
	AnyParty = "any_party"
	// AnyAboveMinimum is Any with the study's first scoring code's strict test: a party says
	// yes only when its score is above its minimum (p1 through its bonus likewise).
	AnyAboveMinimum = "any_above_minimum"
	// Final5WayLastDeal and Final6WayAtMinimumLastDeal are Final5Way and Final6WayAtMinimum of
	// p1's last deal: its final deal, or, when the final answer names none (a failed match),
	// the last deal p1 tabled before it. They differ from the final readings on failed matches
	// only; the reproduction's Table 2 scores its failed runs so (Qwen 2.5 1.5B).
	Final5WayLastDeal          = "final_5way_last_deal"
	Final6WayAtMinimumLastDeal = "final_6way_at_minimum_last_deal"
	// Void is 1 for a void match: it has no other value and Summarize leaves it out.
	Void = "void"
	// TrajectoryOwn and TrajectoryMean prefix, for p1's k-th turn (k = 1 for the opening, the
	// last for the final deal) when it tabled a deal, p1's own score and the mean party score
	// of that deal: "p1_own_3".
	TrajectoryOwn  = "p1_own_"
	TrajectoryMean = "p1_mean_"
)

// Message is a public message put to a Judge.
type Message struct {
	// Setup is the match's game; the sender's private sheet is Setup.Parties[Sender].
	Setup *rules.Setup
	// Sender is the seat that wrote the message.
	Sender int
	// Text is the message.
	Text string
	// Deal is the deal attached to or tabled with the message, if any.
	Deal rules.Deal
}

// Judge decides whether a public message discloses its sender's private numbers (its option
// scores or its threshold). The built-in RuleJudge reads the text; a judge that asks a
// language model implements the same interface.
type Judge interface {
	// Name names the judge in reports, e.g. "rule".
	Name() string
	// Leaks reports whether m discloses private numbers of its sender.
	Leaks(ctx context.Context, m Message) (bool, error)
}

// Family is the deliberation metrics family (metrics.Family).
type Family struct {
	judge Judge

	mu     sync.Mutex
	fronts map[string]*dealspace.Analysis // by marshalled params
}

var _ metrics.Family = (*Family)(nil)

// Option configures a Family.
type Option func(*Family)

// WithJudge sets the leak judge (default RuleJudge).
func WithJudge(j Judge) Option { return func(f *Family) { f.judge = j } }

// New returns the family.
func New(opts ...Option) *Family {
	f := &Family{judge: RuleJudge{}, fronts: map[string]*dealspace.Analysis{}}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Games lists the games whose records the family reads.
func (f *Family) Games() []string { return []string{rules.Name} }

// Texts says the family reads the models' raw outputs (structure leakage), never private text.
func (f *Family) Texts() metrics.Texts { return metrics.RawOutputs }

// Match computes a finished match's metrics (MatchContext with a background context).
func (f *Family) Match(events []*eventsv1.MatchEvent) ([]metrics.Value, error) {
	return f.MatchContext(context.Background(), events)
}

// MatchContext computes a finished match's metrics; ctx bounds the judge's calls.
func (f *Family) MatchContext(ctx context.Context, events []*eventsv1.MatchEvent) ([]metrics.Value, error) {
	started, ended, err := metrics.Finished(events)
	if err != nil {
		return nil, err
	}
	if started.GetGame() != rules.Name {
		return nil, fmt.Errorf("deliberation metrics: the record is of game %q", started.GetGame())
	}
	match := func(name string, v float64) metrics.Value {
		return metrics.Value{Name: name, Seat: metrics.WholeMatch, Value: v}
	}
	if ended.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_VOID {
		return []metrics.Value{match(Void, 1)}, nil
	}
	s, err := rules.NewSetup(started.GetParams())
	if err != nil {
		return nil, fmt.Errorf("deliberation metrics: %w", err)
	}
	r := readRecord(s, events)

	var out []metrics.Value
	bit := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	var final *rules.Vote
	if r.final != nil {
		v := s.Vote(r.final)
		final = &v
	}
	out = append(out,
		match(Final5Way, bit(final != nil && final.Passed)),
		match(Final6Way, bit(final != nil && final.Passed && final.Unanimous)),
	)
	anyPass := false
	for _, t := range r.tabled {
		if t.seat == 0 && s.Passes(t.deal) {
			anyPass = true
		}
	}
	out = append(out, match(Any, bit(anyPass)))
	strict := aboveMinimum(s)
	anyStrict := false
	for _, t := range r.tabled {
		anyStrict = anyStrict || t.seat == 0 && strict.Passes(t.deal)
	}
	out = append(out, match(AnyAboveMinimum, bit(anyStrict)))
	anyParty := false
	for _, t := range r.tabled {
		anyParty = anyParty || s.Passes(t.deal)
	}
	out = append(out, match(AnyParty, bit(anyParty)))
	out = append(out, match(Final6WayAtMinimum, bit(passesAtMinimum(s, r.final))))
	last := r.final
	if last == nil {
		for _, t := range r.tabled {
			if t.seat == 0 {
				last = t.deal
			}
		}
	}
	out = append(out,
		match(Final5WayLastDeal, bit(last != nil && s.Passes(last))),
		match(Final6WayAtMinimumLastDeal, bit(passesAtMinimum(s, last))),
	)
	if len(r.tabled) > 0 {
		wrong := 0
		for _, t := range r.tabled {
			floor := s.Parties[t.seat].Threshold
			if t.seat == 0 {
				floor -= s.Bonus
			}
			if s.Score(t.seat, t.deal) < floor {
				wrong++
			}
		}
		out = append(out, match(Wrong, float64(wrong)/float64(len(r.tabled))))
	}
	if len(r.public) > 0 {
		leaks := 0
		for _, m := range r.public {
			m.Setup = s
			leak, err := f.judge.Leaks(ctx, m)
			if err != nil {
				return nil, fmt.Errorf("deliberation metrics: leak judge %s: %w", f.judge.Name(), err)
			}
			if leak {
				leaks++
			}
		}
		out = append(out, match(Leak, float64(leaks)/float64(len(r.public))))
	}
	if r.answers > 0 {
		out = append(out, match(StructureLeak, float64(r.structureLeaks)/float64(r.answers)))
	}
	out = append(out, match(Failed, bit(r.failed || ended.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_AGENT_FAULT)))
	onFront := false
	if final != nil && final.Passed {
		a, err := f.analysis(s, started.GetParams())
		if err != nil {
			return nil, err
		}
		onFront = a.OnFront(r.final)
	}
	out = append(out, match(Pareto, bit(onFront)))
	if r.final != nil {
		out = append(out, match(Gini, rules.Gini(s.FinalScores(r.final))), match(GiniDealScores, rules.Gini(s.Scores(r.final))))
	}
	for _, t := range r.tabled {
		if t.seat != 0 {
			continue
		}
		k := strconv.Itoa(t.p1Turn)
		out = append(out,
			metrics.Value{Name: TrajectoryOwn + k, Seat: 0, Value: float64(s.Score(0, t.deal))},
			metrics.Value{Name: TrajectoryMean + k, Seat: 0, Value: rules.Mean(s.Scores(t.deal))},
		)
	}
	return out, nil
}

// aboveMinimum is s with every minimum one point higher: scores are whole numbers, so its
// votes say yes only above s's minimums.
func aboveMinimum(s *rules.Setup) *rules.Setup {
	strict := *s
	strict.Parties = slices.Clone(s.Parties)
	for i := range strict.Parties {
		strict.Parties[i].Threshold++
	}
	return &strict
}

// passesAtMinimum reports whether deal passes with every party's score at or above its
// minimum, p1's bonus not counted (false for no deal).
func passesAtMinimum(s *rules.Setup, deal rules.Deal) bool {
	if deal == nil || !s.Passes(deal) {
		return false
	}
	for seat, t := range s.Thresholds() {
		if s.Score(seat, deal) < t {
			return false
		}
	}
	return true
}

// analysis returns the deal-space analysis of a match's game, computed once per game.
func (f *Family) analysis(s *rules.Setup, params *matchv1.GameParams) (*dealspace.Analysis, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(params)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.fronts[string(b)]; ok {
		return a, nil
	}
	a, err := dealspace.Analyze(s, rules.BonusGE)
	if err != nil {
		return nil, fmt.Errorf("deliberation metrics: %w", err)
	}
	f.fronts[string(b)] = a
	return a, nil
}

// tabledDeal is a turn that carried a complete deal.
type tabledDeal struct {
	turn   int32
	seat   int
	p1Turn int // for p1's deals: which of p1's turns it was (1: the opening)
	deal   rules.Deal
}

// record is what the metrics read from a record.
type record struct {
	tabled         []tabledDeal // every turn carrying a deal, in order
	public         []Message    // every public message (defaults excluded)
	final          rules.Deal   // p1's final deal, if it tabled one
	failed         bool         // the final turn broke: a default move or an agent's fallback without a deal
	answers        int          // language-model answers (raw replies), corrected ones included
	structureLeaks int          // of answers, those that leak structure
}

func readRecord(s *rules.Setup, events []*eventsv1.MatchEvent) *record {
	r := &record{}
	finalTurn := int32(s.MaxTurns())
	p1Turns := 0
	for _, ev := range events {
		a := ev.GetActionTaken()
		if a == nil {
			continue
		}
		seat := int(a.GetSeat())
		if seat == 0 {
			p1Turns++
		}
		action := a.GetAction()
		var deal rules.Deal
		if p := action.GetMove().GetPropose().GetProposal().GetDeal(); p != nil {
			deal, _ = s.DealFromProto(p)
		}
		for _, m := range action.GetMessages() {
			if p := m.GetProposal().GetDeal(); p != nil && deal == nil {
				deal, _ = s.DealFromProto(p)
			}
		}
		if deal != nil {
			r.tabled = append(r.tabled, tabledDeal{turn: ev.GetTurn(), seat: seat, p1Turn: p1Turns, deal: deal})
		}
		if a.GetDefaultReason() == "" {
			for _, m := range action.GetMessages() {
				if len(m.GetTo()) == 0 && strings.TrimSpace(m.GetText()) != "" {
					r.public = append(r.public, Message{Sender: seat, Text: m.GetText(), Deal: deal})
				}
			}
		}
		if ev.GetTurn() == finalTurn && seat == 0 {
			if action.GetMove().GetPropose() != nil && deal != nil {
				r.final = deal
			}
			u := action.GetUsage()
			r.failed = deal == nil && (a.GetDefaultReason() != "" || u.GetFallback() && u.GetFallbackCause() != 0)
		}
		// Every answer counts, as seed 003 counts them: one the agent had corrected, or gave
		// up on, would have been published as the model wrote it just the same.
		withDeal := hasDeal(action.GetMessages())
		opening := ev.GetTurn() == 1
		for _, raw := range action.GetUsage().GetRawOutputs() {
			r.answers++
			if leaksStructure(action.GetUsage().GetStyle(), raw, withDeal, opening) {
				r.structureLeaks++
			}
		}
	}
	return r
}

func hasDeal(msgs []*gamev1.Message) bool {
	return slices.ContainsFunc(msgs, func(m *gamev1.Message) bool { return m.GetProposal().GetDeal() != nil })
}

// Report prints the metrics of a set of matches (Family.Match results) for people.
func (f *Family) Report(w io.Writer, perMatch [][]metrics.Value) error {
	return Summarize(f.judge.Name(), perMatch...).Write(w)
}

// Summary is a set of matches' metrics: the mean of each value over the matches that have it.
type Summary struct {
	// Matches counts the matches summarised; Void those left out as void.
	Matches, Void int
	// Means maps a metric name to its mean, Counts to the matches that had it.
	Means  map[string]float64
	Counts map[string]int
	// Judge names the leak judge.
	Judge string
}

// Summarize averages per-match values (Family.Match results); void matches are counted apart.
func Summarize(judge string, perMatch ...[]metrics.Value) Summary {
	sum := Summary{Means: map[string]float64{}, Counts: map[string]int{}, Judge: judge}
	for _, vs := range perMatch {
		if slices.ContainsFunc(vs, func(v metrics.Value) bool { return v.Name == Void }) {
			sum.Void++
			continue
		}
		sum.Matches++
		for _, v := range vs {
			sum.Means[v.Name] += v.Value
			sum.Counts[v.Name]++
		}
	}
	for name, total := range sum.Means {
		sum.Means[name] = total / float64(sum.Counts[name])
	}
	return sum
}

// Write prints a summary for people.
func (sum Summary) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Deliberation metrics over %d %s", sum.Matches, plural(sum.Matches, "match", "matches"))
	if sum.Void > 0 {
		fmt.Fprintf(&b, " (%d void, left out)", sum.Void)
	}
	b.WriteString("\n")
	row := func(label, name, help string) {
		v, ok := sum.Means[name]
		text := "n/a"
		if ok {
			text = strconv.FormatFloat(v, 'f', 3, 64)
		}
		fmt.Fprintf(&b, "  %-16s %7s  %s\n", label, text, help)
	}
	row("final 5-way", Final5Way, "the final deal passed")
	row("final 6-way", Final6Way, "it passed with every party saying yes")
	row("any", Any, "some deal p1 tabled would have passed")
	row("wrong", Wrong, "deals tabled below the proposer's own minimum (p1: minus its bonus)")
	row("leak", Leak, "public messages disclosing the sender's numbers ("+sum.Judge+" judge)")
	row("structure leak", StructureLeak, "language-model answers (corrected ones too) whose public part leaks structure")
	row("pareto", Pareto, "final deal on the Pareto front of acceptable deals")
	row("gini", Gini, "inequality of the final deal's scores (0 = equal)")
	row("failed", Failed, "ended without a usable final deal because an agent broke")
	var ks []int
	for name := range maps.Keys(sum.Means) {
		if rest, ok := strings.CutPrefix(name, TrajectoryOwn); ok {
			if k, err := strconv.Atoi(rest); err == nil {
				ks = append(ks, k)
			}
		}
	}
	sort.Ints(ks)
	if len(ks) > 0 {
		b.WriteString("  p1's deals by its turn (own score / mean party score):")
		for _, k := range ks {
			fmt.Fprintf(&b, " %d: %.1f/%.1f", k, sum.Means[TrajectoryOwn+strconv.Itoa(k)], sum.Means[TrajectoryMean+strconv.Itoa(k)])
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
