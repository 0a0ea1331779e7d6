package sdk

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc/status"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	"github.com/parley-arena/parley/gen/go/parley/botlink/v1/botlinkv1connect"
)

// DialOut says how a bot that dials out reaches the gateway.
type DialOut struct {
	// URL of the gateway, e.g. "http://127.0.0.1:8080" (HTTP/2 without TLS) or "https://...".
	URL string
	// Token is the team token.
	Token string
	// Bot is the registered bot's name.
	Bot string
	// Version, when set, must equal the registered version (the gateway refuses the session
	// otherwise); empty: not checked (see parley.botlink.v1.Hello).
	Version string
	// Reconnect, when set, opens a new session after one ends other than by refusal, waiting
	// longer each time (up to 30s), until ctx ends.
	Reconnect bool
	// OnWelcome, when set, is called each time a session opens, with the bot's address.
	OnWelcome func(address string)
}

// ErrRefused is wrapped by the error of a session the gateway refused (bad token, unknown or
// retired bot, wrong version) or ended because a newer session of the same bot took its calls
// over: trying again would not help.
var ErrRefused = errors.New("sdk: the gateway refused the bot's session")

// Dial serves the agent over a stream it opens to the gateway, until ctx ends or (without
// Reconnect) the session ends. The agent answers exactly what it would when served with
// Serve: same Describe, same Act, same panic and error handling.
func Dial(ctx context.Context, d DialOut, a Agent, opts ...Option) error {
	if d.URL == "" || d.Token == "" || d.Bot == "" {
		return errors.New("sdk: dial out needs the gateway's URL, the team token and the bot's name")
	}
	u, err := url.Parse(d.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("sdk: gateway URL %q: want http://host:port or https://host", d.URL)
	}
	o := buildOptions(a, opts)
	svc := newService(a, o)
	client := botlinkv1connect.NewBotLinkServiceClient(httpClient(u.Scheme), d.URL, connect.WithGRPC())
	wait := 250 * time.Millisecond
	for {
		opened := time.Now()
		err := session(ctx, client, d, svc, o.logger)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrRefused) || !d.Reconnect:
			return err
		}
		if time.Since(opened) > time.Minute {
			wait = 250 * time.Millisecond // it was a good session; start over
		}
		o.logger.Warn("bot link closed; reconnecting", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// httpClient speaks HTTP/2, without TLS for http:// URLs (gRPC needs HTTP/2).
func httpClient(scheme string) *http.Client {
	p := new(http.Protocols)
	if scheme == "http" {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
	}
	return &http.Client{Transport: &http.Transport{
		Protocols: p, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12},
		DialContext: (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	}}
}

func session(ctx context.Context, client botlinkv1connect.BotLinkServiceClient, d DialOut, svc *service, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream := client.Connect(ctx)
	defer stream.CloseResponse()
	stream.RequestHeader().Set("Authorization", "Bearer "+d.Token)
	if err := stream.Send(&botlinkv1.ConnectRequest{Msg: &botlinkv1.ConnectRequest_Hello{Hello: &botlinkv1.Hello{Bot: d.Bot, Version: d.Version}}}); err != nil {
		return linkError(stream.Receive())
	}
	first, err := stream.Receive()
	if err != nil {
		return linkError(nil, err)
	}
	if first.GetWelcome() == nil {
		return errors.New("sdk: the gateway did not answer Hello with Welcome")
	}
	w := first.GetWelcome()
	log.Info("bot link open", "address", w.GetAddress(), "version", w.GetBotVersion(),
		"contract", w.GetContract().GetPackage(), "revision", w.GetContract().GetRevision())
	if d.OnWelcome != nil {
		d.OnWelcome(first.GetWelcome().GetAddress())
	}
	var (
		sendMu sync.Mutex
		wg     sync.WaitGroup
	)
	// Ending the request body lets the HTTP/2 transport notice the cancelled context and
	// reset the stream; until then a pending Receive would wait on.
	stopClosing := context.AfterFunc(ctx, func() {
		sendMu.Lock()
		defer sendMu.Unlock()
		_ = stream.CloseRequest()
	})
	defer stopClosing()
	defer wg.Wait()
	defer cancel() // calls in flight stop before wg.Wait
	for {
		msg, err := stream.Receive()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return linkError(nil, err)
		}
		call := msg.GetCall()
		if call == nil {
			continue // a newer gateway's message this SDK does not know
		}
		wg.Go(func() {
			res := answer(ctx, svc, call)
			sendMu.Lock()
			defer sendMu.Unlock()
			if err := stream.Send(&botlinkv1.ConnectRequest{Msg: &botlinkv1.ConnectRequest_Result{Result: res}}); err != nil {
				log.Warn("bot link: sending a result failed", "err", err)
			}
		})
	}
}

