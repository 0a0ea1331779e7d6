package analytics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Filter selects finished matches. Empty fields select everything.
type Filter struct {
	// TournamentID keeps the matches of one tournament.
	TournamentID string
	// Game keeps the matches of one game.
	Game string
	// Agent keeps the matches in which some seat's agent has this key (a label, or
	// "name@version") or, when it has no "@", this name (any version).
	Agent string
	// ExcludeVoid leaves void matches out.
	ExcludeVoid bool
}

// where returns the SQL condition on matches (aliased m) and its arguments. Matches whose
// record could not be read are always left out.
func (f Filter) where() (string, []any) {
	conds := []string{"m.readable = 1"}
	var args []any
	if f.TournamentID != "" {
		conds = append(conds, "m.tournament_id = ?")
		args = append(args, f.TournamentID)
	}
	if f.Game != "" {
		conds = append(conds, "m.game = ?")
		args = append(args, f.Game)
	}
	if f.Agent != "" {
		// A key names one agent (a label, or name@version); a bare name also selects every
		// version of the program.
		cond := "s.agent_key = ?"
		args = append(args, f.Agent)
		if !strings.Contains(f.Agent, "@") {
			cond = "(s.agent_key = ? OR s.agent = ?)"
			args = append(args, f.Agent)
		}
		conds = append(conds, "EXISTS (SELECT 1 FROM seats s WHERE s.match_id = m.match_id AND "+cond+")")
	}
	if f.ExcludeVoid {
		conds = append(conds, "m.void = 0")
	}
	return strings.Join(conds, " AND "), args
}

// Rows returns the rows of the finished matches f selects, ordered by match id, each with
// its seats, values (in the order the families gave them) and usage. It is the bridge to
// tournament tables and reports. A match is in the store once its record is complete; a match
// whose family metrics failed has the common values only (see MatchInfo.Error).
func (s *Store) Rows(ctx context.Context, f Filter) ([]metrics.Row, error) {
	where, args := f.where()
	return s.rows(ctx, "WHERE "+where+" ORDER BY m.match_id", args)
}

// Row returns one match's row, or an error wrapping ErrNotFound.
func (s *Store) Row(ctx context.Context, matchID string) (metrics.Row, error) {
	rows, err := s.rows(ctx, "WHERE m.readable = 1 AND m.match_id = ?", []any{matchID})
	if err != nil {
		return metrics.Row{}, err
	}
	if len(rows) == 0 {
		return metrics.Row{}, fmt.Errorf("%w: match %q", ErrNotFound, matchID)
	}
	return rows[0], nil
}

