package llm

import (
	"fmt"
	"slices"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// standingMarker begins the line of the private notes that keeps the seat's latest proposal,
// so that no history window loses it: the notes come back to this seat on every turn, and the
// model reads them in its prompt.
const standingMarker = "My latest proposal: "

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
