#!/usr/bin/env bash
# The house's layers, checked on the import graph of the non-test code. Every arrow runs down
# this list; a package may import its own wing and anything below it, never above:
#
#   cmd/          the binary: one package per subcommand, the process wiring (cmd/parley/internal/roles)
#   gateway/      the edge: the contract (gen/), the redaction of records, the roles of the
#                 organiser's policy and the metrics; nothing of the rules, runner or services
#   research/     the seed studies: set-ups, published tables, reproductions
#   services/     the analytics service
#   teams/        the bot registry and dial-out links
#   agents/       built-in agents, SDKs, the language-model agent
#   referee/      everything the referee process runs (runner, queue, tournaments, server, ...)
#   internal/     shared infrastructure: the bus, NATS names, telemetry, token budgets
#   referee/games the pure rules (also checked by check-pure-rules.sh)
#   gen/          generated code
#
# Within a layer, wings that sit side by side (services, teams, agents) do not import each
# other. The referee imports nothing of agents/ (the binary plugs the agents in).
set -euo pipefail
mod=github.com/parley-arena/parley

# Layers and wings, in awk (smaller layer is higher); referee/games is a wing of its own.
graph=$(go list -f '{{$p := .ImportPath}}{{range .Imports}}{{$p}} {{.}}
{{end}}' ./... | grep " $mod/" | grep -v "^$mod/gen/" | sed "s|$mod/||g")
bad=$(awk '
function layer(p) {
	if (p ~ /^cmd\//) return 0
	if (p ~ /^gateway(\/|$)/) return 1
	if (p ~ /^research\//) return 2
	if (p ~ /^(services|teams|agents)\//) return 3
	if (p ~ /^referee\/games(\/|$)/) return 6
	if (p ~ /^referee\//) return 4
	if (p ~ /^internal\//) return 5
	if (p ~ /^gen\//) return 7
	return -1
}
function wing(p) {
	if (p ~ /^referee\/games(\/|$)/) return "referee/games"
	sub(/\/.*/, "", p)
	return p
}
{
	from = $1; to = $2
	lf = layer(from); lt = layer(to)
	if (lf < 0 || lt < 0) { print "check-layers: " from " or " to " is in no layer; add its wing to scripts/check-layers.sh"; next }
	# The conformance suite of the rules reads records like any caller (a test helper).
	if (from == "referee/games/gametest") next
	if (wing(from) != wing(to) && lt <= lf) print "back-arrow: " from " imports " to " (layer " lf " imports layer " lt ")"
}' <<<"$graph")
fail=0
if [ -n "$bad" ]; then
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
