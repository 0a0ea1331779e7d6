// Package natsname names everything Parley keeps on NATS: the subjects, the JetStream streams
// and consumers that hold them, and the key-value buckets. Every other package takes its names
// from here, so the layout on the broker reads in one file:
//
//	stream PARLEY_MATCHES     parley.match.<match_id>.<event>        every event of every match (a message
//	                                                                 names its last event: see bus)
//	stream PARLEY_REQUESTS    parley.request.<match_id>              match requests (work queue)
//	stream PARLEY_TOURNAMENTS parley.tournament.<id>.spec            a tournament's schedule
//	                          parley.tournament.<id>.schedule.<n>    part n of a schedule too large for one message
//	                          parley.tournament.<id>.request         how it was asked for
//	                          parley.retry.<match_id>                the rerun of an interrupted match
//	core NATS                 parley.botlink.<team>.<bot>.call|ping  calls to dial-out bots
//	                          parley.live.<match_id>                 a running match's seat asked to move (not stored)
//	buckets                   PARLEY_TEAMS, PARLEY_TOKENS, PARLEY_BOTS
//
// Ids that go into subjects are single tokens (see bus.ValidMatchID); nothing here checks them.
package natsname

import (
	"strconv"
	"strings"
)

// Streams.
const (
	// MatchStream holds every match's events.
	MatchStream = "PARLEY_MATCHES"
	// RequestStream is the work queue of match requests every referee worker shares.
	RequestStream = "PARLEY_REQUESTS"
	// TournamentStream holds tournament schedules and rerun records.
	TournamentStream = "PARLEY_TOURNAMENTS"
)

// Durable consumers.
const (
	// RefereeConsumer is the pull consumer of RequestStream that every referee worker shares.
	RefereeConsumer = "referees"
	// AnalyticsConsumer is the analytics service's consumer of MatchStream.
	AnalyticsConsumer = "analytics"
)

// Key-value buckets of the bot registry.
const (
	// TeamsBucket: team name -> team (its token's hash).
	TeamsBucket = "PARLEY_TEAMS"
	// TokensBucket: token hash -> team name, so a request finds its team in one read.
	TokensBucket = "PARLEY_TOKENS"
	// BotsBucket: team.bot -> registered bot.
	BotsBucket = "PARLEY_BOTS"
	// LinkLocksBucket: team.bot -> the lock a new dial-out session holds while it takes the
	// bot's link over, so that sessions of one bot opening at once on several gateways take
	// turns. Entries live seconds.
	LinkLocksBucket = "PARLEY_BOT_LINK_LOCKS"
)

const (
	matchPrefix      = "parley.match."
	requestPrefix    = "parley.request."
	tournamentPrefix = "parley.tournament."
	retryPrefix      = "parley.retry."
	cancelPrefix     = "parley.cancel."
	botlinkPrefix    = "parley.botlink."
	livePrefix       = "parley.live."
)

// Match subjects.
const (
	// AllMatches selects every event of every match: what MatchStream captures.
	AllMatches = matchPrefix + ">"
	// StartedEvent and EndedEvent are the kinds of a match's first and last events, the
	// payload branches' proto names (bus checks them against the descriptor).
	StartedEvent = "match_started"
	EndedEvent   = "match_ended"
)

// MatchSubject is the subject of a match's events of one kind; event is the payload branch's
// proto name ("match_started", "action_taken", ...) or "*" for every match's such events when
// matchID is "*".
func MatchSubject(matchID, event string) string { return matchPrefix + matchID + "." + event }

// MatchFilter selects every event of one match.
func MatchFilter(matchID string) string { return matchPrefix + matchID + ".>" }

// MatchOf returns the match id of a match event's subject, or "" for another subject.
func MatchOf(subject string) string {
	rest, ok := strings.CutPrefix(subject, matchPrefix)
	if !ok {
		return ""
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return ""
	}
	return rest[:i]
}

// EventFilter selects the events of one kind of every match (e.g. EventFilter(EndedEvent):
// every match's ending).
func EventFilter(event string) string { return MatchSubject("*", event) }

