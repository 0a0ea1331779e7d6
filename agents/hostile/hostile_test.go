package hostile_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/hostile"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// Every kind serves on a loopback port until Close, which cuts it off and may be called twice.
func TestStartAndClose(t *testing.T) {
	for _, kind := range hostile.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			bot, err := hostile.Start(kind)
			if err != nil {
				t.Fatal(err)
			}
			addr, ok := strings.CutPrefix(bot.Address(), "grpc://127.0.0.1:")
			if !ok || addr == "" || bot.Kind() != kind {
				t.Fatalf("address %q, kind %q", bot.Address(), bot.Kind())
			}
			conn, err := net.DialTimeout("tcp", strings.TrimPrefix(bot.Address(), "grpc://"), 5*time.Second)
			if err != nil {
				t.Fatalf("the bot does not accept connections: %v", err)
			}
			conn.Close()
			port, _ := strconv.Atoi(addr)
			if !listening(t, port) {
				t.Fatalf("no socket of this process listens on port %d while the bot serves", port)
			}
			bot.Close()
			bot.Close()
			// Not a dial: once the bot lets its port go, another test's listener may take it.
			if listening(t, port) {
				t.Fatal("the bot still listens after Close")
			}
		})
	}
	if _, err := hostile.Start("polite"); err == nil {
		t.Error("an unknown kind started")
	}
}

// listening reports whether a socket of this process listens on TCP port of 127.0.0.1: a
// LISTEN entry of /proc/net/tcp whose inode is one of this process's descriptors.
func listening(t *testing.T, port int) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || !strings.HasSuffix(f[1], want) || f[3] != "0A" { // 0A: LISTEN
			continue
		}
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range fds {
			if link, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && link == "socket:["+f[9]+"]" {
				return true
			}
		}
	}
	return false
}

// The kinds that play do so legally, and floods stay within what the referee allows.
func TestAgentsPlayLegally(t *testing.T) {
	for _, kind := range []hostile.Kind{hostile.NoteFlood, hostile.MessageFlood, hostile.ForgedDescribe, hostile.Huge} {
		t.Run(string(kind), func(t *testing.T) {
			a, err := hostile.NewAgent(kind, hostile.WithSize(100))
			if err != nil {
				t.Fatal(err)
			}
			st, err := games.Start(ultimatum.New(), nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			obs := st.Observe(0)
			obs.MaxReplyBytes = 64 << 10
			action, err := a.Act(context.Background(), obs)
			if err != nil {
				t.Fatal(err)
			}
			if kind == hostile.Huge {
				if len(action.GetPrivateReasoning()) != 100 {
					t.Errorf("reasoning of %d bytes, want the size asked for", len(action.GetPrivateReasoning()))
				}
				return
			}
			if _, err := st.Apply(0, action); err != nil {
				t.Fatalf("its move was refused: %v", err)
			}
			if n := proto.Size(action); n > int(obs.MaxReplyBytes) {
				t.Errorf("a %d-byte action over the %d-byte reply limit", n, obs.MaxReplyBytes)
			}
			switch kind {
			case hostile.NoteFlood:
				if len(action.GetPrivateNotes()) != games.MaxTextBytes {
					t.Errorf("a note of %d bytes, want the longest allowed", len(action.GetPrivateNotes()))
				}
			case hostile.MessageFlood:
				if len(action.GetMessages()) < 4 {
					t.Errorf("%d messages: no flood", len(action.GetMessages()))
				}
			case hostile.ForgedDescribe:
				info := a.(sdk.Describer).Describe()
				if !strings.Contains(info.GetName(), "\n"+hostile.ForgedLine) || len(info.GetDescription()) != 100 {
					t.Errorf("describes itself as %q with a %d-byte description", info.GetName(), len(info.GetDescription()))
				}
			}
		})
	}
	for _, kind := range []hostile.Kind{hostile.Garbage, hostile.Noise, hostile.Silent, hostile.HTTP1, hostile.Crash} {
		if _, err := hostile.NewAgent(kind); !errors.Is(err, hostile.ErrNotAgent) {
			t.Errorf("NewAgent(%s) = %v, want ErrNotAgent", kind, err)
		}
	}
}
