package coalition_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// sent is a message applied in a match, with who may see it.
type sent struct {
	from  games.Seat
	msg   *gamev1.Message
	terms string // the offer as a briefing writes it, or ""
}

func (m sent) visibleTo(seat games.Seat) bool {
	return m.from == seat || len(m.msg.GetTo()) == 0 || slices.Contains(m.msg.GetTo(), seat)
}

// TestPrivateTalkReachesOnlyItsRecipients plays whole random matches in which every message
// carries an offer (phase-1 messages as the rules require, and in phase 2 private messages to
// random seats besides), and checks after every action that each seat's observation holds
// exactly the messages, with their offers, that it sent or that were addressed to it: in its
// history (messages compared whole, offers included), in its briefing (every offer it may
// see, and no offer it may not, by its text), and nowhere in its view.
func TestPrivateTalkReachesOnlyItsRecipients(t *testing.T) {
	variants := [][]string{
		nil,
		{"players=N,E,S,W", "values=N+E:60,S+W:40,N+S:50,N+E+S+W:100", "rounds=5", "max_proposals=3"},
		{"rounds=1", "max_proposals=2"},
	}
	for vi, kvs := range variants {
		for seed := range uint64(12) {
			t.Run(fmt.Sprintf("variant%d/seed%d", vi, seed), func(t *testing.T) {
				p := params(t, kvs...)
				resolved, err := coalition.New().Resolve(p)
				if err != nil {
					t.Fatal(err)
				}
				players := resolved.GetCoalition().GetPlayers()
				n := len(players)
				setup, err := coalition.NewSetup(resolved)
				if err != nil {
					t.Fatal(err)
				}
				st := newState(t, p, seed)
				rng := rand.New(rand.NewPCG(seed, 77))
				var all []sent
				for steps := 0; len(st.ToMove()) > 0; steps++ {
					if steps > 500 {
						t.Fatal("match too long")
					}
					for _, seat := range st.ToMove() {
						obs := st.Observe(seat)
						a := games.RandomAction(obs, rng)
						// Offers on every prescribed message; in phase 2, private notes with
						// offers to a random other seat, and sometimes a public one.
						forms := obs.GetMessageTermForms()
						if len(obs.GetRequiredMessages()) == 0 && len(forms) > 0 {
							to := (seat + 1 + games.Seat(rng.IntN(n-1))) % games.Seat(n)
							a.Messages = append(a.Messages, &gamev1.Message{To: []int32{to}, Text: fmt.Sprintf("private %d", steps)})
							if rng.IntN(4) == 0 {
								a.Messages = append(a.Messages, &gamev1.Message{Text: fmt.Sprintf("public %d", steps)})
							}
						}
						for i, m := range a.GetMessages() {
							m.Text += fmt.Sprintf(" [from %d to %v at step %d, #%d]", seat, m.GetTo(), steps, i)
							f := forms[rng.IntN(len(forms))]
							m.Proposal = games.RandomAction(&agentv1.Observation{
								LegalMoves: []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE}, ProposalForms: []*gamev1.ProposalForm{f},
							}, rng).GetMove().GetPropose().GetProposal()
						}
						if _, err := st.Apply(seat, a); err != nil {
							t.Fatalf("seat %d: %v refused: %v", seat, a, err)
						}
						for _, m := range a.GetMessages() {
							all = append(all, sent{from: seat, msg: proto.CloneOf(m), terms: termsText(setup, m.GetProposal())})
						}
					}
					for s := range games.Seat(n) {
						checkSeesExactly(t, st.Observe(s), s, all)
					}
				}
			})
		}
	}
}

// termsText writes an offer as briefings do: "A+B: A 450 g, B 300 g".
func termsText(s *coalition.Setup, p *gamev1.Proposal) string {
	var parts, names []string
	for _, sh := range p.GetAllocation().GetShares() {
		names = append(names, s.Players[sh.GetSeat()])
		parts = append(parts, fmt.Sprintf("%s %d %s", s.Players[sh.GetSeat()], sh.GetReceives()[s.Unit], s.Unit))
	}
	return "[offer: " + strings.Join(names, "+") + ": " + strings.Join(parts, ", ") + "]"
}

