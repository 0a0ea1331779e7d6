package gateway

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"

	"connectrpc.com/connect"

	"github.com/parley-arena/parley/gen/go/parley/botlink/v1/botlinkv1connect"
)

// streamLimiter bounds the streams open at once per client address.
type streamLimiter struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

func newStreamLimiter(limit int) *streamLimiter {
	return &streamLimiter{max: limit, open: map[string]int{}}
}

// acquire takes a stream slot for client; ok is false when it has max open already.
func (l *streamLimiter) acquire(client string) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[client] >= l.max {
		return nil, false
	}
	l.open[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.open[client]--; l.open[client] <= 0 {
				delete(l.open, client)
			}
		})
	}, true
}

func (l *streamLimiter) tooMany() string {
	return fmt.Sprintf("too many open streams from this address (at most %d); close one first", l.max)
}

// clientAddr is the host of a peer address "host:port" (the address itself when it has no
// port). Forwarding headers are not read: a client could set them to anything.
func clientAddr(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}

// limitBody refuses bodies over max before reading them (by Content-Length) and cuts longer
// ones while reading.
func limitBody(max int64, next http.Handler) http.Handler {
	errs := connect.NewErrorWriter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			msg := fmt.Sprintf("request body of %d bytes is larger than the limit of %d bytes", r.ContentLength, max)
			if isStreamingRPC(r) {
				// gRPC and streaming clients read the error from trailers or the stream's end.
				_ = errs.Write(w, r, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("%s", msg)))
				return
			}
			writeErrorStatus(w, http.StatusRequestEntityTooLarge, connect.CodeResourceExhausted, msg)
			return
		}
		// A bot's link lives for hours and carries many messages, each bounded by connect's
		// read limit; only the stream as a whole goes unbounded.
		if r.Body != nil && r.URL.Path != botlinkv1connect.BotLinkServiceConnectProcedure {
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
		next.ServeHTTP(w, r)
	})
}

// isStreamingRPC reports whether r is a gRPC, gRPC-Web or Connect streaming request, whose
// errors travel in the RPC protocol rather than as a plain JSON body.
func isStreamingRPC(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/grpc") || strings.HasPrefix(ct, "application/connect+")
}

// streamInterceptor applies the per-client stream limit to server-streaming RPCs and counts
// them as open streams.
type streamInterceptor struct {
	g *Gateway
}

func (i streamInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc { return next }

func (i streamInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i streamInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if conn.Spec().Procedure == botlinkv1connect.BotLinkServiceConnectProcedure {
			// Bot links carry a team token and its rate limit instead: many teams' bots may
			// share one address (a campus NAT).
			defer i.g.streamOpened(conn.Spec().Procedure)()
			return next(ctx, conn)
		}
		release, ok := i.g.streams.acquire(clientAddr(conn.Peer().Addr))
		if !ok {
			return connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("%s", i.g.streams.tooMany()))
		}
		defer release()
		defer i.g.streamOpened(conn.Spec().Procedure)()
		return next(ctx, conn)
	}
}