// answer runs one call with the call's deadline and the same handling as the gRPC server.
func answer(ctx context.Context, svc *service, call *botlinkv1.Call) *botlinkv1.CallResult {
	if d := call.GetDeadline(); d != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.AsTime())
		defer cancel()
	}
	res := &botlinkv1.CallResult{CallId: call.GetCallId()}
	switch k := call.GetKind().(type) {
	case *botlinkv1.Call_Act:
		resp, err := svc.Act(ctx, k.Act)
		if err != nil {
			res.Kind = &botlinkv1.CallResult_Error{Error: status.Convert(err).Message()}
		} else {
			res.Kind = &botlinkv1.CallResult_Act{Act: resp}
		}
	case *botlinkv1.Call_Describe:
		resp, _ := svc.Describe(ctx, &agentv1.DescribeRequest{})
		res.Kind = &botlinkv1.CallResult_Describe{Describe: resp}
	default:
		res.Kind = &botlinkv1.CallResult_Error{Error: "this bot does not know the call"}
	}
	return res
}

// linkError explains why a stream ended (it takes Receive's results); refusals wrap
// ErrRefused.
func linkError(_ *botlinkv1.ConnectResponse, err error) error {
	if err == nil {
		return errors.New("sdk: the gateway closed the bot link")
	}
	switch connect.CodeOf(err) {
	case connect.CodeUnauthenticated, connect.CodePermissionDenied, connect.CodeNotFound,
		connect.CodeFailedPrecondition, connect.CodeInvalidArgument:
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return fmt.Errorf("sdk: bot link: %w", err)
}

// Mode is how a bot program offers its agent: serving on an address, or dialling out to a
// gateway. Bind its flags, then Run.
type Mode struct {
	// Listen is the address to serve on (serve mode).
	Listen string
	// DialOut, when set, is the gateway URL to dial instead of serving.
	DialOut DialOut
	// OnListen, when set, is told the address served on once it accepts calls (with port 0,
	// the port actually bound).
	OnListen func(addr string)
}

// FlagSet is what Bind needs of a flag set; the standard library's *flag.FlagSet and
// spf13/pflag's *pflag.FlagSet both have it.
type FlagSet interface {
	StringVar(p *string, name, value, usage string)
}

// Bind registers the switch as flags: --listen ADDR, or --dial-out URL with --token and
// --bot (and --version). They default to $PARLEY_DIAL_OUT, $PARLEY_TOKEN and $PARLEY_BOT, so
// the token need not be on the command line.
func (m *Mode) Bind(fs FlagSet, defaultListen string) {
	fs.StringVar(&m.Listen, "listen", defaultListen, "serve the agent on this address (host:port)")
	fs.StringVar(&m.DialOut.URL, "dial-out", os.Getenv("PARLEY_DIAL_OUT"), "instead of serving, connect to the gateway at this URL (e.g. http://127.0.0.1:8080) [$PARLEY_DIAL_OUT]")
	fs.StringVar(&m.DialOut.Token, "token", os.Getenv("PARLEY_TOKEN"), "team token, for --dial-out [$PARLEY_TOKEN]")
	fs.StringVar(&m.DialOut.Bot, "bot", os.Getenv("PARLEY_BOT"), "registered bot name, for --dial-out [$PARLEY_BOT]")
	fs.StringVar(&m.DialOut.Version, "version", "", "registered version the bot runs, for --dial-out (empty: not checked)")
}

// Run serves the agent or dials out, as m says, until ctx ends. A dial-out bot reconnects
// after a broken link.
func Run(ctx context.Context, m Mode, a Agent, opts ...Option) error {
	if m.DialOut.URL != "" {
		d := m.DialOut
		d.Reconnect = true
		return Dial(ctx, d, a, opts...)
	}
	if m.Listen == "" {
		return errors.New("sdk: give an address to serve on (--listen) or a gateway to dial (--dial-out)")
	}
	if m.OnListen == nil {
		return Serve(ctx, m.Listen, a, opts...)
	}
	lis, err := net.Listen("tcp", m.Listen)
	if err != nil {
		return fmt.Errorf("sdk: listen on %s: %w", m.Listen, err)
	}
	m.OnListen(lis.Addr().String())
	return ServeListener(ctx, lis, a, opts...)
}
