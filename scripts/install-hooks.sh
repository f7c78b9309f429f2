#!/bin/sh
# Points this clone's git at lode's hooks (scripts/hooks/), so a commit whose
# message is not in lode's form (scripts/hooks/commit-msg says which) is
# refused before it is made. Run once per clone; git config --unset
# core.hooksPath undoes it.
set -eu
cd "$(dirname "$0")/.."
git config core.hooksPath scripts/hooks
echo "git hooks: scripts/hooks (commit-msg checks the subject and the blank line)"
