package gateway

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

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
// ones while reading; a body that takes longer than timeout to arrive is refused (408) and its
// connection closed, so that a client trickling bytes holds no connection for long.
func limitBody(max int64, timeout time.Duration, next http.Handler) http.Handler {
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
		longLink := r.URL.Path == botlinkv1connect.BotLinkServiceConnectProcedure && isStreamingRPC(r)
		if r.Body != nil && !longLink {
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
		if r.Body != nil && r.Method == http.MethodPost && !isStreamingRPC(r) {
			// A body of unknown length (chunked) or compressed is read here, within the limit,
			// so that one too large is a 413 like any other, not the RPC layer's 429.
			if ok := readWhole(w, r, max, timeout); !ok {
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// readWhole reads r's body, inflating a gzip one, and puts it back in r; a body over max
// bytes, before or after inflating, is answered 413 and false returned.
func readWhole(w http.ResponseWriter, r *http.Request, max int64, timeout time.Duration) bool {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(timeout))
	data, err := io.ReadAll(r.Body)
	r.Body.Close()
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		var tooBig *http.MaxBytesError
		var netErr net.Error
		switch {
		case errors.As(err, &netErr) && netErr.Timeout():
			w.Header().Set("Connection", "close")
			writeErrorStatus(w, http.StatusRequestTimeout, connect.CodeDeadlineExceeded, fmt.Sprintf("the request body did not arrive within %s", timeout))
			return false
		case errors.As(err, &tooBig):
			// The rest of the body is still on the connection, and the server cannot see the
			// limit through our wrapped writers: close it, or its next request is garbage.
			w.Header().Set("Connection", "close")
			writeErrorStatus(w, http.StatusRequestEntityTooLarge, connect.CodeResourceExhausted, fmt.Sprintf("request body is larger than the limit of %d bytes", max))
		default:
			writeErrorStatus(w, http.StatusBadRequest, connect.CodeInvalidArgument, "reading the request body: "+err.Error())
		}
		return false
	}
	if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err == nil {
			data, err = io.ReadAll(io.LimitReader(zr, max+1))
		}
		if err != nil {
			writeErrorStatus(w, http.StatusBadRequest, connect.CodeInvalidArgument, "the gzip request body does not inflate: "+err.Error())
			return false
		}
		if int64(len(data)) > max {
			writeErrorStatus(w, http.StatusRequestEntityTooLarge, connect.CodeResourceExhausted, fmt.Sprintf("request body inflates past the limit of %d bytes", max))
			return false
		}
		r.Header.Del("Content-Encoding")
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.ContentLength = int64(len(data))
	return true
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