func checkSeesExactly(t *testing.T, obs *agentv1.Observation, seat games.Seat, all []sent) {
	t.Helper()
	var want, got []*gamev1.Message
	for _, m := range all {
		if m.visibleTo(seat) {
			want = append(want, m.msg)
		}
	}
	for _, e := range obs.GetHistory() {
		got = append(got, e.GetMessages()...)
		if e.GetSeat() != seat && !e.GetFromReferee() && e.GetMove().GetSay() != nil && len(e.GetMessages()) == 0 {
			t.Fatalf("seat %d learns of a say move of seat %d that was not addressed to it: %v", seat, e.GetSeat(), e)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("seat %d sees %d messages, want %d", seat, len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("seat %d's message %d is\n%v\nwant\n%v", seat, i, got[i], want[i])
		}
	}
	briefing := obs.GetBriefing()
	view := prototext.Format(obs.GetCoalition())
	for _, m := range all {
		switch {
		case m.visibleTo(seat) && !strings.Contains(briefing, m.terms):
			t.Fatalf("seat %d's briefing lacks the offer %s it may see:\n%s", seat, m.terms, briefing)
		case !m.visibleTo(seat) && strings.Contains(briefing, m.msg.GetText()):
			t.Fatalf("seat %d's briefing quotes a message not addressed to it: %q", seat, m.msg.GetText())
		case !m.visibleTo(seat) && strings.Contains(briefing, m.terms) && !seesSameTerms(all, seat, m.terms):
			t.Fatalf("seat %d's briefing holds the offer %s, made to others only:\n%s", seat, m.terms, briefing)
		case strings.Contains(view, strings.TrimSuffix(m.msg.GetText(), "]")):
			t.Fatalf("seat %d's view holds message text %q", seat, m.msg.GetText())
		}
	}
	if n := strings.Count(briefing, "[offer: "); n != len(want) {
		t.Fatalf("seat %d's briefing shows %d offers, want %d", seat, n, len(want))
	}
}

// seesSameTerms reports whether seat may see some offer with the same text (random offers can
// coincide).
func seesSameTerms(all []sent, seat games.Seat, terms string) bool {
	return slices.ContainsFunc(all, func(m sent) bool { return m.visibleTo(seat) && m.terms == terms })
}

// TestProposerDraws checks that proposers are drawn uniformly, independently of one another,
// and from the match seed alone: the same seed gives the same draws whatever is played.
func TestProposerDraws(t *testing.T) {
	const seeds = 3000
	var first [3]int
	var pairs [3][3]int
	for seed := range uint64(seeds) {
		d := draws(t, seed, 2)
		first[d[0]]++
		pairs[d[0]][d[1]]++
	}
	// Expected 1000 and 333; the bounds are over four standard deviations wide.
	for s, k := range first {
		if k < 880 || k > 1120 {
			t.Errorf("seat %d drawn first %d times in %d, want about %d: %v", s, k, seeds, seeds/3, first)
		}
	}
	for a := range pairs {
		for b, k := range pairs[a] {
			if k < 250 || k > 420 {
				t.Errorf("draws %d then %d: %d times in %d, want about %d: %v", a, b, k, seeds, seeds/9, pairs)
			}
		}
	}
	// Reproducible: the same seed gives the same ten draws, in a fresh state and after a
	// different phase 1 (with offers) and different rejected proposals.
	for _, seed := range []uint64{0, 1, 42, 1 << 63} {
		want := draws(t, seed, 10)
		if again := draws(t, seed, 10); !slices.Equal(again, want) {
			t.Errorf("seed %d: draws %v, then %v", seed, want, again)
		}
		st := newState(t, params(t, "rounds=2", "max_proposals=1000"), seed)
		rng := rand.New(rand.NewPCG(seed, 1))
		var got []games.Seat
		for len(got) < 10 {
			for _, s := range st.ToMove() {
				obs := st.Observe(s)
				a := games.RandomAction(obs, rng)
				if slices.Contains(obs.GetLegalMoves(), gamev1.MoveKind_MOVE_KIND_PROPOSE) {
					got = append(got, s)
				}
				if obs.GetLegalMoves()[0] == gamev1.MoveKind_MOVE_KIND_ACCEPT {
					a = reject()
				}
				if _, err := st.Apply(s, a); err != nil {
					t.Fatal(err)
				}
			}
			if len(st.ToMove()) == 0 {
				break // a proposal of the proposer alone passes at once
			}
		}
		if !slices.Equal(got, want[:len(got)]) {
			t.Errorf("seed %d: after talk and other proposals the draws are %v, want %v", seed, got, want[:len(got)])
		}
	}
	// Different seeds give different sequences.
	if slices.Equal(draws(t, 1, 10), draws(t, 2, 10)) {
		t.Error("seeds 1 and 2 draw the same ten proposers")
	}
}

// TestOpeningEvents checks the events before the first move: the talk phase, or without talk
// the proposal phase and the first draw, which is the seat to move.
func TestOpeningEvents(t *testing.T) {
	st := newState(t, params(t), 3)
	evs := st.(games.Opener).OpeningEvents()
	if len(evs) != 1 || evs[0].GetPhaseStarted().GetPhase() != coalition.PhaseTalk || !strings.Contains(evs[0].GetPhaseStarted().GetSummary(), "3 rounds") {
		t.Errorf("with talk: %v", evs)
	}
	for seed := range uint64(20) {
		st := newState(t, params(t, "rounds=0"), seed)
		evs := st.(games.Opener).OpeningEvents()
		if len(evs) != 2 || evs[0].GetPhaseStarted().GetPhase() != coalition.PhaseProposals || evs[1].GetChanceDrawn().GetSeat() != st.ToMove()[0] {
			t.Errorf("seed %d without talk: %v, to move %v", seed, evs, st.ToMove())
		}
		if again := st.Clone().(games.Opener).OpeningEvents(); !proto.Equal(again[1], evs[1]) {
			t.Errorf("seed %d: opening events differ between calls", seed)
		}
	}
}
