// Package imports turns a study's published runs — the logs of games another platform played
// between language models — into Parley matches in the store, each recorded as a played match
// is (the same events on the same JetStream subjects), so that every view of Parley works on
// them: the match page, the record, replay, analytics, ratings and reports.
//
// A study's log format plugs in as a Format; the package does the rest, the same for every
// study:
//
//   - Walk finds the games in the paths given: folders (recursively), single files, .tar.gz
//     archives of either (an entry with an absolute path or a ".." step is refused, and
//     nothing is ever written but the store), and whatever the Format says it needs beside a
//     game (Aux files, such as a run's config).
//   - Format.Read turns one game's log into a Game: the Parley game and parameters the log
//     states (never folder names), the seats (model and persona), every answer with the move
//     the platform played for it, and the outcome the platform logged. A file that cannot be
//     read is refused with one line; a game that crashed or broke its format is a void Game
//     that names its cause.
//   - Audit is Parley's own reading of the game: every answer read again by Format.Parse (the
//     parser of the language-model agent's prompt style for that format) and applied to
//     Parley's own rules, the game's default move standing in for a move they refuse. Where the
//     two readings differ, the record keeps the platform's (which the study's paper used) and
//     a tagged disagreement with both (eventsv1.ImportAudit).
//   - Record writes a Game as a match's events: MatchStarted with the provenance
//     (eventsv1.ImportSource: file, sha256, study, commit), one ActionTaken per answer (the
//     whole answer as the seat's private reasoning and raw output, the public message as a
//     message, the platform's move as the move), MatchEnded with the platform's outcome (void,
//     with its cause, for a void game) and the audit.
//   - Importer stores them: one tournament per source folder (Format.Folder), named after it,
//     with ids derived from the folder's path and each file's sha256, so that importing the
//     same files again changes nothing. It ends with a Summary: files seen, imported, already
//     stored, void, refused (one line each), disagreements by kind and tag, and the parse
//     report (per model and prompt style, how often Parley's parser read the platform's move).
//
// A study adds a package with its Format (research/imports/negotiationarena is one) and a
// cobra command that calls Importer.Import; nothing here knows any study.
package imports

