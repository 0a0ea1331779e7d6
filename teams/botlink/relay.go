package botlink

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/nats-io/nats.go"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/gen/go/parley/agent/v1/agentv1connect"
	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/teams/registry"
)

// BotHeader names, in a call to the relay, the caller's own dial-out bot: "NAME" or
// "TEAM/NAME" (TEAM must be the token's).
const BotHeader = "Parley-Bot"

// Defaults of the relay's per-team bounds.
const (
	// DefaultRelayRate is the relayed calls a team may make per second; calls over it wait
	// their turn (within their deadline and at most relayMaxWait).
	DefaultRelayRate = 100
	// DefaultRelayBurst is the relayed calls a team may make at once before the rate applies.
	DefaultRelayBurst = 100
	// DefaultRelayInFlight is the relayed calls of one team under way at once; more are refused.
	DefaultRelayInFlight = 16
)

// relayMaxWait bounds the wait for the rate: a call that would wait longer is refused.
const relayMaxWait = time.Second

// healthCheckProcedure is the standard health check's path.
const healthCheckProcedure = "/grpc.health.v1.Health/Check"

// Teams is what the relay asks of the registry (registry.Service implements it). Errors are
// gRPC statuses.
type Teams interface {
	// Authenticate returns the team a token belongs to.
	Authenticate(ctx context.Context, token string) (string, error)
	// Bot returns the registered bot team/name.
	Bot(ctx context.Context, team, name string) (*registryv1.Bot, error)
}

// Relay lets a team call its own dial-out bot through the gateway the bot is connected to, as
// a referee would: it serves parley.agent.v1.AgentService (Act and Describe, forwarded over
// the bot's link exactly like a referee's calls) and grpc.health.v1.Health (SERVING while the
// bot's link is connected), for a caller with the team's token ("authorization: Bearer
// TOKEN") naming the bot in the BotHeader. This is how `parley agent-check` checks a dial-out
// bot. A team reaches only its own bots: the team comes from the token, never from the
// request. Each team's calls are bounded by a rate and a number under way at once, apart from
// its other requests' rate, so that checking a bot does not use up what registering it needs.
type Relay struct {
	// Teams checks tokens and finds bots. Required.
	Teams Teams
	// NC is the NATS connection the bots' links are reached through. Required.
	NC *nats.Conn
	// Rate is the relayed calls a team may make per second, Burst how many at once before the
	// rate applies, InFlight how many may be under way at once (0: the defaults).
	Rate            float64
	Burst, InFlight int

	mu    sync.Mutex
	limit map[string]*teamLimit
}

// teamLimit is one team's share of the relay.
type teamLimit struct {
	rate     *rate.Limiter
	inFlight chan struct{}
}

// Relay returns the relay to the bots whose links l serves.
func (l *Links) Relay() *Relay { return &Relay{Teams: l.Registry, NC: l.NC} }

// Mount adds the relay's routes to mux: AgentService and the health check.
func (r *Relay) Mount(mux *http.ServeMux) {
	mux.Handle(agentv1connect.NewAgentServiceHandler(relayedAgent{r: r}))
	mux.Handle(healthCheckProcedure, connect.NewUnaryHandler(healthCheckProcedure, r.healthCheck))
}

// caller returns the team of the request's token and the bot it names.
func (r *Relay) caller(ctx context.Context, h http.Header) (team, name string, err error) {
	scheme, token, ok := strings.Cut(h.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", "", connect.NewError(connect.CodeUnauthenticated, errors.New("a relayed call needs the team token: header \"Authorization: Bearer TOKEN\""))
	}
	if team, err = r.Teams.Authenticate(ctx, strings.TrimSpace(token)); err != nil {
		return "", "", asConnect(err)
	}
	if name, err = registry.OwnBot(team, h.Get(BotHeader)); err != nil {
		s := status.Convert(err)
		return "", "", connect.NewError(connect.Code(s.Code()), fmt.Errorf("header %s: %s", BotHeader, s.Message()))
	}
	return team, name, nil
}

// admit applies team's bounds to one call and returns the function that ends it.
func (r *Relay) admit(ctx context.Context, team string) (func(), error) {
	perSecond, burst, inFlight := r.bounds()
	r.mu.Lock()
	if r.limit == nil {
		r.limit = map[string]*teamLimit{}
	}
	l, ok := r.limit[team]
	if !ok {
		l = &teamLimit{rate: rate.NewLimiter(rate.Limit(perSecond), burst), inFlight: make(chan struct{}, inFlight)}
		r.limit[team] = l
	}
	r.mu.Unlock()
	select {
	case l.inFlight <- struct{}{}:
	default:
		return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("team %s: %d relayed calls are under way already; wait for their answers", team, inFlight))
	}
	wctx, cancel := context.WithTimeout(ctx, relayMaxWait)
	defer cancel()
	if err := l.rate.Wait(wctx); err != nil {
		<-l.inFlight
		return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("team %s: more than %g relayed calls a second (burst %d); slow down", team, perSecond, burst))
	}
	return func() { <-l.inFlight }, nil
}

