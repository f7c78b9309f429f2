#!/usr/bin/env python3
"""systemd's notify protocol, checked the way systemd itself sees it: a
datagram socket named by NOTIFY_SOCKET, with WATCHDOG_USEC set, read by this
script (no lode code involved).

- a benchmark sends READY=1 first, STATUS lines naming the algorithm and a
  rate, WATCHDOG=1 while it hashes, and STOPPING=1 last;
- mining on a pool (a minimal stratum pool here, which accepts every share
  and counts them), the STATUS lines count accepted shares: never more than
  the pool accepted, and some;
- a lode whose only device hangs (LODE_TEST_FAULT, the fault-injecting test
  devices) stops feeding the watchdog while the device is stuck, and exits 1
  once it is quarantined, with STOPPING=1;
- a manager that does not read (its socket's queue full before lode
  starts, so every send would block): lode mines on, warns once, and a
  SIGTERM stops it with status 130, with and without WATCHDOG_USEC;
- built without libsystemd (the portable preset), lode warns that
  NOTIFY_SOCKET is set and sends nothing;
- the example unit contrib/systemd/lode.service passes `systemd-analyze
  verify` (where systemd-analyze exists), pointed at this lode.

usage: test_systemd.py PATH_TO_LODE ON|OFF   (whether lode has libsystemd)
"""
import json
import os
import re
import select
import shutil
import signal
import socket
import threading
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE = sys.argv[1]
HAVE_SYSTEMD = sys.argv[2].upper() in ("ON", "TRUE", "1", "YES")
check = Checks()


def run_notified(args, env_extra, watchdog_usec, timeout=300):
    """Runs lode with NOTIFY_SOCKET on a socket of our own; returns the
    completed process and the datagrams as (arrival time, [lines])."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "notify.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        env = dict(os.environ, NOTIFY_SOCKET=path, **env_extra)
        env.pop("WATCHDOG_PID", None)
        if watchdog_usec:
            env["WATCHDOG_USEC"] = str(watchdog_usec)
        proc = subprocess.Popen([LODE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        messages = []
        start = time.monotonic()
        while True:
            ready, _, _ = select.select([sock], [], [], 0.05)
            if ready:
                data = sock.recv(65536).decode("utf-8", "replace")
                messages.append((time.monotonic() - start, data.split("\n")))
            elif proc.poll() is not None:
                break
            if time.monotonic() - start > timeout:  # hang guard
                proc.kill()
                break
        out, err = proc.communicate()
        sock.close()
        return proc.returncode, out, err, messages


def lines_of(messages):
    return [line for _, lines in messages for line in lines if line]


def test_benchmark():
    rc, out, err, messages = run_notified(
        ["--benchmark", "-a", "sha256d", "-d", "cpu", "-t", "1", "--time-limit", "6", "--no-color"], {}, 1_000_000)
    lines = lines_of(messages)
    check(rc == 0, f"benchmark exits 0, got {rc}: {err[-400:]!r}")
    check(lines and lines[0] == "READY=1", f"READY=1 comes first: {lines[:3]}")
    statuses = [line for line in lines if line.startswith("STATUS=")]
    check(any("sha256d" in s and "H/s" in s and "shares" in s for s in statuses),
          f"STATUS lines name the algorithm, a rate and the shares: {statuses[:4]}")
    pings = [t for t, ls in messages if "WATCHDOG=1" in ls]
    # Six seconds of hashing with a ping due every half second.
    check(len(pings) >= 2, f"WATCHDOG=1 while hashing: {len(pings)} pings")
    ready_at = next((i for i, line in enumerate(lines) if line == "READY=1"), None)
    first_ping = next((i for i, line in enumerate(lines) if line == "WATCHDOG=1"), None)
    check(ready_at is not None and first_ping is not None and ready_at < first_ping, "READY=1 before WATCHDOG=1")
    check(lines and lines[-1] == "STOPPING=1", f"STOPPING=1 comes last: {lines[-3:]}")


class CountingPool:
    """Just enough of a stratum pool for lode to mine on: one job at a low
    difficulty; every share is accepted and counted."""

    def __init__(self):
        self.accepted = 0
        self.lock = threading.Lock()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"stratum+tcp://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        try:
            conn, _ = self.server.accept()
            with conn, conn.makefile("rwb") as f:
                for line in f:
                    self.answer(f, json.loads(line))
        except (OSError, ValueError):
            pass  # lode hung up

    def answer(self, f, msg):
        def send(obj):
            f.write((json.dumps(obj) + "\n").encode())
            f.flush()
        method = msg.get("method")
        if method == "mining.subscribe":
            send({"id": msg["id"], "result": [[["mining.notify", "s1"]], "01020304", 4], "error": None})
            return
        if method == "mining.submit":
            with self.lock:
                self.accepted += 1
        send({"id": msg["id"], "result": True if method != "mining.configure" else {}, "error": None})
        if method == "mining.authorize":
            send({"id": None, "method": "mining.set_difficulty", "params": [0.0001]})
            send({"id": None, "method": "mining.notify", "params": [
                "job1", os.urandom(32).hex(), "01000000010000", "ffffffff", [], "20000000", "1d00ffff",
                f"{int(time.time()):08x}", True]})

    def close(self):
        self.server.close()


def test_mining_status():
    pool = CountingPool()
    try:
        rc, out, err, messages = run_notified(
            ["-a", "sha256d", "-o", pool.url, "-u", "w", "-p", "x", "-d", "cpu", "-t", "1", "--time-limit", "7",
             "--no-version-rolling", "--no-color"], {}, 1_000_000)
    finally:
        pool.close()
    lines = lines_of(messages)
    counts = [int(m[1]) for m in (re.search(r"^STATUS=sha256d .*H/s, accepted (\d+), rejected 0$", line)
                                  for line in lines) if m]
    check(rc == 0 and lines[:1] == ["READY=1"] and lines[-1:] == ["STOPPING=1"],
          f"mining: rc {rc}, READY first and STOPPING last: {lines[:2]} .. {lines[-2:]}; {err[-300:]!r}")
    check(counts and counts == sorted(counts) and 0 < counts[-1] <= pool.accepted,
          f"STATUS counts the shares the pool accepted: {counts}, the pool accepted {pool.accepted}")


def test_stuck_device():
    """The only device hangs in its fourth scan: the watchdog finds it after
    10 times its expected 0.2 s (2 s), and abandons it at three times that;
    meanwhile nothing mines, so systemd's watchdog goes unfed."""
    rc, out, err, messages = run_notified(
        ["--benchmark", "-a", "sha256d", "-d", "fault:0", "--hang-timeout", "1", "--time-limit", "120",
         "--no-color"], {"LODE_TEST_FAULT": "hang:0:3"}, 400_000)
    lines = lines_of(messages)
    check(rc == 1 and "quarantined" in err and "nothing is hashing" in err,
          f"a lode whose only device hangs exits 1 once it is quarantined: rc {rc}, {err[-500:]!r}")
    check(lines and lines[0] == "READY=1" and lines[-1] == "STOPPING=1", f"READY first, STOPPING last: {lines}")
    pings = [t for t, ls in messages if "WATCHDOG=1" in ls]
    stop = next((t for t, ls in messages if "STOPPING=1" in ls), None)
    # A ping is due every 0.2 s while some device mines; the device is stuck
    # for at least 4 s (from 2 s after its scan began until 6 s) before the
    # end, so the pings stop at least that long before STOPPING=1.
    check(stop is not None and (not pings or stop - pings[-1] >= 2.0),
          f"no WATCHDOG=1 while the only device is stuck: last ping at {pings[-1:]}, stopping at {stop}")


