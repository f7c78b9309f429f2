#!/usr/bin/env bash
# Trial factoring on the GPU machine: correctness first (every known factor
# on every CUDA device, the self-test, compute-sanitizer), then the H100
# benchmark assignment Factor=N/A,66362159,73,74 for SECONDS under each
# sieve setting, with a short table last.
#
# Stage here with scripts/device-check.sh --stage BUILD_DIR; there:
#   scripts/device-tf.sh [SECONDS] [DEVICE]
set -u
cd "$(dirname "$0")/.."
secs=${1:-30}
dev=${2:-cuda:0}
out=${OUT:-/tmp}
export LD_LIBRARY_PATH="$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LODE_VECTORS_DIR="$PWD/tests/vectors"
lode=.devbin/lode
table=()
note() { table+=("$(printf '%-52s %s' "$1" "$2")"); }
step() {
  local name=$1; shift
  if "$@" >"$out/$name.log" 2>&1; then note "$name" ok; else note "$name" "FAIL (rc $?, see $name.log)"; fi
  tail -3 "$out/$name.log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
if [ "$(id -u)" = 0 ] && [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
"$lode" --list-devices
LODE_TF_LAUNCH_BITS=20 step test_tf_cuda .devbin/test_tf --backend cuda
LODE_OPENCL_SHOW_ALL=1 LODE_TF_LAUNCH_BITS=20 step test_tf_opencl .devbin/test_tf --backend opencl
step selftest_tf "$lode" tf --selftest -d "$dev"
# compute-sanitizer over every known factor (small launches and prime
# counts keep it short; the kernels and their code paths are the same).
if command -v compute-sanitizer >/dev/null && [ -z "${NO_SANITIZER:-}" ]; then
  for tool in memcheck racecheck; do
    LODE_TF_SIEVE_PRIMES=20000 LODE_TF_LAUNCH_BITS=20 step "sanitizer-$tool-tf" timeout 240 \
      compute-sanitizer --tool "$tool" --error-exitcode 9 .devbin/test_tf --backend cuda
  done
fi

# The benchmark: the last progress line after SECONDS (GHz-days/day and
# candidates/s over the classes done so far).
bench() { # bench LABEL DEVICE [ENV=VALUE ...]
  local label=$1 d=$2; shift 2
  env "$@" timeout -s INT "$secs" "$lode" tf 66362159 73 74 -d "$d" --no-checkpoints \
    --results "$out/bench.json.txt" --progress-interval 1 >"$out/bench-last.log" 2>&1
  local line
  line=$(grep 'GHz-days/day' "$out/bench-last.log" | tail -1)
  echo "$label: $line"
  note "$label" "$(echo "$line" | sed -E 's/.*%, ([^,]+) candidates\/s, ([^ ]+) GHz-days\/day.*/\2 GHz-d\/d, \1 cand\/s/')"
}
for v in ${TF_VARIANTS:-default}; do
  if [ "$v" = default ]; then bench "$dev M66362159 73-74 default" "$dev"
  else bench "$dev M66362159 73-74 ${v//,/ }" "$dev" ${v//,/ }; fi
done
if [ "${TF_OPENCL_DEV:-}" = auto ]; then # the GPU's OpenCL device (listed only with SHOW_ALL)
  TF_OPENCL_DEV=$(LODE_OPENCL_SHOW_ALL=1 "$lode" --list-devices | awk '/^opencl:[0-9]+ .*NVIDIA/{print $1; exit}')
fi
[ -n "${TF_OPENCL_DEV:-}" ] && bench "$TF_OPENCL_DEV M66362159 73-74" "$TF_OPENCL_DEV" LODE_OPENCL_SHOW_ALL=1

if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$lode" 2>/dev/null |
    awk '/Function : .*tf_(exponentiate|sieve)/{f=1} /Function :/ && !/tf_(exponentiate|sieve)/{f=0} f' >"$out/tf.sass"
fi
echo
echo "== summary"
printf '%s\n' "${table[@]}"
