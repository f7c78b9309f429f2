#!/usr/bin/env python3
"""Sensors in lode's output, and `lode -V`, through the program:

- the periodic hashrate lines show each device's sensors from the fake
  sensor source (LODE_TEST_SENSORS): exactly what is present, in the
  format `cpu:0: 1.23 MH/s 64C 487W 1980MHz`; a changed file shows in the
  next line (the source is re-read); a device the file does not name shows
  the rate alone; the summary carries them; --list-devices shows them;
  lode tf's progress line carries them after its ETA (one line);
- `lode -V` exits 0 and lists the backends `--list-devices` knows, the CPU
  paths `--list-devices` lists as cpu:0's variants, and library versions
  that equal pkg-config's (an oracle independent of lode), a git commit that
  the repository has, and OpenCL platforms that clinfo lists (where it is
  installed).

usage: test_sensors_cli.py PATH_TO_LODE
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
check = Checks()


def run(*args, env=None, timeout=300):
    return subprocess.run([LODE, *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


RATE = r"\d+(?:\.\d+)? [kMGT]?H/s"


def hang_guard(p, seconds=240):
    """Kills p after seconds, so a line that never comes fails the test
    instead of hanging it (a guard, not a speed requirement)."""
    t = threading.Timer(seconds, p.kill)
    t.daemon = True
    t.start()
    return t


def read_until(p, pattern, lines):
    """Reads p's stderr until a line matching pattern (its match) or EOF (None)."""
    for line in p.stderr:
        lines.append(line)
        m = re.search(pattern, line)
        if m:
            return m
    return None


def test_hashrate_lines(work):
    sensors = os.path.join(work, "sensors.txt")
    with open(sensors, "w") as f:
        f.write("cpu:0 temp=64 power=487.4 sm=1980 throttle=none\n")
    p = subprocess.Popen([LODE, "-a", "sha256d", "--benchmark", "-d", "cpu", "-t", "1", "--log-interval", "1",
                          "--no-color"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, LODE_TEST_SENSORS=sensors))
    guard = hang_guard(p)
    lines = []
    try:
        first = read_until(p, r"cpu:0: " + RATE + r"(.*)$", lines)
        check(first is not None and first.group(1) == " 64C 487W 1980MHz",
              f"the hashrate line shows the sensors present: {first.group(0) if first else lines[-5:]!r}")
        # The source is read again: a hotter device shows in a later line.
        with open(sensors + ".new", "w") as f:
            f.write("cpu:0 temp=91 fan=55 mem=2619 throttle=thermal\n")
        os.replace(sensors + ".new", sensors)
        later = read_until(p, r"cpu:0: " + RATE + r" 91C(.*)$", lines)
        check(later is not None and later.group(1) == " fan 55% mem 2619MHz throttle thermal",
              f"a changed reading shows in a later line: {later.group(0) if later else lines[-5:]!r}")
        # A device the file does not name: the rate alone.
        with open(sensors + ".new", "w") as f:
            f.write("cpu:1 temp=50\n")
        os.replace(sensors + ".new", sensors)
        bare = read_until(p, r"cpu:0: " + RATE + r"$", lines)
        check(bare is not None, f"no sensors, nothing after the rate: {lines[-5:]!r}")
        with open(sensors + ".new", "w") as f:
            f.write("cpu:0 temp=70\n")
        os.replace(sensors + ".new", sensors)
        read_until(p, r"cpu:0: " + RATE + r" 70C$", lines)
    finally:
        p.send_signal(signal.SIGINT)
        try:  # a hang guard, not a speed requirement
            _, err = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        guard.cancel()
    summary = re.search(r"summary: cpu:0: " + RATE + r", \d+ hashes, \d+ hits(?: \+ \d+ dropped \(job ended\) = \d+ of [0-9.]+ expected)?, \d+ hardware errors(.*)$", err, re.M)
    check(p.returncode == 130 and summary is not None and summary.group(1) == "; 70C",
          f"the summary carries the last reading (rc {p.returncode}): {err[-600:]!r}")