class StderrLines:
    """Collects a process's stderr lines on a thread of its own."""

    def __init__(self, proc):
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self.read, args=(proc,), daemon=True).start()

    def read(self, proc):
        for line in proc.stderr:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()

    def wait_for(self, needle, timeout):
        with self.cond:
            return self.cond.wait_for(lambda: any(needle in line for line in self.lines), timeout)

    def text(self):
        with self.cond:
            return "".join(self.lines)


def test_unread_socket():
    """Before: lode hung in sd_notify, printed no rate line and ignored
    SIGTERM until killed. 60-s waits are hang guards only."""
    for watchdog_usec in (None, 100_000):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "notify.sock")
            manager = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            manager.bind(path)  # and never read
            filler = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            filler.setblocking(False)
            queued = 0
            try:
                while queued < 100000:
                    filler.sendto(b"X=1", path)
                    queued += 1
            except BlockingIOError:
                pass
            check(queued < 100000, f"the manager's queue is full ({queued} datagrams)")
            env = dict(os.environ, NOTIFY_SOCKET=path)
            env.pop("WATCHDOG_PID", None)
            env.pop("WATCHDOG_USEC", None)
            if watchdog_usec:
                env["WATCHDOG_USEC"] = str(watchdog_usec)
            proc = subprocess.Popen([LODE, "--benchmark", "-a", "sha256d", "-d", "cpu", "-t", "1", "--log-interval",
                                     "1", "--time-limit", "600", "--no-color"], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=env)
            err = StderrLines(proc)
            mining = err.wait_for("total:", 60)
            warned = err.wait_for("systemd does not read NOTIFY_SOCKET", 60)
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            what = f"NOTIFY_SOCKET unread, WATCHDOG_USEC {watchdog_usec}"
            check(mining, f"{what}: lode mines on (rate lines): {err.text()[-400:]!r}")
            check(warned and err.text().count("does not read NOTIFY_SOCKET") == 1,
                  f"{what}: warned once: {err.text()[-400:]!r}")
            check(proc.returncode == 130 and "summary" in err.text(),
                  f"{what}: SIGTERM stops it with the summary: rc {proc.returncode}, {err.text()[-400:]!r}")
            manager.close()
            filler.close()


def test_without_systemd():
    rc, out, err, messages = run_notified(
        ["--benchmark", "-a", "sha256d", "-d", "cpu", "-t", "1", "--time-limit", "2", "--no-color"], {}, 1_000_000)
    check(rc == 0, f"benchmark exits 0, got {rc}")
    check("NOTIFY_SOCKET is set, but this lode was built without libsystemd" in err,
          f"the missing systemd support is said: {err[-400:]!r}")
    check(messages == [], f"nothing is sent: {messages}")


def test_unit_file():
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        print("systemd-analyze not found: the unit file is not verified")
        return
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "contrib", "systemd", "lode.service")) as f:
        unit = f.read()
    check("Type=notify" in unit and "WatchdogSec=" in unit and "ExecStart=/usr/local/bin/lode " in unit,
          "the unit is Type=notify with a watchdog")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lode.service")
        with open(path, "w") as f:
            f.write(unit.replace("/usr/local/bin/lode", os.path.abspath(LODE)))
        r = subprocess.run([analyze, "verify", path], capture_output=True, text=True, timeout=120)
        problems = [line for line in (r.stdout + r.stderr).splitlines() if "lode.service" in line]
        check(r.returncode == 0 and not problems, f"systemd-analyze verify: rc {r.returncode}, {problems}")


test_unit_file()
if HAVE_SYSTEMD:
    test_benchmark()
    test_mining_status()
    test_stuck_device()
    test_unread_socket()
else:
    test_without_systemd()
sys.exit(check.report())
