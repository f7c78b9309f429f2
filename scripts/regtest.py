#!/usr/bin/env python3
"""Two litecoind regtest nodes on loopback, for mining tests and by hand.

As a module:

    from regtest import Regtest
    with Regtest() as net:
        net.rpc("getblockcount")          # node A
        net.url, net.user, net.password, net.cookie, net.addr_bech32, net.addr_legacy

As a command (starts the nodes, runs the command, reports, stops the nodes):

    scripts/regtest.py run [--check] [--no-mweb] -- lode -a scrypt -o {url} \
        -u {user} -p {pass} --coinbase-addr {addr} -d cpu --time-limit 60

Before the command runs, the chain is mined (generatetoaddress) to height
MWEB_HEIGHT - 1 = 431 and a peg-in is put into the mempool, so the first block
the command mines activates MWEB and every later one carries MWEB data
(--no-mweb: one block on genesis, as the module does). The closing lines say
how many blocks the chain gained, how many pay {addr} and how many carry MWEB
data; --check makes the exit status 1 unless there is at least one new block,
all pay {addr} and all carry MWEB data.

Placeholders: {url} {port} {user} {pass} {cookie} {addr} (bech32) {legacy}.
`scripts/regtest.py shell` starts the nodes, prints their details and waits for
Ctrl-C. Every litecoind started here is stopped on exit (normal exit, an
exception, atexit, SIGINT/SIGTERM/SIGHUP), and the temporary datadirs removed.
"""
import atexit
import base64
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

def _default_litecoind():
    """Debian's /usr/bin/litecoind is a shell wrapper that creates ~/.litecoin
    and a litecoin.conf in it before it runs /usr/lib/litecoin/litecoind: two
    nodes started at once through it race on that mkdir on a fresh HOME (the
    second dies with "File exists"). Run the daemon itself where it is there;
    every node gets its own -datadir and -conf, nothing under HOME."""
    real = "/usr/lib/litecoin/litecoind"
    return real if os.access(real, os.X_OK) else "litecoind"


LITECOIND = os.environ.get("LITECOIND") or _default_litecoind()
# Litecoin's regtest activates MWEB at this height (BIP9 bit 4, 144-block
# periods: started at 144, locked in at 288, active at 432). The first MWEB
# block needs a peg-in in the mempool: its HogEx has no earlier HogEx to
# spend, so without one litecoind cannot build the template
# ("bad-txns-vin-empty"). A peg-in is only taken into the mempool once the
# next block is an MWEB block, i.e. at height MWEB_HEIGHT - 1.
MWEB_HEIGHT = 432
RPC_USER = "lode"
RPC_PASS = "lodepass"

_live = []  # every Regtest not yet stopped, for atexit / signals


class RPCError(Exception):
    def __init__(self, code, message):
        super().__init__(f"RPC error {code}: {message}")
        self.code = code
        self.message = message


_ports_given = set()


def free_port():
    """A port free now, below Linux's ephemeral range (32768-60999): a port
    the kernel hands out for bind(0) or an outgoing connection may be taken
    again before litecoind binds it (seen in CI: a node exited at start)."""
    import random
    for _ in range(1000):
        port = random.randrange(20000, 32000)
        if port in _ports_given:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _ports_given.add(port)
        return port
    raise RuntimeError("no free port between 20000 and 32000")


