package llm

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/sashabaranov/go-openai"
	"gopkg.in/yaml.v3"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// Price is what a model's tokens cost, in US dollars per million tokens.
type Price struct {
	Prompt     float64 `yaml:"prompt" json:"prompt"`
	Completion float64 `yaml:"completion" json:"completion"`
}

// Prices maps model names to their prices. A model takes the price of its own name, else of
// the longest listed name that begins it ("gpt-4o-2024-08-06" takes "gpt-4o"); an unlisted
// model costs nothing.
type Prices map[string]Price

//go:embed prices/prices.yaml
var shippedPrices []byte

// DefaultPrices is the shipped price table (agents/llm/prices/prices.yaml).
func DefaultPrices() Prices {
	p, err := ParsePrices(shippedPrices)
	if err != nil {
		panic(err) // the shipped file is tested
	}
	return p
}

// maxPrice bounds a price a file may set (dollars per million tokens).
const maxPrice = 1e6

// ParsePrices reads a price table (YAML or JSON): model: {prompt: P, completion: C}.
func ParsePrices(data []byte) (Prices, error) {
	var p Prices
	if err := yaml.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%w: price table: %v", ErrConfig, err)
	}
	for m, pr := range p {
		for _, v := range []float64{pr.Prompt, pr.Completion} {
			if v < 0 || v > maxPrice || math.IsNaN(v) {
				return nil, fmt.Errorf("%w: price table: %s: a price must be from 0 to %g dollars per million tokens", ErrConfig, m, float64(maxPrice))
			}
		}
	}
	return p, nil
}

// LoadPrices reads a price table file; "" gives DefaultPrices.
func LoadPrices(path string) (Prices, error) {
	if path == "" {
		return DefaultPrices(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: price table: %v", ErrConfig, err)
	}
	return ParsePrices(b)
}

// Of returns model's price, and false when the table has none for it.
func (p Prices) Of(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	names := make([]string, 0, len(p))
	for name := range p {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		return len(names[i]) > len(names[j]) || len(names[i]) == len(names[j]) && names[i] < names[j]
	})
	for _, name := range names {
		if strings.HasPrefix(model, name) {
			return p[name], true
		}
	}
	return Price{}, false
}

// Cost is what prompt and completion tokens of model cost, in millionths of a dollar.
func (p Prices) Cost(model string, prompt, completion int64) int64 {
	pr, ok := p.Of(model)
	if !ok {
		return 0
	}
	// Dollars per million tokens are micro-dollars per token.
	return int64(math.Round(pr.Prompt*float64(prompt) + pr.Completion*float64(completion)))
}

// errBudget: a token or cost budget cannot pay for another call, so none may start.
var errBudget = errors.New("budget spent")

// promptBytesPerToken is how densely the worst case counts a prompt: one token per two bytes
// (tokenizers of English and JSON give three to four bytes a token; the margin covers numbers
// and punctuation). messageTokens is each message's envelope in the chat format.
const (
	promptBytesPerToken = 2
	messageTokens       = 4
)

// promptBound is the most tokens msgs are counted as before the server says: the prompt part
// of a call's worst case.
func promptBound(msgs []openai.ChatCompletionMessage) int64 {
	n := int64(3)
	for _, m := range msgs {
		n += int64(len(m.Content)+promptBytesPerToken-1)/promptBytesPerToken + messageTokens
	}
	return n
}

// reservation is a call's worst case, held against the agent's own budgets while the call is
// in flight so that concurrent moves cannot together pass them.
type reservation struct {
	tokens, cost int64
}

