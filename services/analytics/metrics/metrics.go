// Package metrics computes match metrics from the event record: one subpackage per game family
// (metrics/<family>) implementing Family, so `parley play`, the analytics service and reports
// all use the same functions. Metrics are pure functions of a finished match's events.
package metrics

import (
	"fmt"
	"sort"

	"google.golang.org/protobuf/reflect/protoreflect"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
)

// WholeMatch is the Seat of a value that belongs to the match rather than to one seat.
const WholeMatch int32 = -1

// Value is one named metric of one match.
type Value struct {
	// Name in snake_case, e.g. "agreement" or "final_price"; stable, since stored tables and
	// reports key on it.
	Name string
	// Seat the value belongs to, or WholeMatch.
	Seat int32
	// The value; rates are 0 or 1 per match, so their mean over matches is the rate.
	Value float64
}

// Family computes one game family's per-match metrics.
type Family interface {
	// Games lists the names of the games whose records it reads.
	Games() []string
	// Match computes the metrics of one finished match from its whole record (MatchStarted
	// first, MatchEnded last). A record it cannot read is an error naming what is wrong.
	Match(events []*eventsv1.MatchEvent) ([]Value, error)
}

// Texts are the free texts of a record's actions a Family may read besides moves, messages
// and outcomes. A record read without them is much lighter: a model's answer is kept in both.
type Texts uint8

const (
	// PrivateTexts are an action's private reasoning and notes.
	PrivateTexts Texts = 1 << iota
	// RawOutputs are a model's raw outputs (Usage.raw_outputs).
	RawOutputs
	// AllTexts is every text: what a family that does not say is taken to read.
	AllTexts = PrivateTexts | RawOutputs
)

// TextReader is implemented by a Family that says which texts it reads.
type TextReader interface {
	Texts() Texts
}

// Unread returns the fields of a record that a reader of t alone may leave out.
func (t Texts) Unread() []protoreflect.FieldDescriptor {
	var out []protoreflect.FieldDescriptor
	if t&PrivateTexts == 0 {
		action := (&agentv1.Action{}).ProtoReflect().Descriptor().Fields()
		out = append(out, action.ByName("private_reasoning"), action.ByName("private_notes"))
	}
	if t&RawOutputs == 0 {
		out = append(out, (&agentv1.Usage{}).ProtoReflect().Descriptor().Fields().ByName("raw_outputs"))
	}
	return out
}

// Registry finds the Family of a game.
type Registry struct {
	byGame map[string]Family
}

// NewRegistry returns a registry of families; two families claiming one game is an error.
func NewRegistry(families ...Family) (*Registry, error) {
	r := &Registry{byGame: make(map[string]Family)}
	for _, f := range families {
		for _, g := range f.Games() {
			if _, dup := r.byGame[g]; dup {
				return nil, fmt.Errorf("metrics: two families claim game %q", g)
			}
			r.byGame[g] = f
		}
	}
	return r, nil
}

// Lookup returns the family of game, if any.
func (r *Registry) Lookup(game string) (Family, bool) {
	f, ok := r.byGame[game]
	return f, ok
}

// Texts returns the texts the families of games read (NewRow's own values read none): every
// text for a game whose family does not say.
func (r *Registry) Texts(games ...string) Texts {
	var t Texts
	for _, g := range games {
		f, ok := r.Lookup(g)
		if !ok {
			continue
		}
		if tr, says := f.(TextReader); says {
			t |= tr.Texts()
		} else {
			t |= AllTexts
		}
	}
	return t
}

// Games returns the games with metrics, sorted.
func (r *Registry) Games() []string {
	out := make([]string, 0, len(r.byGame))
	for g := range r.byGame {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// Started returns the MatchStarted of a record, or an error when the record does not begin
// with one.
func Started(events []*eventsv1.MatchEvent) (*eventsv1.MatchStarted, error) {
	if len(events) == 0 || events[0].GetMatchStarted() == nil {
		return nil, fmt.Errorf("metrics: the record does not begin with match_started")
	}
	return events[0].GetMatchStarted(), nil
}

// Finished returns the MatchStarted and MatchEnded of a finished match's record, or an error
// when the record does not begin and end with them: what every family's Match needs first.
func Finished(events []*eventsv1.MatchEvent) (*eventsv1.MatchStarted, *eventsv1.MatchEnded, error) {
	started, err := Started(events)
	if err != nil {
		return nil, nil, err
	}
	ended, err := Ended(events)
	if err != nil {
		return nil, nil, err
	}
	return started, ended, nil
}

// Ended returns the MatchEnded of a record, or an error when the match has not ended.
func Ended(events []*eventsv1.MatchEvent) (*eventsv1.MatchEnded, error) {
	if len(events) == 0 || events[len(events)-1].GetMatchEnded() == nil {
		return nil, fmt.Errorf("metrics: the record does not end with match_ended")
	}
	return events[len(events)-1].GetMatchEnded(), nil
}
