#!/usr/bin/env bash
# Runs on a machine with an NVIDIA GPU: correctness checks first,
# then benchmarks of every variant, with a short table last.
#
# Stage here:   scripts/device-check.sh --stage [BUILD_DIR]
#   copies the binaries into .devbin/ and the shared libraries the GPU
#   machine may lack into .devlibs/ (both ignored by git; copy both to the GPU machine).
# There:        scripts/device-check.sh [SECONDS_PER_BENCHMARK]
#   PARTS (default "tests sanitize bench") picks the parts, for runs that
#   must fit a time limit (SANITIZERS narrows the sanitize
#   part's tools, STEPS, an extended regex, the steps run by name); PARTS=check-cuda or check-opencl
#   is `lode check --duration ${CHECK_DURATION:-5m}` on the GPU through that
#   backend, each alone in a call (5 minutes of a 10-minute call), its JSON
#   in $OUT. PARTS=share mines scrypt on cuda:0 against the stratum test pool
#   for ${SHARE_SECONDS:-300} s at difficulty ${SHARE_DIFFICULTY:-2} (about
#   76 shares a second at 10 MH/s: over 20 000 in 5 minutes) and holds the
#   shares against the hashes counted (scripts/share-check.py);
#   SHARE_ALGO=sha256d mines SHA-256d instead (difficulty 0.025 by default:
#   about 76 shares a second at 8.2 GH/s).
set -u
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--stage" ]; then
  build=${2:-build/ci}
  mkdir -p .devbin .devlibs
  cp "$build/core/cli/lode" "$build"/tests/test_{backends,dispatch,reference,tf,launch_driver} .devbin/
  cp "$build"/tests/libcpu_sampler.so "$build"/backend-opencl/{enqueue_cost,tf_segments}_probe .devbin/ 2>/dev/null
  # litecoind, for the stratum test pool on the GPU machine (LITECOIND=.devbin/litecoind)
  [ -x /usr/lib/litecoin/litecoind ] && cp /usr/lib/litecoin/litecoind .devbin/
  # Every library they link but the C library itself, and the OpenCL loader
  # (lode loads it at run time).
  for bin in .devbin/*; do ldd "$bin" 2>/dev/null; done | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' |
    xargs -r -I{} cp -L {} .devlibs/
  cp -L "$(ldconfig -p | awk '$1 == "libOpenCL.so.1" {print $NF; exit}')" .devlibs/
  du -sh .devbin .devlibs
  exit 0
fi

secs=${1:-10}
out=${OUT:-/tmp}
export LD_LIBRARY_PATH="$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LODE_VECTORS_DIR="$PWD/tests/vectors"
lode=.devbin/lode
table=()
note() { table+=("$(printf '%-44s %s' "$1" "$2")"); }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv,noheader
grep -m1 'model name' /proc/cpuinfo
grep -o -w -E 'avx512f|sha_ni|avx2' /proc/cpuinfo | sort | uniq -c
# NVIDIA's OpenCL driver may be installed but not registered.
if [ "$(id -u)" = 0 ] && [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
echo "== devices as users see them (a GPU seen by CUDA and OpenCL is listed once)"
"$lode" --list-devices
echo "== every device, OpenCL duplicates of CUDA GPUs included, for the checks below"
export LODE_OPENCL_SHOW_ALL=1
"$lode" --list-devices

step() { # step NAME COMMAND...: runs it, keeps its log, notes pass/FAIL
  local name=$1; shift
  [[ $name =~ ${STEPS:-.} ]] || return 0 # STEPS: an extended regex of the step names to run
  if "$@" >"$out/$name.log" 2>&1; then note "$name" ok; else note "$name" "FAIL (rc $?, see $name.log)"; fi
  tail -3 "$out/$name.log"
}
parts=${PARTS:-tests sanitize bench}
has() { [[ " $parts " == *" $1 "* ]]; }
if has tests; then
step selftest "$lode" --selftest
LODE_MOMENTUM_BATCH=2 step test_backends .devbin/test_backends
step test_dispatch .devbin/test_dispatch
step test_launch_driver .devbin/test_launch_driver
LODE_TF_LAUNCH_BITS=20 LODE_TF_CHECK_TABLES=1 step test_tf .devbin/test_tf
step test_cli python3 tests/test_cli.py "$lode"
fi

# lode check at full load through one backend: every algorithm and variant
# against the CPU reference, errors per hour, the temperatures.
for backend in cuda opencl; do
  has "check-$backend" || continue
  dev=$("$lode" --list-devices | awk -v b="$backend:" 'index($1, b) == 1 && /NVIDIA|H100|H200/ {print $1; exit}')
  [ -n "$dev" ] || dev=$backend:0
  step "check-$backend" "$lode" check -d "$dev" --duration "${CHECK_DURATION:-5m}" --seed 1
  "$lode" check -d "$dev" -a sha256d --jobs 8 --seed 1 --json >"$out/check-$backend-jobs.json" 2>/dev/null
  grep -E 'mismatching jobs|passed|FAILED' "$out/check-$backend.log"
done

# A share-validated rate: the pool re-hashes every share (issue #17).
if has share; then
  share_algo=${SHARE_ALGO:-scrypt}
  share_diff=${SHARE_DIFFICULTY:-$([ "$share_algo" = sha256d ] && echo 0.025 || echo 2)}
  ALGO=$share_algo LITECOIND=${LITECOIND:-$PWD/.devbin/litecoind} step share python3 scripts/share-check.py \
    "$lode" "${SHARE_SECONDS:-300}" "$share_diff" -d cuda:0
  tail -9 "$out/share.log"
fi

# compute-sanitizer on short real scans through every CUDA kernel.
h=0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c
t=0000ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff
if has sanitize && command -v compute-sanitizer >/dev/null && "$lode" --list-devices | grep -q '^cuda:0'; then
  for tool in ${SANITIZERS:-memcheck racecheck}; do
    for v in $("$lode" --list-devices | awk '/^cuda:0/{f=1} f && $1=="sha256d"{for(i=3;i<=NF;i++) print "sha256d:"$i} f && $1=="scrypt"{for(i=3;i<=NF;i++) print "scrypt:"$i; f=0}'); do
      # scrypt: one block of 128 hashes (racecheck follows every shared-memory
      # access of the thread layout: 512 hashes took over 8 minutes)
      # racecheck without the self-test (it took over 8 minutes per scrypt
      # variant under the tool); memcheck runs it.
      a=${v%%:*}; n=$([ "$a" = sha256d ] && echo 1000000 || echo 128)
      skip=$([ "$tool" = racecheck ] && echo 1 || echo 0)
      LODE_SKIP_SELFTEST=$skip LODE_CUDA_TUNE=off step "sanitizer-$tool-$a-${v#*:}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$lode" scan -a "$a" -d cuda:0 --variant "${v#*:}" --header "$h" --target "$t" \
        --start 2083000000 --count "$n"
    done
    # Momentum: the self-test's sweeps (memcheck) and one sweep of the genesis header.
    for v in $("$lode" --list-devices | awk '/^cuda:0/{f=1} f && $1=="momentum"{for(i=3;i<=NF;i++) print $i; f=0}'); do
      LODE_SKIP_SELFTEST=$skip step "sanitizer-$tool-momentum-$v" timeout 600 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$lode" scan -a momentum -d cuda:0 --variant "$v" --header "${h:0:152}00000000"
    done
    # Trial factoring: the self-test (nine known factors) and the 960
    # classes of M100003 up to 2^30 (every kernel, the table kernel and its
    # check, batches of two short launches; racecheck's own memory passed
    # 128 GiB on the host by 2^34).
    LODE_TF_LAUNCH_BITS=20 LODE_TF_BATCH=2 LODE_TF_CHECK_TABLES=1 step "sanitizer-$tool-tf" timeout 600 \
      compute-sanitizer --tool "$tool" --error-exitcode 9 "$lode" tf 100003 1 30 -d cuda:0 --no-checkpoints \
      --results "$out/tf-sanitizer.json"
  done
fi
has bench || { echo; printf '%s\n' "${table[@]}"; exit 0; }

bench() { # bench LABEL ARGS...: the benchmark's total rate
  local label=$1; shift
  local r
  r=$("$lode" "$@" --benchmark --time-limit "$secs" -q 2>/dev/null | awk '{print $3}')
  note "$label" "$(awk -v r="${r:-0}" 'BEGIN{ if (r >= 1e9) printf "%.3f GH/s", r/1e9; else if (r >= 1e6) printf "%.3f MH/s", r/1e6; else printf "%.2f kH/s", r/1e3 }')"
}
while read -r dev algo variants; do
  for v in $variants; do
    if [ "${dev%%:*}" = cpu ]; then
      [ -n "${ALL_CPU_PATHS:-}" ] || [ "$v" = "${variants%% *}" ] || continue
      bench "$dev $algo $v 1 thread" -a "$algo" -d "$dev" --variant "$v" -t 1
    elif [ "$dev" != cpu:0 ] && "$lode" --list-devices | grep -q "^$dev .*\(pthread\|Portable\)"; then
      continue # PoCL on the host: the CI machine records its figures
    else # a first short run tunes the launches and caches the result
      "$lode" -a "$algo" -d "$dev" --variant "$v" --benchmark --time-limit 4 -q >/dev/null 2>&1
      bench "$dev $algo $v" -a "$algo" -d "$dev" --variant "$v"
    fi
  done
done < <("$lode" --list-devices | awk '/^[a-z]+:[0-9]/{d=$1} $2=="variants:"{v=""; for(i=3;i<=NF;i++) v=v (v?" ":"") $i; print d, $1, v}')
for algo in sha256d scrypt; do
  bench "cpu:0 $algo best, all cores" -a "$algo" -d cpu:0
done

echo
printf '%s\n' "${table[@]}"
