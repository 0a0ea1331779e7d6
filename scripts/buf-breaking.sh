#!/usr/bin/env bash
# Check proto/ for wire breaking changes against the contract as last released: the commit in
# scripts/proto-baseline (move it forward when a release is cut), so that every change since
# then is checked, not only the last commit's. Without that commit in the clone (a shallow
# one), against the previous commit.
set -euo pipefail
cd "$(dirname "$0")/.."
against=$(cat scripts/proto-baseline)
if ! git cat-file -e "$against^{commit}" 2>/dev/null; then
	if git rev-parse -q --verify HEAD~1 >/dev/null; then
		against=$(git rev-parse HEAD~1)
	else
		echo "buf breaking: no earlier commit to compare with; skipped"
		exit 0
	fi
fi
if ! git cat-file -e "$against:proto" 2>/dev/null; then
	echo "buf breaking: $against has no proto/; skipped"
	exit 0
fi
echo "buf breaking against $against"
buf breaking proto --against ".git#ref=$against,subdir=proto"
