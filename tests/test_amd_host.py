#!/usr/bin/env python3
"""What lode tells about AMD GPUs without one, through the fake driver
library tests/fake_opencl.c (two ROCm-like GPUs, gfx1100 and gfx90a, whose
contexts cannot be created), loaded with LODE_TEST_OPENCL_LIB:

- `lode --list-devices` shows what a problem report needs: the board, the
  PCI bus id, memory, the gfx target, the wavefront, compute units, local
  memory, media ops where the device has them, the driver and platform
  versions; `lode -V` the same per device and the library it loaded;
- the amdgpu hwmon sensors of a fake sysfs tree (LODE_TEST_SYSFS_ROOT) show
  for the device at that bus id, as lode shows OpenCL sensors, and not for
  the device without a hwmon;
- a device whose context fails gives a clear error and a failure status:
  no crash, no hang; a library that is not there says so;
- the fake's NVIDIA build (an H200 at 0000:41:00.0) keeps NVIDIA's lines,
  adds sm_90 and the warp, and reads its sensors from the fake NVML
  library (tests/fake_nvml.c, the GPU at the same bus id).
The expected text is written here from the fake's table and the hwmon
values the test writes. A few seconds.

usage: test_amd_host.py LODE FAKE_OPENCL FAKE_OPENCL_NVIDIA FAKE_NVML
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE, FAKE, FAKE_NVIDIA, FAKE_NVML = sys.argv[1:5]
check = Checks()


def run(*args, env=None):
    full = {k: v for k, v in os.environ.items() if not k.startswith("LODE_TEST_")}
    # Shown even where a CUDA GPU has the fake's bus id (a machine with one).
    full.update({"LODE_TEST_OPENCL_LIB": FAKE, "LODE_OPENCL_SHOW_ALL": "1"}, **(env or {}))
    return subprocess.run([LODE, *args], capture_output=True, text=True, timeout=120, env=full)


def block(text, device_id):
    """A device's lines of --list-devices: its header and the indented ones."""
    m = re.search(r"^" + re.escape(device_id) + r" .*?(?=^\S|\Z)", text, re.M | re.S)
    return m.group(0) if m else ""


def fake_sysfs(root):
    """An amdgpu hwmon for the gfx1100 at 0000:03:00.0 (AMD's topology query
    gives 03:00.0: sysfs's domain 0000 is assumed), none for the gfx90a."""
    hw = os.path.join(root, "sys/bus/pci/devices/0000:03:00.0/hwmon/hwmon1")
    os.makedirs(hw)
    for name, value in {"name": "amdgpu", "temp1_input": "61000", "temp1_label": "edge",
                        "temp2_input": "75000", "temp2_label": "junction", "power1_average": "287000000",
                        "pwm1": "102", "pwm1_max": "255", "freq1_input": "2482000000",
                        "freq2_input": "1249000000"}.items():
        with open(os.path.join(hw, name), "w") as f:
            f.write(value + "\n")
    os.makedirs(os.path.join(root, "sys/bus/pci/devices/0000:29:00.0"))


# 75C: the hotter of edge and junction; fan 102/255 = 40%.
SENSORS = " 75C 287W fan 40% 2482MHz mem 1249MHz"
RDNA = ("gfx1100, wavefront 32, 48 compute units, local memory 64 KiB, work-groups up to 256, media ops; "
        "driver 3614.0 (HSA1.1,LC); OpenCL 2.1 AMD-APP (3614.0)")
CDNA = ("gfx90a, wavefront 64, 110 compute units, local memory 64 KiB, work-groups up to 256; "
        "driver 3614.0 (HSA1.1,LC); OpenCL 2.1 AMD-APP (3614.0)")


def test_list_devices(sysfs):
    r = run("--list-devices", env={"LODE_TEST_SYSFS_ROOT": sysfs})
    rdna, cdna = block(r.stdout, "opencl:0"), block(r.stdout, "opencl:1")
    check(r.returncode == 0, f"--list-devices exits 0: {r.returncode} {r.stderr!r}")
    check(rdna.startswith("opencl:0  AMD Radeon RX 7900 XTX  [03:00.0]\n    workers 1 (up to 1), memory 24.0 GiB\n"
                          f"    {RDNA}\n    sensors now:{SENSORS}\n"),
          f"the gfx1100: board, bus id, memory, its shape, its amdgpu sensors: {rdna!r}")
    check(cdna.startswith(f"opencl:1  AMD Instinct MI250X  [29:00.0]\n    workers 1 (up to 1), memory 64.0 GiB\n"
                          f"    {CDNA}\n") and "sensors now" not in cdna,
          f"the gfx90a: wave64, no media ops, no hwmon so no sensors: {cdna!r}")
    check(re.search(r"^    sha256d  variants: \S", rdna, re.M) is not None,
          f"the algorithms and variants are listed: {rdna!r}")


