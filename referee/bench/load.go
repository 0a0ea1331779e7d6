package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/queue"
)

// Load measures one referee worker under load: match requests are put into the JetStream
// work queue faster than it can play them, against bots that take a fixed time per move, and
// it plays them Concurrency at a time. What it sustains is the concurrency up to which the
// matches finish as fast as the bots allow; past it they queue in JetStream.
type Load struct {
	bus    *bus.Bus
	agents []string
	bots   []Bot
	run    atomic.Int64
	// pool keeps the worker's connections to the bots, as the binary's does.
	pool *agentconn.Pool
	// conns reach the bots directly, for bare round trips; obs is what they carry.
	conns []*grpc.ClientConn
	obs   *agentv1.Observation
}

// Bot is a bot a load runs against.
type Bot struct {
	// Addr is its grpc:// address.
	Addr string
	// Stop stops it.
	Stop func()
	// CPU, for a bot in a process of its own, is the CPU time that process has used; nil for
	// a bot in this process (its CPU is this process's).
	CPU func() time.Duration
	// RSS, for a bot in a process of its own, is that process's resident set; nil otherwise.
	RSS func() uint64
}

// Serve serves a built-in agent (its address, "builtin:NAME?...") as a bot of its own on a
// loopback port, taking latency more per move.
type Serve func(builtin string, latency time.Duration) (Bot, error)

// InProcess serves bots in this process with serve (builtin.Background's signature).
func InProcess(serve func(builtin string, latency time.Duration) (string, func(), error)) Serve {
	return func(addr string, latency time.Duration) (Bot, error) {
		bound, stop, err := serve(addr, latency)
		return Bot{Addr: bound, Stop: stop}, err
	}
}

// NewLoad starts an embedded NATS server and two bots, the built-in agents of Agents served by
// serve, each taking latency per move.
func NewLoad(ctx context.Context, serve Serve, latency time.Duration) (*Load, error) {
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		return nil, err
	}
	l := &Load{bus: b, pool: agentconn.NewPool()}
	for _, spec := range Agents {
		bot, err := serve(spec, latency)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.agents = append(l.agents, bot.Addr)
		l.bots = append(l.bots, bot)
		conn, err := grpc.NewClient(strings.TrimPrefix(bot.Addr, agentconn.GRPCPrefix), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			l.Close()
			return nil, err
		}
		l.conns = append(l.conns, conn)
	}
	prep := &launch.Preparer{Games: families.New(), Agents: &agentconn.Resolver{}, NoProbe: true}
	m, err := prep.Prepare(ctx, launch.Request{Game: benchGame, Agents: l.agents, MatchID: "bench-observation", Seed: 1, SeedGiven: true})
	if err != nil {
		l.Close()
		return nil, err
	}
	if l.obs, err = CaptureObservation(ctx, m, l.clients(), 3); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// ObservationBytes is the encoded size of the observation the bare round trips carry.
func (l *Load) ObservationBytes() int { return proto.Size(l.obs) }

// clients are clients of the bots, dialled directly.
func (l *Load) clients() []agentv1.AgentServiceClient {
	out := make([]agentv1.AgentServiceClient, len(l.conns))
	for i, c := range l.conns {
		out[i] = agentv1.NewAgentServiceClient(c)
	}
	return out
}

// Close stops the bots and NATS.
func (l *Load) Close() {
	l.pool.Close()
	for _, c := range l.conns {
		c.Close()
	}
	for _, b := range l.bots {
		b.Stop()
	}
	l.bus.Close()
}

// LoadResult is what one load run measured.
type LoadResult struct {
	// Requested matches, and Ended: matches whose ending was recorded (once each).
	Requested, Ended int
	// Void endings among them; Faults: agent faults (a late answer counts).
	Void, Faults int
	// Moves applied in all.
	Moves int
	// Wall time from the worker's start (the requests all queued) to the last ending.
	Wall time.Duration
	// CPU time over the run of this process (referee, NATS server, bots served in it) and of
	// the bots' own processes.
	CPU time.Duration
	// MatchTime is the mean time a match took once started; Ideal is what the bots' latency
	// alone makes it (moves per match times the latency).
	MatchTime, Ideal time.Duration
	// MaxQueued is the most requests waiting in the work queue, not yet given to the worker.
	MaxQueued uint64
	// Left is the requests still in the work queue after the run (unacknowledged): 0.
	Left uint64
	// MaxRSS is the largest resident set of this process seen during the run (sampled every
	// 20 ms; 0 where /proc is missing); BotsRSS, of the bots' own processes together.
	MaxRSS, BotsRSS uint64
}

