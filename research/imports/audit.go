package imports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Tags of the disagreements the audit finds by itself; formats add their own (Game.OutcomeTag).
const (
	// TagUnreadable: Parley's parser cannot read the answer at all.
	TagUnreadable = "unreadable"
	// TagTermsDiffer: both read a proposal, with other terms.
	TagTermsDiffer = "terms_differ"
	// TagOutOfTurn: the answer is by a seat Parley's rules do not expect to move.
	TagOutOfTurn = "out_of_turn"
	// TagOutcome: the outcomes differ and neither the format nor the audit knows why.
	TagOutcome = "outcome"
	// TagAfterRefusal: the outcomes differ after Parley's rules refused a move the platform
	// played on; TagAfterParse: after Parley's parser read an answer otherwise.
	TagAfterRefusal = "after_refusal"
	TagAfterParse   = "after_parse_difference"
)

// RefusalTagger is implemented by Formats that name the rules' refusals more finely than the
// rejection codes do ("proposal_limit" rather than "illegal_move").
type RefusalTagger interface {
	RefusalTag(r *games.Rejection) string
}

// Audit reads g as Parley would have: each answer, in order, read by parse as the seat that
// wrote it would have seen the game (its observation in Parley's match so far), then applied to
// Parley's own rules for game with params (resolved) and g.Seed. A move the rules refuse, or an
// answer parse cannot read, is replaced by the game's default move, as the match runner does
// for an agent with no usable answer; answers given once Parley's match is over are still read.
// The audit keeps Parley's outcome and every disagreement with the platform's reading (as
// g.Turns[i].Played and g.Outcome say): eventsv1.ImportAudit.
func Audit(g *Game, game games.Game, params *matchv1.GameParams, parse func(*agentv1.Observation, string) (*agentv1.Action, error), tagger RefusalTagger) (*eventsv1.ImportAudit, error) {
	state, err := game.NewState(params, g.Seed)
	if err != nil {
		return nil, err
	}
	names, _ := games.Seats(game, params)
	audit := &eventsv1.ImportAudit{}
	add := func(d *eventsv1.ImportDisagreement) { audit.Disagreements = append(audit.Disagreements, d) }
	endedAt := int32(0) // the turn on which Parley's match ended, if it did before the answers ran out
	for i, t := range g.Turns {
		turn := int32(i + 1)
		seat := proto.Int32(t.Seat)
		played := t.Played.GetMove()
		obs := state.Observe(t.Seat)
		action, perr := parse(obs, t.Answer)
		audit.Answers++
		switch {
		case perr != nil:
			add(&eventsv1.ImportDisagreement{Kind: eventsv1.DisagreementKind_DISAGREEMENT_KIND_PARSE, Turn: turn, Seat: seat,
				Tag: TagUnreadable, Platform: games.DescribeMove(played, names), Parley: "unreadable: " + perr.Error(),
				PlatformMove: proto.CloneOf(played)})
		case SameAction(action, t.Played):
			audit.AnswersAgreed++
		default:
			add(&eventsv1.ImportDisagreement{Kind: eventsv1.DisagreementKind_DISAGREEMENT_KIND_PARSE, Turn: turn, Seat: seat,
				Tag: parseTag(t.Played, action), Platform: describeAction(t.Played, names),
				Parley: describeAction(action, names), PlatformMove: proto.CloneOf(played), ParleyMove: proto.CloneOf(action.GetMove())})
		}
		movers := state.ToMove()
		if len(movers) == 0 {
			if endedAt == 0 {
				endedAt = state.Turn()
			}
			continue
		}
		if !slices.Contains(movers, t.Seat) {
			add(&eventsv1.ImportDisagreement{Kind: eventsv1.DisagreementKind_DISAGREEMENT_KIND_REFUSED, Turn: turn, Seat: seat,
				Tag: TagOutOfTurn, Platform: games.DescribeMove(played, names),
				Parley: fmt.Sprintf("it is %s's turn, not %s's", seatList(movers, names), games.SeatName(t.Seat, names))})
			continue
		}
		if perr != nil {
			action = state.Default(t.Seat)
		} else {
			// The rules judge the move and the public messages; the reasoning is not theirs.
			action = &agentv1.Action{Move: action.GetMove(), Messages: action.GetMessages()}
		}
		move := action.GetMove()
		if _, err := state.Apply(t.Seat, action); err != nil {
			why := err.Error()
			tag := "refused"
			if r, ok := games.AsRejection(err); ok {
				tag = strings.ToLower(strings.TrimPrefix(r.Code.String(), "REJECTION_CODE_"))
				if tagger != nil {
					if t := tagger.RefusalTag(r); t != "" {
						tag = t
					}
				}
			}
			add(&eventsv1.ImportDisagreement{Kind: eventsv1.DisagreementKind_DISAGREEMENT_KIND_REFUSED, Turn: turn, Seat: seat,
				Tag: tag, Platform: games.DescribeMove(played, names), Parley: "refused: " + why,
				PlatformMove: proto.CloneOf(played), ParleyMove: proto.CloneOf(move)})
			if _, err := state.Apply(t.Seat, state.Default(t.Seat)); err != nil {
				return nil, fmt.Errorf("the default move of %s was refused: %w", games.SeatName(t.Seat, names), err)
			}
		}
	}
	if len(state.ToMove()) == 0 {
		audit.ParleyOutcome = state.Outcome()
		if endedAt > 0 && endedAt < int32(len(g.Turns)) {
			audit.ParleyOutcome.Summary += fmt.Sprintf(" (Parley's rules end the game on turn %d; the platform went on to turn %d)", endedAt, len(g.Turns))
		}
	} else {
		audit.ParleyOutcome = &matchv1.Outcome{Summary: fmt.Sprintf("The answers end on turn %d, before Parley's rules end the game.", len(g.Turns))}
	}
	if g.Void == "" && !SameOutcome(g.Outcome, audit.ParleyOutcome) {
		tag := g.OutcomeTag
		for _, d := range audit.Disagreements {
			switch {
			case tag != "":
			case d.GetKind() == eventsv1.DisagreementKind_DISAGREEMENT_KIND_REFUSED:
				tag = TagAfterRefusal
			case d.GetKind() == eventsv1.DisagreementKind_DISAGREEMENT_KIND_PARSE:
				tag = TagAfterParse
			}
		}
		if tag == "" {
			tag = TagOutcome
		}
		add(&eventsv1.ImportDisagreement{Kind: eventsv1.DisagreementKind_DISAGREEMENT_KIND_OUTCOME, Tag: tag,
			Platform: DescribeOutcome(g.Outcome, names), Parley: DescribeOutcome(audit.ParleyOutcome, names)})
	}
	return audit, nil
}

