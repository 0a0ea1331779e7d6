package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/budget"
)

// maxEndedListed bounds the ended matches the index keeps for listings; older ones are
// dropped from it (their records stay in JetStream and analytics). An entry is a few hundred
// bytes (who played, how it ended), so the whole index stays in the tens of megabytes.
const maxEndedListed = 200_000

// matchIndex lists matches from the first and last events of every record in the match stream:
// an ordered consumer of parley.match.*.match_started and parley.match.*.match_ended from the
// stream's start, so it lists every match of every referee and worker, across restarts.
type matchIndex struct {
	js  jetstream.JetStream
	log *slog.Logger
	// budgets is given back each match's hold when its record ends (nil: none kept).
	budgets *budget.Ledger

	mu    sync.Mutex
	byID  map[string]*indexEntry
	order []*indexEntry // by start, oldest first
	ended int
}

type indexEntry struct {
	sum *refereev1.MatchSummary
}

// tournamentID is the tournament of the entry's match ("" for none, or no entry).
func (e *indexEntry) tournamentID() string {
	if e == nil {
		return ""
	}
	return e.sum.GetTournamentId()
}

func newMatchIndex(js jetstream.JetStream, log *slog.Logger, budgets *budget.Ledger) *matchIndex {
	return &matchIndex{js: js, log: log, budgets: budgets, byID: map[string]*indexEntry{}}
}

var (
	startedSubjects = natsname.EventFilter(natsname.StartedEvent)
	endedSubjects   = natsname.EventFilter(natsname.EndedEvent)
)

// start reads what the stream holds now (bounded by ctx), then follows it in the background
// until bg ends.
func (x *matchIndex) start(ctx, bg context.Context, wg *sync.WaitGroup) error {
	cons, err := x.js.OrderedConsumer(ctx, natsname.MatchStream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{startedSubjects, endedSubjects},
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		InactiveThreshold: 30 * time.Second,
	})
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	pending := uint64(0)
	if info := cons.CachedInfo(); info != nil {
		pending = info.NumPending
	}
	for pending > 0 {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			it.Stop()
			return fmt.Errorf("reading the match stream: %w", err)
		}
		md, _ := x.add(msg)
		if md == nil || md.NumPending == 0 {
			break
		}
	}
	wg.Go(func() {
		defer it.Stop()
		for {
			msg, err := it.Next(jetstream.NextContext(bg))
			if err != nil {
				if bg.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					return
				}
				x.log.Warn("match index: reading the match stream", "err", err)
				select {
				case <-time.After(time.Second):
				case <-bg.Done():
					return
				}
				continue
			}
			x.add(msg)
		}
	})
	return nil
}

