#!/usr/bin/env python3
"""lode against hostile stratum pools that need no node (a pool in this
file: subscribe, authorize, one valid sha256d job, then the misbehaviour):

  flood     after the job, a flood of unknown methods, set_difficulty,
            client.show_message and non-clean notifies: lode keeps mining
            (its shares reach the pool) and its log stays small, the
            repeats said as "N similar messages suppressed"
  silent    jobs keep coming, no submit is ever answered: after
            --stall-timeout lode warns, drops the connection and connects
            again; at the stop what was sent is unanswered and what never
            left is unsent
  silent_stop  shares faster than a silent pool: at the stop, the queued
            ones are unsent, the sent ones unanswered, none stale
  silent_failover  a stalled first pool and a working second: lode fails over

usage: test_stratum_flood.py PATH_TO_LODE [SCENARIO ...]
"""
import json
import select
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

LODE = sys.argv[1]
ONLY = sys.argv[2:]
TMP = tempfile.mkdtemp(prefix="lode-flood-test-")
failures = []
passes = [0]


def check(cond, msg):
    if cond:
        passes[0] += 1
    else:
        failures.append(msg)
        print(f"FAIL: {msg}", flush=True)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


PREVHASH = "00" * 32
COINB1 = "01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff0803"
COINB2 = "ffffffff0100f2052a010000001976a914000000000000000000000000000000000000000088ac00000000"


def notify(job, clean):
    return {"id": None, "method": "mining.notify",
            "params": [job, PREVHASH, COINB1, COINB2, [], "20000000", "207fffff", "5f5e1000", clean]}


class HostilePool:
    """One connection at a time; mode "flood" or "silent"."""

    def __init__(self, mode, difficulty=0.0001):
        self.mode = mode
        self.difficulty = difficulty
        self.submits = 0
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self.session, args=(conn,), daemon=True).start()

    def send(self, conn, obj):
        conn.sendall((json.dumps(obj) + "\n").encode())

    def session(self, conn):
        buf = b""
        authorized = False
        jobs = 0
        last_job = 0.0
        flood = [json.dumps({"method": "x.unknown", "params": []}),
                 json.dumps({"id": None, "method": "mining.set_difficulty", "params": [0.0001]}),
                 json.dumps({"id": 7, "method": "client.show_message", "params": ["hello"]})]
        try:
            while not self.stop.is_set():
                if select.select([conn], [], [], 0.01)[0]:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    try:
                        req = json.loads(line)
                    except ValueError:
                        continue
                    method, rid = req.get("method"), req.get("id")
                    if method == "mining.subscribe":
                        self.send(conn, {"id": rid, "error": None,
                                         "result": [[["mining.notify", "s1"]], "00000001", 4]})
                    elif method == "mining.authorize":
                        self.send(conn, {"id": rid, "error": None, "result": True})
                        self.send(conn, {"id": None, "method": "mining.set_difficulty",
                                         "params": [self.difficulty]})
                        self.send(conn, notify("j0", True))
                        authorized = True
                        last_job = time.monotonic()
                    elif method == "mining.submit":
                        self.submits += 1
                        if self.mode != "silent":
                            self.send(conn, {"id": rid, "error": None, "result": True})
                    elif method is not None and rid is not None:
                        self.send(conn, {"id": rid, "error": None, "result": True})
                if not authorized:
                    continue
                if self.mode == "flood":
                    # Bursts between reads: the unknown methods, difficulty,
                    # messages, and a non-clean notify of the same job.
                    jobs += 1
                    burst = "\n".join(flood * 200 + [json.dumps(notify(f"j{jobs % 4}", False))]) + "\n"
                    conn.sendall(burst.encode())
                elif time.monotonic() - last_job > (0.5 if self.mode == "silent" else 5):
                    jobs += 1
                    self.send(conn, notify(f"j{jobs}", False))
                    last_job = time.monotonic()
        except OSError:
            return
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.sock.close()