// bounds are the relay's per-team bounds, defaults filled in.
func (r *Relay) bounds() (perSecond float64, burst, inFlight int) {
	perSecond, burst, inFlight = r.Rate, r.Burst, r.InFlight
	if perSecond <= 0 {
		perSecond = DefaultRelayRate
	}
	if burst <= 0 {
		burst = DefaultRelayBurst
	}
	if inFlight <= 0 {
		inFlight = DefaultRelayInFlight
	}
	return perSecond, burst, inFlight
}

// client returns a client of the caller's bot, and the function that ends the call.
func (r *Relay) client(ctx context.Context, h http.Header) (*Client, func(), error) {
	team, name, err := r.caller(ctx, h)
	if err != nil {
		return nil, nil, err
	}
	done, err := r.admit(ctx, team)
	if err != nil {
		return nil, nil, err
	}
	return NewClient(r.NC, team, name), done, nil
}

// relayedAgent is the relay's AgentService: it relays Act and Describe; Play is not relayed
// (UNIMPLEMENTED: the referee falls back to Act).
type relayedAgent struct {
	agentv1connect.UnimplementedAgentServiceHandler
	r *Relay
}

func (a relayedAgent) Act(ctx context.Context, req *connect.Request[agentv1.ActRequest]) (*connect.Response[agentv1.ActResponse], error) {
	return relay(ctx, a.r, req, (*Client).Act)
}

func (a relayedAgent) Describe(ctx context.Context, req *connect.Request[agentv1.DescribeRequest]) (*connect.Response[agentv1.DescribeResponse], error) {
	return relay(ctx, a.r, req, (*Client).Describe)
}

// relay makes one call of the caller's bot over its link.
func relay[Req, Resp any](ctx context.Context, r *Relay, req *connect.Request[Req], call func(*Client, context.Context, *Req, ...grpc.CallOption) (*Resp, error)) (*connect.Response[Resp], error) {
	c, done, err := r.client(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	defer done()
	resp, err := call(c, ctx, req.Msg)
	if err != nil {
		return nil, asConnect(err)
	}
	return connect.NewResponse(resp), nil
}

// healthCheck answers for the caller's bot, whatever service is asked about: SERVING while
// some gateway holds its link, NOT_SERVING otherwise.
func (r *Relay) healthCheck(ctx context.Context, req *connect.Request[healthpb.HealthCheckRequest]) (*connect.Response[healthpb.HealthCheckResponse], error) {
	team, name, err := r.caller(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	done, err := r.admit(ctx, team)
	if err != nil {
		return nil, err
	}
	defer done()
	bot, err := r.Teams.Bot(ctx, team, name)
	switch {
	case err != nil:
		return nil, asConnect(err)
	case bot.GetRetired():
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("bot %s/%s is retired", team, name))
	case bot.GetEndpoint() != registry.EndpointDialOut:
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("bot %s/%s does not dial out (its endpoint is %s): check it at that address", team, name, bot.GetEndpoint()))
	}
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if Connected(ctx, r.NC, team, name) {
		st = healthpb.HealthCheckResponse_SERVING
	}
	return connect.NewResponse(&healthpb.HealthCheckResponse{Status: st}), nil
}

// asConnect turns a Client's gRPC status error into the same code and message for connect.
func asConnect(err error) error {
	s := status.Convert(err)
	return connect.NewError(connect.Code(s.Code()), errors.New(s.Message()))
}

// DialRelay returns a gRPC connection to the relay of the gateway at gatewayURL (http:// for
// gRPC over HTTP/2 without TLS, https:// with it) whose every call carries token and names
// bot ("NAME" or "TEAM/NAME"): AgentService and Health clients on it reach that dial-out bot.
func DialRelay(gatewayURL, token, bot string) (*grpc.ClientConn, error) {
	u, err := url.Parse(gatewayURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" {
		return nil, fmt.Errorf("botlink: gateway URL %q: want http://host:port or https://host[:port]", gatewayURL)
	}
	creds := insecure.NewCredentials()
	target := u.Host
	if u.Scheme == "https" {
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
		if u.Port() == "" {
			target = net.JoinHostPort(u.Hostname(), "443")
		}
	} else if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "80")
	}
	md := metadata.Pairs("authorization", "Bearer "+token, strings.ToLower(BotHeader), bot)
	withMD := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoke(metadata.NewOutgoingContext(ctx, metadata.Join(md, outgoing(ctx))), method, req, reply, cc, opts...)
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds), grpc.WithUnaryInterceptor(withMD))
	if err != nil {
		return nil, fmt.Errorf("botlink: relay at %s: %w", gatewayURL, err)
	}
	return conn, nil
}

// outgoing is the metadata already in ctx, if any.
func outgoing(ctx context.Context) metadata.MD {
	md, _ := metadata.FromOutgoingContext(ctx)
	return md
}
