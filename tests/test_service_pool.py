#!/usr/bin/env python3
"""lode against the stratum test pool (tests/pool) with the habits of other
miners' command lines, judged by the pool's own counts and the proxies' own
sockets and logs:

  json      --log-format json --log-file: every line parses with Python's json
            module; the share events equal the pool's counts
  creds     credentials in the URL (a password holding ':' and '@', which the
            pool requires), -O USER:PASS with a bare HOST:PORT; the password
            masked in /proc/PID/cmdline and in no log line
  socks     -x socks5:// (microsocks): shares accepted, the proxy holds the
            connection to the pool; socks5h:// with TLS and --cert-pin
  http      -x http:// (tinyproxy, HTTP CONNECT): shares accepted, the
            proxy's log names the connection
  noproxy   a proxy that is not there, and one that refuses (SOCKS5 auth):
            clear errors, retries, a prompt stop
  unreached --time-limit with the only pool or proxy never reached: exit 1

usage: test_service_pool.py PATH_TO_LODE [SCENARIO ...]
Needs litecoind, microsocks and tinyproxy on PATH (scripts/install-deps.sh).
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "pool"))
from harness import (TMP, Checks, Lode, PoolProc, check_counts_agree, check_pool_clean,  # noqa: E402
                     check_stopped, free_port, log, make_cert, regtest, require_litecoind, wait_answers_read)

LODE = sys.argv[1]
ONLY = sys.argv[2:]
check = Checks()
COMMON = ["-a", "scrypt", "-d", "cpu", "-t", "2", "--no-color", "--log-interval", "5", "-R", "1"]


def socket_inodes(pid):
    out = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", target)
        if m:
            out.add(m.group(1))
    return out


def tcp_sockets(pid):
    """(state, local port, remote port) of pid's TCP sockets, from /proc/net/tcp{,6}."""
    inodes = socket_inodes(pid)
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                if fields[9] in inodes:
                    out.append((fields[3], int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)))
    return out


