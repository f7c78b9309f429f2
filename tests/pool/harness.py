"""Shared pieces of the mining tests: checks, a lode process, a pool process."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.dirname(HERE))
import checks  # noqa: E402
import regtest  # noqa: E402

SANITIZER = ("runtime error", "AddressSanitizer", "ThreadSanitizer", "LeakSanitizer")
SUMMARY_POOL = re.compile(r"summary: pool (\d+) (\S+): accepted (\d+), rejected (\d+), stale (\d+)")
SUMMARY_POOL_MORE = re.compile(r"summary: pool (\d+) \S+: accepted \d+, rejected \d+, stale \d+, "
                               r"dropped \d+, unsent (\d+), unanswered (\d+)")
SUMMARY_SOLO = re.compile(r"summary: blocks submitted (\d+), accepted (\d+), rejected (\d+), "
                          r"stale (\d+)")
TMP = tempfile.mkdtemp(prefix="lode-mining-test-")
# A wait's timeout is a hang guard, given as what an idle 2-core machine
# needs; a loaded one (sanitizer builds beside other ctest jobs) mines and
# logs slower, so each wait allows this many times that.
LOADED_FACTOR = 3


def guard_deadline(timeout):
    """The monotonic deadline of a wait whose idle-machine timeout is timeout."""
    return time.monotonic() + LOADED_FACTOR * timeout


def require_litecoind():
    if shutil.which(regtest.LITECOIND) is None:
        print(f"FAIL: {regtest.LITECOIND} is not on PATH; the mining tests need litecoind "
              "(Debian package litecoind, or set LITECOIND=/path/to/litecoind)", file=sys.stderr)
        sys.exit(1)


class Checks(checks.Checks):
    """The shared counting check, and the mining tests' logs removed at the end."""

    def done(self):
        status = self.report()
        if os.environ.get("LODE_TEST_KEEP"):
            print(f"logs kept in {TMP}")
        else:
            shutil.rmtree(TMP, ignore_errors=True)
        sys.exit(status)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def free_port():
    return regtest.free_port()


class Lode:
    """One lode process; stderr and stdout go to files that can be waited on."""
    n = 0

    def __init__(self, binary, args, name="lode", env=None):
        Lode.n += 1
        self.name = f"{name}-{Lode.n}"
        self.args = [binary, *args]
        self.err_path = os.path.join(TMP, self.name + ".stderr")
        self.out_path = os.path.join(TMP, self.name + ".stdout")
        self.err_f = open(self.err_path, "w")
        self.out_f = open(self.out_path, "w")
        log(f"start {self.name}: {' '.join(self.args[1:])}")
        self.proc = subprocess.Popen(self.args, stdout=self.out_f, stderr=self.err_f,
                                     stdin=subprocess.DEVNULL, env=env)
        self.rc = None
        self.stop_seconds = None

    def stderr(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def stdout(self):
        with open(self.out_path, errors="replace") as f:
            return f.read()

    def count(self, pattern):
        return len(re.findall(pattern, self.stderr(), re.M))

    def wait_for(self, pattern, timeout, count=1):
        """True once pattern matched count times in stderr; False on exit or
        after the guard (guard_deadline: a multiple of timeout)."""
        deadline = guard_deadline(timeout)
        while time.monotonic() < deadline:
            if self.count(pattern) >= count:
                return True
            if self.proc.poll() is not None:
                return self.count(pattern) >= count
            time.sleep(0.2)
        return self.count(pattern) >= count

    def alive(self):
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGINT, timeout=60):
        if self.proc.poll() is None:
            t0 = time.monotonic()
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.stop_seconds = time.monotonic() - t0
        self.rc = self.proc.returncode
        self.err_f.close()
        self.out_f.close()
        return self.rc

    def tail(self, n=25):
        return "\n    ".join(self.stderr().splitlines()[-n:])

    def sanitizer_report(self):
        err = self.stderr()
        return [s for s in SANITIZER if s in err]

    def pool_summaries(self):
        return [(int(m[0]), m[1], int(m[2]), int(m[3]), int(m[4]))
                for m in SUMMARY_POOL.findall(self.stderr())]

    def pool_summaries_more(self):
        """(pool, unsent, unanswered) of each summary line."""
        return [tuple(int(x) for x in m) for m in SUMMARY_POOL_MORE.findall(self.stderr())]

    def solo_summary(self):
        m = SUMMARY_SOLO.findall(self.stderr())
        return tuple(int(x) for x in m[-1]) if m else None