func seatList(seats []games.Seat, names []string) string {
	out := make([]string, len(seats))
	for i, s := range seats {
		out[i] = games.SeatName(s, names)
	}
	return strings.Join(out, " and ")
}

// parseTag names a parse disagreement: "pass_read_as_accept", "terms_differ", or for the terms
// a message carries, "deal_read_as_none", "none_read_as_terms", ....
func parseTag(platform, parley *agentv1.Action) string {
	a, b := games.KindOf(platform.GetMove()), games.KindOf(parley.GetMove())
	switch {
	case a != b:
		return kindName(a) + "_read_as_" + kindName(b)
	case !SameMove(platform.GetMove(), parley.GetMove()):
		return TagTermsDiffer
	}
	pa, pb := messageTerms(platform), messageTerms(parley)
	if pa != nil && pb != nil {
		return TagTermsDiffer
	}
	return termsName(pa) + "_read_as_" + termsName(pb)
}

func termsName(p *gamev1.Proposal) string {
	switch {
	case p == nil:
		return "none"
	case p.GetDeal() != nil:
		return "deal"
	}
	return "terms"
}

// messageTerms returns the terms the action's first message carries, if any.
func messageTerms(a *agentv1.Action) *gamev1.Proposal {
	if msgs := a.GetMessages(); len(msgs) > 0 {
		return msgs[0].GetProposal()
	}
	return nil
}

