package llmtest

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
)

// Sloppy is a Responder that plays like a careless model behind a flaky server: a share of its
// replies are unusable in the ways real models fail (prose with no format, JSON with the wrong
// fields, answers cut off mid-way, empty answers), the rest are Good's, sometimes wrapped in
// code fences; and the server now and then answers 429 or 500, or streams a reply nobody
// asked for. Which reply is unusable depends on the prompt alone (so a cached match replays
// the same), which request meets a server error on its arrival order (so a retry can pass).
type Sloppy struct {
	// Good answers the requests that get a usable reply.
	Good Autoplay
	// Unusable is the share of replies that cannot be used, 0 to 1 (1: the model never gives
	// a usable reply, so every move is the agent's fallback).
	Unusable float64
	// ServerErrors is the share of requests the server fails (429, 500, an unasked stream).
	ServerErrors float64
}

// Responder returns the profile as a Responder.
func (p Sloppy) Responder() Responder {
	return func(r Request) Reply {
		if share(fmt.Sprint(r.Seq, "server")) < p.ServerErrors {
			switch int(share(fmt.Sprint(r.Seq, "kind")) * 3) {
			case 0:
				return Reply{Status: http.StatusTooManyRequests, RetryAfter: "0"}
			case 1:
				return Reply{Status: http.StatusInternalServerError}
			default:
				// A streamed reply, which a client that did not ask for one cannot read.
				return Reply{Body: "data: {\"choices\":[{\"delta\":{\"content\":\"<move>\"}}]}\n\ndata: [DONE]\n\n"}
			}
		}
		text := r.Text()
		good := p.Good.Reply(r)
		if share(text) >= p.Unusable {
			if share(text+"fence") < 0.3 {
				return Text("```\n" + good + "\n```")
			}
			return Text(good)
		}
		switch int(share(text+"kind") * 5) {
		case 0:
			return Text("I think we should find a fair outcome here, so let me consider my options carefully.")
		case 1:
			return Text(`{"action": "agree", "value": "maybe", "comment": "fields nobody asked for"}`)
		case 2:
			return Text(good[:len(good)/3])
		case 3:
			return Text("")
		default:
			return Text(strings.ToUpper(strings.ReplaceAll(good, ">", "]")))
		}
	}
}

// share maps s to [0, 1) by its hash.
func share(s string) float64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return float64(h.Sum64()>>11) / float64(1<<53)
}
