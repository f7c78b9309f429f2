#!/usr/bin/env python3
"""lode solo mining (getblocktemplate/submitblock) on two litecoind regtest nodes.

usage: test_mining_gbt.py PATH_TO_LODE [SCENARIO ...]

Scenarios (all by default): bech32 legacy cookie badpass nodedown badaddr
stopinflight nocookie mainnetaddr wrongalgo wrongalgo_fresh duplicate
duplicate_keepalive inconclusive escape envproxy oddtemplate.
Blocks must be accepted by litecoind (lode's summary: rejected 0), pay the
given address (getblock verbosity 2), and lode must stop with 130 on SIGINT
promptly without any sanitizer report. Needs litecoind on PATH (fails, not
skips, without it).
"""
import collections
import hashlib
import http.server
import json
import os
import re
import socket
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


def wait_exit(lode, timeout, net=None, start=None):
    """lode's exit status once it exits by itself within timeout, else None
    (then it is stopped). With net, a new block above start also ends the
    wait (None): a test that expects a refusal must not grow the chain."""
    deadline = time.monotonic() + timeout
    while lode.alive() and time.monotonic() < deadline:
        if net is not None and net.rpc("getblockcount") > start:
            break
        time.sleep(0.2)
    alive = lode.alive()
    rc = lode.stop()
    return None if alive else rc


def scenario_badpass(net):
    """A wrong RPC password is the user's mistake: said clearly, a few tries,
    then exit 3 (EXIT_REFUSED), with no blocks mined."""
    what = "solo, wrong password"
    start = net.rpc("getblockcount")
    lode = solo(net, net.addr_bech32, ["-u", net.user, "-p", "wrong-password"])
    rc = wait_exit(lode, 30, net, start)
    check(rc == 3, f"{what}: exit status {rc} (None: did not exit by itself in 30 s), want 3\n"
          f"    {lode.tail()}")
    check(lode.count(r"(?i)(password|credentials).*(-u|--cookie)") >= 1,
          f"{what}: no error that names the password and what to fix:\n    {lode.tail()}")
    check(lode.count(r"HTTP 401") == 1, f"{what}: the refusal is said "
          f"{lode.count(r'HTTP 401')} times, want once:\n    {lode.tail()}")
    check(not lode.sanitizer_report(), f"{what}: sanitizer report:\n    {lode.tail(60)}")
    check(net.rpc("getblockcount") == start, f"{what}: blocks appeared without credentials")


def scenario_nocookie(net):
    """A cookie file that does not exist at start-up: exit 2 at once."""
    what = "solo, missing cookie file"
    lode = solo(net, net.addr_bech32, ["--cookie", net.cookie + ".missing"])
    rc = wait_exit(lode, 30)
    lines = [l for l in lode.stderr().strip().splitlines() if l]
    check(rc == 2 and len(lines) == 1 and "cookie" in lines[0],
          f"{what}: want exit 2 and one error line about the cookie, got rc {rc}: {lines[:5]}")


