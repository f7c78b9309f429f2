#!/usr/bin/env bash
# Installs what lode needs to build and test on Debian 12, if it is missing.
set -euo pipefail
# litecoind runs the regtest chain that the mining tests and the main job mine
# on; clang and its runtime build the fuzz targets; openssl makes test certificates;
# libmicrohttpd serves the API, libsystemd speaks to systemd, Chart.js draws the
# dashboard, and prometheus (with promtool) and chromium test them as users would;
# microsocks (SOCKS5) and tinyproxy (HTTP CONNECT) are the proxies lode's -x is tested through;
# clinfo lists the OpenCL platforms that `lode -V` is checked against; oclgrind is a slow
# OpenCL device that a stop must not wait for; systemd brings systemd-analyze, which
# verifies the example unit file; clang-19 with llvm-19 and AMD's device libraries
# (rocm-device-libs) compiles every OpenCL kernel for AMD GPUs as AMD's runtime does,
# and clang (14) with llvm-14 (opt-14), llvm-spirv-14 and spirv-tools compiles and validates them
# as SPIR-V (scripts/spirv-check.py).
packages=(cmake ninja-build gcc pkg-config libhwloc-dev libjansson-dev libssl-dev python3
          libcurl4-openssl-dev opencl-headers ocl-icd-libopencl1 pocl-opencl-icd
          litecoind openssl clang libclang-rt-14-dev
          libmicrohttpd-dev libsystemd-dev prometheus chromium libjs-chart.js
          microsocks tinyproxy clinfo oclgrind systemd
          clang-19 llvm-19 rocm-device-libs llvm-14 llvm-spirv-14 spirv-tools)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