// add indexes one message; it returns its metadata (nil when it could not be read) and, for a
// match_ended, the match's id.
func (x *matchIndex) add(msg jetstream.Msg) (md *jetstream.MsgMetadata, ended string) {
	md, err := msg.Metadata()
	if err != nil {
		return nil, ""
	}
	evs, err := bus.Decode(msg.Headers(), msg.Data())
	if err != nil {
		x.log.Warn("match index: unreadable event", "subject", msg.Subject(), "err", err)
		return md, ""
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, ev := range evs {
		if id := x.addEvent(md, ev); id != "" {
			ended = id
		}
	}
	return md, ended
}

// addEvent indexes one event stored at md; it returns the match's id for a match_ended.
// Callers hold x.mu.
func (x *matchIndex) addEvent(md *jetstream.MsgMetadata, ev *eventsv1.MatchEvent) (ended string) {
	id := ev.GetMatchId()
	switch p := ev.GetPayload().(type) {
	case *eventsv1.MatchEvent_MatchStarted:
		if _, seen := x.byID[id]; seen {
			return "" // a re-sent start
		}
		sum := Summary(ev)
		sum.MatchId = id
		sum.Started = timestamppb.New(md.Timestamp)
		// The listing is public: no parameters or seed in it anyway, only who plays; and
		// compact: the agents' names and versions, not their descriptions.
		for i, seat := range sum.GetSeats() {
			seat = proto.CloneOf(seat)
			seat.Agent = &gamev1.AgentInfo{Name: seat.GetAgent().GetName(), Version: seat.GetAgent().GetVersion()}
			sum.Seats[i] = seat
		}
		e := &indexEntry{sum: sum}
		x.byID[id] = e
		x.order = append(x.order, e)
	case *eventsv1.MatchEvent_MatchEnded:
		e := x.byID[id]
		if e != nil && e.sum.GetState() == refereev1.MatchState_MATCH_STATE_ENDED {
			return id // a re-sent ending
		}
		x.budgets.MatchEnded(id, e.tournamentID(), p.MatchEnded.GetOutcome().GetRerunMatchId())
		if e == nil {
			return id
		}
		e.sum.State = refereev1.MatchState_MATCH_STATE_ENDED
		out := p.MatchEnded.GetOutcome()
		e.sum.Outcome = &matchv1.Outcome{Cause: out.GetCause(), Payoffs: out.GetPayoffs(), Agreement: out.GetAgreement(),
			FaultedSeats: out.GetFaultedSeats(), Summary: out.GetSummary(), RerunMatchId: out.GetRerunMatchId()}
		e.sum.Ended = timestamppb.New(md.Timestamp)
		e.sum.Turn = ev.GetTurn()
		x.ended++
		if x.ended > maxEndedListed+maxEndedListed/10 {
			x.dropOldEnded()
		}
		return id
	}
	return ""
}

// dropOldEnded forgets the oldest ended matches until maxEndedListed are left.
func (x *matchIndex) dropOldEnded() {
	keep := x.order[:0]
	for _, e := range x.order {
		if x.ended > maxEndedListed && e.sum.GetState() == refereev1.MatchState_MATCH_STATE_ENDED {
			delete(x.byID, e.sum.GetMatchId())
			x.ended--
			continue
		}
		keep = append(keep, e)
	}
	clear(x.order[len(keep):])
	x.order = keep
}

// list answers a ListMatches request, newest first. A page costs a walk over the index (no
// copies but of the matches returned), whatever its size.
func (x *matchIndex) list(req *refereev1.ListMatchesRequest) (*refereev1.ListMatchesResponse, error) {
	size, err := PageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	token := req.GetPageToken()
	x.mu.Lock()
	defer x.mu.Unlock()
	collecting := token == ""
	var page []*refereev1.MatchSummary
	for i := len(x.order) - 1; i >= 0 && len(page) <= size; i-- {
		s := x.order[i].sum
		switch {
		case !Selects(req, s):
		case !collecting:
			collecting = s.GetMatchId() == token
		default:
			page = append(page, s)
		}
	}
	if !collecting {
		return nil, fmt.Errorf("page_token %q is not a match of this listing", token)
	}
	resp := &refereev1.ListMatchesResponse{}
	if len(page) > size {
		page = page[:size]
		resp.NextPageToken = page[size-1].GetMatchId()
	}
	for _, s := range page {
		resp.Matches = append(resp.Matches, proto.CloneOf(s))
	}
	return resp, nil
}

// summary returns the listing of one match, if the index has it.
func (x *matchIndex) summary(id string) (*refereev1.MatchSummary, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, ok := x.byID[id]
	if !ok {
		return nil, false
	}
	return proto.CloneOf(e.sum), true
}

// Summary is the listing of a match from its first event: who plays, running.
func Summary(first *eventsv1.MatchEvent) *refereev1.MatchSummary {
	st := first.GetMatchStarted()
	return &refereev1.MatchSummary{
		MatchId:       first.GetMatchId(),
		Game:          st.GetGame(),
		TournamentId:  st.GetTournamentId(),
		Seats:         st.GetSeats(),
		State:         refereev1.MatchState_MATCH_STATE_RUNNING,
		Started:       first.GetTime(),
		RevealPrivate: st.GetRevealPrivate(),
	}
}

// Page sizes of ListMatches.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// PageSize reads ListMatchesRequest.page_size: 0 means DefaultPageSize, at most MaxPageSize.
func PageSize(n int32) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("page_size must be 0 or more, got %d", n)
	case n == 0:
		return DefaultPageSize, nil
	default:
		return min(int(n), MaxPageSize), nil
	}
}

// Selects reports whether a ListMatches request selects m.
func Selects(req *refereev1.ListMatchesRequest, m *refereev1.MatchSummary) bool {
	return (req.GetState() == refereev1.MatchState_MATCH_STATE_UNSPECIFIED || req.GetState() == m.GetState()) &&
		(req.GetGame() == "" || req.GetGame() == m.GetGame()) &&
		(req.GetTournamentId() == "" || req.GetTournamentId() == m.GetTournamentId()) &&
		(!req.GetExcludeTournaments() || m.GetTournamentId() == "")
}
