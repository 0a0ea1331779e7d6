package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/parley-arena/parley/internal/bus"
)

// BusFlags are the flags that say which NATS server a command uses: an external one (--nats)
// or an embedded one keeping its data in --store-dir.
type BusFlags struct {
	NATS     string
	StoreDir string
	// Needed makes the command refuse to start an embedded server on a fresh directory: it
	// reads what another process stored (parley report).
	Needed bool
}

// Bind adds --nats and --store-dir to fs; storeDir says what the embedded server's data is
// kept for by this command.
func (f *BusFlags) Bind(fs *pflag.FlagSet, natsHelp, storeDirHelp string) {
	fs.StringVar(&f.NATS, "nats", "", natsHelp)
	fs.StringVar(&f.StoreDir, "store-dir", "", storeDirHelp)
}

// Embedded reports whether the flags ask for an embedded server.
func (f *BusFlags) Embedded() bool { return f.NATS == "" }

// Kept reports whether what the command stores outlives it (an external server or a named
// store directory).
func (f *BusFlags) Kept() bool { return f.NATS != "" || f.StoreDir != "" }

// Flag writes the flag that names the same store for another command ("--nats URL" or
// "--store-dir DIR"); "" for a store that ends with the command.
func (f *BusFlags) Flag() string {
	switch {
	case f.NATS != "":
		return "--nats " + f.NATS
	case f.StoreDir != "":
		return "--store-dir " + f.StoreDir
	}
	return ""
}

// Check says what is wrong with the flags together, as a usage error.
func (f *BusFlags) Check() error {
	switch {
	case f.NATS != "" && f.StoreDir != "":
		return Usagef("--store-dir applies only to the embedded NATS server, not with --nats")
	case f.Needed && !f.Kept():
		return Usagef("one of --nats or --store-dir is required: where the records are")
	}
	return nil
}

// Open checks the flags and opens the bus they name; cfg may set what no flag does
// (replicas, a listen address).
func (f *BusFlags) Open(ctx context.Context, cfg bus.Config, logger *slog.Logger) (*bus.Bus, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	cfg.URL, cfg.StoreDir = f.NATS, f.StoreDir
	b, err := bus.Open(ctx, cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	return b, nil
}