def rpc_call(url, user, password, method, *params, timeout=60):
    """Minimal JSON-RPC 1.0 over HTTP (urllib). Raises RPCError on an RPC error."""
    body = json.dumps({"jsonrpc": "1.0", "id": "regtest", "method": method,
                       "params": list(params)}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    req.add_header("Authorization", "Basic " + auth)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            reply = json.loads(r.read())
    except urllib.error.HTTPError as e:
        data = e.read()
        try:
            reply = json.loads(data)
        except ValueError:
            raise RPCError(e.code, f"HTTP {e.code}: {data[:200]!r}") from None
    if reply.get("error"):
        raise RPCError(reply["error"].get("code"), reply["error"].get("message"))
    return reply["result"]


class Node:
    def __init__(self, name, base):
        self.name = name
        self.datadir = os.path.join(base, name)
        os.makedirs(self.datadir)
        self.rpc_port = free_port()
        self.p2p_port = free_port()
        self.proc = None
        self.log = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.rpc_port}"

    @property
    def cookie(self):
        return os.path.join(self.datadir, "regtest", ".cookie")

    @staticmethod
    def rpcauth():
        # -rpcauth rather than -rpcuser/-rpcpassword: the node then writes its
        # cookie file as well, so both ways of logging in work.
        salt = os.urandom(16).hex()
        digest = hmac.new(salt.encode(), RPC_PASS.encode(), hashlib.sha256).hexdigest()
        return f"-rpcauth={RPC_USER}:{salt}${digest}"

    @property
    def conf(self):
        return os.path.join(self.datadir, "litecoin.conf")

    def start(self, peer_port=None, extra=()):
        if not os.path.exists(self.conf):  # its own, so nothing from ~/.litecoin is read
            with open(self.conf, "w") as f:
                f.write("# lode regtest node; the options are on the command line\n")
        args = [LITECOIND, "-regtest", f"-datadir={self.datadir}", f"-conf={self.conf}",
                "-server", "-listen",
                "-bind=127.0.0.1", f"-port={self.p2p_port}", f"-rpcport={self.rpc_port}",
                "-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1", self.rpcauth(), "-fallbackfee=0.0001", "-txindex", "-discover=0",
                "-dnsseed=0", "-listenonion=0", "-upnp=0", "-printtoconsole=0",
                "-rpcthreads=8", "-rpcworkqueue=64", *extra]
        if peer_port:
            args.append(f"-addnode=127.0.0.1:{peer_port}")
        self.log = open(os.path.join(self.datadir, "stdout.log"), "ab")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    def rpc(self, method, *params, timeout=60, wallet=None):
        url = self.url + (f"/wallet/{wallet}" if wallet else "")
        return rpc_call(url, RPC_USER, RPC_PASS, method, *params, timeout=timeout)

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"litecoind {self.name} exited with {self.proc.returncode}: "
                                   f"{self.tail()}")
            try:
                self.rpc("getblockcount", timeout=5)
                return
            except (OSError, RPCError, ValueError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"litecoind {self.name} RPC not ready: {self.tail()}")
                time.sleep(0.2)

    def tail(self, n=2000):
        path = os.path.join(self.datadir, "regtest", "debug.log")
        try:
            with open(path, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - n))
                return f.read().decode(errors="replace")
        except OSError:
            pass
        try:  # exited before its debug.log: the reason is on its console
            with open(os.path.join(self.datadir, "stdout.log"), "rb") as f:
                return f.read()[-n:].decode(errors="replace") or "(no output)"
        except OSError:
            return "(no debug.log, no output)"

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=30):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self.rpc("stop", timeout=5)
            except Exception:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.log:
            self.log.close()
            self.log = None