// CPUPerMove is the process's CPU time per move.
func (r LoadResult) CPUPerMove() time.Duration { return r.CPU / time.Duration(max(r.Moves, 1)) }

// MovesPerSecond is the throughput in moves.
func (r LoadResult) MovesPerSecond() float64 { return float64(r.Moves) / r.Wall.Seconds() }

// Overhead is how much longer a match took than its bots' time alone, as a fraction of the
// bots' time: what the platform adds.
func (r LoadResult) Overhead() float64 {
	if r.Ideal <= 0 {
		return 0
	}
	return float64(r.MatchTime-r.Ideal) / float64(r.Ideal)
}

// MatchesPerSecond is the throughput.
func (r LoadResult) MatchesPerSecond() float64 { return float64(r.Ended) / r.Wall.Seconds() }

// CPUPerMatch is the process's CPU time per match.
func (r LoadResult) CPUPerMatch() time.Duration { return r.CPU / time.Duration(max(r.Ended, 1)) }

// Efficiency is the throughput over what concurrency matches at a time would give if each
// took only the bots' time: 1 means the referee adds nothing.
func (r LoadResult) Efficiency(concurrency int) float64 {
	if r.Ideal <= 0 {
		return 0
	}
	return r.MatchesPerSecond() / (float64(concurrency) / r.Ideal.Seconds())
}

// counter is a match.Observer counting what the worker did.
type counter struct {
	mu                         sync.Mutex
	ended, void, moves, faults int
	elapsed                    time.Duration
	done                       chan struct{}
	want                       int
}

func (c *counter) MatchStarted(match.ObservedMatch) {}
func (c *counter) MatchEnded(_ match.ObservedMatch, out *matchv1.Outcome, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended++
	c.elapsed += d
	if out.GetCause() == matchv1.EndCause_END_CAUSE_VOID {
		c.void++
	}
	if c.ended == c.want {
		close(c.done)
	}
}
func (c *counter) AgentAsked(match.ObservedMatch, int32, int32, int32, time.Time)            {}
func (c *counter) AgentCalled(match.ObservedMatch, int32, time.Duration, eventsv1.FaultKind) {}
func (c *counter) ActionTaken(match.ObservedMatch, int32, bool) {
	c.mu.Lock()
	c.moves++
	c.mu.Unlock()
}
func (c *counter) ActionRefused(match.ObservedMatch, int32) {}
func (c *counter) AgentFaulted(match.ObservedMatch, int32, eventsv1.FaultKind) {
	c.mu.Lock()
	c.faults++
	c.mu.Unlock()
}

// Run puts n ultimatum match requests into the work queue and then lets one worker, running
// concurrency matches at a time, play them all; the time and CPU are those of the playing. It then checks the record: each
// requested match ended exactly once, and the queue is empty.
func (l *Load) Run(ctx context.Context, concurrency, n int, latency time.Duration) (LoadResult, error) {
	js := l.bus.JetStream()
	prefix := fmt.Sprintf("load%d-%x", l.run.Add(1), time.Now().UnixNano())
	c := &counter{want: n, done: make(chan struct{})}
	agents := &agentconn.Resolver{Pool: l.pool}
	w := queue.NewWorker(l.bus, queue.WorkerConfig{
		Games:       families.New(),
		Player:      &launch.Player{Agents: agents, Options: []match.Option{match.WithObserver(c)}},
		Concurrency: concurrency,
	}, nil)
	if _, err := queue.EnsureConsumers(ctx, js, queue.Config{}); err != nil {
		return LoadResult{}, err
	}
	// The queue is filled first, as a tournament keeps it filled; the clock starts with the
	// worker. Each request is prepared as a referee prepares one (params resolved).
	prep := &launch.Preparer{Games: families.New()}
	for i := range n {
		m, err := prep.Setup(launch.Request{
			MatchID: fmt.Sprintf("%s-%d", prefix, i), Game: benchGame, Seed: uint64(i + 1), SeedGiven: true, Agents: l.agents,
		})
		if err != nil {
			return LoadResult{}, err
		}
		if err := queue.Enqueue(ctx, js, m.Request()); err != nil {
			return LoadResult{}, err
		}
	}
	cpu0 := l.cpuTime()
	start := time.Now()
	wctx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(wctx) }()
	defer func() { stopWorker(); <-workerDone }()

	res := LoadResult{Requested: n}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	sample := func() {
		if n, err := queue.Waiting(ctx, js); err == nil { // the worker's own included
			res.MaxQueued = max(res.MaxQueued, uint64(max(0, n-concurrency)))
		}
		res.MaxRSS = max(res.MaxRSS, rss())
		res.BotsRSS = max(res.BotsRSS, l.botsRSS())
	}
	sample()
