#!/usr/bin/env python3
"""What a `lode tf` user reads, against Python oracles that share no code
with lode (tests/tf_oracle.py: pow, Miller-Rabin; the classes from their
definition):

- the end-of-run summary: per device the candidates it tested (every k of
  the 960 needed classes of 4620 whose q = 2kp + 1 lies in the range), the
  proof entries it found (the primes of the proof's list from 2^25 up; the
  host lists those below), its factors, all in the words of the summary
  ("proof entries", "factors"; "hits" nowhere), and the run's line;
- `lode tf --verify` writes N, the candidate primes, as a plain number
  near Python's li estimate;
- `lode tf --selftest` names how many known factors it ran (the vectors of
  tests/vectors/mersenne-factors.json that divide their Mersenne number by
  Python's pow) on which devices: the CPU, and PoCL's OpenCL device where
  this machine has one.

usage: test_tf_read.py PATH_TO_LODE
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
import tf_oracle  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
check = Checks()
HOST_LIMIT = 2**25  # the proof's q below it are listed by the host, not a device


def test_summary(tmp):
    p, lo, hi = 100003, 20, 38
    t, _ = tf_oracle.expected(p, lo, hi)
    entries = [q for q in tf_oracle.listing(p, lo, hi, t) if q >= HOST_LIMIT]
    factors = [q for q in tf_oracle.candidates(p, lo, hi) if pow(2, p, q) == 1]
    check(len(tf_oracle.needed_classes(p)) == 960, "the oracle's needed classes")
    r = subprocess.run([LODE, "tf", str(p), str(lo), str(hi), "-d", "cpu", "--no-checkpoints", "--results",
                        os.path.join(tmp, "results.json.txt")], capture_output=True, text=True, timeout=300,
                       cwd=tmp)
    run_line = re.search(r"summary over [\d.]+ s: (\d+) assignments? done, (\d+) factors? found, (\d+) classes$",
                         r.stderr, re.M)
    dev = re.search(r"summary: cpu:0: \d+(?:\.\d+)?(?: [kMGT])? candidates/s, (\d+) candidates, (\d+) proof entries, "
                    r"(\d+) factors?, (\d+) hardware errors", r.stderr)
    check(r.returncode == 0 and run_line is not None and dev is not None,
          f"the summary lines: rc {r.returncode} {r.stderr[-800:]}")
    if not (run_line and dev):
        return
    check(run_line.groups() == ("1", str(len(factors)), "960"),
          f"run line {run_line.group(0)!r}: 1 assignment, {len(factors)} factors, 960 classes")
    want = (str(tf_oracle.candidates_tested(p, lo, hi)), str(len(entries)), str(len(factors)), "0")
    check(dev.groups() == want, f"device line {dev.group(0)!r}: want candidates, proof entries, factors, "
          f"errors = {want}")
    check(not re.search(r"summary:.*\bhits?\b", r.stderr), f"no 'hits' in the summary: {r.stderr[-400:]}")
    proof_line = re.search(r"proof \S+: (\d+) proof entries with t = (\d+)", r.stderr)
    listed = tf_oracle.listing(p, lo, hi, t)
    check(proof_line is not None and proof_line.groups() == (str(len(listed)), str(t)),
          f"the proof line counts the list's proof entries ({len(listed)}, t {t}): {r.stderr[-600:]}")
    # --verify states N, the candidate primes, as a plain number.
    v = subprocess.run([LODE, "tf", "--verify", os.path.join(tmp, f"M{p}_{lo}_{hi}.proof")], capture_output=True,
                       text=True, timeout=120)
    n_line = re.search(rf"^t {t}: ok \(N = (\d+(?:\.\d+)?) candidate primes\)$", v.stdout, re.M)
    n = tf_oracle.li_between(lo, hi) / (2 * (p - 1))
    check(v.returncode == 0 and n_line is not None and abs(float(n_line[1]) - n) <= 1e-3 * n,
          f"--verify: N as a plain number near Python's {n:.1f}: {v.stdout[:400]}")


def opencl_devices():
    listing = subprocess.run([LODE, "--list-devices"], capture_output=True, text=True, timeout=120).stdout
    return sorted(set(re.findall(r"^(opencl:\d+)", listing, re.M)))


def test_selftest():
    with open(os.path.join(HERE, "vectors", "mersenne-factors.json")) as f:
        vectors = json.load(f)["vectors"]
    known = [v for v in vectors if pow(2, v["exponent"], int(v["factor"])) == 1
             and int(v["factor"]) == 2 * int(v["k"]) * v["exponent"] + 1]
    check(len(known) == len(vectors), f"every vector is a factor by Python's pow: {len(known)} of {len(vectors)}")
    for devices in [["cpu:0"]] + ([["cpu:0"] + opencl_devices()] if opencl_devices() else []):
        # PoCL leaks when it compiles a kernel in the process (tests/CMakeLists.txt says more): no leak
        # check under AddressSanitizer for its run; its memory checks stay on.
        env = dict(os.environ)
        if len(devices) > 1:
            env["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))
        r = subprocess.run([LODE, "tf", "--selftest", "-d", ",".join(devices)], capture_output=True, text=True,
                           timeout=600, env=env)
        last = r.stdout.splitlines()[-1] if r.stdout else ""
        m = re.fullmatch(r"tf self-test: (\d+) known factors on (.+): all found", last)
        check(r.returncode == 0 and m is not None and int(m[1]) == len(known)
              and sorted(m[2].split(", ")) == sorted(devices),
              f"--selftest -d {devices}: want 'tf self-test: {len(known)} known factors on "
              f"{', '.join(devices)}: all found' last, got {r.stdout!r} (rc {r.returncode}, {r.stderr[-300:]!r})")


def main():
    with tempfile.TemporaryDirectory(prefix="lode-tf-read-") as tmp:
        test_summary(tmp)
        test_selftest()
    sys.exit(check.report())


main()
