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
// The API the page calls is the gateway's (gateway/README.md): the forms list the referee's
// games and built-in agents (RefereeService ListGames, ListAgents) and have their parameters
// read by the referee exactly as `parley play --param` reads them (ParseParams); and the human
// seat's (agents/human: mount a human.Hub with its Mount method, and give it to the gateway as
// its SeatAuthorizer).
package web

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
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

// Handler serves the web page: the app on /, the seat page on /seat/TOKEN and the files under
// /static/. Any other path is 404.
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
