#!/usr/bin/env python3
"""The words of lode's end-of-run summary (docs/OPERATIONS.md, "Words"), on a
short solo run on the CPU against a litecoind regtest node, checked against
the node itself.

usage: test_summary_words.py PATH_TO_LODE

- the device line reads `H hits + D dropped (job ended) = T of E expected`:
  H + D = T; E equals the hashes counted times the chance of a hash meeting
  the node's own block target (getblocktemplate's `target`: the hits are at
  that target in solo mining), and T lies within a few standard deviations
  of E (a binomial count);
- the mining line reads `P blocks passed to the node`;
- the node line's accepted equals the blocks the node added to its chain
  that pay lode's address (nothing else mines), and every hit (a block
  candidate here) is counted once on it: H = accepted + rejected + stale +
  dropped + unsent + inconclusive, P of them passed on while their job was
  live (H - dropped <= P <= H);
- "stale" (an answer of the pool or node) is on no other summary line, and
  "dropped" always means a job that ended.
Needs litecoind on PATH (fails, not skips, without it).
"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "pool"))
from harness import Checks, Lode, check_stopped, log, regtest, require_litecoind  # noqa: E402

LODE = sys.argv[1]
check = Checks()

DEVICE = re.compile(r"summary: cpu:0: [^,]+, (\d+) hashes, (\d+) hits \+ (\d+) dropped \(job ended\) = (\d+) of "
                    r"([0-9.]+) expected, (\d+) hardware errors")
MINING = re.compile(r"summary: jobs (\d+), (\d+) blocks passed to the node$", re.M)
NODE = re.compile(r"summary: blocks submitted (\d+), accepted (\d+), rejected (\d+), stale (\d+), dropped (\d+), "
                  r"unsent (\d+), inconclusive (\d+)$", re.M)


def main():
    require_litecoind()
    regtest.install_signal_handlers()
    with regtest.Regtest() as net:
        target = int(net.rpc("getblocktemplate", {"rules": ["mweb", "segwit"]})["target"], 16)
        chance = (target + 1) / 2 ** 256  # of one hash meeting the block target
        start = net.rpc("getblockcount")
        lode = Lode(LODE, ["-a", "scrypt", "-d", "cpu", "-t", "1", "--no-color", "--retry-pause", "1",
                           "-o", net.url, "-u", net.user, "-p", net.password, "--coinbase-addr", net.addr_bech32],
                    "words")
        try:
            check(lode.wait_for(r"block accepted at height", 60, count=5), f"no 5 blocks accepted:\n    {lode.tail()}")
            check_stopped(check, lode, "words")
        finally:
            lode.stop()
        err = lode.stderr()
        net.wait_sync()
        paid = sum(1 for _, p in net.blocks_paid_to(start + 1, net.addr_bech32) if p)
        added = net.rpc("getblockcount") - start
    summary = [line for line in err.splitlines() if "summary:" in line]
    log("summary:\n    " + "\n    ".join(summary))
    d, m, n = DEVICE.search(err), MINING.search(err), NODE.search(err)
    check(d is not None, "no device line 'H hits + D dropped (job ended) = T of E expected'")
    check(m is not None, "no mining line 'jobs J, P blocks passed to the node'")
    check(n is not None, "no node line 'blocks submitted S, accepted A, rejected R, stale X, dropped D, ...'")
    if d:
        hashes, hits, dropped, total = (int(x) for x in d.groups()[:4])
        expected = float(d.group(5))
        want = hashes * chance
        check(hits + dropped == total, f"device: {hits} + {dropped} != {total}")
        check(abs(expected - want) <= 0.05 + 1e-9 * want,
              f"device: {expected} expected, but {hashes} hashes at the node's target give {want:.1f}")
        spread = math.sqrt(want * (1 - chance))
        check(abs(total - want) <= 6 * spread + 6,
              f"device: {total} hits found (checked + dropped), {want:.1f} expected from the hashes "
              f"(standard deviation {spread:.1f})")
    if d and m and n:
        passed = int(m.group(2))
        submitted, accepted, rejected, stale, dropped_node, unsent, inconclusive = (int(x) for x in n.groups())
        check(accepted == paid == added,
              f"node: lode says accepted {accepted}; the node added {added} blocks, {paid} paying lode")
        outcomes = accepted + rejected + stale + dropped_node + unsent + inconclusive
        check(hits == outcomes,
              f"node: {hits} hits, but accepted + rejected + stale + dropped + unsent + inconclusive = {outcomes}")
        check(hits - dropped_node <= passed <= hits, f"mining: {passed} passed on of {hits} hits, "
              f"{dropped_node} dropped by the node's client")
    for line in summary:
        if "stale" in line:
            check("summary: blocks submitted" in line or "summary: pool" in line,
                  f"'stale' on a line that is not the node's or a pool's answers: {line}")
        for _ in re.finditer(r"dropped", line):
            check("(job ended)" in line or "summary: blocks submitted" in line or "summary: pool" in line,
                  f"'dropped' without its meaning: {line}")
    check.done()


main()