def test_version(sysfs):
    r = run("-V", env={"LODE_TEST_SYSFS_ROOT": sysfs})
    ocl = re.search(r"^opencl: .*?(?=^\S|\Z)", r.stdout, re.M | re.S)
    text = ocl.group(0) if ocl else ""
    check(r.returncode == 0 and text.startswith(
        f"opencl: available\n  library: {FAKE} (loaded at run time)\n"
        "  platform: AMD Accelerated Parallel Processing, OpenCL 2.1 AMD-APP (3614.0), 2 device(s)\n"),
          f"lode -V names the library and the platform: {text!r}")
    check(f"  device 0: AMD Radeon RX 7900 XTX [03:00.0], 24.0 GiB: {RDNA}\n"
          f"    sensors (amdgpu hwmon):{SENSORS}\n" in text, f"lode -V's gfx1100 and its sensors: {text!r}")
    check(f"  device 1: AMD Instinct MI250X [29:00.0], 64.0 GiB: {CDNA}\n"
          "    sensors: none (no amdgpu hwmon for PCI 29:00.0 in /sys/bus/pci/devices)\n" in text,
          f"lode -V's gfx90a, and why it has no sensors: {text!r}")


def test_failing_device():
    r = run("--selftest", "-a", "sha256d", "-d", "opencl:0")
    out = r.stdout + r.stderr
    check(r.returncode == 1 and "clCreateContext failed: CL_DEVICE_NOT_AVAILABLE" in r.stderr and
          re.search(r"^opencl:0 sha256d  \S+ +FAILED: cannot open: device or driver failure$", r.stdout, re.M),
          f"a self-test names the failing call and fails (status 1): {r.returncode} {out!r}")
    r = run("-a", "sha256d", "--benchmark", "-d", "opencl:1", "--time-limit", "5")
    check(r.returncode > 0 and "CL_DEVICE_NOT_AVAILABLE" in r.stderr and
          "no device passed its self-test" in r.stderr,
          f"a benchmark on it stops with the reason, no crash: {r.returncode} {r.stderr!r}")


def test_missing_library():
    r = run("--list-devices", env={"LODE_TEST_OPENCL_LIB": "/nonexistent/libOpenCL.so.1"})
    check(r.returncode == 0 and re.search(r"^opencl: unavailable: cannot load /nonexistent/libOpenCL\.so\.1 ",
                                          r.stdout, re.M),
          f"a library that is not there is named: {r.stdout!r}")


def test_nvidia():
    r = run("--list-devices", env={"LODE_TEST_OPENCL_LIB": FAKE_NVIDIA, "LODE_TEST_NVML_LIB": FAKE_NVML})
    dev = block(r.stdout, "opencl:0")
    check(r.returncode == 0 and dev.startswith(
        "opencl:0  NVIDIA H200  [0000:41:00.0]\n    workers 1 (up to 1), memory 139.8 GiB\n"
        "    sm_90, warp 32, 132 compute units, local memory 48 KiB, work-groups up to 1024; "
        "driver 570.124.06; OpenCL 3.0 CUDA 12.8.97\n"), f"NVIDIA's device lines: {dev!r}")
    # fake_nvml's readings: 64 C, 487.25 W, no fan, SM 1980 and memory 2619 MHz.
    check(re.search(r"^    sensors now: 64C 487W 1980MHz mem 2619MHz throttle \S", dev, re.M) is not None,
          f"the sensors from NVML by the OpenCL device's bus id: {dev!r}")


def main():
    with tempfile.TemporaryDirectory(prefix="lode-amd-host-") as sysfs:
        fake_sysfs(sysfs)
        test_list_devices(sysfs)
        test_version(sysfs)
    test_failing_device()
    test_missing_library()
    test_nvidia()
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
