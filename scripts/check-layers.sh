#!/usr/bin/env bash
# The house's load-bearing walls, checked on the import graph of the non-test code:
#   - the referee imports nothing from agents/ (the binary plugs the agents in);
#   - the gateway is an edge: it imports the contract (gen/), the redaction of records, the
#     roles of the organiser's policy and the metrics; nothing of the rules, the runner, the
#     services or the broker.
set -euo pipefail
mod=github.com/parley-arena/parley
fail=0
bad=$(go list -f '{{.ImportPath}}: {{join .Imports " "}}' ./referee/... | grep -oE "^[^:]+:.* $mod/agents/[^ ]*" || true)
if [ -n "$bad" ]; then
	echo "referee/ must import nothing from agents/; found:"
	echo "$bad"
	fail=1
fi
allowed="^$mod/(gen/|internal/telemetry$|referee/record$|referee/policy$|gateway)"
bad=$(go list -f '{{join .Imports "\n"}}' ./gateway/... | grep "^$mod/" | grep -vE "$allowed" || true)
if [ -n "$bad" ]; then
	echo "gateway/ is an edge: it speaks the services' contracts; found imports of:"
	echo "$bad"
	fail=1
fi
exit $fail