def listening_port(pid, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ports = [lp for st, lp, _ in tcp_sockets(pid) if st == "0A"]
        if ports:
            return ports[0]
        time.sleep(0.05)
    return None


class Proxy:
    """microsocks (SOCKS5) on an ephemeral port read back from /proc, or tinyproxy (HTTP CONNECT)."""

    def __init__(self, kind, auth=None):
        self.kind = kind
        self.log_path = os.path.join(TMP, f"{kind}-{time.monotonic_ns()}.log")
        self.out = open(self.log_path + ".out", "w")
        if kind == "socks":
            args = ["microsocks", "-i", "127.0.0.1", "-p", "0"]
            if auth:
                args += ["-u", auth[0], "-P", auth[1]]
            self.proc = subprocess.Popen(args, stdout=self.out, stderr=self.out)
            self.port = listening_port(self.proc.pid)
        else:
            for _ in range(5):  # tinyproxy takes no port 0: a free one, tried again if taken
                port = free_port()
                conf = self.log_path + ".conf"
                with open(conf, "w") as f:
                    f.write(f"Port {port}\nListen 127.0.0.1\nTimeout 120\nLogLevel Info\n"
                            f"LogFile \"{self.log_path}\"\nMaxClients 20\nAllow 127.0.0.1\n")
                self.proc = subprocess.Popen(["tinyproxy", "-d", "-c", conf], stdout=self.out, stderr=self.out)
                self.port = listening_port(self.proc.pid, 5)
                if self.port == port:
                    break
                self.stop()
        if self.port is None:
            raise RuntimeError(f"{kind} proxy did not start: {open(self.log_path + '.out').read()}")
        log(f"{kind} proxy pid {self.proc.pid} on {self.port}")

    def connections_to(self, port):
        return [s for s in tcp_sockets(self.proc.pid) if s[0] == "01" and s[2] == port]

    def log_text(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def finish(lode, pool, what):
    pool.hold()
    wait_answers_read(lode, pool)
    check_stopped(check, lode, what)
    sums = lode.pool_summaries()
    check(sums, f"{what}: no 'summary: pool' line:\n    {lode.tail()}")
    check_pool_clean(check, pool, what)
    check_counts_agree(check, (sum(s[2] for s in sums), sum(s[3] for s in sums), sum(s[4] for s in sums)),
                       [pool], what)


def cmdline(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().split(b"\0")


def scenario_json(net):
    what = "json log"
    pool = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"])
    log_file = os.path.join(TMP, "json-run.log")
    lode = Lode(LODE, COMMON + ["-o", pool.url, "-u", "w", "-p", "x", "--log-format", "json",
                                "--log-file", log_file, "--log-interval", "1"])
    try:
        check(pool.wait_accepted(6, 60), f"{what}: fewer than 6 shares ({pool.totals()})\n    {lode.tail()}")
        # Jobs replaced while shares are on their way: stale answers (code 21),
        # and a dropped connection: disconnect and connect events.
        for _ in range(3):
            pool.ctl("difficulty 0.05 clean")
            time.sleep(0.3)
        pool.ctl("fault drop")
        check(pool.wait_accepted(pool.totals()["accepted"] + 4, 60), f"{what}: no shares after the faults")
        finish(lode, pool, what)
    finally:
        lode.stop()
        pool.stop()
    t = pool.totals()
    for name, text in (("stderr", lode.stderr()), ("file", open(log_file).read())):
        objs = []
        for line in text.splitlines():
            try:
                objs.append(json.loads(line))
            except ValueError:
                check(False, f"{what}: {name}: not JSON: {line!r}")
        check(objs and all(isinstance(o, dict) and {"ts", "level", "msg"} <= o.keys() for o in objs),
              f"{what}: {name}: objects with ts, level, msg")
        shares = [o for o in objs if o.get("event") == "share"]
        by = {r: sum(1 for o in shares if o["result"] == r) for r in ("accepted", "rejected", "stale")}
        codes = t["rejected_by_code"]
        want = {"accepted": t["accepted"], "stale": codes.get("21", 0),
                "rejected": sum(v for k, v in codes.items() if k != "21")}
        log(f"{what}: {name}: share events {by}, pool {want}")
        check(by == want, f"{what}: {name}: share events {by}, the pool counted {want}")
        check(all(o.get("pool") == pool.url and o.get("job") and o.get("difficulty") for o in shares),
              f"{what}: {name}: share events carry pool, job, difficulty: {shares[:2]}")
        check(all(o.get("reason") for o in shares if o["result"] != "accepted"),
              f"{what}: {name}: rejected/stale share events carry the pool's reason")
        connects = sum(1 for o in objs if o.get("event") == "pool_connect")
        check(connects == len(pool.status()["connections"]),
              f"{what}: {name}: {connects} pool_connect events, the pool saw "
              f"{len(pool.status()['connections'])} connections")
        check(any(o.get("event") == "pool_disconnect" for o in objs), f"{what}: {name}: a pool_disconnect event")
        summary = [o for o in objs if o.get("event") == "pool_summary"]
        check(len(summary) == 1 and summary[0]["accepted"] == t["accepted"],
              f"{what}: {name}: pool_summary event {summary}")


def scenario_creds(net):
    secret = "s3:cr@t/x"
    escaped = "s3%3Acr%40t%2Fx"
    for what, args, user in (
            ("credentials in the URL", ["-o", "stratum+tcp://alice.rig:{secret}@127.0.0.1:{port}"], "alice.rig"),
            ("percent escapes in the URL", ["-o", "stratum+tcp://carol.rig:{escaped}@127.0.0.1:{port}"], "carol.rig"),
            ("-O and a bare host:port", ["-O", "bob.rig:{secret}", "-o", "127.0.0.1:{port}"], "bob.rig")):
        pool = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3", "--require-pass", secret])
        lode = Lode(LODE, COMMON + [a.format(secret=secret, escaped=escaped, port=pool.port) for a in args])
        try:
            check(pool.wait_accepted(pool.totals()["accepted"] + 3, 60),
                  f"{what}: no shares accepted (the pool requires the password)\n    {lode.tail()}")
            users = {c["user"] for c in pool.status()["connections"] if c["user"]}
            check(user in users, f"{what}: the pool saw users {users}, want {user}")
            argv = cmdline(lode.proc.pid)
            check(not any(secret.encode() in a or escaped.encode() in a for a in argv),
                  f"{what}: /proc/PID/cmdline shows the password: {argv}")
            check(any(b"*****" in a for a in argv), f"{what}: the password masked with '*': {argv}")
            check(any(user.encode() in a for a in argv), f"{what}: the user still shows: {argv}")
            finish(lode, pool, what)
            check(secret not in lode.stderr() and "s3:cr" not in lode.stderr() and "s3%3A" not in lode.stderr(),
                  f"{what}: the password is in the log")
        finally:
            lode.stop()
            pool.stop()


def scenario_socks(net):
    proxy = Proxy("socks")
    pool = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"])
    try:
        what = "socks5 proxy"
        lode = Lode(LODE, COMMON + ["-x", f"socks5://127.0.0.1:{proxy.port}", "-o", pool.url, "-u", "w"])
        try:
            check(pool.wait_accepted(4, 60), f"{what}: fewer than 4 shares ({pool.totals()})\n    {lode.tail()}")
            check(proxy.connections_to(pool.port), f"{what}: microsocks holds no connection to the pool")
            direct = [s for s in tcp_sockets(lode.proc.pid) if s[0] == "01" and s[2] == pool.port]
            check(not direct, f"{what}: lode is connected to the pool directly: {direct}")
            check(any(s[0] == "01" and s[2] == proxy.port for s in tcp_sockets(lode.proc.pid)),
                  f"{what}: lode has no connection to the proxy")
            finish(lode, pool, what)
        finally:
            lode.stop()
        pool.ctl("hold off")
    finally:
        pool.stop()
    cert, key = make_cert("socks")
    pool = PoolProc(net, difficulty=0.05, tls=(cert, key), extra=["--min-block-interval", "0.3"])
    try:
        what = "socks5h proxy, TLS with a pin"
        lode = Lode(LODE, COMMON + ["-x", f"socks5h://127.0.0.1:{proxy.port}", "-o",
                                    f"stratum+tcps://localhost:{pool.tls_port}", "-u", "w",
                                    "--cert-pin", pool.fingerprint])
        try:
            check(pool.wait_accepted(4, 60), f"{what}: fewer than 4 shares ({pool.totals()})\n    {lode.tail()}")
            check(any(c["tls"] for c in pool.status()["connections"]), f"{what}: not over TLS")
            check(proxy.connections_to(pool.tls_port), f"{what}: microsocks holds no connection to the pool")
            finish(lode, pool, what)
        finally:
            lode.stop()
        pool.ctl("hold off")
        what = "socks5 proxy, TLS with a wrong pin"
        lode = Lode(LODE, COMMON + ["-x", f"socks5://127.0.0.1:{proxy.port}", "-o",
                                    f"stratum+ssl://127.0.0.1:{pool.tls_port}", "-u", "w", "--cert-pin", "ab" * 32])
        try:
            check(lode.wait_for(r"not the pinned one", 30), f"{what}: no pin error\n    {lode.tail()}")
            check_stopped(check, lode, what)
        finally:
            lode.stop()
    finally:
        pool.stop()
        proxy.stop()


def scenario_http(net):
    proxy = Proxy("http")
    pool = PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"])
    what = "HTTP CONNECT proxy"
    try:
        lode = Lode(LODE, COMMON + ["--proxy", f"http://127.0.0.1:{proxy.port}", "-o", pool.url, "-u", "w"])
        try:
            check(pool.wait_accepted(4, 60), f"{what}: fewer than 4 shares ({pool.totals()})\n    {lode.tail()}")
            check(proxy.connections_to(pool.port), f"{what}: tinyproxy holds no connection to the pool")
            check(f"127.0.0.1:{pool.port}" in proxy.log_text() and "CONNECT" in proxy.log_text(),
                  f"{what}: tinyproxy's log has no CONNECT to the pool:\n{proxy.log_text()[-1500:]}")
            finish(lode, pool, what)
        finally:
            lode.stop()
    finally:
        pool.stop()
        proxy.stop()


def scenario_noproxy(net):
    pool = PoolProc(net, difficulty=0.05)
    try:
        what = "a proxy that is not there"
        port = free_port()
        lode = Lode(LODE, COMMON + ["-x", f"socks5://127.0.0.1:{port}", "-o", pool.url, "-u", "w"])
        try:
            check(lode.wait_for(rf"through proxy socks5://127\.0\.0\.1:{port}", 30, count=3),
                  f"{what}: no three connection errors naming the proxy:\n    {lode.tail()}")
            check(lode.alive(), f"{what}: lode gave up (want: retrying)")
            check(not pool.status()["connections"], f"{what}: lode reached the pool without the proxy")
            check_stopped(check, lode, what)
        finally:
            lode.stop()
        what = "a proxy that accepts and says nothing"
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        lode = Lode(LODE, COMMON + ["-x", f"socks5://127.0.0.1:{silent.getsockname()[1]}", "-o", pool.url,
                                    "-u", "w"])
        try:
            time.sleep(3)
            check(lode.alive(), f"{what}: lode exited:\n    {lode.tail()}")
            check_stopped(check, lode, what)  # SIGINT ends the wait for the proxy: no hang
        finally:
            lode.stop()
            silent.close()
        proxy = Proxy("socks", auth=("puser", "ppass9"))
        try:
            what = "a proxy that refuses (no credentials)"
            lode = Lode(LODE, COMMON + ["-x", f"socks5://127.0.0.1:{proxy.port}", "-o", pool.url, "-u", "w"])
            try:
                check(lode.wait_for(r"through proxy socks5://", 30, count=2),
                      f"{what}: no connection errors naming the proxy:\n    {lode.tail()}")
                check(not pool.status()["connections"], f"{what}: the refusing proxy let lode through")
                check_stopped(check, lode, what)
            finally:
                lode.stop()
            what = "a proxy with credentials"
            lode = Lode(LODE, COMMON + ["-x", f"socks5://puser:ppass9@127.0.0.1:{proxy.port}", "-o", pool.url,
                                        "-u", "w"])
            try:
                check(pool.wait_accepted(2, 60), f"{what}: no shares ({pool.totals()})\n    {lode.tail()}")
                argv = cmdline(lode.proc.pid)
                check(not any(b"ppass9" in a for a in argv), f"{what}: the proxy password shows in cmdline: {argv}")
                check_stopped(check, lode, what)
                check("ppass9" not in lode.stderr(), f"{what}: the proxy password is in the log")
            finally:
                lode.stop()
        finally:
            proxy.stop()
        # A proxy password holding '/', '@' and ':', escaped as URLs write it
        # and raw: the same password reaches microsocks, and neither form the log.
        secret, escaped = "p/ss@w:rd", "p%2Fss%40w%3Ard"
        proxy = Proxy("socks", auth=("puser", secret))
        try:
            for what, given in (("a proxy password with escapes", escaped), ("a raw proxy password", secret)):
                lode = Lode(LODE, COMMON + ["-x", f"socks5://puser:{given}@127.0.0.1:{proxy.port}", "-o", pool.url,
                                            "-u", "w"])
                try:
                    check(pool.wait_accepted(pool.totals()["accepted"] + 2, 60),
                          f"{what}: no shares through the proxy ({pool.totals()})\n    {lode.tail()}")
                    check_stopped(check, lode, what)
                finally:
                    lode.stop()
                err = lode.stderr()
                check(secret not in err and escaped not in err and "p/ss" not in err and "p%2F" not in err,
                      f"{what}: the proxy password is in the log:\n    {lode.tail()}")
        finally:
            proxy.stop()
    finally:
        pool.stop()


def scenario_unreached(net):
    """--time-limit ends a run whose only pool, or proxy, was never reached:
    nothing was mined, so exit status 1 with a line that says so; a run on a
    pool that answered still ends 0."""
    pool = PoolProc(net, difficulty=0.05)
    try:
        dead = free_port()
        for what, args in (("a pool that is not there", ["-o", f"stratum+tcp://127.0.0.1:{dead}"]),
                           ("a proxy that is not there", ["-x", f"socks5://127.0.0.1:{dead}", "-o", pool.url]),
                           ("a pool that answers", ["-o", pool.url])):
            lode = Lode(LODE, COMMON + args + ["-u", "w", "--time-limit", "4"])
            try:
                lode.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
            alive = lode.alive()
            rc = lode.stop()
            check(not alive, f"{what}: still running 60 s into a 4 s --time-limit")
            want = 0 if what == "a pool that answers" else 1
            check(rc == want, f"{what}: exit status {rc}, want {want}\n    {lode.tail()}")
            said = lode.count(r"error.*|nothing was mined")
            if want:
                check(lode.count(r"nothing was mined") == 1, f"{what}: no line saying nothing was mined\n    {lode.tail()}")
            else:
                check(lode.count(r"nothing was mined") == 0, f"{what}: 'nothing was mined' after shares ({said})")
    finally:
        pool.stop()


SCENARIOS = {"json": scenario_json, "creds": scenario_creds, "socks": scenario_socks,
             "http": scenario_http, "noproxy": scenario_noproxy, "unreached": scenario_unreached}


def main():
    require_litecoind()
    for tool in ("microsocks", "tinyproxy"):
        if shutil.which(tool) is None:
            print(f"FAIL: {tool} is not on PATH (scripts/install-deps.sh installs it)", file=sys.stderr)
            sys.exit(1)
    regtest.install_signal_handlers()
    with regtest.Regtest(mature=True) as net:
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
    check.done()


main()
