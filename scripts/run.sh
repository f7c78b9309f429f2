#!/usr/bin/env bash
# The main job: install what is missing, build, and mine real Litecoin
# blocks (scrypt) solo through getblocktemplate on a local regtest chain that
# this command starts and stops by itself (two litecoind nodes on loopback,
# each with its own datadir and conf; nothing is written under HOME, so a
# fresh machine works the first time: scripts/regtest.py). The chain is set
# up at height 431 with a peg-in waiting, so lode mines Litecoin's MWEB
# activation block (432) and MWEB blocks after it. It prints the hashrate and
# a line per accepted block, and at the end how many blocks the chain gained,
# that they pay lode's address and how many carry MWEB data; it fails unless
# lode mined at least one block and all of them carry MWEB data.
#
#   MINE_SECONDS   how long to mine (default 60; Ctrl-C stops earlier)
#   LODE_ARGS      extra lode options, e.g. "-d cpu -t 2" or "-d cuda:0"
#   LODE_PRESET    the CMake preset to build and run (default release)
#   BENCHMARK=1    afterwards, benchmark every device on each algorithm
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
preset=${LODE_PRESET:-release}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
lode=build/$preset/core/cli/lode
# shellcheck disable=SC2086 # LODE_ARGS is a list of options
python3 scripts/regtest.py run --check -- "$lode" -a scrypt -o '{url}' -u '{user}' -p '{pass}' \
  --coinbase-addr '{addr}' --time-limit "${MINE_SECONDS:-60}" --log-interval 10 ${LODE_ARGS:-}
if [ "${BENCHMARK:-0}" = 1 ]; then
  for algo in sha256d scrypt; do
    "$lode" --algo "$algo" --benchmark --time-limit "${SECONDS_PER_ALGO:-20}"
  done
fi
