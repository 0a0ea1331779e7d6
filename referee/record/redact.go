package record

import (
	"slices"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/privacy"
)

// Viewer is who looks at a match's record: a spectator, or the player of one seat.
type Viewer struct {
	seat int32 // -1: a spectator
}

// Spectator is a viewer who plays no seat: it may see what every seat may see.
var Spectator = Viewer{seat: -1}

// SeatViewer is the player of seat (0-based): it may see what a spectator sees plus its own
// private parts.
func SeatViewer(seat int32) Viewer {
	if seat < 0 {
		return Spectator
	}
	return Viewer{seat: seat}
}

// Seat returns the viewer's seat, and false for a spectator.
func (v Viewer) Seat() (int32, bool) { return v.seat, v.seat >= 0 }

// is reports whether the viewer is seat.
func (v Viewer) is(seat int32) bool { return v.seat >= 0 && v.seat == seat }

// Redact returns what viewer may see of ev: a copy with every part private to another seat
// removed. It is the privacy boundary of everything that shows records to people (the
// gateway's live view, its record and RPC routes): anything not allowed here is never shown.
//
// A spectator never sees, unless reveal (the match's MatchStarted.reveal_private) is set:
//   - an action's private reasoning and notes, or its usage's raw model outputs;
//   - messages addressed to some seats only (they are removed from the action);
//   - a refused action (the action is removed, the rejection keeps its code only);
//   - a chance draw with visible_to (the event keeps what was drawn for whom, not the draw);
//   - an action's summary with summary_visible_to (a move the rules show some seats only);
//   - the seed and the parameters private to a seat or to none (see PublicParams);
//   - in an imported match's audit, Parley's reading of a seat's answer where it differs from
//     the platform's (it comes from the answer, the seat's private reasoning).
//
// A seat viewer sees what a spectator sees without reveal, plus its own actions' private
// parts, its own refused actions, the messages it sent or that name it, and the draws and
// move summaries visible to it. reveal never widens a seat's view. The events stay in place (same seq), so a viewer
// can tell that nothing is missing. ev is not modified; nil gives nil.
func Redact(ev *eventsv1.MatchEvent, viewer Viewer, reveal bool) *eventsv1.MatchEvent {
	if ev == nil {
		return nil
	}
	out := proto.CloneOf(ev)
	if reveal && viewer == Spectator {
		return out
	}
	switch p := out.GetPayload().(type) {
	case *eventsv1.MatchEvent_MatchStarted:
		s := p.MatchStarted
		s.Seed = 0
		s.Params = PublicParams(s.GetParams())
	case *eventsv1.MatchEvent_ActionTaken:
		a := p.ActionTaken
		if viewer.is(a.GetSeat()) {
			return out
		}
		if len(a.GetSummaryVisibleTo()) > 0 && !slices.ContainsFunc(a.GetSummaryVisibleTo(), viewer.is) {
			a.Summary = ""
		}
		act := a.GetAction()
		if act == nil {
			return out
		}
		act.PrivateReasoning = ""
		act.PrivateNotes = ""
		if u := act.GetUsage(); u != nil {
			u.RawOutputs, u.Style = nil, ""
		}
		act.Messages = slices.DeleteFunc(act.GetMessages(), func(m *gamev1.Message) bool {
			return len(m.GetTo()) > 0 && !slices.ContainsFunc(m.GetTo(), viewer.is)
		})
	case *eventsv1.MatchEvent_ActionRefused:
		r := p.ActionRefused
		if viewer.is(r.GetSeat()) {
			return out
		}
		r.Action = nil
		if r.GetRejection() != nil {
			r.Rejection = &gamev1.Rejection{Code: r.GetRejection().GetCode()}
		}
	case *eventsv1.MatchEvent_ChanceDrawn:
		d := p.ChanceDrawn
		if len(d.GetVisibleTo()) == 0 || slices.ContainsFunc(d.GetVisibleTo(), viewer.is) {
			return out
		}
		d.Seat, d.Value, d.Summary = nil, nil, ""
	case *eventsv1.MatchEvent_MatchEnded:
		// Usage totals carry no raw outputs (the runner leaves them with each action); make sure.
		for _, u := range p.MatchEnded.GetUsage() {
			if u.GetTotal() != nil && !viewer.is(u.GetSeat()) {
				u.GetTotal().RawOutputs = nil
			}
		}
		// An imported match's reading of an answer comes from the seat's private answer.
		for _, d := range p.MatchEnded.GetImportAudit().GetDisagreements() {
			if d.GetKind() == eventsv1.DisagreementKind_DISAGREEMENT_KIND_PARSE && !viewer.is(d.GetSeat()) {
				d.Parley, d.ParleyMove, d.Tag = "", nil, ""
			}
		}
	}
	return out
}

// RedactAll redacts a whole record (or its start) for viewer, reading reveal from its
// MatchStarted. The input is not modified.
func RedactAll(events []*eventsv1.MatchEvent, viewer Viewer) []*eventsv1.MatchEvent {
	reveal := false
	out := make([]*eventsv1.MatchEvent, 0, len(events))
	for _, ev := range events {
		if s := ev.GetMatchStarted(); s != nil {
			reveal = s.GetRevealPrivate()
		}
		out = append(out, Redact(ev, viewer, reveal))
	}
	return out
}

// PublicParams returns a copy of resolved params without the fields their family declares
// private to a seat or to none (the (parley.game.v1.privacy) option, see
// referee/games/privacy), such as buysell's cost and willingness, and without fields this
// program has no descriptor for. A family that declares nothing private comes back whole.
// nil gives nil.
func PublicParams(params *matchv1.GameParams) *matchv1.GameParams {
	if params == nil {
		return nil
	}
	out := proto.CloneOf(params)
	privacy.Clear(out.ProtoReflect())
	return out
}