def scenario_mainnetaddr(net):
    """Addresses lode can parse but the regtest node does not take (Bitcoin
    and Litecoin mainnet): refused with exit 3 before any block pays them."""
    for what, addr in (("bitcoin mainnet p2pkh", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"),
                       ("bitcoin mainnet bech32", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"),
                       ("litecoin mainnet p2pkh", "LUEweDxDA4WhvWiNXXSxjM9CYzHPJv4QQF")):
        what = f"solo, {what} address against regtest"
        check(not net.rpc("validateaddress", addr)["isvalid"], f"{what}: the node takes {addr}")
        start = net.rpc("getblockcount")
        lode = solo(net, addr)
        rc = wait_exit(lode, 30, net, start)
        check(rc == 3, f"{what}: exit status {rc} (None: did not exit by itself in 30 s), want 3\n"
              f"    {lode.tail()}")
        check(lode.count(re.escape(addr) + r".*(?i:node)") >= 1,
              f"{what}: no error naming the address and the node:\n    {lode.tail()}")
        check(net.rpc("getblockcount") == start, f"{what}: blocks were mined paying {addr}")


def scenario_wrongalgo(net):
    """-a sha256d against the scrypt chain: refused (exit 3), nothing mined."""
    what = "solo, -a sha256d against litecoin regtest"
    start = net.rpc("getblockcount")
    args = [a if a != "scrypt" else "sha256d" for a in COMMON]
    lode = Lode(LODE, args + ["-o", net.url, "-u", net.user, "-p", net.password,
                              "--coinbase-addr", net.addr_bech32], "solo-sha256d")
    rc = wait_exit(lode, 30, net, start)
    check(rc == 3, f"{what}: exit status {rc} (None: did not exit by itself in 30 s), want 3\n"
          f"    {lode.tail()}")
    check(lode.count(r"(?i)sha256d.*(proof of work|algorithm)") >= 1,
          f"{what}: no error about the algorithm:\n    {lode.tail()}")
    check(net.rpc("getblockcount") == start, f"{what}: blocks were submitted and accepted")


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


DROP = object()


class NodeProxy:
    """Forwards JSON-RPC to the node. fault(method, params, code, reply) may
    return a new (code, reply) to send instead, or DROP to close the
    connection without an answer (after the node has acted on the request).
    before(method, params), if given, runs before the request is forwarded.
    keepalive: HTTP/1.1 connections kept open between requests, as
    litecoind's (else HTTP/1.0, one request a connection)."""

    def __init__(self, node_url, fault, before=None, keepalive=False):
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keepalive else "HTTP/1.0"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if before is not None:
                    try:
                        call = json.loads(body)
                        before(call.get("method"), call.get("params"))
                    except ValueError:
                        pass
                req = urllib.request.Request(node_url, data=body, method="POST")
                for h in ("Authorization", "Content-Type"):
                    if self.headers.get(h):
                        req.add_header(h, self.headers[h])
                try:
                    with urllib.request.urlopen(req, timeout=60) as r:
                        code, reply = r.status, r.read()
                except urllib.error.HTTPError as e:
                    code, reply = e.code, e.read()
                try:
                    call = json.loads(body)
                    method, params = call.get("method"), call.get("params")
                except ValueError:
                    method, params = None, None
                out = fault(method, params, code, reply)
                if out is DROP:
                    self.close_connection = True
                    return
                if out is not None:
                    code, reply = out
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:  # lode gave up on the request (a stop)
                    pass

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class SlowSubmitProxy(NodeProxy):
    """Holds each submitblock reply back for `delay` seconds after the node
    has answered (and sets `submitted`)."""

    def __init__(self, node_url, delay):
        self.submitted = threading.Event()

        def fault(method, params, code, reply):
            if method == "submitblock":
                self.submitted.set()
                time.sleep(delay)
            return None
        super().__init__(node_url, fault)


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


def sha256d_meets(header):
    """Does the 80-byte header meet its own nBits target under SHA-256d?"""
    h = hashlib.sha256(hashlib.sha256(header).digest()).digest()
    bits = int.from_bytes(header[72:76], "little")
    target = (bits & 0x7fffff) << (8 * ((bits >> 24) - 3))
    return int.from_bytes(h, "little") <= target


def scenario_wrongalgo_fresh(net):
    """-a sha256d against a scrypt chain too short to tell (regtest, one block
    above genesis: sha256d passes it half the time): the node's first
    "high-hash" answer to a block that meets its target under sha256d
    settles it, exit 3."""
    what = "solo, -a sha256d against a fresh litecoin regtest chain"
    with regtest.Regtest() as fresh:
        # The one block above genesis must pass under sha256d, so the header
        # check cannot decide and the high-hash rule must: mine it again
        # until it does (one try in two).
        for tries in range(30):
            tip = fresh.rpc("getbestblockhash")
            if sha256d_meets(bytes.fromhex(fresh.rpc("getblockheader", tip, False))):
                log(f"{what}: block 1 mined again {tries} times")
                break
            for node in (fresh.a, fresh.b):  # both, or B keeps the old block 1
                node.rpc("invalidateblock", tip)
            fresh.rpc("generatetoaddress", 1, fresh.rpc("getnewaddress", wallet="w"), wallet="w")
        else:
            check(False, f"{what}: no block 1 that passes under sha256d in 30 tries")
        fresh.wait_sync()
        start = fresh.rpc("getblockcount")
        args = [a if a != "scrypt" else "sha256d" for a in COMMON]
        lode = Lode(LODE, args + ["-o", fresh.url, "-u", fresh.user, "-p", fresh.password,
                                  "--coinbase-addr", fresh.addr_bech32], "solo-sha256d-fresh")
        # The CPU backend's first sha256d batch takes a while in slow builds.
        rc = wait_exit(lode, 120)
        added = fresh.rpc("getblockcount") - start
    check(rc == 3, f"{what}: exit status {rc} (None: still running after 120 s), want 3\n"
          f"    {lode.tail()}")
    check(lode.count(r"(?i)do not prove.*sha256d") == 1,
          f"{what}: no warning that the chain is too short to tell:\n    {lode.tail()}")
    check(lode.count(r"(?i)sha256d is not this chain's proof of work.*high-hash") == 1,
          f"{what}: no error about the algorithm after a high-hash answer:\n    {lode.tail()}")
    s = lode.solo_summary()
    check(s is not None and s[1] == added, f"{what}: {added} new blocks on the node (each meets "
          f"both algorithms' targets), lode says {s and s[1]} accepted")
    log(f"{what}: {added} blocks accepted before the refusal")


def scenario_duplicate(net):
    """The node keeps each submitted block but its reply is lost: lode tries
    again, the node answers "duplicate", and lode counts the block accepted,
    so its count equals the node's new blocks."""
    lost_replies(net, "solo, submitblock reply lost", keepalive=False)


def scenario_duplicate_keepalive(net):
    """The same on connections kept alive, as litecoind's: a submitblock on a
    reused connection that dies before the reply must not be re-sent by
    libcurl behind lode's back (lode would read "duplicate" to what it
    takes for a first try and count the node's block stale)."""
    lost_replies(net, "solo, submitblock reply lost on a kept-alive connection", keepalive=True)


def lost_replies(net, what, keepalive):
    lock = threading.Lock()
    seen, dropped = set(), []

    def fault(method, params, code, reply):
        if method == "submitblock" and params:
            with lock:
                if params[0] not in seen:
                    seen.add(params[0])
                    dropped.append(json.loads(reply).get("result"))
                    return DROP
        return None

    proxy = NodeProxy(net.url, fault, keepalive=keepalive)
    start = net.rpc("getblockcount")
    lode = Lode(LODE, COMMON + ["-o", proxy.url, "-u", net.user, "-p", net.password,
                                "--coinbase-addr", net.addr_bech32], "solo-duplicate")
    try:
        check(wait_blocks(net, start, 3, 60, lode), f"{what}: no 3 blocks within 60 s\n"
              f"    {lode.tail()}")
        # Each block's retry answer, then the stop.
        check(lode.wait_for(r"block accepted.*duplicate", 10, count=3),
              f"{what}: no 3 blocks accepted on a \"duplicate\" answer\n    {lode.tail()}")
        check_stopped(check, lode, what)
    finally:
        lode.stop()
        proxy.close()
    log(f"{what}: {len(dropped)} replies dropped; the node's answers: "
        f"{dict(collections.Counter(map(str, dropped)))}")
    s = lode.solo_summary()
    check(s is not None, f"{what}: no summary line:\n    {lode.tail()}")
    net.wait_sync()
    added = net.rpc("getblockcount") - start
    if s:
        submitted, accepted, rejected, stale = s
        check(rejected == 0, f"{what}: lode counts {rejected} rejected (summary {s})\n"
              f"    {lode.tail()}")
        check(accepted == added, f"{what}: {added} new blocks on the node, lode says {accepted} "
              f"accepted (summary {s})\n    {lode.tail()}")
    bad = [h for h, p in net.blocks_paid_to(start + 1, net.addr_bech32) if not p]
    check(not bad, f"{what}: blocks {bad} do not pay the address")


def scenario_inconclusive(net):
    """Each block lode submits on the node's tip loses a race: the proxy has
    the node mine a block of its own first, so lode's lands on a side branch
    and the node answers "inconclusive" (or, to the retry of the first one,
    whose reply the proxy drops, "duplicate"). lode counts them inconclusive,
    neither accepted nor rejected, matching the node's chain: none of the
    new blocks is lode's."""
    what = "solo, blocks on a side branch"
    lock = threading.Lock()
    raced, dropped = [], set()

    def before(method, params):
        if method != "submitblock" or not params:
            return
        parent = bytes.fromhex(params[0][8:72])[::-1].hex()
        with lock:
            if len(raced) < 2 and parent == net.rpc("getbestblockhash"):
                net.rpc("generatetoaddress", 1, net.addr_legacy, wallet="w")
                raced.append(params[0][:160])

    def fault(method, params, code, reply):
        if method == "submitblock" and params:
            with lock:
                if raced and params[0][:160] == raced[0] and raced[0] not in dropped:
                    dropped.add(raced[0])
                    return DROP
        return None

    proxy = NodeProxy(net.url, fault, before)
    start = net.rpc("getblockcount")
    lode = Lode(LODE, COMMON + ["-o", proxy.url, "-u", net.user, "-p", net.password,
                                "--coinbase-addr", net.addr_bech32], "solo-inconclusive")
    try:
        deadline = time.monotonic() + 60
        while len(raced) < 2 and time.monotonic() < deadline and lode.alive():
            time.sleep(0.2)
        check(len(raced) == 2, f"{what}: {len(raced)} races in 60 s\n    {lode.tail()}")
        check(lode.wait_for(r"block inconclusive", 10, count=2),
              f"{what}: no 2 'block inconclusive' lines\n    {lode.tail()}")
        # Stop before lode wins a block on the tip (the races are over).
        check_stopped(check, lode, what)
    finally:
        lode.stop()
        proxy.close()
    m = re.findall(r"summary: blocks submitted \d+, accepted (\d+), rejected (\d+), stale \d+, "
                   r"dropped \d+, unsent \d+, inconclusive (\d+)", lode.stderr())
    check(bool(m), f"{what}: no summary with an inconclusive count:\n    {lode.tail()}")
    net.wait_sync()
    ours = sum(p for _, p in net.blocks_paid_to(start + 1, net.addr_bech32))
    if m:
        accepted, rejected, inconclusive = (int(x) for x in m[-1])
        log(f"{what}: accepted {accepted}, rejected {rejected}, inconclusive {inconclusive}; "
            f"{ours} of lode's blocks on the node's chain")
        check(rejected == 0, f"{what}: lode counts {rejected} rejected\n    {lode.tail()}")
        check(inconclusive >= 2, f"{what}: lode counts {inconclusive} inconclusive, want >= 2")
        check(accepted == ours, f"{what}: lode counts {accepted} accepted, the node's chain has "
              f"{ours} of its blocks\n    {lode.tail()}")
    check(lode.count(r"block inconclusive.*\(\"duplicate\"\)") >= 1,
          f"{what}: the retried block (reply dropped) is not counted inconclusive:\n"
          f"    {lode.tail()}")


def scenario_escape(net):
    """Text from the node with terminal escapes (an RPC error message, a
    submitblock result) reaches the log with the escapes made harmless."""
    what = "solo, node text with escape sequences"
    evil = "\x1b[2J\x1b]0;owned\x07\x1b[31mred\r\nfake"
    gbt_errors = [2]

    def fault(method, params, code, reply):
        if method == "getblocktemplate" and gbt_errors[0] > 0:
            gbt_errors[0] -= 1
            return 500, json.dumps({"result": None, "id": 1, "error": {
                "code": -10, "message": "busy " + evil}}).encode()
        if method == "submitblock":
            return 200, json.dumps({"result": "bad-thing " + evil, "error": None,
                                    "id": 1}).encode()
        return None

    proxy = NodeProxy(net.url, fault)
    lode = Lode(LODE, COMMON + ["-o", proxy.url, "-u", net.user, "-p", net.password,
                                "--coinbase-addr", net.addr_bech32], "solo-escape")
    try:
        got = lode.wait_for(r"block rejected", 60)
        check(got, f"{what}: no block rejected line within 60 s\n    {lode.tail()}")
        check_stopped(check, lode, what)
    finally:
        lode.stop()
        proxy.close()
    err = lode.stderr()
    check("busy" in err and "bad-thing" in err, f"{what}: the node's texts are not logged:\n"
          f"    {lode.tail()}")
    bad = [l for l in err.split("\n") if any(c in l for c in "\x1b\x07\r")]
    check(not bad, f"{what}: control characters reach the log: {bad[:3]!r}")
    check(not re.search(r"^fake", err, re.M), f"{what}: the node's text started a new log line")


def scenario_oddtemplate(net):
    """Templates as a broken node sends them: no default_witness_commitment
    beside witness transactions, and curtime 2^32-1. lode computes the
    commitment and pulls the time back, so litecoind accepts the blocks."""
    what = "solo, templates without a witness commitment and with curtime 2^32-1"
    seen = {"witness_txs": 0}

    def fault(method, params, code, reply):
        if method != "getblocktemplate" or code != 200:
            return None
        body = json.loads(reply)
        tpl = body.get("result")
        if not isinstance(tpl, dict):
            return None
        seen["witness_txs"] = max(seen["witness_txs"],
                                  sum(1 for tx in tpl.get("transactions", []) if tx["txid"] != tx["hash"]))
        tpl.pop("default_witness_commitment", None)
        tpl["curtime"] = 2**32 - 1
        return code, json.dumps(body).encode()

    proxy = NodeProxy(net.url, fault)
    net.send_txs(4)
    start = net.rpc("getblockcount")
    lode = Lode(LODE, COMMON + ["-o", proxy.url, "-u", net.user, "-p", net.password,
                                "--coinbase-addr", net.addr_bech32], "solo-oddtemplate")
    try:
        check(wait_blocks(net, start, 2, 60, lode), f"{what}: no 2 blocks within 60 s\n    {lode.tail()}")
        check_stopped(check, lode, what)
    finally:
        lode.stop()
        proxy.close()
    check(seen["witness_txs"] > 0, f"{what}: no template had a witness transaction (the test proves nothing)")
    check(lode.count(r"curtime 4294967295 is more than 7200 s ahead") == 1,
          f"{what}: the pulled-back curtime is not said once\n    {lode.tail()}")
    s = lode.solo_summary()
    net.wait_sync()
    added = net.rpc("getblockcount") - start
    check(s is not None and s[2] == 0 and s[1] == added,
          f"{what}: summary {s}, {added} new blocks on the node\n    {lode.tail()}")
    witness_in_chain = sum(1 for h in range(start + 1, start + added + 1)
                           for tx in net.rpc("getblock", net.rpc("getblockhash", h), 2)["tx"][1:]
                           if tx["txid"] != tx["hash"])
    check(witness_in_chain > 0, f"{what}: none of lode's blocks holds a witness transaction")


class TrapProxy:
    """A listening socket in the place of an HTTP proxy: it records the
    request line of each connection and answers 502."""

    def __init__(self):
        self.requests = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    self.requests.append(conn.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace"))
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self):
        self.sock.close()


def scenario_envproxy(net):
    """http_proxy in the environment: a node on loopback is reached directly
    (its RPC credentials never go to the proxy); a node by name goes through
    the proxy, and lode says so, without the proxy's password."""
    trap = TrapProxy()
    proxy = f"http://puser:psecret@127.0.0.1:{trap.port}"
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "http_proxy", "all_proxy")}
    env.update(http_proxy=proxy, ALL_PROXY=proxy)
    try:
        what = "solo, http_proxy set, the node on loopback"
        start = net.rpc("getblockcount")
        lode = Lode(LODE, COMMON + ["-o", net.url, "-u", net.user, "-p", net.password,
                                    "--coinbase-addr", net.addr_bech32], "solo-envproxy", env=env)
        try:
            check(wait_blocks(net, start, 2, 60, lode), f"{what}: no 2 blocks within 60 s (the proxy saw "
                  f"{trap.requests[:3]})\n    {lode.tail()}")
            check_stopped(check, lode, what)
        finally:
            lode.stop()
        check(not trap.requests, f"{what}: the node's RPC went to the proxy: {trap.requests[:3]}")
        what = "solo, http_proxy set, a node by name"
        lode = Lode(LODE, COMMON + ["-o", "http://node.invalid:9332/", "-u", net.user, "-p", net.password,
                                    "--coinbase-addr", net.addr_bech32], "solo-envproxy-name", env=env)
        try:
            check(lode.wait_for(r"through the proxy http://127\.0\.0\.1:%d from http_proxy" % trap.port, 20),
                  f"{what}: lode does not say it uses the proxy from http_proxy\n    {lode.tail()}")
            deadline = time.monotonic() + 20
            while not trap.requests and time.monotonic() < deadline:
                time.sleep(0.2)
            check(any("node.invalid" in r for r in trap.requests),
                  f"{what}: the proxy saw {trap.requests[:3]}, want a request for node.invalid")
            check_stopped(check, lode, what)
        finally:
            lode.stop()
        check("psecret" not in lode.stderr(), f"{what}: the proxy's password is in the log")
    finally:
        trap.close()


SCENARIOS = {"bech32": scenario_bech32, "legacy": scenario_legacy, "cookie": scenario_cookie,
             "badpass": scenario_badpass, "nodedown": scenario_nodedown,
             "badaddr": scenario_badaddr, "stopinflight": scenario_stopinflight,
             "nocookie": scenario_nocookie, "mainnetaddr": scenario_mainnetaddr,
             "wrongalgo": scenario_wrongalgo, "wrongalgo_fresh": scenario_wrongalgo_fresh,
             "duplicate": scenario_duplicate, "duplicate_keepalive": scenario_duplicate_keepalive,
             "inconclusive": scenario_inconclusive,
             "escape": scenario_escape, "envproxy": scenario_envproxy,
             "oddtemplate": scenario_oddtemplate}


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
