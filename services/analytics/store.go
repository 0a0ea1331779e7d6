// Package analytics is Parley's analytics service: a durable JetStream consumer of every match
// event (Consumer) that keeps the events and each finished match's metrics in an embedded
// SQLite database (Store), and answers queries about them: in Go (Store's methods) and over
// gRPC (Server, parley.analytics.v1.AnalyticsService).
//
// Exactly-once effect over at-least-once delivery: every event is stored under its (match_id,
// seq) with insert-or-ignore, so a redelivered or re-sent event changes nothing; a match's row
// (its metrics.Row: match, seats, values, usage) is computed once, in the transaction that
// stores the last missing event of a match whose match_ended is in, whatever the order the
// events arrive in; and the consumer acks a batch only after the transaction that stored it
// has committed. A consumer stopped at any point (even killed between the commit and the
// acks) and restarted on the same database and durable consumer catches up where it stopped,
// losing nothing and counting nothing twice.
//
// The schema (see schema below) keeps the raw events, one row per match, per seat, per metric
// value and per seat's reported usage, so a person can also query the file with the sqlite3
// tool.
package analytics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go

	"github.com/parley-arena/parley/services/analytics/metrics"
)

// SchemaVersion is the version of the database layout this package writes (PRAGMA
// user_version). A database of an older version is brought up to it when opened (version 2
// added seats.label; version 3 keys seats by metrics.SeatResult.AgentKey, where a label that
// only repeats the agent's name no longer makes a second identity); one of a newer version is
// refused.
const SchemaVersion = 3

// Errors returned, wrapped, by Store.
var (
	// ErrNotFound reports a match the store does not have (or has not finished computing).
	ErrNotFound = errors.New("analytics: not found")
	// ErrSchema reports a database file written by another version of this package.
	ErrSchema = errors.New("analytics: database schema")
)

// schema creates the tables. Times are not stored: records carry none unless the referee was
// asked for timestamps, and the order rows were computed in is kept in matches.n.
const schema = `
-- Every event of every match, as received; the source of everything else.
CREATE TABLE IF NOT EXISTS events (
	match_id   TEXT    NOT NULL,
	seq        INTEGER NOT NULL,           -- MatchEvent.seq, 1 = match_started
	kind       TEXT    NOT NULL,           -- payload branch: match_started, action_taken, ...
	turn       INTEGER NOT NULL,
	stream_seq INTEGER NOT NULL,           -- JetStream stream sequence of the copy stored
	data       BLOB    NOT NULL,           -- the MatchEvent, protobuf
	PRIMARY KEY (match_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_kind ON events (kind, match_id);

-- One row per finished match, written once, when its record is complete.
CREATE TABLE IF NOT EXISTS matches (
	n             INTEGER PRIMARY KEY AUTOINCREMENT, -- order computed in; page tokens
	match_id      TEXT    NOT NULL UNIQUE,
	tournament_id TEXT    NOT NULL,
	game          TEXT    NOT NULL,
	rules_version TEXT    NOT NULL,
	seed          INTEGER NOT NULL,        -- uint64 bits, as a signed 64-bit integer
	cause         TEXT    NOT NULL,        -- parley.match.v1.EndCause name
	agreement     INTEGER NOT NULL,
	void          INTEGER NOT NULL,
	turns         INTEGER NOT NULL,
	events        INTEGER NOT NULL,        -- events in the record
	summary       TEXT    NOT NULL,        -- Outcome.summary
	readable      INTEGER NOT NULL,        -- 0: the record could not be read at all
	error         TEXT    NOT NULL         -- why the record or the family metrics failed
);
CREATE INDEX IF NOT EXISTS matches_tournament ON matches (tournament_id, game);
CREATE INDEX IF NOT EXISTS matches_tournament_n ON matches (tournament_id, n); -- the last row of a tournament
CREATE INDEX IF NOT EXISTS matches_game ON matches (game);

-- Each seat of each finished match.
CREATE TABLE IF NOT EXISTS seats (
	match_id      TEXT    NOT NULL,
	seat          INTEGER NOT NULL,
	name          TEXT    NOT NULL,
	role          TEXT    NOT NULL,
	agent         TEXT    NOT NULL,
	agent_version TEXT    NOT NULL,
	agent_key     TEXT    NOT NULL,        -- label, else name@version, else name: the rating key
	payoff        REAL    NOT NULL,
	faulted       INTEGER NOT NULL,
	label         TEXT    NOT NULL DEFAULT '', -- the organiser's name for the agent (SeatInfo.label)
	PRIMARY KEY (match_id, seat)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS seats_agent_key ON seats (agent_key);
CREATE INDEX IF NOT EXISTS seats_agent ON seats (agent);

-- Every metric value of each finished match (metrics.Row.Values, in order).
CREATE TABLE IF NOT EXISTS metric_values (
	match_id TEXT    NOT NULL,
	ord      INTEGER NOT NULL,             -- position in the row
	name     TEXT    NOT NULL,
	seat     INTEGER NOT NULL,             -- -1: the whole match
	value    REAL    NOT NULL,
	PRIMARY KEY (match_id, ord)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS metric_values_name ON metric_values (name, seat);

-- Each seat's summed resource use, for seats whose agents reported any (LLM agents).
CREATE TABLE IF NOT EXISTS usage (
	match_id          TEXT    NOT NULL,
	seat              INTEGER NOT NULL,
	model             TEXT    NOT NULL,
	prompt_tokens     INTEGER NOT NULL,
	completion_tokens INTEGER NOT NULL,
	retries           INTEGER NOT NULL,
	format_failures   INTEGER NOT NULL,
	calls             INTEGER NOT NULL,
	cache_hits        INTEGER NOT NULL,
	latency_ms        REAL    NOT NULL,
	fallback          INTEGER NOT NULL,
	data              BLOB    NOT NULL,    -- the SeatUsage, protobuf
	PRIMARY KEY (match_id, seat)
) WITHOUT ROWID;
`