// reserve decides whether a call with msgs may start and with what completion cap: its worst
// case (the prompt's bound plus the completion cap, sized down to what is left) must fit the
// match's tokens left (the observation's, less what this move spent so far), the agent's own
// token budget and its cost budget, less what calls in flight hold. It returns the cap to send
// (0: none, the server's default, when no budget applies), and holds the worst case until
// release. Cached replies count at what they cost when made, so a replay stops where the
// original run did.
func (a *Agent) reserve(t *turn, mv *moveState, msgs []openai.ChatCompletionMessage) (int, reservation, error) {
	prompt := promptBound(msgs)
	capTokens := int64(a.cfg.MaxTokens) // 0: the server's default, unbounded here
	room := int64(-1)                   // completion tokens every budget allows; -1: no budget
	fit := func(left int64, what string) error {
		r := left - prompt
		if r < 1 {
			return fmt.Errorf("%w: %s has %d tokens left, less than the next call's worst case (%d prompt tokens and at least 1 of completion)", errBudget, what, max(left, 0), prompt)
		}
		if room < 0 || r < room {
			room = r
		}
		return nil
	}
	if left := t.obs.TokensLeft; left != nil {
		if err := fit(*left-mv.spentTokens(), "the match's token budget"); err != nil {
			return 0, reservation{}, err
		}
	}
	a.budgetMu.Lock()
	defer a.budgetMu.Unlock()
	if b := a.cfg.BudgetTokens; b > 0 {
		if err := fit(b-a.spentTokens.Load()-a.reserved.tokens, fmt.Sprintf("the agent's budget of %d tokens", b)); err != nil {
			return 0, reservation{}, err
		}
	}
	if b := a.cfg.BudgetMicrodollars; b > 0 {
		left := b - a.spentCost.Load() - a.reserved.cost
		pr, _ := a.prices.Of(a.cfg.Model)
		promptCost := int64(math.Ceil(pr.Prompt * float64(prompt)))
		what := fmt.Sprintf("the agent's cost budget of $%.2f", float64(b)/1e6)
		switch {
		case left-promptCost < 1 && pr.Prompt+pr.Completion > 0:
			return 0, reservation{}, fmt.Errorf("%w: %s has $%.6f left, less than the next call's worst case", errBudget, what, float64(max(left, 0))/1e6)
		case pr.Completion > 0:
			if r := int64(float64(left-promptCost) / pr.Completion); room < 0 || r < room {
				room = r
			}
		}
		if room == 0 {
			return 0, reservation{}, fmt.Errorf("%w: %s cannot pay for one completion token after the prompt", errBudget, what)
		}
	}
	if room >= 0 {
		if capTokens == 0 || room < capTokens {
			capTokens = min(room, MaxTokens)
		}
	}
	res := reservation{}
	if capTokens > 0 {
		res = reservation{tokens: prompt + capTokens, cost: a.prices.Cost(a.cfg.Model, prompt, capTokens)}
	}
	a.reserved.tokens += res.tokens
	a.reserved.cost += res.cost
	return int(capTokens), res, nil
}

// release gives back what reserve held; what the call spent is counted by spend.
func (a *Agent) release(res reservation) {
	a.budgetMu.Lock()
	a.reserved.tokens -= res.tokens
	a.reserved.cost -= res.cost
	a.budgetMu.Unlock()
}

// spend counts one reply (fresh or cached) against the agent's own budgets and the move.
func (a *Agent) spend(mv *moveState, model string, prompt, completion int64, cached bool) {
	cost := a.prices.Cost(model, prompt, completion)
	if cached {
		mv.cachedTokens += prompt + completion
	} else {
		mv.promptTokens += prompt
		mv.completionTokens += completion
	}
	mv.cost += cost
	a.spentTokens.Add(prompt + completion)
	a.spentCost.Add(cost)
}

// spentTokens is what this move counts against a match budget so far.
func (mv *moveState) spentTokens() int64 {
	return mv.promptTokens + mv.completionTokens + mv.cachedTokens
}

// fallbackCause says why a move fell back.
func (mv *moveState) fallbackCause() agentv1.FallbackCause {
	switch {
	case mv.budgetSpent:
		return agentv1.FallbackCause_FALLBACK_CAUSE_BUDGET
	case mv.providerFailed:
		return agentv1.FallbackCause_FALLBACK_CAUSE_PROVIDER
	}
	return agentv1.FallbackCause_FALLBACK_CAUSE_AGENT
}

// PromptTokens estimates the tokens of the prompt the agent would send for obs (about four
// characters a token), for plans made before any call.
func (a *Agent) PromptTokens(obs *agentv1.Observation) (int64, error) {
	t := newTurn(obs)
	data := promptData(t, a.style, a.styleName)
	data.Target = a.cfg.Target
	msgs, err := a.firstMessages(&data)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
	}
	return int64(n+3) / 4, nil
}

// Prices is the agent's price table.
func (a *Agent) Prices() Prices { return a.prices }
