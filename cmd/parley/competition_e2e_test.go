package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// teamCall posts a JSON call with a team token to a gateway and returns the status and body.
func teamCall(t *testing.T, base, token, procedure, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+procedure, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestCompetition runs `parley up`, adds a team with `parley admin`, registers two bots through
// the gateway, connects one with `parley agent --dial-out`, and plays both with `parley play`
// on up's NATS server: the dial-out bot plays, the served one only with --allow-bot-dial.
func TestCompetition(t *testing.T) {
	dir := t.TempDir()
	up := startProc(t, "", parleyBin, "up", "--data-dir", dir, "--listen", "127.0.0.1:0", "--referee-listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0", "--allow-dial", "127.0.0.1/32")
	url := up.waitLine("Parley is up: ")
	natsURL, err := os.ReadFile(filepath.Join(dir, "nats.url"))
	if err != nil {
		t.Fatalf("up wrote no nats.url: %v\n%s", err, up.output())
	}

	add := runParley(t, nil, "admin", "team", "add", "acme", "--data-dir", dir)
	token := strings.TrimSpace(add.stdout)
	if add.code != 0 || !strings.HasPrefix(token, "pt_") || !strings.Contains(add.stderr, "shown once") {
		t.Fatalf("admin team add: %s", add)
	}
	if again := runParley(t, nil, "admin", "team", "add", "acme", "--data-dir", dir); again.code != 2 || !strings.Contains(again.stderr, "exists") {
		t.Fatalf("adding acme twice: %s", again)
	}
	if none := runParley(t, nil, "admin", "team", "list", "--data-dir", t.TempDir()); none.code != 2 || !strings.Contains(none.stderr, "--nats") {
		t.Fatalf("admin without a running up: %s", none)
	}

	served := startProc(t, "", parleyBin, "agent", "fair", "--listen", "127.0.0.1:0")
	servedAddr := served.waitLine("agent fair listening on ")
	for _, body := range []string{
		`{"name":"fair","version":"1","games":["ultimatum"],"endpoint":"dialout"}`,
		`{"name":"served","version":"2","games":["ultimatum"],"endpoint":"grpc://` + servedAddr + `"}`,
	} {
		if code, data := teamCall(t, url, token, "/parley.registry.v1.RegistryService/RegisterBot", body); code != http.StatusOK {
			t.Fatalf("register %s: %d %s", body, code, data)
		}
	}
	if code, _ := teamCall(t, url, "pt_wrong", "/parley.registry.v1.RegistryService/ListBots", `{}`); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: status %d, want 401", code)
	}

	bot := startProc(t, "", parleyBin, "agent", "fair", "--dial-out", url, "--token", token, "--bot", "fair")
	if addr := bot.waitLine("agent fair connected as "); addr != "bot:acme/fair" {
		t.Fatalf("connected as %q", addr)
	}

	nats := strings.TrimSpace(string(natsURL))
	play := runParley(t, nil, "play", "ultimatum", "--agent", "bot:acme/fair", "--agent", "builtin:random?seed=4", "--nats", nats, "--seed", "5", "--json")
	if play.code != 0 || !strings.Contains(play.stdout, `"acme/fair@1"`) || strings.Contains(play.stdout, "agentFault") {
		t.Fatalf("play with the dial-out bot: %s", play)
	}
	refused := runParley(t, nil, "play", "ultimatum", "--agent", "bot:acme/served", "--agent", "builtin:random", "--nats", nats)
	if refused.code != 2 || !strings.Contains(refused.stderr, "--allow-bot-dial") {
		t.Fatalf("play with a registered grpc bot, without the flag: %s", refused)
	}
	allowed := runParley(t, nil, "play", "ultimatum", "--agent", "bot:acme/served", "--agent", "builtin:random", "--nats", nats, "--allow-bot-dial", "--json")
	if allowed.code != 0 || !strings.Contains(allowed.stdout, `"acme/served@2"`) || strings.Contains(allowed.stdout, "agentFault") {
		t.Fatalf("play with a registered grpc bot, with the flag: %s", allowed)
	}

	list := runParley(t, nil, "admin", "team", "list", "--nats", nats)
	if list.code != 0 || !strings.Contains(list.stdout, "acme  2") {
		t.Fatalf("admin team list: %s", list)
	}
	if rev := runParley(t, nil, "admin", "team", "revoke", "acme", "--data-dir", dir); rev.code != 0 {
		t.Fatalf("revoke: %s", rev)
	}
	if code, _ := teamCall(t, url, token, "/parley.registry.v1.RegistryService/ListBots", `{}`); code != http.StatusUnauthorized {
		t.Fatalf("a revoked token: status %d, want 401", code)
	}

	// Revoking the team also ends the link its bot holds: the agent stops, saying why.
	select {
	case <-bot.exited:
		if code := bot.cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(bot.output(), "revoked") {
			t.Errorf("the dial-out agent of a revoked team exited %d without saying it was revoked\n%s", code, bot.output())
		}
	case <-time.After(waitTimeout):
		t.Errorf("the dial-out agent of a revoked team is still connected\n%s", bot.output())
	}
	if code, _ := up.interrupt(); code != 0 {
		t.Errorf("up exited %d\n%s", code, up.output())
	}
	if _, err := os.Stat(filepath.Join(dir, "nats.url")); !os.IsNotExist(err) {
		t.Errorf("nats.url left behind after up stopped: %v", err)
	}
}
