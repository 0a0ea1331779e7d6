package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/parley-arena/parley/internal/matchid"
)

// moveState accumulates what producing one action cost.
type moveState struct {
	promptTokens, completionTokens int64
	retries, formatFailures        int32
	calls, cacheHits               int32
	latency                        time.Duration
	raw                            []string
	model                          string
	// failures are the replies that could not be used, in order, for the private reasoning:
	// they come from the replies alone, so a replay from the cache writes the same.
	failures []string
	// callFailures are calls that failed (rate limits, server errors, timeouts); they differ
	// run to run, so they go to the log, and to the reasoning only of a provider fallback.
	callFailures []string
	// providerFailed: a call gave no reply even after retries (rate limits, server errors,
	// timeouts), so a fallback is the provider's failure rather than the agent's.
	providerFailed bool
	// budgetSpent: a budget stopped the move before a call.
	budgetSpent  bool
	cachedTokens int64 // tokens of cached replies, at what they cost when made
	cost         int64 // micro-dollars
}

// fallbackDetail is one public line on why the move fell back.
func (mv *moveState) fallbackDetail() string {
	switch {
	case mv.budgetSpent && len(mv.failures) > 0:
		return clip(mv.failures[len(mv.failures)-1], 200)
	case mv.providerFailed && len(mv.callFailures) > 0:
		return clip(mv.callFailures[len(mv.callFailures)-1], 300)
	case mv.formatFailures > 0:
		return fmt.Sprintf("%d replies could not be used", mv.formatFailures)
	}
	return "no usable reply"
}

// errNoReply is wrapped by complete's errors: the model gave no reply for this move.
var errNoReply = errors.New("no reply from the model")

// complete returns the model's reply to msgs: from the cache, or from the server, retrying
// rate limits, server errors, timeouts and broken replies with backoff until ctx's deadline.
func (a *Agent) complete(ctx context.Context, t *turn, msgs []openai.ChatCompletionMessage, mv *moveState) (string, error) {
	maxTokens, res, err := a.reserve(t, mv, msgs)
	if err != nil {
		return "", err
	}
	defer a.release(res)
	key := a.cacheKey(t, msgs, maxTokens).Hash()
	if a.cache != nil {
		if e, ok := a.cache.get(key); ok {
			mv.cacheHits++
			mv.raw = append(mv.raw, e.Content)
			if e.Model != "" {
				mv.model = e.Model
			}
			a.spend(mv, mv.model, e.PromptTokens, e.CompletionTokens, true)
			return e.Content, nil
		}
	}
	for try := 0; ; try++ {
		level := structured(a.level.Load())
		req := a.request(t, msgs, level, maxTokens)
		resp, retryAfter, err := a.call(ctx, req, mv)
		if err == nil {
			if len(resp.Choices) > 0 {
				content := resp.Choices[0].Message.Content
				if content == "" {
					content = resp.Choices[0].Message.Refusal
				}
				if resp.Model != "" {
					mv.model = resp.Model
				}
				mv.raw = append(mv.raw, content)
				if a.cache != nil {
					err := a.cache.put(key, cacheEntry{Model: resp.Model, Content: content,
						PromptTokens: int64(resp.Usage.PromptTokens), CompletionTokens: int64(resp.Usage.CompletionTokens)})
					if err != nil {
						a.logger.Warn("llm: reply not cached", "err", err)
					}
				}
				return content, nil
			}
			err = errNoChoices
		}
		kind, retry, status := a.classify(ctx, err)
		if ctx.Err() != nil {
			mv.callFailures = append(mv.callFailures, fmt.Sprintf("the move's time ran out waiting for the model (%s)", kind))
			a.count(FailDeadline)
			return "", fmt.Errorf("%w: the move's time ran out", errNoReply)
		}
		a.count(kind)
		mv.callFailures = append(mv.callFailures, fmt.Sprintf("model call failed (%s): %s", kind, shortError(err)))
		if (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) && req.ResponseFormat != nil && a.autoStructured && aboutFormat(err) {
			// The server may not know response_format (or this schema): ask for less.
			if a.level.CompareAndSwap(int32(level), int32(level-1)) {
				a.logger.Info("llm: server refused the response format; asking for less", "from", level, "to", level-1)
			}
			mv.retries++
			continue
		}
		if !retry {
			return "", fmt.Errorf("%w: %v", errNoReply, err)
		}
		delay := a.backoff(try, retryAfter)
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(delay).After(deadline) {
			mv.callFailures = append(mv.callFailures, "no time left to retry")
			a.count(FailDeadline)
			return "", fmt.Errorf("%w: no time left to retry after %s", errNoReply, kind)
		}
		mv.retries++
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			a.count(FailDeadline)
			return "", fmt.Errorf("%w: the move's time ran out", errNoReply)
		case <-timer.C:
		}
	}
}

var errNoChoices = errors.New("the completion has no choices")

// formatWords are what servers say when they refuse a response format (or its schema).
var formatWords = []string{"response_format", "response format", "json_schema", "json_object", "schema", "format"}

