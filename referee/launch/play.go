package launch

import (
	"context"
	"fmt"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"

	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/match"
)

// Player plays prepared matches. It is safe for concurrent use.
type Player struct {
	// Agents opens the agents of each match. Required.
	Agents *agentconn.Resolver
	// Options are given to the runner of every match (logger, clock, observer, timestamps).
	Options []match.Option
}

// PlayOptions are what one Play call adds.
type PlayOptions struct {
	// Options are added to the Player's.
	Options []match.Option
	// Opened, when set, is called once every agent is open, before the match starts (to tell
	// people where their seats are).
	Opened func([]*agentconn.Conn)
}

// Play opens m's agents, plays the match to its end recording every event to rec, and closes
// the agents; people in human seats are told the outcome. An agent that cannot be opened
// (a failure of ours or of the address, not of play) is an error and nothing is recorded; an
// agent that fails once the match runs is part of the record.
func (p *Player) Play(ctx context.Context, m *Match, rec match.Recorder, o PlayOptions) (*match.Result, error) {
	if m.MaxDuration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, m.MaxDuration,
			fmt.Errorf("the match went past the organiser's limit of %s on a match's time (max_match_time)", m.MaxDuration))
		defer cancel()
	}
	conns, err := p.Agents.OpenAll(ctx, m.Agents)
	if err != nil {
		return nil, err
	}
	defer agentconn.CloseAll(conns)
	if o.Opened != nil {
		o.Opened(conns)
	}
	res, err := m.Run(ctx, agentconn.Clients(conns), agentconn.Labels(conns, m.Labels), rec, append(append([]match.Option(nil), p.Options...), o.Options...)...)
	if res != nil {
		for _, c := range conns {
			if c.Seat != nil {
				c.Seat.End(res.Outcome)
			}
		}
	}
	return res, err
}

// Run plays m with agents already connected, one per seat (labels as the record names them),
// recording to rec: for callers that stand between the referee and an agent (the conformance
// checks watch what the agent under check is sent). Most play with Player.Play.
func (m *Match) Run(ctx context.Context, agents []agentv1.AgentServiceClient, labels []string, rec match.Recorder, opts ...match.Option) (*match.Result, error) {
	return match.NewRunner(rec, opts...).Run(ctx, m.Spec(agents, labels))
}

// Spec is the runner's spec of m played by agents.
func (m *Match) Spec(agents []agentv1.AgentServiceClient, labels []string) match.Spec {
	return match.Spec{
		ID: m.ID, Game: m.Game, Params: m.Params, Seed: m.Seed, Agents: agents, Limits: m.Limits,
		Prefix: m.Prefix, FromTurn: m.FromTurn, TournamentID: m.TournamentID, Labels: labels,
		RevealPrivate: m.RevealPrivate, MaxRecordBytes: m.MaxRecordBytes,
	}
}
