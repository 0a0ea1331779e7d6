// Package cli holds what every parley subcommand shares: injected I/O and dependencies,
// environment-variable fallbacks for flags, and error conventions.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/policy"
)

// Deps are the dependencies of every subcommand, injected so tests can replace them.
type Deps struct {
	Out    io.Writer
	Err    io.Writer
	Games  *games.Registry
	Getenv func(string) string
	// Builtins serves the built-in agents ("builtin:NAME").
	Builtins agentconn.LocalAgents
	// Pool keeps the connections the resolvers dial, for every match at the same address;
	// nil: a connection per agent per match. The program closes it at exit.
	Pool *agentconn.Pool
}

// Resolver returns a resolver of agent addresses that opens built-in agents and dials
// grpc:// addresses through the pool; commands add human seats and registered bots where
// they serve them.
func (d *Deps) Resolver() *agentconn.Resolver {
	return &agentconn.Resolver{Builtins: d.Builtins, Pool: d.Pool}
}

// Logger returns a text logger on Err at the given level.
func (d *Deps) Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(d.Err, &slog.HandlerOptions{Level: level}))
}

// JSONLogger returns a JSON logger on Err at the given level, for the long-running services.
func (d *Deps) JSONLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(d.Err, &slog.HandlerOptions{Level: level}))
}

// ParamsFlag adds -p/--param, the repeatable KEY=VALUE game parameters of play, tournament and
// analyze; more extends the help text. (pflag takes a backquoted word in a usage as the value's
// name: KEY=VALUE here, never a command named in the text.)
func ParamsFlag(fs *pflag.FlagSet, params *[]string, more string) {
	fs.StringArrayVarP(params, "param", "p", nil, "game parameter `KEY=VALUE` (repeatable)"+more+"; 'parley games' lists every game's parameters")
}

// DefaultLogLevel is the services' log level: warnings and errors only, so the embedded NATS
// server's start-up lines and banner stay out of the way unless asked for.
const DefaultLogLevel = "warn"

// LogLevelFlag adds --log-level to fs, read by ParseLogLevel.
func LogLevelFlag(fs *pflag.FlagSet, level *string) {
	fs.StringVar(level, "log-level", DefaultLogLevel, "log level: debug, info (the embedded NATS server's start-up lines too), warn or error")
}

// ParseLogLevel reads the value of --log-level, or says what it wants.
func ParseLogLevel(s string) (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s)); err != nil {
		return 0, Usagef("--log-level %q: want debug, info, warn or error", s)
	}
	return level, nil
}

// UsageError marks an error in how the command was called (exit status 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// CheckLimits checks the --move-timeout, --retries and --max-reply-bytes of a command that
// plays matches against the runner's hard limits, so no value wraps into another meaning.
func CheckLimits(moveTimeout time.Duration, retries, maxReplyBytes int) error {
	if err := CheckMoveTimeout(moveTimeout); err != nil {
		return err
	}
	switch {
	case retries < 0 || retries > match.MaxMaxRetries:
		return Usagef("--retries must be 0 or more, at most %d, got %d", match.MaxMaxRetries, retries)
	case maxReplyBytes < match.MinMaxReplyBytes || maxReplyBytes > match.MaxMaxReplyBytes:
		return Usagef("--max-reply-bytes must be from %d to %d, got %d", match.MinMaxReplyBytes, match.MaxMaxReplyBytes, maxReplyBytes)
	}
	return nil
}

// CheckMoveTimeout checks a command's --move-timeout against the runner's hard limit.
func CheckMoveTimeout(moveTimeout time.Duration) error {
	switch {
	case moveTimeout <= 0:
		return Usagef("--move-timeout must be positive, got %s", moveTimeout)
	case moveTimeout > match.MaxMoveTimeout:
		return Usagef("--move-timeout must be at most %s, got %s", match.MaxMoveTimeout, moveTimeout)
	}
	return nil
}

// ExitCode maps an error returned by a command to the process exit status.
func ExitCode(err error) int {
	var u *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	default:
		return 1
	}
}

// EnvName is the environment variable that backs a flag: PARLEY_ and the flag's name in upper
// case with dashes as underscores.
func EnvName(flag string) string {
	return "PARLEY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// DocumentEnv appends the backing environment variable to the help of every flag of cmd and
// its subcommands.
func DocumentEnv(cmd *cobra.Command) {
	document := func(f *pflag.Flag) {
		if f.Name == "help" || strings.Contains(f.Usage, "$PARLEY_") {
			return
		}
		f.Usage += fmt.Sprintf(" [$%s]", EnvName(f.Name))
	}
	// Persistent flags are not in Flags() until cobra merges them at parse time.
	cmd.Flags().VisitAll(document)
	cmd.PersistentFlags().VisitAll(document)
	for _, sub := range cmd.Commands() {
		DocumentEnv(sub)
	}
}

// ApplyEnv sets every flag of cmd the user did not set from its environment variable, if that
// is set. Repeatable flags take a comma-separated list.
func ApplyEnv(cmd *cobra.Command, getenv func(string) string) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" {
			return
		}
		v := getenv(EnvName(f.Name))
		if v == "" {
			return
		}
		values := []string{v}
		if _, repeated := f.Value.(pflag.SliceValue); repeated {
			values = strings.Split(v, ",")
		}
		for _, one := range values {
			if serr := f.Value.Set(one); serr != nil {
				err = Usagef("$%s=%q: %v", EnvName(f.Name), v, serr)
				return
			}
		}
		f.Changed = true
	})
	return err
}

// DefaultDeps returns the dependencies of the real program, with a fresh connection pool the
// caller closes.
func DefaultDeps(reg *games.Registry, builtins agentconn.LocalAgents) *Deps {
	return &Deps{Out: os.Stdout, Err: os.Stderr, Games: reg, Getenv: os.Getenv, Builtins: builtins, Pool: agentconn.NewPool()}
}

// PolicyFlags are the flags that set the organiser's policy (referee/policy) of a server.
type PolicyFlags struct {
	File      string
	AllowDial []string
	AllowLLM  bool
}

// Bind adds the flags to fs.
func (f *PolicyFlags) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.File, "policy", "", "the organiser's policy, a YAML file of bounds over the defaults (see SECURITY.md): move timeout, retries, reply size, match time, tournament sizes, where the referee may dial, quotas")
	fs.StringSliceVar(&f.AllowDial, "allow-dial", nil, "networks (10.0.0.0/8) and host names the referee may dial agents at, added to the policy's; * for anywhere (default: nowhere: built-in agents, people and dial-out bots only)")
	fs.BoolVar(&f.AllowLLM, "allow-llm", false, "let spectators and teams start builtin:llm agents, whose settings name servers, files and environment variables of this machine (a trusted network only)")
}

// Policy returns the policy the flags set.
func (f *PolicyFlags) Policy() (*policy.Policy, error) {
	p := policy.Default()
	if f.File != "" {
		var err error
		if p, err = policy.Open(f.File); err != nil {
			return nil, Usagef("--policy: %v", err)
		}
	}
	p.Dial = append(p.Dial, f.AllowDial...)
	if f.AllowLLM {
		p.LLMRoles = append(p.LLMRoles, "spectator", "team")
	}
	if err := p.Validate(); err != nil {
		return nil, Usagef("%v", err)
	}
	return &p, nil
}
