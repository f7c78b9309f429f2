#!/usr/bin/env bash
# The main job: install what is missing, build, and mine real Litecoin
# blocks (scrypt) solo through getblocktemplate on a local regtest chain that
# this command starts and stops by itself (two litecoind nodes on loopback,
# scripts/regtest.py). It prints the hashrate and every accepted block, and at
# the end how many blocks the chain gained and that they pay lode's address.
#
#   MINE_SECONDS   how long to mine (default 60; Ctrl-C stops earlier)
#   LODE_ARGS      extra lode options, e.g. "-d cpu -t 2" or "-d cuda:0"
#   BENCHMARK=1    afterwards, benchmark every device on each algorithm
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
lode=build/release/core/cli/lode
# shellcheck disable=SC2086 # LODE_ARGS is a list of options
python3 scripts/regtest.py run -- "$lode" -a scrypt -o '{url}' -u '{user}' -p '{pass}' \
  --coinbase-addr '{addr}' --time-limit "${MINE_SECONDS:-60}" --log-interval 10 ${LODE_ARGS:-}
if [ "${BENCHMARK:-0}" = 1 ]; then
  for algo in sha256d scrypt; do
    "$lode" --algo "$algo" --benchmark --time-limit "${SECONDS_PER_ALGO:-20}"
  done
fi
