#!/usr/bin/env python3
"""Who may read or steer lode's HTTP API (issue #39), against independent
clients: raw sockets, Python's HTTP and JSON, and Debian's promtool.

usage: test_api_guard.py PATH_TO_LODE [SCENARIO ...]

Scenarios (all by default):
  token   a 300-character token file is taken whole: the whole token controls,
          its first 255 characters do not; a token longer than lode takes
          (file, option, environment) is refused at start-up (exit 2)
  host    only Host names of the bound address (127.0.0.1, localhost, [::1],
          with or without the port) and --api-allow-host names are answered;
          evil.example and 127.0.0.1.nip.io (DNS rebinding) get 403 and no
          data; a request without Host (HTTP/1.0) is answered
  drip    many connections from one client address sending a byte now and
          then: a request from another address is still answered
  labels  a pool URL whose host is not UTF-8 reaches /metrics as a valid
          label (promtool check metrics), and /api/summary agrees

Every server binds 127.0.0.1 port 0; every process and thread started is
stopped, also on failure.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
import api_client  # noqa: E402
from api_client import LISTEN, Lode, log, run_scenarios  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
ONLY = sys.argv[2:]
TMP = tempfile.mkdtemp(prefix="lode-api-guard-")
check = Checks()
api_client.configure(LODE, TMP, check)


def bench(extra=(), env=None):
    return Lode(["-a", "sha256d", "--benchmark", "-d", "cpu", "-t", "1", "--no-color",
                 "--api-bind", "127.0.0.1:0", *extra], env=env)


def exchange(port, request, source="127.0.0.1", timeout=15):
    """Sends one raw request (bytes) from source; (status, body bytes) of the answer."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(request)
        out = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except OSError:
            pass
    m = re.match(rb"HTTP/1\.[01] (\d{3})", out)
    head, _, body = out.partition(b"\r\n\r\n")
    return (int(m.group(1)) if m else None), body


def get(port, path, host=None, token=None, method="GET", body=b"", source="127.0.0.1", version="1.1"):
    lines = [f"{method} {path} HTTP/{version}"]
    if host is not None:
        lines.append(f"Host: {host}")
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    if method == "POST":
        lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(body)}")
    lines.append("Connection: close")
    return exchange(port, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body, source=source)


# ---------------------------------------------------------------------------

def scenario_token():
    token = "".join("abcdefghijklmnopqrstuvwxyz0123456789-_"[b % 38] for b in os.urandom(300))
    path = os.path.join(TMP, "token-300")
    with open(path, "w") as f:
        f.write(token + "\n")
    lode = bench(["--api-token-file", path])
    try:
        port = lode.wait_port()
        host = f"127.0.0.1:{port}"
        # /api/pool/next on a benchmark: 409 (no pools) once the token is taken, 403 when not.
        whole, body = get(port, "/api/pool/next", host, token, "POST", b"{}")
        check(whole == 409, f"token: the whole 300-character token gets {whole}, want 409 (taken): {body[:200]!r}")
        cut, body = get(port, "/api/pool/next", host, token[:255], "POST", b"{}")
        check(cut == 403, f"token: its first 255 characters get {cut}, want 403 (wrong token): {body[:200]!r}")
        one_off, _ = get(port, "/api/pool/next", host, token[:-1] + ("a" if token[-1] != "a" else "b"), "POST", b"{}")
        check(one_off == 403, f"token: a token differing in its last character gets {one_off}, want 403")
        check(token not in lode.stderr(), "token: the token appears in the log")
    finally:
        lode.stop()
    # Longer than lode takes: refused before anything starts, however it is given.
    long_token = "x" * 5000
    long_path = os.path.join(TMP, "token-long")
    with open(long_path, "w") as f:
        f.write(long_token + "\n")
    env = dict(os.environ, LODE_API_TOKEN=long_token)
    for what, extra, e in (("file", ["--api-token-file", long_path], None),
                           ("option", ["--api-token", long_token], None),
                           ("environment", [], env)):
        r = subprocess.run([LODE, "-a", "sha256d", "--benchmark", "-d", "cpu", "-t", "1", "--time-limit", "30",
                            "--api-bind", "127.0.0.1:0", *extra], capture_output=True, text=True, timeout=60, env=e)
        check(r.returncode == 2, f"token: a 5000-character token ({what}): exit {r.returncode}, want 2: {r.stderr[-300:]}")
        check("longer than" in r.stderr and "API listening" not in r.stderr,
              f"token: a 5000-character token ({what}): no clear refusal: {r.stderr[-300:]}")
        check(long_token not in r.stderr, f"token: the long token ({what}) appears on stderr")