// Store is the analytics database. Its methods are safe for concurrent use; one process
// should ingest at a time (SQLite serialises writers anyway).
type Store struct {
	db   *sql.DB
	path string

	standings standingsCache
}

// OpenStore opens (creating if needed) the database file at path. The caller must Close it.
func OpenStore(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("analytics: open store: no database file given")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("analytics: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("analytics: open %s: %w", s.path, err)
	}
	if version < 0 || version > SchemaVersion {
		return fmt.Errorf("%w: %s has version %d, this program reads version %d", ErrSchema, s.path, version, SchemaVersion)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("analytics: open %s: %w", s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("analytics: create schema in %s: %w", s.path, err)
	}
	if version == 1 {
		// Version 1 had no labels: its seats are keyed by name@version, as they were.
		if _, err := tx.ExecContext(ctx, `ALTER TABLE seats ADD COLUMN label TEXT NOT NULL DEFAULT ''`); err != nil {
			return fmt.Errorf("analytics: upgrade %s to version %d: %w", s.path, SchemaVersion, err)
		}
	}
	if version > 0 && version < 3 {
		if err := rekeySeats(ctx, tx); err != nil {
			return fmt.Errorf("analytics: upgrade %s to version %d: %w", s.path, SchemaVersion, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("analytics: create schema in %s: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("analytics: create schema in %s: %w", s.path, err)
	}
	return nil
}

// rekeySeats sets every seat's agent_key to what metrics.SeatResult.AgentKey says now.
func rekeySeats(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT match_id, seat, agent, agent_version, label, agent_key FROM seats`)
	if err != nil {
		return err
	}
	type change struct {
		id   string
		seat int32
		key  string
	}
	var changes []change
	for rows.Next() {
		var id, old string
		var s metrics.SeatResult
		if err := rows.Scan(&id, &s.Seat, &s.Agent, &s.AgentVersion, &s.Label, &old); err != nil {
			rows.Close()
			return err
		}
		if key := s.AgentKey(); key != old {
			changes = append(changes, change{id, s.Seat, key})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range changes {
		if _, err := tx.ExecContext(ctx, `UPDATE seats SET agent_key = ? WHERE match_id = ? AND seat = ?`, c.key, c.id, c.seat); err != nil {
			return err
		}
	}
	return nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }
