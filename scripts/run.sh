#!/usr/bin/env bash
# The main job: install what is missing, build, and benchmark every device
# on each algorithm (SECONDS_PER_ALGO, default 20; Ctrl-C stops).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
for algo in sha256d scrypt; do
  build/release/core/cli/lode --algo "$algo" --benchmark --time-limit "${SECONDS_PER_ALGO:-20}"
done
