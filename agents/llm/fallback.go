package llm

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// neutralText is the text of a required message the fallback has to send.
const neutralText = "(no message)"

// standingMarker begins the line of the private notes that keeps the seat's latest proposal,
// so that no history window loses it (the notes come back to this seat on every turn).
const standingMarker = "My latest proposal: "

// fallback is the agent's move when the model gave none usable. It never decides the game on
// the agent's behalf: the model's own move if it was legal (its messages were the problem);
// else pass; else say; else its own latest proposal again (from the history or its notes);
// else a neutral proposal (an even split, each amount's middle, or the latest deal on the
// table); else a choice drawn from the match's seed and the turn; else reject, which ends the
// game with no deal, as running out of turns does; accept never. It carries one neutral
// message per required message. how says which, for the private reasoning.
func (t *turn) fallback(kept *gamev1.Move) (*agentv1.Action, string) {
	var move *gamev1.Move
	var how string
	propose := func(p *gamev1.Proposal) *gamev1.Move {
		return &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: p}}}
	}
	switch {
	case kept != nil:
		move, how = kept, "the model's own move ("+kindWord(games.KindOf(kept))+") without its unusable messages"
	case t.isLegal(gamev1.MoveKind_MOVE_KIND_PASS):
		move, how = &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}, "pass"
	case t.isLegal(gamev1.MoveKind_MOVE_KIND_SAY):
		move, how = &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, "say (talk only)"
	case t.isLegal(gamev1.MoveKind_MOVE_KIND_PROPOSE):
		if p := t.ownLatest(); p != nil {
			move, how = propose(p), "its own latest proposal again"
		} else if p := t.neutralProposal(); p != nil {
			move, how = propose(p), "a neutral proposal ("+games.DescribeProposal(p, t.names)+")"
		}
	}
	if move == nil && t.isLegal(gamev1.MoveKind_MOVE_KIND_CHOOSE) && len(t.choices) > 0 {
		r := t.rng()
		move = &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: t.choices[r.IntN(len(t.choices))].GetId()}}}
		how = "an option drawn at random (" + move.GetChoose().GetOption() + ")"
	}
	if move == nil && t.isLegal(gamev1.MoveKind_MOVE_KIND_REJECT) {
		move, how = &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, "reject (nothing less decisive is legal)"
	}
	if move == nil {
		if r := games.RandomAction(t.obs, t.rng()); r != nil {
			move = r.GetMove()
		}
		how = "a random legal move (" + kindWord(games.KindOf(move)) + ")"
	}
	action := &agentv1.Action{Move: move}
	for _, s := range t.slots {
		action.Messages = append(action.Messages, &gamev1.Message{To: slices.Clone(s.GetTo()), Text: neutralText})
	}
	return action, how
}

// rng is a generator seeded from the match, seat, turn and attempt: the same fallback replays.
func (t *turn) rng() *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d/%d", t.obs.GetMatchId(), t.self, t.obs.GetTurn(), t.obs.GetAttempt())
	return rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))
}

// ownLatest is this seat's latest proposal (a proposal move or terms attached to one of its
// messages), when it is legal now: from its private notes, which keep it whatever the history
// shows, else from the history.
func (t *turn) ownLatest() *gamev1.Proposal {
	notes := t.obs.GetNotes()
	for i := len(notes) - 1; i >= 0; i-- {
		lines := strings.Split(notes[i], "\n")
		for j := len(lines) - 1; j >= 0; j-- {
			if terms, ok := strings.CutPrefix(strings.TrimSpace(lines[j]), standingMarker); ok {
				return t.proposalNow(terms)
			}
		}
	}
	h := t.obs.GetHistory()
	for i := len(h) - 1; i >= 0; i-- {
		e := h[i]
		if e.GetFromReferee() || e.GetSeat() != t.self {
			continue
		}
		if p := proposalOf(e.GetMove(), e.GetMessages()); p != nil {
			return t.proposalNow(t.writeProposal(p))
		}
	}
	return nil
}

// proposalOf is the proposal of a move, else the first terms attached to its messages.
func proposalOf(move *gamev1.Move, msgs []*gamev1.Message) *gamev1.Proposal {
	if p := move.GetPropose().GetProposal(); p != nil {
		return p
	}
	for _, m := range msgs {
		if p := m.GetProposal(); p != nil {
			return p
		}
	}
	return nil
}

