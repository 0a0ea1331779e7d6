package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
)

func TestEnvName(t *testing.T) {
	tests := []struct{ flag, want string }{
		{"x", "PARLEY_X"},
		{"nats", "PARLEY_NATS"},
		{"move-timeout", "PARLEY_MOVE_TIMEOUT"},
		{"show-private-reasoning", "PARLEY_SHOW_PRIVATE_REASONING"},
		{"already_snake", "PARLEY_ALREADY_SNAKE"},
		{"MiXed-Case", "PARLEY_MIXED_CASE"},
	}
	for _, tc := range tests {
		t.Run(tc.flag, func(t *testing.T) {
			if got := cli.EnvName(tc.flag); got != tc.want {
				t.Errorf("EnvName(%q) = %q, want %q", tc.flag, got, tc.want)
			}
		})
	}
}

// options is what the test command's flags fill.
type options struct {
	name    string
	timeout time.Duration
	verbose bool
	tags    []string
	seats   []string
	// config is a persistent flag of the root; mode a flag of the subcommand.
	config string
	mode   string
}

// newTestCmd returns a root command "t" with a subcommand "sub", set up as the parley root
// does: ApplyEnv in PersistentPreRunE and DocumentEnv once the tree is built. ran records which
// command ran.
func newTestCmd(o *options, getenv func(string) string, ran *string) *cobra.Command {
	root := &cobra.Command{
		Use:           "t",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return cli.ApplyEnv(cmd, getenv)
		},
		RunE: func(*cobra.Command, []string) error { *ran = "t"; return nil },
	}
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	f := root.Flags()
	f.StringVar(&o.name, "agent-name", "anon", "name of the agent")
	f.DurationVar(&o.timeout, "move-timeout", 10*time.Second, "time per move")
	f.BoolVar(&o.verbose, "verbose", false, "log more")
	f.StringArrayVar(&o.tags, "tag", []string{"default"}, "a tag (repeatable)")
	f.StringSliceVar(&o.seats, "seat", nil, "seats, comma-separated")
	root.PersistentFlags().StringVar(&o.config, "config", "none", "config file")

	sub := &cobra.Command{
		Use:  "sub",
		RunE: func(*cobra.Command, []string) error { *ran = "sub"; return nil },
	}
	sub.Flags().StringVar(&o.mode, "mode", "fast", "how to run")
	root.AddCommand(sub)
	cli.DocumentEnv(root)
	return root
}

