package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
)

// fakeReferee answers StartMatch and remembers what it was asked and by whom.
type fakeReferee struct {
	refereev1.RefereeServiceClient
	asked *refereev1.StartMatchRequest
}

func (f *fakeReferee) StartMatch(_ context.Context, req *refereev1.StartMatchRequest, _ ...grpc.CallOption) (*refereev1.StartMatchResponse, error) {
	f.asked = req
	return &refereev1.StartMatchResponse{MatchId: "m"}, nil
}

// FuzzStartMatch sends any body, as any caller, to StartMatch: the gateway never panics, answers
// every request with a status of its own or the referee's and a JSON body, passes on only
// requests that decode exactly into a StartMatchRequest, and never lets a body past its limit.
func FuzzStartMatch(f *testing.F) {
	for _, seed := range []string{
		`{"game":"ultimatum","agents":["builtin:fair","builtin:random"]}`,
		`{"game":"ultimatum","agents":["builtin:fair"],"params":{"ultimatum":{"totl":10}}}`,
		`{"limits":{"maxRetries":2147483647,"moveTimeout":"86400s"}}`,
		`{"matchId":"cup-a0-g0","labels":["acme/fair@1.0"]}`,
		``, `null`, `[]`, `{"game":`, "\x00\xff", `{"seed":"-1"}`,
	} {
		f.Add([]byte(seed), "")
		f.Add([]byte(seed), "pt_guess")
	}
	f.Fuzz(func(t *testing.T, body []byte, token string) {
		ref := &fakeReferee{}
		g, err := New(Config{Referee: ref, MaxBodyBytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/parley.referee.v1.RefereeService/StartMatch", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("status %d with a body that is not JSON: %q", rec.Code, rec.Body.Bytes())
		}
		switch rec.Code {
		case http.StatusOK:
			if ref.asked == nil {
				t.Fatal("200 without asking the referee")
			}
			if len(body) > 4096 {
				t.Fatalf("a body of %d bytes past the 4096-byte limit was passed on", len(body))
			}
			if err := (protojson.UnmarshalOptions{}).Unmarshal(body, &refereev1.StartMatchRequest{}); err != nil {
				t.Fatalf("passed on a body that does not decode exactly: %v", err)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnauthorized, http.StatusUnsupportedMediaType, http.StatusTooManyRequests:
			if ref.asked != nil {
				t.Fatalf("status %d, yet the referee was asked", rec.Code)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
	})
}
