package analytics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Delivered is one event as the consumer received it.
type Delivered struct {
	// Event is the decoded event; it must have a match id and seq >= 1.
	Event *eventsv1.MatchEvent
	// StreamSeq is its JetStream stream sequence (0 when not from a stream).
	StreamSeq uint64
}

// IngestStats says what one Ingest did.
type IngestStats struct {
	// Stored counts events new to the store; Duplicates those it already had (redelivered or
	// re-sent), which changed nothing.
	Stored, Duplicates int
	// Computed lists the matches whose rows were computed, in order.
	Computed []string
}

// Ingest stores events and computes the row of every match they complete, all in one
// transaction: either all of it is committed or none. An event already stored (same match id
// and seq) is ignored. A match is complete when its match_ended (seq N) and every event of
// seq 1..N are stored; its row is computed from those N events with reg (family metrics; a
// family's error is kept with the row, which then has the common values only) and never
// again.
func (s *Store) Ingest(ctx context.Context, reg *metrics.Registry, batch []Delivered) (IngestStats, error) {
	var st IngestStats
	for _, d := range batch {
		if err := bus.ValidMatchID(d.Event.GetMatchId()); err != nil {
			return st, fmt.Errorf("analytics: ingest: %w", err)
		}
		if d.Event.GetSeq() == 0 {
			return st, fmt.Errorf("analytics: ingest: match %s: event with seq 0", d.Event.GetMatchId())
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("analytics: ingest: %w", err)
	}
	defer tx.Rollback()

	insert, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO events (match_id, seq, kind, turn, stream_seq, data) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return st, fmt.Errorf("analytics: ingest: %w", err)
	}
	defer insert.Close()
	var touched []string
	seen := make(map[string]bool)
	for _, d := range batch {
		ev := d.Event
		data, err := proto.Marshal(ev)
		if err != nil {
			return st, fmt.Errorf("analytics: ingest %s: %w", bus.MsgID(ev.GetMatchId(), ev.GetSeq()), err)
		}
		res, err := insert.ExecContext(ctx, ev.GetMatchId(), int64(ev.GetSeq()), bus.EventName(ev), ev.GetTurn(), int64(d.StreamSeq), data)
		if err != nil {
			return st, fmt.Errorf("analytics: ingest %s: %w", bus.MsgID(ev.GetMatchId(), ev.GetSeq()), err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			st.Duplicates++
			continue
		}
		st.Stored++
		if !seen[ev.GetMatchId()] {
			seen[ev.GetMatchId()] = true
			touched = append(touched, ev.GetMatchId())
		}
	}
	for _, id := range touched {
		done, err := computeIfComplete(ctx, tx, reg, id)
		if err != nil {
			return st, err
		}
		if done {
			st.Computed = append(st.Computed, id)
		}
	}
	if err := tx.Commit(); err != nil {
		return IngestStats{}, fmt.Errorf("analytics: ingest: commit: %w", err)
	}
	return st, nil
}

// computeIfComplete writes the row of match id when its record is complete and it has none.
func computeIfComplete(ctx context.Context, tx *sql.Tx, reg *metrics.Registry, id string) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM matches WHERE match_id = ?`, id).Scan(&one)
	switch {
	case err == nil:
		return false, nil // computed already
	case !errors.Is(err, sql.ErrNoRows):
		return false, fmt.Errorf("analytics: match %s: %w", id, err)
	}
	var endSeq, have int64
	err = tx.QueryRowContext(ctx, `SELECT e.seq, (SELECT count(*) FROM events WHERE match_id = e.match_id AND seq <= e.seq)
		FROM events e WHERE e.match_id = ? AND e.kind = 'match_ended' ORDER BY e.seq LIMIT 1`, id).Scan(&endSeq, &have)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil // not ended yet
	case err != nil:
		return false, fmt.Errorf("analytics: match %s: %w", id, err)
	case have < endSeq:
		return false, nil // events missing: a later delivery completes it
	}
	events, err := loadEvents(ctx, tx, id, endSeq)
	if err != nil {
		return false, err
	}
	if err := writeRow(ctx, tx, reg, id, events); err != nil {
		return false, err
	}
	return true, nil
}

// querier is what loadEvents needs of a *sql.DB or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// loadEvents reads the events of match id with seq <= upTo (all, when upTo is 0), in order.
func loadEvents(ctx context.Context, q querier, id string, upTo int64) ([]*eventsv1.MatchEvent, error) {
	query, args := `SELECT data FROM events WHERE match_id = ? ORDER BY seq`, []any{id}
	if upTo > 0 {
		query, args = `SELECT data FROM events WHERE match_id = ? AND seq <= ? ORDER BY seq`, []any{id, upTo}
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("analytics: events of %s: %w", id, err)
	}
	defer rows.Close()
	var out []*eventsv1.MatchEvent
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("analytics: events of %s: %w", id, err)
		}
		ev := new(eventsv1.MatchEvent)
		if err := proto.Unmarshal(data, ev); err != nil {
			return nil, fmt.Errorf("analytics: events of %s: %w", id, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("analytics: events of %s: %w", id, err)
	}
	return out, nil
}

// writeRow computes a complete match's row and writes it: match, seats, values, usage.
func writeRow(ctx context.Context, tx *sql.Tx, reg *metrics.Registry, id string, events []*eventsv1.MatchEvent) error {
	row, err := metrics.NewRow(events, reg)
	readable, errText := true, ""
	if err != nil {
		// The family could not read it: keep the common values and say why.
		errText = err.Error()
		row, err = metrics.NewRow(events, nil)
		if err != nil {
			readable, errText = false, err.Error()
		}
	}
	if !readable {
		_, err := tx.ExecContext(ctx, `INSERT INTO matches (match_id, tournament_id, game, rules_version, seed, cause, agreement, void, turns, events, summary, readable, error)
			VALUES (?, '', '', '', 0, 'END_CAUSE_UNSPECIFIED', 0, 0, 0, ?, '', 0, ?)`, id, len(events), errText)
		if err != nil {
			return fmt.Errorf("analytics: match %s: %w", id, err)
		}
		return nil
	}
	started := events[0].GetMatchStarted()
	ended := events[len(events)-1].GetMatchEnded()
	_, err = tx.ExecContext(ctx, `INSERT INTO matches (match_id, tournament_id, game, rules_version, seed, cause, agreement, void, turns, events, summary, readable, error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`,
		id, row.TournamentID, row.Game, row.RulesVersion, int64(row.Seed), row.Cause.String(), row.Agreement, row.Void(),
		row.Turns, len(events), ended.GetOutcome().GetSummary(), errText)
	if err != nil {
		return fmt.Errorf("analytics: match %s: %w", id, err)
	}
	roles := make(map[int32]string)
	for _, s := range started.GetSeats() {
		roles[s.GetSeat()] = s.GetRole()
	}
	for _, s := range row.Seats {
		_, err := tx.ExecContext(ctx, `INSERT INTO seats (match_id, seat, name, role, agent, agent_version, agent_key, payoff, faulted, label)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, s.Seat, s.Name, roles[s.Seat], s.Agent, s.AgentVersion, s.AgentKey(), s.Payoff, s.Faulted, s.Label)
		if err != nil {
			return fmt.Errorf("analytics: match %s seat %d: %w", id, s.Seat, err)
		}
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO metric_values (match_id, ord, name, seat, value) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("analytics: match %s: %w", id, err)
	}
	defer ins.Close()
	for i, v := range row.Values {
		if _, err := ins.ExecContext(ctx, id, i, v.Name, v.Seat, v.Value); err != nil {
			return fmt.Errorf("analytics: match %s value %s: %w", id, v.Name, err)
		}
	}
	for _, u := range row.Usage {
		data, err := proto.Marshal(u)
		if err != nil {
			return fmt.Errorf("analytics: match %s usage: %w", id, err)
		}
		t := u.GetTotal()
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO usage (match_id, seat, model, prompt_tokens, completion_tokens, retries, format_failures, calls, cache_hits, latency_ms, fallback, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, u.GetSeat(), t.GetModel(), t.GetPromptTokens(), t.GetCompletionTokens(),
			t.GetRetries(), t.GetFormatFailures(), t.GetCalls(), t.GetCacheHits(),
			float64(t.GetLatency().AsDuration().Microseconds())/1000, t.GetFallback(), data)
		if err != nil {
			return fmt.Errorf("analytics: match %s usage: %w", id, err)
		}
	}
	return nil
}
