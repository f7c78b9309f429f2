#!/usr/bin/env python3
"""lode solo mining (getblocktemplate/submitblock) on two litecoind regtest nodes.

usage: test_mining_gbt.py PATH_TO_LODE [SCENARIO ...]

Scenarios (all by default): bech32 legacy cookie badpass nodedown badaddr
stopinflight.
Blocks must be accepted by litecoind (lode's summary: rejected 0), pay the
given address (getblock verbosity 2), and lode must stop with 130 on SIGINT
promptly without any sanitizer report. Needs litecoind on PATH (fails, not
skips, without it).
"""
import http.server
import os
import re
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "pool"))
from harness import Checks, Lode, check_stopped, log, regtest, require_litecoind  # noqa: E402

LODE = sys.argv[1]
ONLY = sys.argv[2:]
check = Checks()
COMMON = ["-a", "scrypt", "-d", "cpu", "-t", "2", "--no-color", "--log-interval", "5",
          "--retry-pause", "1"]


def solo(net, addr, auth=None, extra=(), name="solo"):
    auth = auth if auth is not None else ["-u", net.user, "-p", net.password]
    return Lode(LODE, COMMON + ["-o", net.url, *auth, "--coinbase-addr", addr, *extra], name)


def wait_blocks(net, start, n, timeout, lode):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if net.rpc("getblockcount") >= start + n:
            return True
        if not lode.alive():
            return False
        time.sleep(0.3)
    return net.rpc("getblockcount") >= start + n


def mine_and_check(net, what, addr, n, timeout, auth=None):
    start = net.rpc("getblockcount")
    lode = solo(net, addr, auth)
    try:
        ok = wait_blocks(net, start, n, timeout, lode)
        check(ok, f"{what}: block count went {start} -> {net.rpc('getblockcount')} in {timeout} s, "
              f"want +{n}\n    {lode.tail()}")
        check_stopped(check, lode, what)
    finally:
        lode.stop()
    s = lode.solo_summary()
    check(s is not None, f"{what}: no 'summary: blocks submitted' line:\n    {lode.tail()}")
    if s:
        submitted, accepted, rejected, stale = s
        log(f"{what}: submitted {submitted}, accepted {accepted}, rejected {rejected}, stale {stale}")
        check(rejected == 0, f"{what}: {rejected} blocks rejected:\n    "
              + "\n    ".join(l for l in lode.stderr().splitlines() if "block rejected" in l)[:2000])
        check(accepted >= n, f"{what}: lode counted {accepted} accepted blocks, want >= {n}")
        lines = lode.count(r"block accepted at height \d+")
        check(lines == accepted, f"{what}: {lines} 'block accepted' lines, summary says {accepted}")
    # Every new block was lode's (nothing else mines here) and pays the address.
    net.wait_sync()
    paid = net.blocks_paid_to(start + 1, addr)
    bad = [h for h, p in paid if not p]
    check(paid and not bad, f"{what}: blocks {bad} do not pay {addr}")
    if s:
        check(len(paid) == s[1], f"{what}: {len(paid)} new blocks on the node, lode says "
              f"{s[1]} accepted")
    check(sanity_line(lode), f"{what}: lode did not log what it pays to")
    return lode


def sanity_line(lode):
    return "paying to" in lode.stderr() or "coinbase" in lode.stderr()


def scenario_bech32(net):
    mine_and_check(net, "solo, bech32 address", net.addr_bech32, 10, 120)


def scenario_legacy(net):
    mine_and_check(net, "solo, legacy address", net.addr_legacy, 2, 60)


def scenario_cookie(net):
    check(os.path.exists(net.cookie), f"no cookie file at {net.cookie}")
    mine_and_check(net, "solo, cookie file", net.addr_bech32, 1, 60, auth=["--cookie", net.cookie])


def scenario_badpass(net):
    what = "solo, wrong password"
    start = net.rpc("getblockcount")
    lode = solo(net, net.addr_bech32, ["-u", net.user, "-p", "wrong-password"])
    try:
        logged = lode.wait_for(r"(?i)401|unauthori[sz]ed|auth|password|credential", 8)
        time.sleep(3)
        check(logged, f"{what}: no authentication error logged:\n    {lode.tail()}")
        check(lode.alive(), f"{what}: lode exited (want: keep retrying):\n    {lode.tail()}")
        check(lode.count(r"(?i)401|unauthori[sz]ed|auth") >= 2,
              f"{what}: lode did not retry:\n    {lode.tail()}")
        check_stopped(check, lode, what, max_seconds=5)
        check(net.rpc("getblockcount") == start, f"{what}: blocks appeared without credentials")
    finally:
        lode.stop()


