#!/usr/bin/env python3
"""The habits of mfaktc users in `lode tf` (issue 40), on the CPU backend,
against Python's pow(2, p, q) == 1 (tests/tf_oracle.py):

- lines written to worktodo.txt during a run are read after the
  assignment;
- without -d: the GPUs only on a machine with one, else the CPU (never an
  OpenCL CPU device such as PoCL's).
Every wait is a hang guard, never a speed limit.

usage: test_tf_habits.py PATH_TO_LODE   (LODE_TEST_ONLY=name,... runs some)
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
GUARD_S = 120
check = Checks()


def results_of(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f.read().splitlines() if line]


def fresh(tmp, name):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    return d


def factor_lines(path):
    with open(path) as f:
        return [line for line in f.read().splitlines() if line.startswith("Factor=")]


def wait_until(pred, timeout=GUARD_S):
    t0 = time.monotonic()
    while not pred() and time.monotonic() - t0 < timeout:
        time.sleep(0.02)
    return pred()


def test_reload_after_assignment(tmp):
    """A line written into worktodo.txt itself while an assignment runs is
    read when the assignment is done (the list is read again after each)."""
    d = fresh(tmp, "reload")
    wt, log = os.path.join(d, "worktodo.txt"), os.path.join(d, "classes")
    with open(wt, "w") as f:
        f.write("Factor=N/A,100003,1,44\n")
    proc = subprocess.Popen([LODE, "tf", "-w", wt, "-d", "cpu", "-t", "1", "-q", "--class-log", log],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=d)
    running = wait_until(lambda: os.path.exists(log) and os.path.getsize(log) > 0)
    with open(wt, "a") as f:
        f.write("Factor=N/A,100043,1,30\n")
    out, err = proc.communicate(timeout=GUARD_S)
    got = [(x["exponent"], x["bitlo"], x["bithi"]) for x in results_of(os.path.join(d, "results.json.txt"))]
    check(running and proc.returncode == 0 and got == [(100003, 1, 44), (100043, 1, 30)],
          f"the added line ran after the first: {got} {err[-300:]!r}")
    check(factor_lines(wt) == [], f"both lines done: {factor_lines(wt)}")

def has_gpu():
    """A GPU as the kernel shows one (no lode code): an NVIDIA or AMD
    device node."""
    return bool(glob.glob("/dev/nvidia[0-9]*") or os.path.exists("/dev/kfd"))


def test_gpu_default(tmp):
    """Without -d: on a machine with a GPU, the GPUs only and a line that
    says so; without one (CI), the CPU backend alone (PoCL's OpenCL CPU
    device is not a GPU)."""
    d = fresh(tmp, "default")
    res = os.path.join(d, "r.json")
    r = subprocess.run([LODE, "tf", "100003", "1", "30", "--no-checkpoints", "--results", res],
                       capture_output=True, text=True, timeout=GUARD_S * 3, cwd=d)
    got = results_of(res)
    kernel = got[0]["program"]["kernel"] if got else ""
    check(r.returncode == 0 and got and got[0].get("factors") == ["6400193"], f"default run: {r.stderr[-300:]!r}")
    if has_gpu():
        check("GPUs only" in r.stderr and "-d cpu," in r.stderr and "cpu_" not in kernel,
              f"a GPU here: GPUs only: kernel {kernel!r} {r.stderr[:400]!r}")
    else:
        check("GPUs only" not in r.stderr and re.fullmatch(r"cpu_\w+", kernel),
              f"no GPU: the CPU backend alone: kernel {kernel!r}")


ONLY = os.environ.get("LODE_TEST_ONLY")
with tempfile.TemporaryDirectory() as scratch:
    for test in (test_reload_after_assignment, test_gpu_default):
        if ONLY and test.__name__ not in ONLY.split(","):
            continue
        t0 = time.time()
        test(scratch)
        print(f"{test.__name__}: {time.time() - t0:.1f} s")
sys.exit(check.report())