// Request subjects.
const (
	// AllRequests selects every match request: what RequestStream captures.
	AllRequests = requestPrefix + ">"
)

// RequestSubject is the subject of a match's request in queue lane lane (see
// referee/queue: each caller's requests go to a lane of their own, and workers take from the
// lanes in turn): parley.request.<lane>.<match_id>.
func RequestSubject(lane, matchID string) string { return requestPrefix + lane + "." + matchID }

// LaneRequests selects the requests of one queue lane.
func LaneRequests(lane string) string { return requestPrefix + lane + ".>" }

// AnyLaneRequest selects a match's request whatever its lane.
func AnyLaneRequest(matchID string) string { return requestPrefix + "*." + matchID }

// LegacyRequests selects the requests stored before lanes (parley.request.<match_id>), so that
// a store kept across the upgrade still plays them; no lane's filter overlaps it.
const LegacyRequests = requestPrefix + "*"

// LegacyRequestSubject is the subject of a match's request stored before lanes.
func LegacyRequestSubject(matchID string) string { return requestPrefix + matchID }

// Tournament subjects.
const (
	// AllTournaments selects every tournament subject.
	AllTournaments = tournamentPrefix + ">"
	// AllRetries selects every rerun record.
	AllRetries = retryPrefix + ">"
	// AllTournamentSpecs selects every tournament's schedule.
	AllTournamentSpecs = tournamentPrefix + "*.spec"
	// AllTournamentRequests selects every tournament's request.
	AllTournamentRequests = tournamentPrefix + "*.request"
)

// TournamentSpecSubject is the subject of a tournament's schedule.
func TournamentSpecSubject(tournamentID string) string {
	return tournamentPrefix + tournamentID + ".spec"
}

// TournamentSchedulePartSubject is the subject of part n (from 0) of a tournament's schedule,
// when it is too large for one message (see TournamentSpec.schedule_parts).
func TournamentSchedulePartSubject(tournamentID string, n int) string {
	return tournamentPrefix + tournamentID + ".schedule." + strconv.Itoa(n)
}

// TournamentRequestSubject is the subject of the request a tournament was started with.
func TournamentRequestSubject(tournamentID string) string {
	return tournamentPrefix + tournamentID + ".request"
}

// AllCancels selects every cancellation record (kept in TournamentStream).
const AllCancels = cancelPrefix + ">"

// CancelMatchSubject is the subject of a match's cancellation record.
func CancelMatchSubject(matchID string) string { return cancelPrefix + "match." + matchID }

// CancelTournamentSubject is the subject of a tournament's cancellation record.
func CancelTournamentSubject(tournamentID string) string {
	return cancelPrefix + "tournament." + tournamentID
}

// RetrySubject is the subject of the rerun record of an interrupted match.
func RetrySubject(matchID string) string { return retryPrefix + matchID }

// BotCallQueue is the queue group of a dial-out bot's call subject, so that a call is
// delivered once even while one session hands the bot over to the next.
const BotCallQueue = "parley-botlink"

// BotCallSubject is where calls to a dial-out bot go, answered by whoever holds its link.
func BotCallSubject(team, bot string) string { return botlinkPrefix + team + "." + bot + ".call" }

// BotPingSubject is where a dial-out bot's link answers "connected?".
func BotPingSubject(team, bot string) string { return botlinkPrefix + team + "." + bot + ".ping" }

// BotTakeoverSubject is where a new session of a dial-out bot asks the session open before it
// to hand the bot's calls over.
func BotTakeoverSubject(team, bot string) string {
	return botlinkPrefix + team + "." + bot + ".takeover"
}

// LiveSubject is where a running match's news that is not stored goes (a seat asked to move,
// until when): core NATS, for whoever follows the match as it runs.
func LiveSubject(matchID string) string { return livePrefix + matchID }

// LiveMatchOf is the match id of a LiveSubject.
func LiveMatchOf(subject string) string { return strings.TrimPrefix(subject, livePrefix) }
