#!/usr/bin/env bash
# Builds lode with warnings as errors and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --workflow --preset ci
# The same suite again under AddressSanitizer and UndefinedBehaviorSanitizer.
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize
ctest --preset sanitize
# And under ThreadSanitizer, the tests whose threads interact: the dispatcher,
# the mining session, the stratum and getblocktemplate clients, the CLI.
cmake --preset tsan >/dev/null
cmake --build --preset tsan
ctest --preset tsan
# And built with no optional dependency at all (portable CPU topology).
cmake --preset portable >/dev/null
cmake --build --preset portable
ctest --preset portable
# And the libFuzzer targets (stratum lines, getblocktemplate results, config
# files), each for LODE_FUZZ_SECONDS (30) under ASan and UBSan.
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
ctest --preset fuzz
