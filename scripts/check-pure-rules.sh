#!/usr/bin/env bash
# Game rules must stay pure: no transport, broker, clock, logger or global randomness in
# referee/games (tests excepted). That they keep no state of the process (caches, counters) is
# checked by TestRulesKeepNoProcessState in referee/games.
set -euo pipefail
bad=$(grep -rnE '"(google.golang.org/grpc[^"]*|github.com/nats-io/[^"]*|net/http|net|log/slog|log|os)"|time\.Now\(|rand\.(Int[0-9]*N?|Float(32|64)|Perm|Shuffle|N|Uint(32|64)?N?|ExpFloat64|NormFloat64)\(' referee/games --include='*.go' | grep -v '_test.go' || true)
if [ -n "$bad" ]; then
	echo "referee/games must hold pure rules; found:"
	echo "$bad"
	exit 1
fi
