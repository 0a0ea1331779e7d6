package hostile_test

import (
	"context"
	"errors"
	"net"
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
			bot.Close()
			bot.Close()
			if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(bot.Address(), "grpc://"), time.Second); err == nil {
				conn.Close()
				t.Fatal("the bot still accepts connections after Close")
			}
		})
	}
	if _, err := hostile.Start("polite"); err == nil {
		t.Error("an unknown kind started")
	}
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