class Regtest:
    """Two connected regtest nodes; A has a wallet and one block on top of genesis."""

    def __init__(self, keep=False, mature=False):
        if shutil.which(LITECOIND) is None:
            raise RuntimeError(f"{LITECOIND} not found on PATH (install the Debian package "
                               "litecoind, or set LITECOIND)")
        self.keep = keep
        self.mature = mature
        self.base = tempfile.mkdtemp(prefix="lode-regtest-")
        self.a = Node("a", self.base)
        self.b = Node("b", self.base)
        self.started = False

    # What tests and commands use: node A.
    @property
    def url(self):
        return self.a.url

    @property
    def port(self):
        return self.a.rpc_port

    user = RPC_USER
    password = RPC_PASS

    @property
    def cookie(self):
        return self.a.cookie

    def rpc(self, method, *params, **kw):
        return self.a.rpc(method, *params, **kw)

    def start(self):
        _live.append(self)
        self.a.start(peer_port=self.b.p2p_port)
        self.b.start(peer_port=self.a.p2p_port)
        self.a.wait_ready()
        self.b.wait_ready()
        self.started = True
        self.connect()
        self.a.rpc("createwallet", "w")
        self.addr_bech32 = self.a.rpc("getnewaddress", "", "bech32", wallet="w")
        self.addr_legacy = self.a.rpc("getnewaddress", "", "legacy", wallet="w")
        self.addr_p2sh = self.a.rpc("getnewaddress", "", "p2sh-segwit", wallet="w")
        # A block, so neither node thinks it is in initial block download; with
        # mature=True, 101 so the wallet can spend (send_txs fills the mempool).
        self.a.rpc("generatetoaddress", 101 if self.mature else 1, self.addr_legacy, wallet="w")
        self.wait_sync()
        return self

    def connect(self, timeout=30):
        """Make sure A and B are peers (again, e.g. after a restart)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.a.rpc("getconnectioncount") > 0 and self.b.rpc("getconnectioncount") > 0:
                    return
                self.a.rpc("addnode", f"127.0.0.1:{self.b.p2p_port}", "onetry")
            except (OSError, RPCError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("regtest nodes did not connect")
            time.sleep(0.3)

    def wait_sync(self, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            ha = self.a.rpc("getbestblockhash")
            if self.b.rpc("getbestblockhash") == ha:
                return ha
            if time.monotonic() > deadline:
                raise RuntimeError("regtest nodes did not sync")
            time.sleep(0.2)

    def send_txs(self, n):
        """n wallet transactions into the mempool (needs mature=True); their txids."""
        return [self.a.rpc("sendtoaddress", self.addr_p2sh if i % 2 else self.addr_bech32,
                           round(0.1 + i / 1000, 8), wallet="w") for i in range(n)]

    def restart_a(self, down_seconds=0.0):
        """Stop node A, optionally wait, start it again on the same ports."""
        self.a.stop()
        time.sleep(down_seconds)
        self.a.start(peer_port=self.b.p2p_port)
        self.a.wait_ready()
        self.a.rpc("loadwallet", "w")
        self.connect()

    def mine_to(self, height):
        """generatetoaddress (to the legacy address) until node A's tip is at height."""
        n = height - self.a.rpc("getblockcount")
        while n > 0:  # in slices: one long call could outlast the RPC timeout
            self.a.rpc("generatetoaddress", min(n, 100), self.addr_legacy, wallet="w", timeout=300)
            n = height - self.a.rpc("getblockcount")
        self.wait_sync()

    def pegin(self, amount=1.0):
        """A peg-in: the wallet sends amount to a new MWEB address of its own
        (Litecoin's mweb_basic.py way). It enters the mempool only at tip
        MWEB_HEIGHT - 1 or later. Returns the peg-in transaction's txid."""
        addr = self.a.rpc("getnewaddress", "", "mweb", wallet="w")
        txid = self.a.rpc("sendtoaddress", addr, amount, wallet="w")
        if txid not in self.a.rpc("getrawmempool"):
            raise RuntimeError(f"peg-in {txid} did not enter the mempool at height "
                               f"{self.a.rpc('getblockcount')}")
        return txid

    def prepare_mweb(self, amount=1.0):
        """Sets the chain up so that mining goes on through MWEB activation:
        mines to MWEB_HEIGHT - 1 (if below) and puts a peg-in into the mempool,
        so the next block a miner finds is the first MWEB block (coinbase,
        the peg-in, the HogEx, and the MWEB block after the transactions).
        The HogEx of every later block spends the previous one's output, so no
        further peg-in is needed. Returns the peg-in's txid."""
        self.mine_to(MWEB_HEIGHT - 1)
        return self.pegin(amount)

    def mweb_blocks(self, start_height, end_height=None):
        """Heights in start_height..end_height (default: the tip) whose block,
        as node A has it, carries MWEB data: getblock shows an "mweb" block
        and the last transaction is the HogEx (an output to the MWEB
        block's hash, script type witness_mweb_hogaddr)."""
        end = self.a.rpc("getblockcount") if end_height is None else end_height
        out = []
        for h in range(start_height, end + 1):
            block = self.a.rpc("getblock", self.a.rpc("getblockhash", h), 2)
            if "mweb" in block and is_hogex(block["tx"][-1], block["mweb"]["hash"]):
                out.append(h)
        return out

    def blocks_paid_to(self, start_height, address):
        """(height, coinbase paid address?) for blocks start_height..tip on node A."""
        out = []
        tip = self.a.rpc("getblockcount")
        for h in range(start_height, tip + 1):
            block = self.a.rpc("getblock", self.a.rpc("getblockhash", h), 2)
            cb = block["tx"][0]
            addrs = []
            for vout in cb["vout"]:
                spk = vout["scriptPubKey"]
                addrs += spk.get("addresses", []) + ([spk["address"]] if "address" in spk else [])
            out.append((h, address in addrs))
        return out

    def stop(self):
        for node in (self.a, self.b):
            try:
                node.stop()
            except Exception as e:  # keep stopping the other one
                print(f"regtest: stopping {node.name}: {e}", file=sys.stderr)
        if self in _live:
            _live.remove(self)
        if not self.keep:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()


def is_hogex(tx, mweb_hash):
    """tx (getblock verbosity 2) is a HogEx for the MWEB block mweb_hash: not a
    coinbase, its first output is the witness_mweb_hogaddr script OP_8 <mweb
    block hash>."""
    if not tx["vin"] or "coinbase" in tx["vin"][0] or not tx["vout"]:
        return False
    spk = tx["vout"][0]["scriptPubKey"]
    return spk.get("type") == "witness_mweb_hogaddr" and spk.get("hex") == "5820" + mweb_hash


