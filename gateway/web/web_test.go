package web_test

import (
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-arena/parley/gateway/web"
)

func do(t *testing.T, h http.Handler, method, target, body string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func read(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPages(t *testing.T) {
	h := web.Handler()
	tests := []struct {
		target, wantType, wantBody string
		wantStatus                 int
	}{
		{"/", "text/html", `src="/static/js/app.js"`, 200},
		{"/seat/AbC_123-xyz", "text/html", `src="/static/js/seat.js"`, 200},
		{"/static/js/app.js", "text/javascript", "hashchange", 200},
		{"/static/js/seat.js", "text/javascript", "/api/v1/seats/", 200},
		{"/static/css/parley.css", "text/css", "--accent", 200},
		{"/static/favicon.svg", "image/svg+xml", "<svg", 200},
		{"/static/js/nope.js", "", "", 404},
		{"/seat/", "application/json", "no page", 404},
		{"/elsewhere", "application/json", "no page", 404},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			resp := do(t, h, "GET", tc.target, "")
			body := read(t, resp)
			if resp.StatusCode != tc.wantStatus || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.wantType) || !strings.Contains(body, tc.wantBody) {
				t.Errorf("GET %s = %d %s, want %d %s with %q", tc.target, resp.StatusCode, resp.Header.Get("Content-Type"), tc.wantStatus, tc.wantType, tc.wantBody)
			}
			if tc.wantStatus == 200 && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("GET %s: Content-Security-Policy %q, want everything from this server only", tc.target, resp.Header.Get("Content-Security-Policy"))
			}
		})
	}
	if resp := do(t, h, "POST", "/", "{}"); resp.StatusCode != 404 && resp.StatusCode != 405 {
		t.Errorf("POST / = %d", resp.StatusCode)
	}
}

// The page works offline: nothing in it names another site, and every module it imports is
// embedded.
func TestOffline(t *testing.T) {
	static := web.Static()
	url := regexp.MustCompile(`(?i)\b(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	imports := regexp.MustCompile(`(?:from\s+|import\()\s*'([^']+)'`)
	var files int
	err := fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := fs.ReadFile(static, p)
		if err != nil {
			return err
		}
		text := string(b)
		if m := url.FindString(text); m != "" && !strings.Contains(m, "www.w3.org") {
			t.Errorf("%s names another site: %s", p, m)
		}
		if mime.TypeByExtension(path.Ext(p)) == "" {
			t.Errorf("%s: no media type for its extension", p)
		}
		for _, m := range imports.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.HasPrefix(target, "/static/") {
				target = strings.TrimPrefix(target, "/static/")
			} else {
				target = path.Join(path.Dir(p), target)
			}
			if _, err := fs.Stat(static, target); err != nil {
				t.Errorf("%s imports %s, which is not embedded", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 8 {
		t.Errorf("%d files embedded, want the pages, scripts and styles", files)
	}
}
