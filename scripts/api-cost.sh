#!/usr/bin/env bash
# What the HTTP API costs while mining: the benchmark's rate with the API off,
# then with the API on and scraped every second (/metrics and /api/summary,
# as Prometheus and the dashboard would), and the API's own hashrate beside
# the benchmark's. docs/PERFORMANCE.md, "The API and the sensors", has the
# H100 figures.
#
# Stage here:   scripts/api-cost.sh --stage [BUILD_DIR]
#   copies lode into .devbin/ and the shared libraries it links into
#   .devlibs/ (both ignored by git; copy both to the GPU machine).
# There:        scripts/api-cost.sh [SECONDS] [DEVICE] [ALGO]
#   defaults: 60 s, cuda:0, sha256d. Needs python3 (the scraper).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--stage" ]; then # the one staging step of every GPU-machine script
  exec scripts/device-check.sh --stage "${2:-build/ci}"
fi

secs=${1:-60}
device=${2:-cuda:0}
algo=${3:-sha256d}
lode=${LODE:-.devbin/lode}
[ -x "$lode" ] || lode=build/ci/core/cli/lode
export LD_LIBRARY_PATH="$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rate_of() { awk -v a="$algo" '$1 == a && $2 == "total" {print $3}' "$1"; }

echo "== warm-up (fills the tuning cache): 15 s"
"$lode" -a "$algo" --benchmark -d "$device" --time-limit 15 -q >/dev/null 2>&1 || true

echo "== API off: $secs s"
"$lode" -a "$algo" --benchmark -d "$device" --time-limit "$secs" >"$work/off.out" 2>"$work/off.err"
off=$(rate_of "$work/off.out")

echo "== API on, /metrics and /api/summary scraped every second: $secs s"
"$lode" -a "$algo" --benchmark -d "$device" --time-limit "$secs" --api-bind 127.0.0.1:0 \
  >"$work/on.out" 2>"$work/on.err" &
pid=$!
python3 - "$work/on.err" "$secs" "$pid" >"$work/scrape.out" <<'EOF'
import json, os, re, sys, time, urllib.request
err, secs, pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
port = None
for _ in range(600):
    m = re.search(r"API listening on http://127\.0\.0\.1:(\d+)", open(err, errors="replace").read())
    if m:
        port = int(m.group(1))
        break
    time.sleep(0.1)
if port is None:
    sys.exit("no 'API listening' line")
start = time.monotonic()
scrapes, last = 0, None
# Until 2 s before the time limit (counted from the benchmark's start, which
# comes after the self-test: a little later than here).
while time.monotonic() - start < secs - 2:
    t = time.monotonic()
    for path in ("/metrics", "/api/summary"):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            body = r.read()
        scrapes += 1
        if path == "/api/summary":
            last = json.loads(body)
    time.sleep(max(0, 1 - (time.monotonic() - t)))
print(json.dumps({"scrapes": scrapes, "hashrate_60s": last["total"]["hashrate_60s"],
                  "hashrate_15m": last["total"]["hashrate_15m"], "uptime_s": last["uptime_s"]}))
EOF
wait "$pid"
on=$(rate_of "$work/on.out")
api=$(cat "$work/scrape.out")

python3 - "$off" "$on" "$api" "$algo" "$device" "$secs" <<'EOF' | tee "$out/api-cost.txt"
import json, sys
off, on, api = float(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3])
algo, device, secs = sys.argv[4], sys.argv[5], sys.argv[6]
g = lambda v: f"{v / 1e9:.4f} GH/s" if v > 1e8 else f"{v / 1e6:.4f} MH/s"
print(f"{algo} on {device}, {secs} s each")
print(f"  API off:                          {g(off)}")
print(f"  API on, scraped every second:     {g(on)}  ({100 * (on - off) / off:+.2f}%, {api['scrapes']} requests)")
print(f"  the API's hashrate_60s at the end: {g(api['hashrate_60s'])}  "
      f"({100 * (api['hashrate_60s'] - on) / on:+.2f}% of the benchmark's own)")
print(f"  the API's hashrate_15m:           {g(api['hashrate_15m'])}")
EOF
