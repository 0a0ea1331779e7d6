#!/usr/bin/env bash
# Check proto/ for breaking changes against the previous commit of main (CI runs on a clean
# checkout of main, so HEAD is the change being checked), or against HEAD when proto/ has
# uncommitted changes (a developer's working tree).
set -euo pipefail
if ! git diff --quiet HEAD -- proto 2>/dev/null || [ -n "$(git ls-files --others --exclude-standard proto)" ]; then
	against=HEAD
elif git rev-parse -q --verify HEAD~1 >/dev/null; then
	against=HEAD~1
else
	echo "buf breaking: no previous commit to compare with; skipped"
	exit 0
fi
if ! git cat-file -e "$against:proto" 2>/dev/null; then
	echo "buf breaking: $against has no proto/; skipped"
	exit 0
fi
echo "buf breaking against $against"
buf breaking proto --against ".git#ref=$(git rev-parse "$against"),subdir=proto"