func TestApplyEnv(t *testing.T) {
	defaults := options{name: "anon", timeout: 10 * time.Second, tags: []string{"default"}, config: "none", mode: "fast"}
	with := func(change func(*options)) options {
		o := defaults
		o.tags = slices.Clone(defaults.tags)
		change(&o)
		return o
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want options
		// wantRan is the command that should have run; empty means "t".
		wantRan string
		// wantChanged lists flags that must count as set afterwards.
		wantChanged []string
	}{
		{name: "nothing set", want: defaults},
		{
			name: "env fills every unset flag",
			env: map[string]string{
				"PARLEY_AGENT_NAME": "bob", "PARLEY_MOVE_TIMEOUT": "1m30s", "PARLEY_VERBOSE": "true",
				"PARLEY_TAG": "a,b", "PARLEY_SEAT": "P1,P2", "PARLEY_CONFIG": "c.toml",
			},
			want: with(func(o *options) {
				o.name, o.timeout, o.verbose, o.tags, o.seats, o.config = "bob", 90*time.Second, true, []string{"a", "b"}, []string{"P1", "P2"}, "c.toml"
			}),
			wantChanged: []string{"agent-name", "move-timeout", "verbose", "tag", "seat", "config"},
		},
		{
			name: "explicit flags win over env",
			args: []string{"--agent-name", "alice", "--move-timeout=2s", "--verbose=false", "--tag", "x", "--seat", "S", "--config", "flag.toml"},
			env: map[string]string{
				"PARLEY_AGENT_NAME": "bob", "PARLEY_MOVE_TIMEOUT": "1m", "PARLEY_VERBOSE": "true",
				"PARLEY_TAG": "a,b", "PARLEY_SEAT": "P1,P2", "PARLEY_CONFIG": "env.toml",
			},
			want: with(func(o *options) {
				o.name, o.timeout, o.verbose, o.tags, o.seats, o.config = "alice", 2*time.Second, false, []string{"x"}, []string{"S"}, "flag.toml"
			}),
		},
		{
			name: "some from flags, the rest from env",
			args: []string{"--tag", "x", "--tag", "y"},
			env:  map[string]string{"PARLEY_TAG": "a", "PARLEY_AGENT_NAME": "bob"},
			want: with(func(o *options) { o.tags, o.name = []string{"x", "y"}, "bob" }),
		},
		{
			name: "one array value replaces the default",
			env:  map[string]string{"PARLEY_TAG": "solo"},
			want: with(func(o *options) { o.tags = []string{"solo"} }),
		},
		{
			name: "array values keep their spaces and order",
			env:  map[string]string{"PARLEY_TAG": "c d,a b,c d"},
			want: with(func(o *options) { o.tags = []string{"c d", "a b", "c d"} }),
		},
		{
			name: "empty env values are ignored",
			env:  map[string]string{"PARLEY_AGENT_NAME": "", "PARLEY_TAG": ""},
			want: defaults,
		},
		{
			name: "other variables are ignored",
			env:  map[string]string{"AGENT_NAME": "x", "PARLEY_AGENTNAME": "y", "parley_agent_name": "z"},
			want: defaults,
		},
		{
			name: "help is never taken from the environment",
			env:  map[string]string{"PARLEY_HELP": "true"},
			want: defaults,
		},
		{
			name:    "subcommand: its own flags and the root's persistent ones",
			args:    []string{"sub"},
			env:     map[string]string{"PARLEY_MODE": "slow", "PARLEY_CONFIG": "c.toml", "PARLEY_AGENT_NAME": "not for sub"},
			want:    with(func(o *options) { o.mode, o.config = "slow", "c.toml" }),
			wantRan: "sub",
		},
		{
			name:    "subcommand: explicit persistent flag wins",
			args:    []string{"--config", "flag.toml", "sub", "--mode", "x"},
			env:     map[string]string{"PARLEY_MODE": "slow", "PARLEY_CONFIG": "c.toml"},
			want:    with(func(o *options) { o.mode, o.config = "x", "flag.toml" }),
			wantRan: "sub",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got options
			var ran string
			cmd := newTestCmd(&got, func(k string) string { return tc.env[k] }, &ran)
			cmd.SetArgs(tc.args)
			if err := cmd.Execute(); err != nil {
				t.Fatalf("Execute(%q): %v", tc.args, err)
			}
			if wantRan := orDefault(tc.wantRan, "t"); ran != wantRan {
				t.Errorf("ran %q, want %q", ran, wantRan)
			}
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
				t.Errorf("options =\n  %+v\nwant\n  %+v", got, tc.want)
			}
			for _, name := range tc.wantChanged {
				if !cmd.Flags().Changed(name) && !cmd.PersistentFlags().Changed(name) {
					t.Errorf("flag --%s filled from the environment does not count as set", name)
				}
			}
		})
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func TestApplyEnvBadValue(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr []string
	}{
		{name: "duration", env: map[string]string{"PARLEY_MOVE_TIMEOUT": "soon"}, wantErr: []string{"$PARLEY_MOVE_TIMEOUT", `"soon"`}},
		{name: "duration without unit", env: map[string]string{"PARLEY_MOVE_TIMEOUT": "10"}, wantErr: []string{"$PARLEY_MOVE_TIMEOUT", `"10"`}},
		{name: "bool", env: map[string]string{"PARLEY_VERBOSE": "yes please"}, wantErr: []string{"$PARLEY_VERBOSE", `"yes please"`}},
		{name: "good values pass", args: []string{"sub"}, env: map[string]string{"PARLEY_MODE": "ok", "PARLEY_CONFIG": "x"}, wantErr: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var o options
			var ran string
			cmd := newTestCmd(&o, func(k string) string { return tc.env[k] }, &ran)
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Execute: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Execute succeeded with %v, want a usage error", tc.env)
			}
			var u *cli.UsageError
			if !errors.As(err, &u) {
				t.Errorf("error %v (%T) is not a *cli.UsageError", err, err)
			}
			if code := cli.ExitCode(err); code != 2 {
				t.Errorf("ExitCode = %d, want 2", code)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if ran != "" {
				t.Errorf("command %q ran despite the bad environment", ran)
			}
		})
	}
}

