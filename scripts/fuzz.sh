#!/usr/bin/env bash
# Runs every fuzz target of the repository: each FuzzXxx that `go test -list` finds in a package
# whose tests define one, for FUZZTIME (default 8s) each. When there are more targets than
# FUZZ_BUDGET (default 100s) allows at that pace, each gets an equal share of the budget
# instead, so adding a target never makes CI slower. A FUZZTIME counted in runs ("500x") is
# used as it is. With --list it only prints the targets, one "package target" per line.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-8s}
budget=${FUZZ_BUDGET:-100s}

# millis converts a duration written like 8s, 1.5m or 750ms to milliseconds.
millis() {
	awk -v d="$1" 'BEGIN {
		if (d ~ /ms$/) { print int(substr(d, 1, length(d) - 2)); exit }
		if (d ~ /s$/) { print int(substr(d, 1, length(d) - 1) * 1000); exit }
		if (d ~ /m$/) { print int(substr(d, 1, length(d) - 1) * 60000); exit }
		print "fuzz.sh: cannot read the duration " d > "/dev/stderr"; exit 1
	}'
}

# Packages whose tests define a fuzz target; `go test -list` then names the targets exactly.
# (Files on disk, committed or not, so that a new family's target is found before its commit.)
packages=$(grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git '^func Fuzz' . |
	xargs -n1 dirname | sort -u)
targets=()
for pkg in $packages; do
	for name in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		targets+=("$pkg $name")
	done
done
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets found" >&2
	exit 1
fi
if [ "${1:-}" = "--list" ]; then
	printf '%s\n' "${targets[@]}"
	exit 0
fi

each=$fuzztime
if [[ $fuzztime != *x ]]; then
	share=$(($(millis "$budget") / ${#targets[@]}))
	if [ "$share" -lt "$(millis "$fuzztime")" ]; then
		each=${share}ms
	fi
fi
echo "fuzz.sh: ${#targets[@]} targets, $each each"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $name in $pkg"
	if go test -run '^$' -fuzz "^$name\$" -fuzztime "$each" "$pkg" 2>&1 | tee "$out"; then
		continue
	fi
	# Go's fuzz coordinator before 1.27 can report its own -fuzztime deadline as a failure
	# (go.dev/issue/75804) on a busy machine. A real failure always writes its input.
	if ! grep -q 'Failing input written to' "$out" && grep -qx '    context deadline exceeded' "$out"; then
		echo "fuzz.sh: $name: the fuzzing engine reported its own time limit (go.dev/issue/75804), no failing input; not a failure"
		continue
	fi
	exit 1
done