def run_lode(args, seconds, name):
    err_path = os.path.join(TMP, name + ".stderr")
    with open(err_path, "w") as err:
        proc = subprocess.Popen([LODE, "-a", "sha256d", "-d", "cpu", "-t", "1", "--no-color", "--log-interval", "5",
                                 "-u", "w", *args], stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        time.sleep(seconds)
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
    with open(err_path, errors="replace") as f:
        text = f.read()
    check("Sanitizer" not in text and "runtime error" not in text, f"{name}: a sanitizer report in stderr")
    return rc, text


def scenario_flood():
    pool = HostilePool("flood", difficulty=0.001)
    try:
        rc, err = run_lode(["-o", f"stratum+tcp://127.0.0.1:{pool.port}"], 6, "flood")
    finally:
        pool.close()
    lines = err.splitlines()
    log(f"flood: {len(lines)} log lines, {len(err)} bytes; the pool got {pool.submits} submits")
    check(rc == 130, f"flood: exit status {rc}, want 130:\n    " + "\n    ".join(lines[-15:]))
    check(pool.submits >= 2, f"flood: {pool.submits} shares reached the pool, want >= 2 (lode keeps mining)")
    # Hundreds of thousands of messages; a few lines per kind and minute
    # beside the share lines (one per share, as cpuminer's).
    noise = [line for line in lines if "accepted: " not in line]
    check(len(noise) < 80, f"flood: {len(noise)} log lines beside the shares, want < 80:\n    "
          + "\n    ".join(noise[:40]))
    check(re.search(r"\d+ similar messages suppressed", err) is not None,
          "flood: no 'N similar messages suppressed' line")
    for what in ("unknown method", "pool difficulty", "pool message"):
        check(what in err, f"flood: no '{what}' line at all (the first ones are shown)")


def scenario_silent():
    pool = HostilePool("silent")
    try:
        rc, err = run_lode(["-o", f"stratum+tcp://127.0.0.1:{pool.port}", "--stall-timeout", "3",
                            "--retry-pause", "0.5"], 10, "silent")
    finally:
        pool.close()
    lines = err.splitlines()
    log(f"silent: the pool got {pool.submits} submits on {pool.connections} connections")
    check(rc == 130, f"silent: exit status {rc}, want 130")
    check(pool.submits >= 3, f"silent: {pool.submits} submits, want >= 3")
    check(re.search(r"unanswered for \d+ s, reconnecting", err) is not None,
          "silent: no warning that the pool answers no submit:\n    " + "\n    ".join(lines[-20:]))
    check(pool.connections >= 2, f"silent: {pool.connections} connections, want a reconnect")
    m = re.findall(r"summary: pool 0 \S+: accepted (\d+), rejected (\d+), stale (\d+), dropped (\d+), unsent (\d+), "
                   r"unanswered (\d+)", err)
    check(bool(m), "silent: no pool summary line")
    if m:
        accepted, rejected, stale, dropped, unsent, unanswered = (int(x) for x in m[-1])
        log(f"silent: summary accepted {accepted}, rejected {rejected}, stale {stale}, unsent {unsent}, "
            f"unanswered {unanswered}")
        check(accepted == 0 and rejected == 0,
              f"silent: no answer came, yet accepted {accepted}, rejected {rejected}")
        check(unanswered == pool.submits, f"silent: unanswered {unanswered}, the pool got {pool.submits} submits")


def scenario_silent_stop():
    """Shares come faster than the silent pool could answer: lode has its
    256 submits in flight and more queued when it is stopped. The queued
    ones never left: unsent, neither stale nor dropped (no job ended); those sent are
    unanswered."""
    pool = HostilePool("silent", difficulty=0.00001)
    try:
        rc, err = run_lode(["-o", f"stratum+tcp://127.0.0.1:{pool.port}", "--stall-timeout", "60"], 6,
                           "silent-stop")
    finally:
        pool.close()
    m = re.findall(r"summary: pool 0 \S+: accepted (\d+), rejected (\d+), stale (\d+), dropped (\d+), unsent (\d+), "
                   r"unanswered (\d+)", err)
    check(rc == 130 and bool(m), f"silent stop: exit status {rc} and a pool summary:\n    " +
          "\n    ".join(err.splitlines()[-10:]))
    if m:
        accepted, rejected, stale, dropped, unsent, unanswered = (int(x) for x in m[-1])
        log(f"silent stop: the pool got {pool.submits} submits; summary stale {stale}, unsent {unsent}, "
            f"unanswered {unanswered}")
        check(unanswered == pool.submits and pool.submits > 0,
              f"silent stop: unanswered {unanswered}, the pool got {pool.submits} submits")
        check(unsent > 0, f"silent stop: unsent {unsent}: the test wants shares queued at the stop")
        check(stale == 0 and dropped == 0 and accepted == 0 and rejected == 0,
              f"silent stop: stale {stale}, dropped {dropped}, accepted {accepted}, rejected {rejected}: "
              f"no job ended and no "
              f"answer came")


def scenario_silent_failover():
    """The first pool stalls (jobs, no answers) and a second one works: with
    --failover-after 1 lode moves to the second after one stall, rather than
    retrying the stalled pool for ever because it sent jobs."""
    silent, good = HostilePool("silent"), HostilePool("good")
    try:
        rc, err = run_lode(["-o", f"stratum+tcp://127.0.0.1:{silent.port}", "-o",
                            f"stratum+tcp://127.0.0.1:{good.port}", "--stall-timeout", "3", "--failover-after", "1",
                            "--retry-pause", "0.5"], 10, "silent-failover")
    finally:
        silent.close()
        good.close()
    log(f"silent failover: the stalled pool got {silent.submits} submits on {silent.connections} connections, "
        f"the good one {good.submits} on {good.connections}")
    check(rc == 130, f"silent failover: exit status {rc}, want 130")
    check(good.submits > 0, "silent failover: lode never moved to the working pool:\n    "
          + "\n    ".join(err.splitlines()[-15:]))
    check(re.search(r"failing over to stratum\+tcp://127\.0\.0\.1:%d" % good.port, err) is not None,
          "silent failover: no 'failing over' line")


SCENARIOS = {"flood": scenario_flood, "silent": scenario_silent, "silent_stop": scenario_silent_stop,
             "silent_failover": scenario_silent_failover}


def main():
    for name, fn in SCENARIOS.items():
        if ONLY and name not in ONLY:
            continue
        log(f"scenario {name}")
        fn()
    print(f"{passes[0]} passed, {len(failures)} failed", flush=True)
    sys.exit(1 if failures else 0)


main()