func TestDocumentEnv(t *testing.T) {
	var o options
	var ran string
	root := newTestCmd(&o, func(string) string { return "" }, &ran)
	sub, _, err := root.Find([]string{"sub"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd       *cobra.Command
		flag      string
		wantUsage string
	}{
		{root, "agent-name", "name of the agent [$PARLEY_AGENT_NAME]"},
		{root, "move-timeout", "time per move [$PARLEY_MOVE_TIMEOUT]"},
		{root, "verbose", "log more [$PARLEY_VERBOSE]"},
		{root, "tag", "a tag (repeatable) [$PARLEY_TAG]"},
		{root, "seat", "seats, comma-separated [$PARLEY_SEAT]"},
		{root, "config", "config file [$PARLEY_CONFIG]"},
		{sub, "mode", "how to run [$PARLEY_MODE]"},
	}
	for _, tc := range tests {
		t.Run(tc.cmd.Name()+" --"+tc.flag, func(t *testing.T) {
			f := tc.cmd.Flags().Lookup(tc.flag)
			if f == nil {
				f = tc.cmd.PersistentFlags().Lookup(tc.flag)
			}
			if f == nil {
				t.Fatalf("no flag --%s", tc.flag)
			}
			if f.Usage != tc.wantUsage {
				t.Errorf("usage = %q, want %q", f.Usage, tc.wantUsage)
			}
		})
	}

	t.Run("twice adds the variable once", func(t *testing.T) {
		cli.DocumentEnv(root)
		if got := root.Flags().Lookup("agent-name").Usage; got != "name of the agent [$PARLEY_AGENT_NAME]" {
			t.Errorf("usage after a second DocumentEnv = %q", got)
		}
	})

	t.Run("help output", func(t *testing.T) {
		for args, wants := range map[string][]string{
			"--help":     {"[$PARLEY_AGENT_NAME]", "[$PARLEY_TAG]", "[$PARLEY_CONFIG]"},
			"sub --help": {"[$PARLEY_MODE]", "[$PARLEY_CONFIG]"},
		} {
			args := strings.Fields(args)
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetArgs(args)
			if err := root.Execute(); err != nil {
				t.Fatalf("Execute(%q): %v", args, err)
			}
			for _, want := range wants {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%q output does not mention %s:\n%s", args, want, out.String())
				}
			}
			if strings.Contains(out.String(), "PARLEY_HELP") {
				t.Errorf("%q output documents a variable for --help:\n%s", args, out.String())
			}
		}
	})

	t.Run("help flag added before is left alone", func(t *testing.T) {
		c := &cobra.Command{Use: "h"}
		c.InitDefaultHelpFlag()
		cli.DocumentEnv(c)
		if u := c.Flags().Lookup("help").Usage; strings.Contains(u, "PARLEY") {
			t.Errorf("help usage = %q", u)
		}
	})
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"plain error", errors.New("boom"), 1},
		{"usage error", cli.Usagef("bad flag %q", "x"), 2},
		{"wrapped usage error", fmt.Errorf("play: %w", cli.Usagef("bad")), 2},
		{"usage error literal", &cli.UsageError{Err: errors.New("x")}, 2},
		{"cancelled", context.Canceled, 130},
		{"wrapped cancel", fmt.Errorf("match: %w", context.Canceled), 130},
		{"usage error wrapping a cancel counts as usage", &cli.UsageError{Err: context.Canceled}, 2},
		{"deadline is a failure", context.DeadlineExceeded, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := cli.ExitCode(tc.err); got != tc.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

func TestUsagef(t *testing.T) {
	inner := errors.New("inner")
	err := cli.Usagef("flag --%s: %w", "seat", inner)
	if err.Error() != "flag --seat: inner" {
		t.Errorf("Usagef message = %q", err)
	}
	if !errors.Is(err, inner) {
		t.Errorf("Usagef does not wrap its %%w argument")
	}
}

// TestFlagHelp: the help of --param names its value KEY=VALUE (pflag reads a backquoted word as
// the value's name, which once made it "--param parley games"), and --log-level reads levels.
func TestFlagHelp(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var params []string
	var level string
	cli.ParamsFlag(fs, &params, "")
	cli.LogLevelFlag(fs, &level)
	help := fs.FlagUsages()
	if !strings.Contains(help, "-p, --param KEY=VALUE ") || strings.Contains(help, "--param parley") {
		t.Errorf("help:\n%s", help)
	}
	if err := fs.Parse([]string{"--log-level", "info", "-p", "total=10"}); err != nil {
		t.Fatal(err)
	}
	if l, err := cli.ParseLogLevel(level); err != nil || l != slog.LevelInfo || params[0] != "total=10" {
		t.Errorf("level %v (%v), params %v", l, err, params)
	}
	if _, err := cli.ParseLogLevel("loud"); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Errorf("--log-level loud: %v", err)
	}
	if l, _ := cli.ParseLogLevel(cli.DefaultLogLevel); l != slog.LevelWarn {
		t.Errorf("default level %v, want warn", l)
	}
}

// TestBusFlags: the store flags each command shares, checked and written back the same way.
func TestBusFlags(t *testing.T) {
	both := cli.BusFlags{NATS: "nats://127.0.0.1:4222", StoreDir: "data"}
	if err := both.Check(); err == nil || !strings.Contains(err.Error(), "--store-dir applies only to the embedded NATS server") {
		t.Errorf("--nats and --store-dir together: %v", err)
	}
	if err := (&cli.BusFlags{Needed: true}).Check(); err == nil || !strings.Contains(err.Error(), "one of --nats or --store-dir is required") {
		t.Errorf("a command reading stored records with neither: %v", err)
	}
	for _, tc := range []struct {
		f              cli.BusFlags
		embedded, kept bool
		flag           string
	}{
		{cli.BusFlags{}, true, false, ""},
		{cli.BusFlags{StoreDir: "data"}, true, true, "--store-dir data"},
		{cli.BusFlags{NATS: "nats://h:4222"}, false, true, "--nats nats://h:4222"},
	} {
		if err := tc.f.Check(); err != nil || tc.f.Embedded() != tc.embedded || tc.f.Kept() != tc.kept || tc.f.Flag() != tc.flag {
			t.Errorf("%+v: check %v, embedded %v, kept %v, flag %q", tc.f, err, tc.f.Embedded(), tc.f.Kept(), tc.f.Flag())
		}
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var f cli.BusFlags
	f.Bind(fs, "the server", "its data")
	if err := fs.Parse([]string{"--store-dir", "kept"}); err != nil || f.StoreDir != "kept" || fs.Lookup("nats") == nil {
		t.Errorf("bound flags: %v %+v", err, f)
	}
}