// proposalNow reads written terms as a proposal legal now, or nil.
func (t *turn) proposalNow(terms string) *gamev1.Proposal {
	if form := dealForm(t.forms); form != nil {
		d, err := t.parseDeal(terms, form)
		if err != nil {
			return nil
		}
		return &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: d}}
	}
	items, err := t.parseItems(terms, t.bounds)
	if err != nil {
		return nil
	}
	alloc, err := t.allocation(items, t.forms, t.bounds)
	if err != nil {
		return nil
	}
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: alloc}}
}

// writeProposal writes terms the way parseItems and parseDeal read them.
func (t *turn) writeProposal(p *gamev1.Proposal) string {
	if d := p.GetDeal(); d != nil {
		return dealText(d)
	}
	var parts []string
	for _, sh := range p.GetAllocation().GetShares() {
		for _, side := range []gamev1.ShareSide{gamev1.ShareSide_SHARE_SIDE_GIVES, gamev1.ShareSide_SHARE_SIDE_RECEIVES} {
			m := sh.GetGives()
			if side == gamev1.ShareSide_SHARE_SIDE_RECEIVES {
				m = sh.GetReceives()
			}
			if len(m) == 0 {
				continue
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			amounts := make([]string, len(keys))
			for i, k := range keys {
				amounts[i] = fmt.Sprintf("%d %s", m[k], k)
			}
			parts = append(parts, fmt.Sprintf("%s %s %s", t.name(sh.GetSeat()), sideWord(side), strings.Join(amounts, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

// notesWithStanding returns the action's private notes with its standing proposal appended,
// when the action carries one.
func (t *turn) notesWithStanding(a *agentv1.Action) string {
	notes := a.GetPrivateNotes()
	p := proposalOf(a.GetMove(), a.GetMessages())
	if p == nil {
		return notes
	}
	line := standingMarker + t.writeProposal(p)
	if strings.TrimSpace(notes) == "" {
		return clip(line, games.MaxTextBytes)
	}
	// The marker line goes last and survives clipping.
	return clip(notes, games.MaxTextBytes-len(line)-1) + "\n" + line
}

// neutralProposal is a proposal that favours nobody, for a seat with none of its own: the
// latest deal on the table (else each issue's first option), or an allocation that shares
// each required total evenly and sets every other amount to the middle of its range.
func (t *turn) neutralProposal() *gamev1.Proposal {
	if form := dealForm(t.forms); form != nil {
		h := t.obs.GetHistory()
		for i := len(h) - 1; i >= 0; i-- {
			if p := proposalOf(h[i].GetMove(), h[i].GetMessages()); p.GetDeal() != nil {
				if d, err := t.checkDeal(p.GetDeal(), form); err == nil {
					return &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: d}}
				}
			}
		}
		var ids []string
		for _, is := range form.GetIssues() {
			if opts := is.GetOptions(); len(opts) > 0 {
				ids = append(ids, opts[0].GetId())
			}
		}
		return t.proposalNow(strings.Join(ids, ", "))
	}
	forms := t.forms
	if len(forms) == 0 {
		forms = []*gamev1.ProposalForm{{Bounds: t.bounds}}
	}
	for _, f := range forms {
		items := evenItems(f)
		if alloc, err := t.allocation(items, t.forms, t.bounds); err == nil {
			return &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: alloc}}
		}
	}
	return nil
}

// evenItems fills a form: each total shared as evenly as the bounds allow, in bound order;
// amounts under no total at the middle of their range.
func evenItems(f *gamev1.ProposalForm) []item {
	bounds := f.GetBounds()
	amounts := make([]int64, len(bounds))
	done := make([]bool, len(bounds))
	for _, tot := range f.GetTotals() {
		var idx []int
		for i, b := range bounds {
			if b.GetSide() == tot.GetSide() && b.GetResource() == tot.GetResource() {
				idx = append(idx, i)
			}
		}
		left := tot.GetTotal()
		for k, i := range idx {
			b := bounds[i]
			share := min(max(left/int64(len(idx)-k), b.GetMin()), b.GetMax())
			amounts[i], done[i] = share, true
			left -= share
		}
	}
	out := make([]item, len(bounds))
	for i, b := range bounds {
		if !done[i] {
			amounts[i] = b.GetMin() + (b.GetMax()-b.GetMin())/2
		}
		out[i] = item{seat: b.GetSeat(), side: b.GetSide(), resource: b.GetResource(), amount: amounts[i]}
	}
	return out
}
