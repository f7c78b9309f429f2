#!/usr/bin/env bash
# Builds lode with warnings as errors and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# No file over 800 lines, no function over 80: the longest listed, and a stop
# before the long build when one is past the limit.
scripts/check-lengths.py
# Commit subjects since be34e59 in the form 'area: what changed' (the hook
# scripts/install-hooks.sh installs checks each one at commit time).
scripts/check-commits.sh
cmake --workflow --preset ci
# The main job (scripts/run.sh) as on a fresh machine: HOME a new empty
# directory, on the ci build, mining long enough for MWEB blocks (the chain
# starts just below MWEB activation); it fails unless litecoind accepted
# lode's blocks and all of them carry MWEB data.
main_home=$(mktemp -d)
HOME=$main_home LODE_PRESET=ci MINE_SECONDS=${LODE_MAIN_SECONDS:-20} LODE_ARGS="-d cpu -t 2" \
  scripts/run.sh
rm -rf "$main_home"
# The same suite again under AddressSanitizer and UndefinedBehaviorSanitizer.
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize
ctest --preset sanitize
# And under ThreadSanitizer, the tests whose threads interact: the dispatcher,
# device health, the mining session, the stratum and getblocktemplate clients, the CLI's
# threaded part.
cmake --preset tsan >/dev/null
cmake --build --preset tsan
ctest --preset tsan
# And built with no optional dependency at all (portable CPU topology): the
# suite less the hashing code and the pool and node runs, which no optional
# dependency changes.
cmake --preset portable >/dev/null
cmake --build --preset portable
ctest --preset portable
# And the libFuzzer targets (stratum lines, getblocktemplate results, config
# files), each for LODE_FUZZ_SECONDS (30) under ASan and UBSan.
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
ctest --preset fuzz
