"""What the API tests share (test_api.py, test_api_tf.py, test_api_guard.py): a
lode process with the API on, HTTP requests through Python's own client,
the metrics parser, promtool and headless chromium. configure() first."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import types
import urllib.error
import urllib.request

LISTEN = re.compile(r"API listening on http://127\.0\.0\.1:(\d+)")
# The lode binary, the directory for logs and profiles, the token (may be
# "") and the Checks of the test.
ENV = types.SimpleNamespace(lode=None, tmp=None, token="", check=None)


def configure(lode, tmp, check, token=""):
    ENV.lode, ENV.tmp, ENV.check, ENV.token = lode, tmp, check, token


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Lode:
    """A lode process with the API on; its stderr in a file."""
    n = 0

    def __init__(self, args, env=None, cwd=None):
        Lode.n += 1
        self.err_path = os.path.join(ENV.tmp, f"lode-{Lode.n}.stderr")
        self.out_path = os.path.join(ENV.tmp, f"lode-{Lode.n}.stdout")
        self.err = open(self.err_path, "w")
        self.out = open(self.out_path, "w")
        shown = " ".join(args)
        log(f"start lode {shown.replace(ENV.token, 'TOKEN') if ENV.token else shown}")
        self.proc = subprocess.Popen([ENV.lode, *args], stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL,
                                     env=env, cwd=cwd)
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

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def alive(self):
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGINT):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.err.closed:
            self.err.close()
            self.out.close()
            err = self.stderr()
            for s_ in ("runtime error", "AddressSanitizer", "LeakSanitizer", "ThreadSanitizer"):
                ENV.check(s_ not in err, f"sanitizer report ({s_}) in {self.err_path}:\n{err[-3000:]}")
        return self.proc.returncode


def run_scenarios(scenarios, only=()):
    """Runs each scenario (those named in only, if any), one that raises
    failing without hiding the others; removes the logs unless something
    failed or LODE_TEST_KEEP is set. Exits with the Checks' status."""
    for name, fn in scenarios.items():
        if only and name not in only:
            continue
        log(f"scenario {name}")
        try:
            fn()
        except Exception as e:
            import traceback
            traceback.print_exc()
            ENV.check(False, f"scenario {name} raised {e!r}")
    status = ENV.check.report()
    if status or os.environ.get("LODE_TEST_KEEP"):
        print(f"logs kept in {ENV.tmp}")
    else:
        shutil.rmtree(ENV.tmp, ignore_errors=True)
    raise SystemExit(status)


def request(url, method="GET", body=None, token=None, headers=None, timeout=30):
    """(status, headers, body bytes) through urllib; HTTP errors are answers too."""
    h = dict(headers or {})
    if token is not None:
        h["Authorization"] = f"Bearer {token}"
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def get_json(lode, path, token=None):
    status, _, body = request(lode.url(path), token=token)
    if status != 200:
        raise RuntimeError(f"GET {path}: HTTP {status}: {body[:200]!r}")
    return json.loads(body)


def wait_until(fn, timeout, what):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.25)
    ENV.check(False, f"{what} (within {timeout} s)")
    return last


def parse_metrics(text):
    """{(name, frozenset(labels)): value} of a text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        if not m:
            raise ValueError(f"bad metrics line {line!r}")
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def promtool_check(text, what):
    if shutil.which("promtool") is None:
        ENV.check(False, "promtool is not installed (Debian package prometheus)")
        return
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    ENV.check(r.returncode == 0, f"{what}: promtool check metrics: {r.stdout}{r.stderr}")


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def chromium(url, mode, out=None):
    """Runs headless chromium on url: mode "dom" returns the DOM after the
    page ran; "shot" writes a screenshot to out. Only loopback is reachable
    (every other host name resolves to nothing)."""
    profile = tempfile.mkdtemp(prefix="chromium-", dir=ENV.tmp)
    args = [chromium_binary(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={profile}", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--window-size=1400,1250", "--virtual-time-budget=6000"]
    args += ["--dump-dom"] if mode == "dom" else [f"--screenshot={out}"]
    r = subprocess.run(args + [url], capture_output=True, text=True, timeout=180)
    return r
