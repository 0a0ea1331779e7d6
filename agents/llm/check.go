package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrEndpoint is wrapped by Check's errors: the endpoint cannot be reached, or it refuses the
// API key (or its absence).
var ErrEndpoint = errors.New("llm: endpoint")

// Check asks the endpoint for its models (GET BASE/models, which OpenAI, vLLM, Ollama and
// llama.cpp's server all answer) so that a wrong address, no network or a missing or refused
// key is reported in one line before a match starts, rather than as a void match. A server
// that does not list models (404, 405) passes: only the chat call can tell. The key is sent
// as a chat call would send it and never appears in the error.
func (a *Agent) Check(ctx context.Context) error {
	u := strings.TrimRight(a.cfg.BaseURL, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w %s: %v", ErrEndpoint, a.cfg.BaseURL, err)
	}
	if a.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+a.cfg.APIKey)
	}
	resp, err := a.httpClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once, below
		}
		return fmt.Errorf("%w %s cannot be reached: %v", ErrEndpoint, a.cfg.BaseURL, err)
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		if a.cfg.APIKey == "" {
			return fmt.Errorf("%w %s wants an API key (HTTP %d) and none is set: put it in $%s, or name another variable with api_key_env=VAR", ErrEndpoint, a.cfg.BaseURL, resp.StatusCode, a.keyEnv())
		}
		return fmt.Errorf("%w %s refused the API key from $%s (HTTP %d)", ErrEndpoint, a.cfg.BaseURL, a.keyEnv(), resp.StatusCode)
	case resp.StatusCode >= 500:
		return fmt.Errorf("%w %s answers with HTTP %d", ErrEndpoint, a.cfg.BaseURL, resp.StatusCode)
	}
	return nil
}

func (a *Agent) keyEnv() string {
	if a.cfg.APIKeyEnv != "" {
		return a.cfg.APIKeyEnv
	}
	return DefaultAPIKeyEnv
}
