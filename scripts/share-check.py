#!/usr/bin/env python3
"""A share-validated rate (issue #17): lode mines scrypt (or, with
ALGO=sha256d, SHA-256d) against the stratum test pool (which re-hashes every
share with hashlib.scrypt, or hashlib's double SHA-256) on a regtest
litecoind, and the shares are held against the hashes lode counted.

    [ALGO=sha256d] scripts/share-check.py LODE SECONDS DIFFICULTY [lode options, e.g. -d cuda:0]

Prints, per run: lode's hashes and rate; the hits those hashes should give at
the pool's difficulty, computed here from the difficulty alone (diff-1 target
0xffff << 224 for scrypt, Bitcoin's 0xffff << 208 for SHA-256d) and by lode (its summary's
"expected", from each scan's target); the hits lode found, those it dropped
(their job ended: a clean job, a new block) and those reported invalid; what
the pool accepted; and hits + dropped against expected as a ratio with its
standard deviation (Poisson). Exit 0 when hits + dropped lies within 3
standard deviations of the expectation, 1 when not (hashes counted that
were never searched, or shares lost), 2 on a broken run.

On regtest every share is also a block (its target is about 2^255), and
each block the pool submits makes a clean job that ends the work in flight; BLOCK_INTERVAL (default 150 s, Litecoin's block time) is the least
time between the blocks the pool submits, so the run sees a real chain's
churn. BLOCK_INTERVAL=0 submits every candidate: the worst case. A SHA-256d
pool submits no blocks (the node's chain is scrypt's), so its jobs change
only with the node's templates.

SHARE_LOG=FILE keeps lode's log. Stage as for the other device scripts
(scripts/device-check.sh --stage; LITECOIND=path for litecoind)."""
import math
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "pool"))
from harness import Lode, PoolProc, regtest  # noqa: E402
from stratum_pool import ALGOS  # noqa: E402  (each algorithm's difficulty-1 target)

SUMMARY = re.compile(r"summary: ([a-z]+:\d+): [^,]+, (\d+) hashes, (\d+) hits \+ (\d+) dropped \(job ended\) = \d+ of "
                     r"([0-9.]+) expected, (\d+) hardware errors")
OVER = re.compile(r"summary over ([0-9.]+) s")


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    binary, seconds, difficulty = os.path.abspath(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    extra = sys.argv[4:]
    algo = os.environ.get("ALGO", "scrypt")
    if algo not in ALGOS:
        print(f"ALGO must be one of {', '.join(sorted(ALGOS))}, not {algo!r}", file=sys.stderr)
        return 2
    unit, scale = ("MH/s", 1e6) if algo == "scrypt" else ("GH/s", 1e9)
    chance = (ALGOS[algo][1] / difficulty + 1) / 2 ** 256  # a hash meeting the share target
    with regtest.Regtest(mature=True) as net:
        pool = PoolProc(net, difficulty=difficulty,
                        extra=("--min-block-interval", os.environ.get("BLOCK_INTERVAL", "150"), "--algo", algo))
        lode = Lode(binary, ["-a", algo, "--no-color", "--log-interval", "10", "-o", pool.url,
                             "-u", "worker", "-p", "x", *extra])
        try:
            time.sleep(seconds)
            pool.hold()
            time.sleep(0.5)
            lode.stop()
            totals = pool.totals()
            err = lode.stderr()
        finally:
            if lode.alive():
                lode.stop()
            pool.stop()
    if os.environ.get("SHARE_LOG"):  # keep lode's log (which version mask the pool granted, say)
        with open(os.environ["SHARE_LOG"], "w") as f:
            f.write(err)
    devices = SUMMARY.findall(err)
    over = OVER.findall(err)
    sums = lode.pool_summaries()
    if not devices or not over or not sums:
        print(f"no summary from lode:\n{err[-3000:]}", file=sys.stderr)
        return 2
    elapsed = float(over[-1])
    hashes = sum(int(d[1]) for d in devices)
    found = sum(int(d[2]) for d in devices)
    dropped = sum(int(d[3]) for d in devices)
    expected_lode = sum(float(d[4]) for d in devices)
    hw = sum(int(d[5]) for d in devices)
    expected = hashes * chance
    accepted_lode = sum(s[2] for s in sums)
    sd = math.sqrt(expected) if expected > 0 else float("inf")
    z = (found + dropped - expected) / sd
    rows = [
        ("lode: hashes counted, over", f"{hashes} in {elapsed:.1f} s = {hashes / elapsed / scale:.4f} {unit}"),
        ("hits expected: here (difficulty) / lode (targets)", f"{expected:.4f} / {expected_lode:.4f}"),
        ("hits, dropped (job ended), hardware errors", f"{found}, {dropped}, {hw}"),
        ("(hits + dropped) / expected", f"{(found + dropped) / expected:.4f} +- {sd / expected:.4f} (z = {z:+.2f})"),
        ("found / expected (what a pool credits)", f"{found / expected:.4f}"),
        ("share rate (accepted / P(a hash is a share) / s)",
         f"{totals['accepted'] / chance / elapsed / scale:.4f} {unit}"),
        ("pool: accepted, lode: accepted", f"{totals['accepted']}, {accepted_lode}"),
        ("pool: invalid, duplicates, stale violations, stale races",
         f"{totals['invalid']}, {totals['duplicates']}, {totals['stale_violations']}, {totals.get('stale_race', 0)}"),
    ]
    print("\n== share check")
    for what, value in rows:
        print(f"{what:62} {value}")
    failed = [why for why, bad in (
        ("hits + dropped more than 3 standard deviations from the expectation", abs(z) > 3),
        ("the pool found invalid or duplicate shares", totals["invalid"] + totals["duplicates"] > 0),
        ("lode reported hardware errors", hw > 0),
        # lode prints its expectation to 0.1 (0.001 below 1): half that digit is rounding.
        ("lode's expectation is not the difficulty's",
         abs(expected_lode - expected) > (0.05 if expected_lode >= 1 else 0.0005) + 1e-6 * expected),
    ) if bad]
    for why in failed:
        print(f"FAILED: {why}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
