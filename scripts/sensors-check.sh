#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: lode's sensor readings beside
# nvidia-smi's in the same run, for CUDA and for OpenCL on the same GPU
# (docs/OPERATIONS.md, "Sensors and `lode -V`"). First `lode -V`, then a
# SHA-256d benchmark of SECONDS (30) per backend with a hashrate line every
# second while nvidia-smi samples every 1000 ms; a table pairs each line
# with the nearest sample.
#
# Stage here:   scripts/device-check.sh --stage   (copies lode to .devbin/)
# There:        scripts/sensors-check.sh [SECONDS]
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
lode=${LODE:-.devbin/lode}
# NVIDIA's OpenCL driver may be installed but not registered.
if [ "$(id -u)" = 0 ] && [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
echo "== lode -V"
"$lode" -V || exit 1
echo "== lode --list-devices (sensors now)"
LODE_OPENCL_SHOW_ALL=1 "$lode" --list-devices
exec python3 scripts/sensors_check.py "$lode" "${1:-30}"
