package analytics

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/ratings"
	"github.com/parley-arena/parley/services/analytics/report"
	"github.com/parley-arena/parley/services/analytics/tables"
)

// standingsBootstrap is the bootstrap sample count of the standings' ratings: fewer than the
// leaderboard's default, since they are recomputed as the tournament goes on.
const standingsBootstrap = 100

// Standings computes how a tournament stands from its matches in the store: a match closed
// void because it was interrupted gives way to its rerun and is not counted at all. Matches
// and Complete are left for whoever knows the schedule. ErrNotFound when the store holds none
// of the tournament's matches.
func (s *Store) Standings(ctx context.Context, tournamentID string) (*analyticsv1.Standings, error) {
	if tournamentID == "" {
		return nil, fmt.Errorf("%w: no tournament id", ErrNotFound)
	}
	rows, err := s.Rows(ctx, Filter{TournamentID: tournamentID})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: no match of tournament %q", ErrNotFound, tournamentID)
	}
	counted := rows[:0]
	for _, r := range rows {
		superseded, err := s.superseded(ctx, r)
		if err != nil {
			return nil, err
		}
		if !superseded {
			counted = append(counted, r)
		}
	}
	return standingsOf(tournamentID, rows[0].Game, counted), nil
}

// superseded reports whether a void match was interrupted and played again under another id.
func (s *Store) superseded(ctx context.Context, r metrics.Row) (bool, error) {
	if !r.Void() {
		return false, nil
	}
	var data []byte
	err := s.db.QueryRowContext(ctx, `SELECT data FROM events WHERE match_id = ? AND kind = 'match_ended'`, r.MatchID).Scan(&data)
	if err != nil {
		return false, fmt.Errorf("analytics: ending of %s: %w", r.MatchID, err)
	}
	ev := new(eventsv1.MatchEvent)
	if err := proto.Unmarshal(data, ev); err != nil {
		return false, fmt.Errorf("analytics: ending of %s: %w", r.MatchID, err)
	}
	return ev.GetMatchEnded().GetOutcome().GetRerunMatchId() != "", nil
}

// standingsOf builds the standings of a tournament's counted rows.
func standingsOf(id, game string, rows []metrics.Row) *analyticsv1.Standings {
	st := &analyticsv1.Standings{TournamentId: id, Game: game, MinMatches: MinRatedMatches}
	for _, r := range rows {
		st.Ended++
		if r.Void() {
			st.Void++
		}
	}
	if len(rows) == 0 {
		return st
	}
	g := tables.BuildGame(rows, tables.Options{})
	st.Seats = g.Seats
	for _, a := range g.AgentStats {
		st.Agents = append(st.Agents, &analyticsv1.AgentStanding{
			Label: a.Agent, Matches: int32(a.Matches), Void: int32(a.Void), Decisive: int32(a.Decisive), Wins: int32(a.Wins),
			WinRate: meanOf(a.WinRate), MeanPayoff: meanOf(a.Payoff), AgreementRate: meanOf(a.Agreement),
			Refused: int32(a.Refused), Faulted: int32(a.Faulted),
		})
	}
	if p := g.Pairs; p != nil {
		pt := &analyticsv1.PairTable{Seat: p.Seat, SeatName: p.SeatName, Rows: p.Rows, Cols: p.Cols}
		for _, row := range p.Cells {
			pr := &analyticsv1.PairRow{}
			for _, c := range row {
				cell := &analyticsv1.PairCell{
					Matches: int32(c.Matches), Void: int32(c.Void), Decisive: int32(c.Decisive), Wins: int32(c.Wins),
					WinRate: meanOf(c.WinRate), AgreementRate: meanOf(c.Agreement),
				}
				if len(c.Payoff) > 0 {
					cell.PayoffSeat0 = meanOf(c.Payoff[0])
				}
				if len(c.Payoff) > 1 {
					cell.PayoffSeat1 = meanOf(c.Payoff[1])
				}
				pr.Cells = append(pr.Cells, cell)
			}
			pt.Cells = append(pt.Cells, pr)
		}
		st.Pairs = pt
	}
	opts := ratings.DefaultOptions()
	opts.Bootstrap = standingsBootstrap
	if lb, err := LeaderboardOf(game, rows, opts); err == nil {
		st.Leaderboard = entriesProto(lb)
	}
	for _, s := range report.Sections(g) {
		tb := &analyticsv1.Table{Title: s.Title, Note: s.Note, Header: s.Header}
		for _, r := range s.Rows {
			tb.Rows = append(tb.Rows, &analyticsv1.TableRow{Cells: r})
		}
		st.Tables = append(st.Tables, tb)
	}
	return st
}

// meanOf is a mean as an optional number: unset while there is nothing to average.
func meanOf(m tables.Mean) *float64 {
	v, ok := m.Value()
	if !ok {
		return nil
	}
	return &v
}

// entriesProto is a leaderboard's entries as the API gives them.
func entriesProto(lb Leaderboard) []*analyticsv1.LeaderboardEntry {
	var out []*analyticsv1.LeaderboardEntry
	for _, e := range lb.Entries {
		out = append(out, &analyticsv1.LeaderboardEntry{
			Agent: e.Agent, Rating: e.Rating.Rating, RatingLow: e.Low, RatingHigh: e.High,
			Matches: int32(e.Matches), Wins: int32(e.Wins), Losses: int32(e.Losses), Ties: int32(e.Ties),
			Score: e.Score, MeanPayoff: e.MeanPayoff, Provisional: e.Provisional, Rank: int32(e.Rank),
		})
	}
	return out
}
