// Package web is Parley's web page: static HTML, CSS and JavaScript (plain ES modules, no
// build step, nothing fetched from other sites) embedded in the binary. The gateway serves it
// on / (gateway.Config.Web); `parley play --agent human` serves it on its own for the seat
// page.
//
// Pages:
//
//	/                   the app: #/ matches (live and finished) and tournaments,
//	                    #/match/ID a live transcript, #/tournament/ID live standings with the
//	                    heat maps, #/leaderboard ratings, #/new the forms to start a match or a
//	                    tournament
//	/seat/TOKEN         a human seat (agents/human): briefing, private view, history,
//	                    countdown and the legal moves as controls
//	/static/...         the files
//
// and two helpers of the forms, answered here because they need Go code the page cannot
// carry:
//
//	GET  /web/agents    the built-in agents: {"agents": [{"name", "summary", "settings"}]}
//	POST /web/params    {"game": "coalition", "params": {"values": "AB:750,ABC:1000"}} ->
//	                    the GameParams as protojson, parsed exactly as `parley play --param`
//	                    parses them; 400 with a JSON error for a bad value
//
// The API the page calls is the gateway's (gateway/README.md) and the human seat's
// (agents/human: mount a human.Hub with its Mount method, and give it to the gateway as its
// SeatAuthorizer).
package web

import (
	"embed"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/referee/games"
)

//go:embed static
var files embed.FS

// Static returns the embedded files, rooted at the static directory.
func Static() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// Handler serves the web page: the app on /, the seat page on /seat/TOKEN, the files under
// /static/, and the form helpers under /web/. Any other path is 404.
func Handler() http.Handler {
	static := Static()
	mux := http.NewServeMux()
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := fs.ReadFile(static, name)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			setSecurityHeaders(w)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache")
			w.Write(b)
		}
	}
	mux.HandleFunc("GET /{$}", page("index.html"))
	mux.HandleFunc("GET /seat/{token}", page("seat.html"))
	fileServer := http.StripPrefix("/static/", http.FileServerFS(static))
	mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w)
		// The files change with the binary only; revalidating is cheap on loopback.
		w.Header().Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /web/agents", agents)
	mux.HandleFunc("POST /web/params", params)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no page "+r.URL.Path)
	})
	return mux
}

func setSecurityHeaders(w http.ResponseWriter) {
	h := w.Header()
	// Everything the page needs comes from here: no other site is ever contacted.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer") // the seat page's URL holds its token
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(errorBody{Code: code, Message: msg})
}

type agentInfo struct {
	Name     string `json:"name"`
	Summary  string `json:"summary"`
	Settings string `json:"settings,omitempty"`
}

type agentsResponse struct {
	Agents []agentInfo `json:"agents"`
}

func agents(w http.ResponseWriter, _ *http.Request) {
	var resp agentsResponse
	for _, e := range builtin.Catalog() {
		resp.Agents = append(resp.Agents, agentInfo{Name: e.Name, Summary: e.Summary, Settings: e.Settings})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

type paramsRequest struct {
	Game   string            `json:"game"`
	Params map[string]string `json:"params"`
}

// maxParamsBody bounds the body of POST /web/params.
const maxParamsBody = 64 << 10

func params(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxParamsBody))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "resource_exhausted", "body too large")
		return
	}
	var req paramsRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		writeError(w, http.StatusBadRequest, "invalid_argument", `body: want {"game": "...", "params": {"name": "value"}}`)
		return
	}
	kvs := make([]string, 0, len(req.Params))
	for k, v := range req.Params {
		kvs = append(kvs, k+"="+v)
	}
	sort.Strings(kvs)
	gp, err := games.ParseParams(req.Game, kvs)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_argument", err.Error())
		return
	}
	b, err := protojson.Marshal(gp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