// SameAction reports whether two readings of an answer are the same: the same move (SameMove)
// and, when either carries terms in its first message (a deal put to the others while
// talking), the same terms.
func SameAction(a, b *agentv1.Action) bool {
	if !SameMove(a.GetMove(), b.GetMove()) {
		return false
	}
	pa, pb := messageTerms(a), messageTerms(b)
	if pa == nil && pb == nil {
		return true
	}
	if pa == nil || pb == nil {
		return false
	}
	if pa.GetDeal() != nil || pb.GetDeal() != nil {
		return sameDeal(pa.GetDeal(), pb.GetDeal())
	}
	return sameAllocation(pa.GetAllocation(), pb.GetAllocation())
}

// describeAction writes a reading: its move, and the terms its first message carries.
func describeAction(a *agentv1.Action, names []string) string {
	text := games.DescribeMove(a.GetMove(), names)
	if p := messageTerms(a); p != nil {
		text += " (with terms: " + games.DescribeProposal(p, names) + ")"
	}
	return text
}

func kindName(k gamev1.MoveKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "MOVE_KIND_"))
}

// SameMove reports whether two moves are the same move: the same kind, and for a proposal the
// same terms (amounts of zero and the order of shares and choices do not matter; an accept's
// proposal_turn does not either).
func SameMove(a, b *gamev1.Move) bool {
	if games.KindOf(a) != games.KindOf(b) {
		return false
	}
	switch {
	case a.GetPropose() != nil:
		pa, pb := a.GetPropose().GetProposal(), b.GetPropose().GetProposal()
		if pa.GetDeal() != nil || pb.GetDeal() != nil {
			return sameDeal(pa.GetDeal(), pb.GetDeal())
		}
		return sameAllocation(pa.GetAllocation(), pb.GetAllocation())
	case a.GetChoose() != nil:
		return a.GetChoose().GetOption() == b.GetChoose().GetOption()
	}
	return true
}

func sameDeal(a, b *gamev1.Deal) bool {
	if a == nil || b == nil {
		return a == b
	}
	choices := func(d *gamev1.Deal) map[string]string {
		m := map[string]string{}
		for _, c := range d.GetChoices() {
			m[c.GetIssue()] = c.GetOption()
		}
		return m
	}
	return maps.Equal(choices(a), choices(b))
}

func sameAllocation(a, b *gamev1.Allocation) bool {
	type side struct {
		seat  int32
		gives bool
	}
	amounts := func(al *gamev1.Allocation) map[side]map[string]int64 {
		m := map[side]map[string]int64{}
		put := func(k side, res map[string]int64) {
			for r, v := range res {
				if v == 0 {
					continue
				}
				if m[k] == nil {
					m[k] = map[string]int64{}
				}
				m[k][r] += v
			}
		}
		for _, sh := range al.GetShares() {
			put(side{sh.GetSeat(), true}, sh.GetGives())
			put(side{sh.GetSeat(), false}, sh.GetReceives())
		}
		return m
	}
	return maps.EqualFunc(amounts(a), amounts(b), func(x, y map[string]int64) bool { return maps.Equal(x, y) })
}

// SameOutcome reports whether two outcomes agree: both a deal or both none, with the same
// payoffs.
func SameOutcome(a, b *matchv1.Outcome) bool {
	if a.GetAgreement() != b.GetAgreement() || len(a.GetPayoffs()) != len(b.GetPayoffs()) {
		return false
	}
	for i, p := range a.GetPayoffs() {
		if math.Abs(p-b.GetPayoffs()[i]) > 1e-9 {
			return false
		}
	}
	return true
}

// DescribeOutcome writes an outcome in a line: its cause, whether there was a deal, the
// payoffs by seat.
func DescribeOutcome(o *matchv1.Outcome, names []string) string {
	var b strings.Builder
	cause := strings.ToLower(strings.TrimPrefix(o.GetCause().String(), "END_CAUSE_"))
	if o.GetCause() == matchv1.EndCause_END_CAUSE_UNSPECIFIED {
		cause = "not over"
	}
	b.WriteString(strings.ReplaceAll(cause, "_", " "))
	for i, p := range o.GetPayoffs() {
		sep := "; "
		if i > 0 {
			sep = ", "
		}
		fmt.Fprintf(&b, "%s%s %s", sep, games.SeatName(int32(i), names), formatNumber(p))
	}
	if s := o.GetSummary(); s != "" {
		b.WriteString(" (" + s + ")")
	}
	return b.String()
}

func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}
