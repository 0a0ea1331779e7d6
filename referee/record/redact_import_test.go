package record_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/record"
)

// Parley's reading of an imported seat's answer comes from the answer, which is private to the
// seat; the platform's reading (the move played) and the outcomes are public.
func TestRedactKeepsAnImportedSeatsReadingOfItsAnswerToIt(t *testing.T) {
	accept := &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}
	pass := &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}
	ended := &eventsv1.MatchEvent{MatchId: "m", Seq: 4, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{
		Outcome: &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_TURN_LIMIT, Payoffs: []float64{0, 0}},
		ImportAudit: &eventsv1.ImportAudit{
			ParleyOutcome: &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_AGREEMENT, Agreement: true, Payoffs: []float64{2, -2}},
			Disagreements: []*eventsv1.ImportDisagreement{
				{Kind: eventsv1.DisagreementKind_DISAGREEMENT_KIND_PARSE, Turn: 2, Seat: proto.Int32(1), Tag: "pass_read_as_accept",
					Platform: "passes", Parley: "accepts", PlatformMove: pass, ParleyMove: accept},
				{Kind: eventsv1.DisagreementKind_DISAGREEMENT_KIND_OUTCOME, Tag: "after_parse_difference", Platform: "turn limit", Parley: "agreement"},
			},
		},
	}}}
	for _, tc := range []struct {
		name        string
		viewer      record.Viewer
		reveal      bool
		seesReading bool
	}{
		{"spectator", record.Spectator, false, false},
		{"the other seat", record.SeatViewer(0), false, false},
		{"the other seat, revealed match", record.SeatViewer(0), true, false},
		{"the seat that answered", record.SeatViewer(1), false, true},
		{"spectator, revealed match", record.Spectator, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := record.Redact(ended, tc.viewer, tc.reveal).GetMatchEnded().GetImportAudit()
			parse, outcome := got.GetDisagreements()[0], got.GetDisagreements()[1]
			seen := parse.GetParley() != "" || parse.GetParleyMove() != nil || parse.GetTag() != ""
			if seen != tc.seesReading {
				t.Errorf("sees Parley's reading of the answer: %v, want %v (%v)", seen, tc.seesReading, parse)
			}
			if parse.GetPlatform() != "passes" || !proto.Equal(parse.GetPlatformMove(), pass) || parse.GetTurn() != 2 {
				t.Errorf("the platform's reading is public: %v", parse)
			}
			if outcome.GetParley() != "agreement" || got.GetParleyOutcome().GetPayoffs()[0] != 2 {
				t.Errorf("outcomes are public: %v", got)
			}
		})
	}
	if ended.GetMatchEnded().GetImportAudit().GetDisagreements()[0].GetParley() != "accepts" {
		t.Error("Redact changed its input")
	}
}