def _stop_all():
    for net in list(_live):
        net.stop()


atexit.register(_stop_all)


def install_signal_handlers():
    """SIGTERM/SIGHUP become SystemExit so context managers and atexit run."""
    def handler(signum, frame):
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):
            pass


def _format(arg, net):
    return (arg.replace("{url}", net.url).replace("{port}", str(net.port))
            .replace("{user}", net.user).replace("{pass}", net.password)
            .replace("{cookie}", net.cookie).replace("{addr}", net.addr_bech32)
            .replace("{legacy}", net.addr_legacy))


def report(net, start, pegin, check):
    """The closing lines: blocks gained, whom they pay, how many carry MWEB
    data. With check, returns 1 (and says why) unless lode's blocks are all
    there: at least one, each paying {addr}, each from MWEB_HEIGHT on
    carrying MWEB data, the peg-in in the activation block, node B on the
    same tip."""
    tip = net.rpc("getblockcount")
    net.wait_sync()
    paid = net.blocks_paid_to(start + 1, net.addr_bech32)
    n_paid = sum(1 for _, p in paid if p)
    print(f"regtest: block count {tip} ({tip - start} new); "
          f"{n_paid} of them paid {net.addr_bech32}", flush=True)
    mweb = net.mweb_blocks(start + 1)
    should = [h for h in range(max(start + 1, MWEB_HEIGHT), tip + 1)]
    pegin_block = None
    if pegin and tip >= MWEB_HEIGHT:
        block = net.rpc("getblock", net.rpc("getblockhash", MWEB_HEIGHT), 1)
        pegin_block = MWEB_HEIGHT if pegin in block["tx"] else None
    where = (f"; the peg-in is in block {pegin_block}" if pegin_block
             else f"; the peg-in {pegin} is in no block" if pegin and tip >= MWEB_HEIGHT else "")
    print(f"regtest: MWEB blocks (HogEx + MWEB block, accepted by both nodes): "
          f"{len(mweb)} of the {tip - start} new blocks (MWEB active from height "
          f"{MWEB_HEIGHT}){where}", flush=True)
    balance = net.a.rpc("getbalances", wallet="w")["mine"]
    print(f"regtest: wallet balance trusted {balance['trusted']} "
          f"immature {balance['immature']}", flush=True)
    if not check:
        return 0
    problems = []
    if tip == start:
        problems.append("no new block")
    if n_paid != tip - start:
        problems.append(f"blocks {[h for h, p in paid if not p]} do not pay {net.addr_bech32}")
    missing = sorted(set(should) - set(mweb))
    if missing:
        problems.append(f"blocks {missing} carry no MWEB data")
    if pegin and tip >= MWEB_HEIGHT and not pegin_block:
        problems.append(f"the peg-in {pegin} is not in block {MWEB_HEIGHT}")
    for p in problems:
        print(f"regtest: check failed: {p}", file=sys.stderr, flush=True)
    return 1 if problems else 0


def main(argv):
    if len(argv) < 1 or argv[0] not in ("run", "shell"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, args = argv[0], argv[1:]
    check = False
    mweb = True
    while args and args[0] in ("--check", "--no-mweb"):
        check = check or args[0] == "--check"
        mweb = mweb and args[0] != "--no-mweb"
        args = args[1:]
    install_signal_handlers()
    with Regtest() as net:
        pegin = net.prepare_mweb() if mweb else None
        start = net.rpc("getblockcount")
        print(f"regtest: node A rpc {net.url} user {net.user} pass {net.password} "
              f"cookie {net.cookie}", flush=True)
        print(f"regtest: bech32 {net.addr_bech32} legacy {net.addr_legacy} "
              f"height {start}", flush=True)
        if pegin:
            print(f"regtest: peg-in {pegin} waits in the mempool: the next block, "
                  f"{start + 1}, is the first MWEB block", flush=True)
        rc = 0
        if mode == "shell":
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
        else:
            cmd = args
            if cmd and cmd[0] == "--":
                cmd = cmd[1:]
            if not cmd:
                print("regtest: run needs a command after --", file=sys.stderr)
                return 2
            cmd = [_format(a, net) for a in cmd]
            proc = subprocess.Popen(cmd)
            try:
                rc = proc.wait()
            except KeyboardInterrupt:
                proc.send_signal(signal.SIGINT)
                rc = proc.wait()
        checked = report(net, start, pegin, check)
        return rc or checked


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