def scenario_host():
    lode = bench(["--api-allow-host", "miner.lan", "--api-allow-host", "rig.example.org,Proxy.Local"])
    try:
        port = lode.wait_port()
        allowed = ["127.0.0.1", f"127.0.0.1:{port}", "localhost", f"localhost:{port}", "LocalHost",
                   "[::1]", f"[::1]:{port}", "miner.lan", "miner.lan:8443", "rig.example.org", "proxy.local:80"]
        for host in allowed:
            status, body = get(port, "/api/summary", host)
            check(status == 200 and b'"version"' in body, f"host: Host {host!r} gets {status}, want 200")
        refused = ["evil.example", f"evil.example:{port}", "127.0.0.1.nip.io", f"127.0.0.1.nip.io:{port}",
                   "localhost.evil.example", "miner.lan.evil.example", "[::1].evil", "", "127.0.0.2", "0x7f000001"]
        for host in refused:
            for path in ("/api/summary", "/metrics", "/api/history", "/"):
                status, body = get(port, path, host)
                check(status == 403, f"host: Host {host!r} {path} gets {status}, want 403")
                check(b"hashes" not in body and b"lode_" not in body and b"<html" not in body.lower(),
                      f"host: Host {host!r} {path}: data in the refusal: {body[:200]!r}")
        status, _ = get(port, "/api/pool/next", "evil.example", "t", "POST", b"{}")
        check(status == 403, f"host: POST with Host evil.example gets {status}, want 403")
        # No Host at all (HTTP/1.0): a browser always sends one, so this is no rebinding.
        for version in ("1.0", "1.1"):
            status, body = get(port, "/api/summary", None, version=version)
            check(status == 200 and b'"version"' in body, f"host: HTTP/{version} without Host gets {status}, want 200")
    finally:
        lode.stop()
    r = subprocess.run([LODE, "-a", "sha256d", "--benchmark", "-d", "cpu", "--api-bind", "127.0.0.1:0",
                        "--api-allow-host", "bad name"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "--api-allow-host" in r.stderr,
          f"host: --api-allow-host 'bad name': exit {r.returncode}: {r.stderr[-300:]}")


def scenario_drip():
    """80 connections from 127.0.0.2 each send a byte every 2 s and never
    finish their request; a request from 127.0.0.1 must still be answered."""
    drippers = 80
    lode = bench()
    stop = threading.Event()
    socks = []
    try:
        port = lode.wait_port()
        for _ in range(drippers):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(5)
            s.bind(("127.0.0.2", 0))
            try:
                s.connect(("127.0.0.1", port))
                s.sendall(b"G")
            except OSError:
                pass  # refused at once: also fine
            socks.append(s)

        def drip():
            request = b"ET /api/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
            i = 0
            while not stop.wait(2):
                for s in socks:
                    try:
                        s.sendall(request[i % len(request):i % len(request) + 1] if i < len(request) else b"a")
                    except OSError:
                        pass
                i += 1
        t = threading.Thread(target=drip, daemon=True)
        t.start()
        time.sleep(3)  # every dripper has sent a second byte
        answered = 0
        for _ in range(3):
            try:
                status, body = get(port, "/api/summary", f"127.0.0.1:{port}")
            except OSError as e:
                status, body = None, repr(e).encode()
            answered += status == 200
            check(status == 200, f"drip: with {drippers} slow connections open, /api/summary gets {status}: {body[:200]!r}")
        log(f"drip: {answered} of 3 requests answered beside {drippers} slow connections")
        check(lode.proc.poll() is None, "drip: lode stopped")
    finally:
        stop.set()
        for s in socks:
            s.close()
        lode.stop()


def scenario_labels():
    if shutil.which("promtool") is None:
        check(False, "labels: promtool is not installed (Debian package prometheus)")
        return
    url = b"stratum+tcp://x\xffy\xc3(z:3333"  # invalid UTF-8 twice; the pool is never reached
    err_path = os.path.join(TMP, "labels.stderr")
    with open(err_path, "wb") as err:
        proc = subprocess.Popen([LODE.encode(), b"-a", b"sha256d", b"-d", b"cpu", b"-t", b"1", b"--no-color",
                                 b"-o", url, b"-u", b"w", b"--api-bind", b"127.0.0.1:0"],
                                stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        port = None
        while port is None and time.monotonic() < deadline and proc.poll() is None:
            with open(err_path, errors="replace") as f:
                m = LISTEN.search(f.read())
            port = int(m.group(1)) if m else None
            time.sleep(0.1)
        if port is None:
            with open(err_path, errors="replace") as f:
                text = f.read()
            check(proc.poll() == 2 and "error" in text,
                  f"labels: lode neither served the API nor refused the URL clearly: {text[-500:]}")
            return
        status, body = get(port, "/metrics", f"127.0.0.1:{port}")
        check(status == 200, f"labels: /metrics gets {status}")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as e:
            check(False, f"labels: /metrics is not UTF-8: {e}")
            text = body.decode("utf-8", "replace")
        r = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, timeout=60)
        out = (r.stdout + r.stderr).decode(errors="replace")
        check(r.returncode == 0 and "error" not in out.lower(), f"labels: promtool check metrics: {out[-500:]}")
        m = re.search(r'lode_pool_active\{pool="([^"]*)"\}', text)
        status, body = get(port, "/api/summary", f"127.0.0.1:{port}")
        pools = json.loads(body)["pools"] if status == 200 else []
        check(m is not None and len(pools) == 1 and m.group(1) == pools[0]["url"],
              f"labels: the metric's pool label {m and m.group(1)!r} differs from /api/summary's "
              f"{pools[0]['url'] if pools else None!r}")
        check(m is not None and m.group(1).startswith("stratum+tcp://x") and m.group(1).endswith("z:3333"),
              f"labels: the pool label lost the URL's valid text: {m and m.group(1)!r}")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


SCENARIOS = {"token": scenario_token, "labels": scenario_labels, "drip": scenario_drip, "host": scenario_host}


run_scenarios(SCENARIOS, ONLY)