// aboutFormat reports whether a refusal is about the response format.
func aboutFormat(err error) bool {
	text := err.Error()
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		text += " " + string(reqErr.Body)
	}
	text = strings.ToLower(text)
	for _, w := range formatWords {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// call sends one request, within the concurrency limit and the request timeout.
func (a *Agent) call(ctx context.Context, req openai.ChatCompletionRequest, mv *moveState) (openai.ChatCompletionResponse, time.Duration, error) {
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return openai.ChatCompletionResponse{}, 0, ctx.Err()
	}
	defer func() { <-a.sem }()
	cctx := ctx
	if a.cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, a.cfg.RequestTimeout)
		defer cancel()
	}
	var retryAfter time.Duration
	cctx = context.WithValue(cctx, retryAfterKey{}, &retryAfter)
	start := time.Now()
	resp, err := a.client.CreateChatCompletion(cctx, req)
	mv.latency += time.Since(start)
	mv.calls++
	if err == nil {
		model := resp.Model
		if model == "" {
			model = a.cfg.Model
		}
		a.spend(mv, model, int64(resp.Usage.PromptTokens), int64(resp.Usage.CompletionTokens), false)
	}
	return resp, retryAfter, err
}

// classify says what kind of failure err is, whether it is worth retrying, and the HTTP status
// when there was one.
func (a *Agent) classify(ctx context.Context, err error) (kind FailureKind, retry bool, status int) {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	var urlErr *url.Error
	switch {
	case status == http.StatusTooManyRequests:
		return FailRateLimited, true, status
	case status >= 500:
		return FailServerError, true, status
	case status == http.StatusRequestTimeout:
		return FailTimeout, true, status
	case status != 0:
		return FailHTTP, false, status
	case ctx.Err() != nil:
		return FailDeadline, false, 0
	case errors.Is(err, context.DeadlineExceeded):
		return FailTimeout, true, 0 // the request timeout, not the move's
	case errors.As(err, &urlErr):
		return FailNetwork, true, 0
	}
	// Anything else is a reply that is no chat completion (undecodable, no choices).
	return FailBadResponse, true, 0
}

// backoff is how long to wait before retry number try+1: the server's Retry-After when it gave
// one, else an exponential delay from Config.Backoff, capped at Config.MaxBackoff, jittered.
func (a *Agent) backoff(try int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, a.cfg.MaxBackoff)
	}
	d := float64(a.cfg.Backoff) * math.Pow(2, float64(min(try, 30)))
	d = min(d, float64(a.cfg.MaxBackoff))
	return time.Duration(d * (0.5 + rand.Float64()/2))
}

// retryAfterKey holds, in a request's context, where the HTTP client notes a Retry-After.
type retryAfterKey struct{}

// hintClient is the HTTP client of the chat API: it notes the Retry-After of a 429 or 5xx
// answer for the backoff (the chat library does not expose headers of errors).
type hintClient struct{ http *http.Client }

func (h hintClient) Do(req *http.Request) (*http.Response, error) {
	resp, err := h.http.Do(req)
	if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500) {
		return resp, err
	}
	if p, ok := req.Context().Value(retryAfterKey{}).(*time.Duration); ok {
		*p = parseRetryAfter(resp.Header.Get("Retry-After"))
	}
	return resp, err
}

// parseRetryAfter reads a Retry-After header: seconds (possibly fractional) or an HTTP date.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e6 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func shortError(err error) string { return clip(err.Error(), 300) }

// request builds the chat request, with completion cap maxTokens (0: none).
func (a *Agent) request(t *turn, msgs []openai.ChatCompletionMessage, level structured, maxTokens int) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{
		Model:          a.cfg.Model,
		Messages:       msgs,
		Seed:           a.cfg.Seed,
		ResponseFormat: a.style.responseFormat(t, level),
	}
	if a.cfg.Temperature != nil {
		req.Temperature = float32(*a.cfg.Temperature)
		if req.Temperature == 0 {
			// The library leaves a zero temperature out of the request (the server would use
			// its default, often 1); the smallest positive float is greedy decoding in effect.
			req.Temperature = math.SmallestNonzeroFloat32
		}
	}
	if a.maxCompletionTokens {
		req.MaxCompletionTokens = maxTokens
	} else {
		req.MaxTokens = maxTokens
	}
	return req
}

// cacheKey files a reply by what was sent, the completion cap the call asked for included (a
// budget may size it down). Scoped by match, the key holds the match as scheduled (a rerun of
// an interrupted or provider-voided match replays what its earlier runs were told) and no
// endpoint: within one scheduled match the run's owner has said, by resuming it elsewhere,
// that the new endpoint serves the same model. Scoped globally it keeps the endpoint, since
// unrelated runs would otherwise share replies of two servers' same-named models.
func (a *Agent) cacheKey(t *turn, msgs []openai.ChatCompletionMessage, maxTokens int) CacheKey {
	k := CacheKey{Version: 3, Endpoint: a.cfg.BaseURL, Model: a.cfg.Model, Temperature: a.cfg.Temperature, MaxTokens: maxTokens, Seed: a.cfg.Seed, Style: a.styleName}
	for _, m := range msgs {
		k.Messages = append(k.Messages, KeyMessage{Role: m.Role, Content: m.Content})
	}
	if a.cfg.CacheScope == CacheScopeMatch {
		k.Match, k.Endpoint = matchid.Requested(t.obs.GetMatchId()), ""
	}
	return k
}
