#!/usr/bin/env python3
"""Who may read or steer lode's HTTP API (issue #39), against independent
clients: raw sockets, Python's HTTP and JSON, and Debian's promtool.

usage: test_api_guard.py PATH_TO_LODE [SCENARIO ...]

Scenarios (all by default):
  token   a 300-character token file is taken whole: the whole token controls,
          its first 255 characters do not; a token longer than lode takes
          (file, option, environment) is refused at start-up (exit 2)

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

LODE = os.path.abspath(sys.argv[1])
ONLY = sys.argv[2:]
TMP = tempfile.mkdtemp(prefix="lode-api-guard-")
LISTEN = re.compile(r"API listening on http://127\.0\.0\.1:(\d+)")
check = Checks()


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Lode:
    """A lode process with the API on 127.0.0.1:0; its stderr in a file."""
    n = 0

    def __init__(self, args, env=None):
        Lode.n += 1
        self.err_path = os.path.join(TMP, f"lode-{Lode.n}.stderr")
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen([LODE, *args], stdout=subprocess.DEVNULL, stderr=self.err,
                                     stdin=subprocess.DEVNULL, env=env)
        self.port = None

    def stderr(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def wait_port(self, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = LISTEN.search(self.stderr())
            if m:
                self.port = int(m.group(1))
                return self.port
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"lode did not log 'API listening on': {self.stderr()[-2000:]}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        err = self.stderr()
        for s_ in ("runtime error", "AddressSanitizer", "LeakSanitizer", "ThreadSanitizer"):
            check(s_ not in err, f"sanitizer report ({s_}) in {self.err_path}:\n{err[-3000:]}")


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


SCENARIOS = {"token": scenario_token}


def main():
    for name, fn in SCENARIOS.items():
        if ONLY and name not in ONLY:
            continue
        log(f"scenario {name}")
        try:
            fn()
        except Exception as e:  # a failed scenario must not hide the others
            import traceback
            traceback.print_exc()
            check(False, f"scenario {name} raised {e!r}")
    status = check.report()
    if status or os.environ.get("LODE_TEST_KEEP"):
        print(f"logs kept in {TMP}")
    else:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(status)


main()