// rows reads the rows of the matches the clause (on matches m) selects, in its order.
func (s *Store) rows(ctx context.Context, clause string, args []any) ([]metrics.Row, error) {
	// One read transaction, so the four queries see the same state.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("analytics: rows: %w", err)
	}
	defer tx.Rollback()
	q, err := tx.QueryContext(ctx, `SELECT m.match_id, m.tournament_id, m.game, m.rules_version, m.seed, m.cause, m.agreement, m.turns
		FROM matches m `+clause, args...)
	if err != nil {
		return nil, fmt.Errorf("analytics: rows: %w", err)
	}
	var out []metrics.Row
	index := make(map[string]int)
	for q.Next() {
		var r metrics.Row
		var seed int64
		var cause string
		if err := q.Scan(&r.MatchID, &r.TournamentID, &r.Game, &r.RulesVersion, &seed, &cause, &r.Agreement, &r.Turns); err != nil {
			q.Close()
			return nil, fmt.Errorf("analytics: rows: %w", err)
		}
		r.Seed = uint64(seed)
		r.Cause = matchv1.EndCause(matchv1.EndCause_value[cause])
		index[r.MatchID] = len(out)
		out = append(out, r)
	}
	q.Close()
	if err := q.Err(); err != nil {
		return nil, fmt.Errorf("analytics: rows: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	sub := "SELECT m.match_id FROM matches m " + clause

	seats, err := tx.QueryContext(ctx, `SELECT match_id, seat, name, agent, agent_version, payoff, faulted, label FROM seats
		WHERE match_id IN (`+sub+`) ORDER BY match_id, seat`, args...)
	if err != nil {
		return nil, fmt.Errorf("analytics: rows: seats: %w", err)
	}
	for seats.Next() {
		var id string
		var sr metrics.SeatResult
		if err := seats.Scan(&id, &sr.Seat, &sr.Name, &sr.Agent, &sr.AgentVersion, &sr.Payoff, &sr.Faulted, &sr.Label); err != nil {
			seats.Close()
			return nil, fmt.Errorf("analytics: rows: seats: %w", err)
		}
		if i, ok := index[id]; ok {
			out[i].Seats = append(out[i].Seats, sr)
		}
	}
	seats.Close()
	if err := seats.Err(); err != nil {
		return nil, fmt.Errorf("analytics: rows: seats: %w", err)
	}

	vals, err := tx.QueryContext(ctx, `SELECT match_id, name, seat, value FROM metric_values
		WHERE match_id IN (`+sub+`) ORDER BY match_id, ord`, args...)
	if err != nil {
		return nil, fmt.Errorf("analytics: rows: values: %w", err)
	}
	for vals.Next() {
		var id string
		var v metrics.Value
		if err := vals.Scan(&id, &v.Name, &v.Seat, &v.Value); err != nil {
			vals.Close()
			return nil, fmt.Errorf("analytics: rows: values: %w", err)
		}
		if i, ok := index[id]; ok {
			out[i].Values = append(out[i].Values, v)
		}
	}
	vals.Close()
	if err := vals.Err(); err != nil {
		return nil, fmt.Errorf("analytics: rows: values: %w", err)
	}

	usage, err := tx.QueryContext(ctx, `SELECT match_id, data FROM usage WHERE match_id IN (`+sub+`) ORDER BY match_id, seat`, args...)
	if err != nil {
		return nil, fmt.Errorf("analytics: rows: usage: %w", err)
	}
	defer usage.Close()
	for usage.Next() {
		var id string
		var data []byte
		if err := usage.Scan(&id, &data); err != nil {
			return nil, fmt.Errorf("analytics: rows: usage: %w", err)
		}
		u := new(eventsv1.SeatUsage)
		if err := proto.Unmarshal(data, u); err != nil {
			return nil, fmt.Errorf("analytics: rows: usage of %s: %w", id, err)
		}
		if i, ok := index[id]; ok {
			out[i].Usage = append(out[i].Usage, u)
		}
	}
	if err := usage.Err(); err != nil {
		return nil, fmt.Errorf("analytics: rows: usage: %w", err)
	}
	return out, nil
}

// MatchInfo is a finished match in a listing.
type MatchInfo struct {
	MatchID, TournamentID, Game string
	Cause                       matchv1.EndCause
	Agreement, Void             bool
	Turns                       int32
	// Events in the record.
	Events int
	// Summary is the outcome's plain-language summary.
	Summary string
	// Seats with their agents and payoffs.
	Seats []metrics.SeatResult
	// Error says why the record or its family metrics could not be read; empty when all went
	// well.
	Error string
}

// Page asks for one page of a listing.
type Page struct {
	// Size is the most items to return; 0 or less means DefaultPageSize, and at most
	// MaxPageSize are returned.
	Size int
	// Token is the next token Matches returned with the previous page; empty for the first
	// page.
	Token string
}

// Page sizes.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// ErrBadPageToken is returned for a page token this store did not give.
var ErrBadPageToken = errors.New("analytics: bad page token")

// Matches lists the finished matches f selects in the order they were computed (so pages stay
// stable while matches are added), one page at a time; next is the token of the next page, empty
// after the last. Unlike Rows, it also lists matches whose record could not be read at all.
func (s *Store) Matches(ctx context.Context, f Filter, page Page) (_ []MatchInfo, next string, _ error) {
	size := page.Size
	if size <= 0 {
		size = DefaultPageSize
	}
	size = min(size, MaxPageSize)
	var after int64
	if page.Token != "" {
		n, err := strconv.ParseInt(page.Token, 10, 64)
		if err != nil || n < 0 {
			return nil, "", fmt.Errorf("%w %q", ErrBadPageToken, page.Token)
		}
		after = n
	}
	where, args := f.where()
	if f == (Filter{}) {
		where = "1 = 1" // a plain listing shows unreadable records too
	}
	out, ns, err := s.list(ctx, where+" AND m.n > ?", append(args, after), size+1)
	if err != nil {
		return nil, "", err
	}
	if len(out) > size {
		out, next = out[:size], strconv.FormatInt(ns[size-1], 10)
	}
	return out, next, nil
}

// Match returns the listing entry of one finished match, or an error wrapping ErrNotFound.
func (s *Store) Match(ctx context.Context, matchID string) (MatchInfo, error) {
	out, _, err := s.list(ctx, "m.match_id = ?", []any{matchID}, 1)
	if err != nil {
		return MatchInfo{}, err
	}
	if len(out) == 0 {
		return MatchInfo{}, fmt.Errorf("%w: match %q", ErrNotFound, matchID)
	}
	return out[0], nil
}

// list reads at most limit matches that where (on matches m) selects, in computed order, with
// their seats; ns are their positions in that order.
func (s *Store) list(ctx context.Context, where string, args []any, limit int) ([]MatchInfo, []int64, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("analytics: matches: %w", err)
	}
	defer tx.Rollback()
	q, err := tx.QueryContext(ctx, `SELECT m.n, m.match_id, m.tournament_id, m.game, m.cause, m.agreement, m.void, m.turns, m.events, m.summary, m.error
		FROM matches m WHERE `+where+` ORDER BY m.n LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, nil, fmt.Errorf("analytics: matches: %w", err)
	}
	var out []MatchInfo
	var ns []int64
	index := make(map[string]int)
	for q.Next() {
		var mi MatchInfo
		var n int64
		var cause string
		if err := q.Scan(&n, &mi.MatchID, &mi.TournamentID, &mi.Game, &cause, &mi.Agreement, &mi.Void, &mi.Turns, &mi.Events, &mi.Summary, &mi.Error); err != nil {
			q.Close()
			return nil, nil, fmt.Errorf("analytics: matches: %w", err)
		}
		mi.Cause = matchv1.EndCause(matchv1.EndCause_value[cause])
		index[mi.MatchID] = len(out)
		out = append(out, mi)
		ns = append(ns, n)
	}
	q.Close()
	if err := q.Err(); err != nil {
		return nil, nil, fmt.Errorf("analytics: matches: %w", err)
	}
	if len(out) == 0 {
		return nil, nil, nil
	}
	ids := make([]any, len(out))
	marks := make([]string, len(out))
	for i, mi := range out {
		ids[i], marks[i] = mi.MatchID, "?"
	}
	seats, err := tx.QueryContext(ctx, `SELECT match_id, seat, name, agent, agent_version, payoff, faulted, label FROM seats
		WHERE match_id IN (`+strings.Join(marks, ",")+`) ORDER BY match_id, seat`, ids...)
	if err != nil {
		return nil, nil, fmt.Errorf("analytics: matches: seats: %w", err)
	}
	defer seats.Close()
	for seats.Next() {
		var id string
		var sr metrics.SeatResult
		if err := seats.Scan(&id, &sr.Seat, &sr.Name, &sr.Agent, &sr.AgentVersion, &sr.Payoff, &sr.Faulted, &sr.Label); err != nil {
			return nil, nil, fmt.Errorf("analytics: matches: seats: %w", err)
		}
		if i, ok := index[id]; ok {
			out[i].Seats = append(out[i].Seats, sr)
		}
	}
	if err := seats.Err(); err != nil {
		return nil, nil, fmt.Errorf("analytics: matches: seats: %w", err)
	}
	return out, ns, nil
}

// Events returns the stored events of a match, in seq order (all of them, ended or not), or an
// error wrapping ErrNotFound when there are none.
func (s *Store) Events(ctx context.Context, matchID string) ([]*eventsv1.MatchEvent, error) {
	evs, err := loadEvents(ctx, s.db, matchID, 0)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, fmt.Errorf("%w: no events of match %q", ErrNotFound, matchID)
	}
	return evs, nil
}

// Status counts what the store holds.
type Status struct {
	// Events stored, and distinct matches they belong to.
	Events, MatchesSeen int64
	// Matches whose rows are computed; of them, void ones and ones whose record or family
	// metrics failed.
	Matches, Void, Errors int64
}

// Status returns the store's counts.
func (s *Store) Status(ctx context.Context) (Status, error) {
	var st Status
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM events),
		(SELECT count(DISTINCT match_id) FROM events),
		(SELECT count(*) FROM matches),
		(SELECT count(*) FROM matches WHERE void = 1),
		(SELECT count(*) FROM matches WHERE error != '')`).Scan(&st.Events, &st.MatchesSeen, &st.Matches, &st.Void, &st.Errors)
	if err != nil {
		return Status{}, fmt.Errorf("analytics: status: %w", err)
	}
	return st, nil
}