import (
	"errors"
	"fmt"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// Bounds on what a file may make the importer read or keep.
const (
	// MaxFileBytes is the largest file read: a game's log or an Aux file.
	MaxFileBytes = 32 << 20
	// MaxAuxBytes bounds the Aux files held in memory for the games of one archive.
	MaxAuxBytes = 64 << 20
	// MaxAnswerBytes is the longest answer kept: it stays whole as the raw output, well within
	// the largest reply the runner reads (512 KiB); the private reasoning keeps its first
	// games.MaxTextBytes. A game with a longer answer is refused.
	MaxAnswerBytes = 256 << 10
	// MaxTurns bounds the answers of one game.
	MaxTurns = 1000
)

// ErrRefused is wrapped by the errors of files the importer does not import.
var ErrRefused = errors.New("imports: refused")

// FileKind says what a file is to a Format.
type FileKind int

// Kinds of files.
const (
	// Skip: nothing the format reads.
	Skip FileKind = iota
	// GameLog: one game's log, read by Format.Read.
	GameLog
	// Aux: a file Format.Read may need for the games near it (a run's configuration).
	Aux
)

// Format reads the published logs of one study's platform.
type Format interface {
	// Study names the study, as research/studies does ("negotiationarena").
	Study() string
	// Kind says what the file at path is to the format. path is slash-separated and relative to
	// what was imported (an archive's entries: relative to the archive).
	Kind(path string) FileKind
	// Folder returns the source folder of the game logged at path: the games of one folder
	// make one tournament, named after it.
	Folder(path string) string
	// Read reads one game's log. Aux files are found through aux by their path. An error
	// refuses the file: it is reported as "path: reason" and the import goes on. A game that
	// crashed, was cut short or broke its format is read into a Game with Void set.
	Read(f File, aux AuxReader) (*Game, error)
	// Parse is Parley's own parser of the format's answers: answer, read as the seat whose
	// observation obs is would have written it. It reads what the answer says, whether or not
	// the rules allow it (the audit asks the rules); it is the parser the language-model
	// agent's prompt style for the format uses.
	Parse(obs *agentv1.Observation, answer string) (*agentv1.Action, error)
}

// File is one file to read.
type File struct {
	// Path is the file's path, slash-separated, relative to what was imported; inside an
	// archive, "ARCHIVE!ENTRY".
	Path string
	// Name is the path Kind and Folder were asked about (ENTRY inside an archive).
	Name string
	// Data is its content, at most MaxFileBytes.
	Data []byte
	// SHA256 is the hex SHA-256 of Data.
	SHA256 string
}

// AuxReader reads the Aux files of what is being imported, by the path Kind was asked about.
type AuxReader interface {
	ReadAux(name string) ([]byte, error)
}

// Game is one game as a Format reads it from its log.
type Game struct {
	// Game is the Parley game's name ("trading"); Params its parameters, every value that
	// matters read from the log's content; Seed the match seed, 0 unless the game draws from
	// it (a reader gives drawn values as parameters).
	Game   string
	Params *matchv1.GameParams
	Seed   uint64
	// Seats are who played, in Parley's seat order.
	Seats []Seat
	// Turns are the answers, in the order given.
	Turns []Turn
	// Outcome is the outcome the platform logged. Ignored when Void is set.
	Outcome *matchv1.Outcome
	// Void, when set, says why the game does not count: it crashed, was cut short or broke its
	// format. The answers it has are kept all the same.
	Void string
	// OutcomeTag names what the format knows of a platform outcome that Parley's rules score
	// otherwise (a known quirk of the platform, e.g. "swapped_trade"); empty: "outcome".
	OutcomeTag string
	// Style names the output style the answers were written in, as the language-model agent
	// names its styles ("negotiationarena", "deliberation"): recorded as each answer's
	// Usage.style, and the parse report's prompt style.
	Style string
	// Source says where the game comes from beyond its file.
	Source Source
}

// Source is a game's provenance beyond its file (eventsv1.ImportSource).
type Source struct {
	// OriginalID is the platform's own id of the game.
	OriginalID string
	// Format describes the log's format as read, e.g. "negotiationarena TradingGame".
	Format string
	// Repository and Commit are where the logs were published, where known.
	Repository, Commit string
}

// Seat is who played a seat.
type Seat struct {
	// Model is the model as the log names it ("gpt-4-1106-preview").
	Model string
	// Persona is the name of the persona the seat was told to play ("desperate"); "" for none.
	Persona string
	// Reasoning names the reasoning steps the seat was asked for, when the study varied them
	// ("cot"); "" for none.
	Reasoning string
	// Description says more for people: the platform's agent, its sampling settings.
	Description string
}

// Label is the seat's name in tables and ratings: the model, then "/persona" and
// "/reasoning" when it has them (as reproduce labels its own seats).
func (s Seat) Label() string {
	label := s.Model
	for _, part := range []string{s.Persona, s.Reasoning} {
		if part != "" {
			label += "/" + part
		}
	}
	return label
}

// Turn is one answer of a seat.
type Turn struct {
	// Seat that answered.
	Seat int32
	// Answer is the model's whole answer, as it wrote it.
	Answer string
	// Played is what the platform made of the answer: the move it played and the messages it
	// passed on. Its move must be set; its private parts are ignored.
	Played *agentv1.Action
}

// check refuses a Game a Format should never give.
func (g *Game) check() error {
	switch {
	case g == nil:
		return errors.New("no game")
	case g.Game == "":
		return errors.New("no game name")
	case len(g.Seats) == 0:
		return errors.New("no seats")
	case len(g.Turns) > MaxTurns:
		return fmt.Errorf("%d answers; at most %d are read", len(g.Turns), MaxTurns)
	case g.Void == "" && g.Outcome == nil:
		return errors.New("no outcome")
	}
	for i, t := range g.Turns {
		switch {
		case t.Seat < 0 || int(t.Seat) >= len(g.Seats):
			return fmt.Errorf("answer %d is by seat %d; the game has %d", i+1, t.Seat, len(g.Seats))
		case len(t.Answer) > MaxAnswerBytes:
			return fmt.Errorf("answer %d (seat %d) is %d bytes; an answer is at most %d", i+1, t.Seat, len(t.Answer), MaxAnswerBytes)
		case t.Played.GetMove().GetKind() == nil:
			return fmt.Errorf("answer %d (seat %d) has no move as played", i+1, t.Seat)
		}
	}
	return nil
}