def test_list_devices(work):
    sensors = os.path.join(work, "list.txt")
    with open(sensors, "w") as f:
        f.write("cpu:0 temp=42.4 power=15\n")
    r = run("--list-devices", env={"LODE_TEST_SENSORS": sensors}, timeout=120)
    block = re.search(r"^cpu:0 .*?(?=^\S|\Z)", r.stdout, re.M | re.S)
    check(r.returncode == 0 and block is not None and "    sensors now: 42C 15W\n" in block.group(0),
          f"--list-devices shows the reading: {r.stdout!r}")
    r = run("--list-devices", env={"LODE_TEST_SENSORS": os.path.join(work, "none.txt")}, timeout=120)
    check(r.returncode == 0 and "sensors now" not in r.stdout, f"no reading, no line: {r.stdout!r}")


TF_PROGRESS = (r"\] M100003 40-52 class +\d+: +[\d.]+%, \d+(?:\.\d+)?(?: [kMGT])? candidates/s, "
               r"\d+\.\d\d GHz-days/day, ETA \d+[dhms](?: \d\d[hms])*")


def test_tf_progress(work):
    """lode tf puts each device's reading on its progress line (one line per
    interval, no second "sensors:" line), its rate without e-notation; a
    device without a reading leaves the line ending at the ETA."""
    sensors = os.path.join(work, "tf.txt")
    with open(sensors, "w") as f:
        f.write("cpu:0 temp=77 power=33\n")
    p = subprocess.Popen([LODE, "tf", "100003", "40", "52", "-d", "cpu", "-t", "1", "--progress-interval", "0.5",
                          "--no-checkpoints"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=work,
                         env=dict(os.environ, LODE_TEST_SENSORS=sensors))
    guard = hang_guard(p)
    lines = []
    try:
        with_sensors = read_until(p, TF_PROGRESS + r"; cpu:0 77C 33W$", lines)
        with open(sensors + ".new", "w") as f:
            f.write("cpu:1 temp=50\n")
        os.replace(sensors + ".new", sensors)
        bare = read_until(p, TF_PROGRESS + r"$", lines) if with_sensors else None
    finally:
        p.send_signal(signal.SIGINT)
        p.send_signal(signal.SIGINT)  # the second stops mid-class
        try:  # a hang guard
            p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        guard.cancel()
    check(with_sensors is not None, f"tf: the progress line carries the reading: {lines[-3:]!r}")
    check(bare is not None, f"tf: no reading, the line ends at the ETA: {lines[-3:]!r}")
    check(not [x for x in lines if "sensors:" in x or re.search(r"\d[eE][+-]\d", x)],
          f"tf: no second sensors line, no e-notation: {[x for x in lines if 'class' in x][-3:]!r}")


def pkg_config(name):
    if shutil.which("pkg-config") is None:
        return None
    r = subprocess.run(["pkg-config", "--modversion", name], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def list_devices_variants(listing, device):
    """{algo: [variants]} of one device in --list-devices' output."""
    block = re.search(r"^" + re.escape(device) + r" .*?(?=^\S|\Z)", listing, re.M | re.S)
    if block is None:
        return {}
    return {m.group(1): m.group(2).split() for m in re.finditer(r"^    (\S+)\s+variants: (.*)$", block.group(0), re.M)}


def test_version():
    for flag in ("-V", "--version"):
        r = run(flag, timeout=120)
        check(r.returncode == 0 and r.stdout.startswith("lode ") and r.stderr == "",
              f"{flag}: rc {r.returncode}, {r.stdout[:200]!r} {r.stderr[-300:]!r}")
    out = r.stdout
    listing = run("--list-devices", timeout=120).stdout

    # The backends: those --list-devices reports, in its order.
    compiled = re.search(r"^backends compiled in: (.*)$", out, re.M)
    listed = []
    for line in listing.splitlines():
        m = re.match(r"^(\w+)(?::\d+  |: )", line)
        if m and m.group(1) not in listed:
            listed.append(m.group(1))
    check(compiled is not None and compiled.group(1).split() == listed,
          f"backends: -V {compiled.group(1) if compiled else None!r}, --list-devices {listed}")
    for backend in listed:
        check(re.search(r"^" + backend + r": (available|unavailable: .+)$", out, re.M) is not None,
              f"-V has a section for {backend}")

    # The CPU paths: what --list-devices lists for cpu:0, best first.
    variants = list_devices_variants(listing, "cpu:0")
    check(len(variants) >= 3, f"cpu:0's variants in --list-devices: {variants}")
    for algo, names in variants.items():
        m = re.search(r"^  " + algo + r" paths: (.*?)(?: \(best first; the first is used\))?$", out, re.M)
        check(m is not None and m.group(1).split() == names,
              f"{algo} paths: -V {m.group(1) if m else None!r}, --list-devices {names}")

    # Library versions against pkg-config (a different source of truth).
    for lib, pc, pattern in (("jansson", "jansson", r"^  jansson: (\S+) \(built with (\S+)\)$"),
                             ("libcurl", "libcurl", r"^  libcurl: (\S+) \(built with (\S+)\)"),
                             ("OpenSSL", "openssl", r"^  OpenSSL: OpenSSL (\S+) .*\(built with OpenSSL (\S+) ")):
        want = pkg_config(pc)
        m = re.search(pattern, out, re.M)
        if want is None:
            print(f"pkg-config knows no {pc}: {lib} not compared")
            check(m is not None, f"-V names {lib}")
            continue
        check(m is not None and m.group(2) == want and m.group(1) == want,
              f"{lib}: -V {m.groups() if m else None}, pkg-config {want}")
    # The other parts' libraries, where this build has them.
    for lib, pc in (("libmicrohttpd", "libmicrohttpd"), ("libsystemd", "libsystemd")):
        m = re.search(r"^  " + lib + r": (\S+)", out, re.M)
        if m is not None:
            want = pkg_config(pc)
            check(want is None or m.group(1) == want, f"{lib}: -V {m.group(1)}, pkg-config {want}")
    if "hwloc" in out and "no hwloc" not in out:
        want = pkg_config("hwloc")
        m = re.search(r"topology: hwloc (\S+) \(built\)", out)
        check(m is not None and (want is None or m.group(1) == want), f"hwloc: -V {m.group(1) if m else None}, "
              f"pkg-config {want}")

    # The build: a commit this repository has (or "unknown" outside git).
    build = re.search(r"^build: commit (\S+), (.+), (\w+), C (\d+) \((.*)\)$", out, re.M)
    check(build is not None, f"the build line: {out[:300]!r}")
    if build and shutil.which("git") and build.group(1) != "unknown":
        commit = build.group(1).removesuffix("-dirty").rsplit("-g", 1)[-1]
        r = subprocess.run(["git", "-C", HERE, "cat-file", "-e", commit + "^{commit}"], capture_output=True)
        check(r.returncode == 0, f"-V's commit {build.group(1)} is in the repository")

    # CUDA: the runtime always says its version; the driver's or "no driver".
    if "cuda" in listed:
        check(re.search(r"^  runtime: \d+\.\d+ \(linked statically; built with \d+\.\d+\)$", out, re.M) is not None
              and re.search(r"^  driver: (no driver|\d+\.\d+ .*)$", out, re.M) is not None
              and re.search(r"^  sensors: NVML ", out, re.M) is not None,
              f"cuda section: {out!r}")
    # OpenCL: the platforms clinfo lists (an independent enumeration).
    if "opencl" in listed and shutil.which("clinfo"):
        r = subprocess.run(["clinfo", "-l"], capture_output=True, text=True, timeout=120)
        want = sorted(m.group(1).strip() for m in re.finditer(r"^Platform #\d+: (.*)$", r.stdout, re.M))
        got = sorted(m.group(1) for m in re.finditer(r"^  platform: (.*?), OpenCL .*$", out, re.M))
        check(got == want, f"OpenCL platforms: -V {got}, clinfo {want}")


def main():
    work = tempfile.mkdtemp(prefix="lode_sensors_cli_")
    try:
        test_hashrate_lines(work)
        test_list_devices(work)
        test_tf_progress(work)
        test_version()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(check.report())


main()