def scenario_nodedown(net):
    what = "solo, node stopped and restarted"
    start = net.rpc("getblockcount")
    lode = solo(net, net.addr_bech32)
    try:
        check(wait_blocks(net, start, 2, 60, lode), f"{what}: no blocks before the stop\n"
              f"    {lode.tail()}")
        log(f"{what}: stopping node A")
        net.a.stop()
        time.sleep(4)
        check(lode.alive(), f"{what}: lode exited when the node went away:\n    {lode.tail()}")
        log(f"{what}: starting node A again")
        net.restart_a()
        mid = net.rpc("getblockcount")
        check(wait_blocks(net, mid, 2, 60, lode),
              f"{what}: lode did not mine again within 60 s of the node's return "
              f"({mid} -> {net.rpc('getblockcount')})\n    {lode.tail()}")
        check_stopped(check, lode, what)
        s = lode.solo_summary()
        check(s is not None, f"{what}: no summary line")
        # Blocks the node itself refused must be none; submissions that could not
        # reach the stopped node are counted apart.
        reasons = re.findall(r"block rejected: (.*)", lode.stderr())
        unreachable = [r for r in reasons if "connect" in r.lower() or "HTTP 503" in r
                       or "error -28" in r]
        refused = [r for r in reasons if r not in unreachable]
        check(not refused, f"{what}: the node rejected blocks: {refused[:5]}")
        if unreachable:
            print(f"NOTE: {what}: lode counts {len(unreachable)} submissions to the stopped node "
                  f"as rejected blocks (summary {s})", flush=True)
        net.wait_sync()
        bad = [h for h, p in net.blocks_paid_to(start + 1, net.addr_bech32) if not p]
        check(not bad, f"{what}: blocks {bad} do not pay the address")
    finally:
        lode.stop()


def scenario_badaddr(net):
    for what, addr in (("bad address (checksum)", net.addr_bech32[:-1] +
                        ("q" if net.addr_bech32[-1] != "q" else "p")),
                       ("bad address (garbage)", "not-an-address"),
                       ("bad address (short)", "rltc1q")):
        lode = solo(net, addr)
        try:
            lode.proc.wait(timeout=30)
        except Exception:
            pass
        rc = lode.stop()
        lines = [l for l in lode.stderr().strip().splitlines() if l]
        check(rc == 2 and len(lines) == 1 and "error" in lines[0],
              f"{what}: want exit 2 and one error line, got rc {rc}: {lines[:5]}")


class SlowSubmitProxy:
    """Forwards JSON-RPC to the node; holds each submitblock reply back for
    `delay` seconds after the node has answered (and sets `submitted`)."""

    def __init__(self, node_url, delay):
        proxy = self
        self.submitted = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                req = urllib.request.Request(node_url, data=body, method="POST")
                for h in ("Authorization", "Content-Type"):
                    if self.headers.get(h):
                        req.add_header(h, self.headers[h])
                try:
                    with urllib.request.urlopen(req, timeout=60) as r:
                        code, reply = r.status, r.read()
                except urllib.error.HTTPError as e:
                    code, reply = e.code, e.read()
                if b'"submitblock"' in body:
                    proxy.submitted.set()
                    time.sleep(delay)
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def scenario_stopinflight(net):
    """SIGINT while a found block's submitblock reply is on its way: lode
    waits for the reply, so the node's new blocks and lode's count agree."""
    what = "solo, stop during a block submission"
    proxy = SlowSubmitProxy(net.url, 2.0)
    start = net.rpc("getblockcount")
    lode = Lode(LODE, COMMON + ["-o", proxy.url, "-u", net.user, "-p", net.password,
                                "--coinbase-addr", net.addr_bech32], "solo-inflight")
    try:
        check(proxy.submitted.wait(60), f"{what}: no submitblock within 60 s\n    {lode.tail()}")
        check_stopped(check, lode, what)
    finally:
        lode.stop()
        proxy.close()
    s = lode.solo_summary()
    check(s is not None, f"{what}: no summary line:\n    {lode.tail()}")
    net.wait_sync()
    added = net.rpc("getblockcount") - start
    if s:
        check(added >= 1 and s[1] == added, f"{what}: {added} new blocks on the node, lode says "
              f"{s[1]} accepted (summary {s})\n    {lode.tail()}")


SCENARIOS = {"bech32": scenario_bech32, "legacy": scenario_legacy, "cookie": scenario_cookie,
             "badpass": scenario_badpass, "nodedown": scenario_nodedown,
             "badaddr": scenario_badaddr, "stopinflight": scenario_stopinflight}


def main():
    require_litecoind()
    regtest.install_signal_handlers()
    t0 = time.monotonic()
    with regtest.Regtest(mature=True) as net:
        net.send_txs(4)  # templates with transactions (witness commitment, merkle tree)
        for name, fn in SCENARIOS.items():
            if ONLY and name not in ONLY:
                continue
            log(f"scenario {name}")
            t = time.monotonic()
            try:
                fn(net)
            except Exception as e:
                import traceback
                traceback.print_exc()
                check(False, f"scenario {name} raised {e!r}")
            log(f"scenario {name} took {time.monotonic() - t:.0f} s")
    log(f"total {time.monotonic() - t0:.0f} s")
    check.done()


main()
