#!/usr/bin/env bash
# The driver of `make test`: runs every part given (make targets) even when one fails, then
# lists the parts with their results and times, so one run reports every failure together.
# Usage: scripts/test-all.sh TARGET...   (MAKE names the make to call; default make)
set -uo pipefail
make=${MAKE:-make}
failed=()
rows=()
for part in "$@"; do
	echo "=== $part"
	start=$SECONDS
	if $make --no-print-directory -k "$part"; then
		result=ok
	else
		result=FAIL
		failed+=("$part")
	fi
	rows+=("$(printf '%-14s %-4s %5ds' "$part" "$result" $((SECONDS - start)))")
done
echo "=== make test: every part"
printf '  %s\n' "${rows[@]}"
if [ ! -d ../shared/data ]; then
	echo "  ../shared/data is not beside the repository: the acceptance checks against it (the papers' numbers, the whole Deal-or-No-Deal corpus, the sources of data/) were skipped"
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "make test: FAILED: ${failed[*]}"
	exit 1
fi
echo "make test: ok"