def check_stopped(check, lode, what, want_rc=130):
    """lode stopped by SIGINT: it exits by itself with want_rc (one that hangs
    is killed after stop()'s 60 s guard and fails the status check), and no
    sanitizer report. How long it took is logged, not judged: a loaded CI
    machine must not fail a correct stop."""
    rc = lode.stop()
    check(rc == want_rc, f"{what}: exit status {rc}, want {want_rc}\n    {lode.tail()}")
    if lode.stop_seconds is not None:
        log(f"{what}: stopped {lode.stop_seconds:.1f} s after SIGINT")
    san = lode.sanitizer_report()
    check(not san, f"{what}: sanitizer report {san} in stderr:\n    {lode.tail(60)}")
    crash = rc is not None and rc < 0
    check(not crash, f"{what}: lode died of signal {-rc if crash else 0}")
    return rc


class PoolProc:
    """A stratum_pool.py process, its status file and its control port."""
    n = 0

    def __init__(self, net, difficulty=0.05, port=0, extra=(), tls=None, payout=None):
        PoolProc.n += 1
        self.name = f"pool-{PoolProc.n}"
        self.status_path = os.path.join(TMP, self.name + ".json")
        self.err_path = os.path.join(TMP, self.name + ".stderr")
        args = [sys.executable, os.path.join(HERE, "stratum_pool.py"), "--rpc", net.url,
                "--rpc-user", net.user, "--rpc-pass", net.password, "--port", str(port),
                "--difficulty", str(difficulty), "--status-file", self.status_path,
                "--en1-base", hex(PoolProc.n << 20), *extra]
        if payout:
            args += ["--payout", payout]
        if tls:
            args += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        self.err_f = open(self.err_path, "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.err_f, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} did not start: {open(self.err_path).read()[-2000:]}")
        info = json.loads(line)
        self.port = info["ports"]["stratum"]
        self.tls_port = info["ports"].get("tls")
        self.control_port = info["ports"]["control"]
        self.fingerprint = info["fingerprint"]
        self.payout = info["payout"]
        self.url = f"stratum+tcp://127.0.0.1:{self.port}"
        log(f"{self.name} on {self.port} (tls {self.tls_port}, control {self.control_port})")

    def ctl(self, line):
        with socket.create_connection(("127.0.0.1", self.control_port), timeout=30) as s:
            s.sendall((line + "\n").encode())
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
        reply = buf.decode().strip()
        if reply.startswith("error"):
            raise RuntimeError(f"{self.name} control {line!r}: {reply}")
        return reply

    def status(self):
        # Ask the running pool: its status file is rewritten only every 50 ms,
        # so right after lode exits it can still miss the last authorize.
        try:
            return json.loads(self.ctl("status"))
        except (OSError, ValueError):
            pass  # the pool has quit: its last status file is final
        for _ in range(20):
            try:
                with open(self.status_path) as f:
                    return json.load(f)
            except (OSError, ValueError):
                time.sleep(0.05)
        raise RuntimeError(f"{self.name}: no status file")

    def totals(self):
        return self.status()["totals"]

    def hold(self, timeout=30):
        """Stops answering and counting submits, then waits until every
        submit that came in before that is answered (a block candidate waits
        for the node): the pool's counts are final."""
        self.ctl("hold on")
        time.sleep(0.1)  # the status file trails the pool by up to 50 ms
        deadline = time.monotonic() + timeout
        while self.status().get("submits_in_flight", 0) and time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return
            time.sleep(0.05)

    def wait_accepted(self, n, timeout):
        return self.wait_total("accepted", n, timeout)

    def wait_total(self, key, n, timeout):
        """Waits until totals[key] >= n; a hang guard (guard_deadline)."""
        deadline = guard_deadline(timeout)
        while time.monotonic() < deadline:
            if self.totals()[key] >= n:
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.2)
        return self.totals()[key] >= n

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err_f.close()

    def stderr(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()


def check_pool_clean(check, pool, what, allow_orphans=False):
    """Nothing invalid, no stale-submit violation, template checks fine.

    allow_orphans: with two pools on one node, a pool's block can lose the race
    to the other pool's block at the same height ("inconclusive": valid, not on
    the best chain)."""
    st = pool.status()
    t = st["totals"]
    check(t["invalid"] == 0, f"{what}: {t['invalid']} invalid shares at {pool.name}: "
          f"{t['rejected_by_reason']}; events {[c['events'][-8:] for c in st['connections']]}")
    check(t["stale_violations"] == 0,
          f"{what}: {t['stale_violations']} stale-submit violations at {pool.name}")
    check(st["commitment_mismatches"] == 0, f"{what}: witness commitment mismatches {st['errors']}")
    rejects = [r for r in t["block_rejects"]
               if not (allow_orphans and r.endswith(": inconclusive"))]
    check(not rejects, f"{what}: litecoind rejected blocks: {rejects[:5]}")
    if t["duplicates"]:
        print(f"NOTE: {what}: lode submitted {t['duplicates']} duplicate share(s) "
              f"(the pool repeats a job's content under a new job id in some faults)", flush=True)
    pe = pool.stderr()
    check("Traceback" not in pe, f"{what}: {pool.name} raised: {pe[-1500:]}")
    return st


ANSWER_LINE = r"accepted: \d+/\d+|stale: |rejected: "


def wait_answers_read(lode, pool, timeout=5):
    """After pool.hold() (lode mining one pool): waits until lode has logged
    an answer line for every submit the pool answered, so a stop then finds
    none in flight. A wait only: the counts are compared after the stop."""
    t = pool.totals()
    want = t["accepted"] + sum(t["rejected_by_code"].values())
    deadline = guard_deadline(timeout)
    while lode.count(ANSWER_LINE) < want and lode.alive() and time.monotonic() < deadline:
        time.sleep(0.05)


def check_counts_agree(check, lode_counts, pools, what, slack=0):
    """lode's (accepted, rejected, stale) summed over its pools vs the pools' counts.

    lode counts the pool's code-21 answers as stale (the shares it dropped itself
    are counted apart, as dropped), every other rejection as rejected; an answer
    lode never read (slack) is unanswered."""
    acc = sum(p.totals()["accepted"] for p in pools)
    codes = [p.totals()["rejected_by_code"] for p in pools]
    c21 = sum(c.get("21", 0) for c in codes)
    other = sum(v for c in codes for k, v in c.items() if k != "21")
    la, lr, ls = lode_counts
    check(acc - slack <= la <= acc, f"{what}: lode accepted {la}, the pool(s) accepted {acc}")
    if la != acc:
        print(f"NOTE: {what}: lode counted {acc - la} fewer accepted shares than the pool "
              f"(answers lode never read: it left the connection with submits in flight, "
              f"{slack} reported unanswered)", flush=True)
    check(lr == other, f"{what}: lode rejected {lr}, the pool(s) rejected {other} (not stale)")
    check(c21 - slack <= ls <= c21, f"{what}: lode stale {ls}, the pool(s)' stale answers {c21}")


def make_cert(name="pool"):
    cert = os.path.join(TMP, name + ".crt")
    key = os.path.join(TMP, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
    return cert, key
