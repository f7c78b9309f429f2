#!/usr/bin/env python3
"""`lode tf`'s files at their limits (#39):

- a missing worktodo (or its directory) is a usage error naming the
  worktodo and leaves no FILE.lock behind; a missing worktodo with a
  worktodo.add beside it is made from it;
- a sparse worktodo (1 GiB) or proof file (2 GiB) of one line of NUL
  bytes gets its error while lode's peak memory stays small: both are read
  a line at a time (the proof verifier gives up at its first over-long
  line). The peak is the child's own ru_maxrss (os.wait4), a behaviour
  check: reading the whole file would take its size.

usage: test_tf_limits.py PATH_TO_LODE
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
check = Checks()
HUGE = 2 << 30
LARGE = 1 << 30  # the worktodo is read to its end: each GiB costs seconds of a slow disk's reads
SMALL_RSS_KIB = 256 << 10  # far above lode's own (sanitizers included), far below the file


def run(*args, cwd):
    return subprocess.run([LODE, "tf", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def run_measured(args, cwd):
    """(exit status, stdout + stderr, peak RSS in KiB) of lode tf ARGS."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen([LODE, "tf", *args], stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return p.returncode, out.read().decode(errors="replace"), usage.ru_maxrss


def test_worktodo_missing(d):
    wt = os.path.join(d, "missing.txt")
    r = run("-w", wt, "-d", "cpu", "-q", cwd=d)
    check(r.returncode == 2 and f"cannot read {wt}" in r.stderr and ".lock" not in r.stderr,
          f"-w missing.txt: exit 2 naming it: {r.returncode} {r.stderr!r}")
    check(os.listdir(d) == [], f"nothing left behind: {os.listdir(d)}")
    wt = os.path.join(d, "nonexistent", "dir", "w.txt")
    r = run("-w", wt, "-d", "cpu", "-q", cwd=d)
    check(r.returncode == 2 and f"cannot read {wt}" in r.stderr and ".lock" not in r.stderr,
          f"-w in a missing directory: exit 2 naming the worktodo: {r.returncode} {r.stderr!r}")
    wt = os.path.join(d, "worktodo.txt")
    with open(os.path.join(d, "worktodo.add"), "w") as f:
        f.write("Factor=N/A,100003,1,20\n")
    r = run("-w", wt, "-d", "cpu", "-q", "--results", os.path.join(d, "r.json"), cwd=d)
    check(r.returncode == 0 and not os.path.exists(os.path.join(d, "worktodo.add")) and os.path.exists(wt),
          f"a missing worktodo made from worktodo.add: {r.returncode} {r.stderr[-300:]!r}")


def sparse(path, size, tail=b""):
    with open(path, "wb") as f:
        f.truncate(size)
        if tail:
            f.seek(size)
            f.write(tail)


def test_huge_worktodo(d):
    wt = os.path.join(d, "worktodo.txt")
    sparse(wt, LARGE, b"\nFactor=N/A,100003,1\n")  # the 1 GiB line, then one more malformed
    rc, out, rss = run_measured(["-w", wt, "-d", "cpu", "-q"], d)
    check(rc == 2 and f"{wt}:1: malformed line" in out and f"({LARGE} bytes)" in out and "contains a NUL" in out
          and f"{wt}:2: malformed line 'Factor=N/A,100003,1'" in out,
          f"a 1 GiB worktodo line is reported as line 1, with its length, and line 2 after it: {rc} {out[-600:]!r}")
    check(rss < SMALL_RSS_KIB, f"peak RSS {rss} KiB reading a 1 GiB worktodo (want < {SMALL_RSS_KIB})")


def test_huge_proof(d):
    proof = os.path.join(d, "M100003_1_20.proof")
    sparse(proof, HUGE)
    rc, out, rss = run_measured(["--verify", proof], d)
    check(rc == 1 and "FAIL: line 1: want \"lode-tf-proof N\"" in out and "proof does NOT hold" in out,
          f"a 2 GiB proof file fails at its first line: {rc} {out[-600:]!r}")
    check(rss < SMALL_RSS_KIB, f"peak RSS {rss} KiB verifying a 2 GiB proof file (want < {SMALL_RSS_KIB})")


with tempfile.TemporaryDirectory() as tmp:
    for test in (test_worktodo_missing, test_huge_worktodo, test_huge_proof):
        d = os.path.join(tmp, test.__name__)
        os.makedirs(d)
        test(d)
sys.exit(check.report())