wait:
	for {
		select {
		case <-c.done:
			break wait
		case <-tick.C:
			sample()
		case <-ctx.Done():
			return res, fmt.Errorf("bench: %d of %d matches ended: %w", c.ended, n, ctx.Err())
		}
	}
	res.Wall = time.Since(start)
	res.CPU = l.cpuTime() - cpu0
	c.mu.Lock()
	res.Ended, res.Void, res.Moves, res.Faults = c.ended, c.void, c.moves, c.faults
	res.MatchTime = c.elapsed / time.Duration(c.ended)
	c.mu.Unlock()
	res.Ideal = time.Duration(float64(latency) * float64(res.Moves) / float64(res.Ended))

	// The record: one match_ended per requested match. Requests are acknowledged just after
	// their match is stored, so the queue empties a moment later.
	st, err := js.Stream(ctx, natsname.MatchStream)
	if err != nil {
		return res, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(natsname.EventFilter(natsname.EndedEvent)))
	if err != nil {
		return res, err
	}
	ended := 0
	for i := range n {
		subject := natsname.MatchSubject(fmt.Sprintf("%s-%d", prefix, i), natsname.EndedEvent)
		if count := info.State.Subjects[subject]; count > 0 {
			if count != 1 {
				return res, fmt.Errorf("bench: %s stored %d times", subject, count)
			}
			ended++
		}
	}
	if ended != n {
		return res, fmt.Errorf("bench: %d of %d requested matches have an ending in the stream", ended, n)
	}
	rs, err := js.Stream(ctx, natsname.RequestStream)
	if err != nil {
		return res, err
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		info, err := rs.Info(ctx)
		if err != nil {
			return res, err
		}
		if res.Left = info.State.Msgs; res.Left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return res, nil
}

// BareResult is what a run of bare round trips measured.
type BareResult struct {
	// Calls made, all answered.
	Calls int
	// Wall time of the run, and the CPU time of this process (client and bots) over it.
	Wall, CPU time.Duration
}

// CPUPerCall is the CPU time of one round trip, client and server.
func (r BareResult) CPUPerCall() time.Duration { return r.CPU / time.Duration(max(r.Calls, 1)) }

// CallsPerSecond is the throughput.
func (r BareResult) CallsPerSecond() float64 { return float64(r.Calls) / r.Wall.Seconds() }

// Bare makes n bare round trips to the bots, concurrency at a time, each carrying the
// observation the runner sends on a mid-match move (alternating between the bots as a match
// does), with nothing of the referee around them.
func (l *Load) Bare(ctx context.Context, concurrency, n int) (BareResult, error) {
	clients := l.clients()
	req := &agentv1.ActRequest{Observation: l.obs}
	var next atomic.Int64
	errs := make(chan error, concurrency)
	cpu0, start := l.cpuTime(), time.Now()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				cctx, cancel := context.WithTimeout(ctx, match.DefaultMoveTimeout)
				_, err := clients[i%int64(len(clients))].Act(cctx, req)
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	res := BareResult{Calls: n, Wall: time.Since(start), CPU: l.cpuTime() - cpu0}
	select {
	case err := <-errs:
		return res, fmt.Errorf("bench: bare round trip: %w", err)
	default:
	}
	return res, nil
}

// cpuTime is the CPU time this process and the bots' own processes have used.
func (l *Load) cpuTime() time.Duration {
	t := cpuTime()
	for _, b := range l.bots {
		if b.CPU != nil {
			t += b.CPU()
		}
	}
	return t
}

// botsRSS is the resident set of the bots' own processes together.
func (l *Load) botsRSS() uint64 {
	var n uint64
	for _, b := range l.bots {
		if b.RSS != nil {
			n += b.RSS()
		}
	}
	return n
}

// rss is the resident set size of this process in bytes (0 where /proc is missing).
func rss() uint64 { return RSSOf("self") }

// RSSOf is the resident set size of process pid ("self": this one) in bytes (0 where /proc is
// missing).
func RSSOf(pid string) uint64 {
	data, err := os.ReadFile("/proc/" + pid + "/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// CPUOf is the CPU time (user and system) process pid has used (0 where /proc is missing).
func CPUOf(pid string) time.Duration {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count fields after it.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseUint(fields[11], 10, 64)
	stime, _ := strconv.ParseUint(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is the kernel's clock ticks per second, in which /proc counts CPU time (100 on
// Linux everywhere Go runs).
const clockTicks = 100

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
