#!/bin/sh
# Checks the message of every commit after BASE (merges aside) with
# scripts/hooks/commit-msg, the hook that refuses them at commit time.
#   check-commits.sh [BASE]
# BASE defaults to be34e59, the last commit before lode's messages took this
# form. A clone without BASE (a shallow one) has nothing to check against:
# the check says so and passes.
set -eu
base=${1:-be34e59}
root=$(git rev-parse --show-toplevel)
hook=$(cd "$(dirname "$0")" && pwd)/hooks/commit-msg
if ! git -C "$root" cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "check-commits: skipped: this clone has no commit $base (a shallow clone?)"
  exit 0
fi
msg=$(mktemp)
trap 'rm -f "$msg" "$msg.err"' EXIT
bad=0
checked=0
for commit in $(git -C "$root" rev-list --no-merges "$base..HEAD"); do
  git -C "$root" log -1 --format=%B "$commit" >"$msg"
  checked=$((checked + 1))
  if ! "$hook" "$msg" 2>"$msg.err"; then
    echo "check-commits: $(git -C "$root" log -1 --format=%h "$commit"): $(head -1 "$msg.err" | sed 's/^commit-msg: //')"
    bad=$((bad + 1))
  fi
  rm -f "$msg.err"
done
echo "check-commits: $checked commits after $base, $bad not in the form 'area: what changed'"
[ "$bad" -eq 0 ]
