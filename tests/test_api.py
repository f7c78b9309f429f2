#!/usr/bin/env python3
"""lode's HTTP API, /metrics and dashboard against independent clients: Python's
own HTTP and JSON, raw sockets, Debian's promtool and prometheus, headless
chromium, and the stratum test pool's own counts.

usage: test_api.py PATH_TO_LODE ARTIFACT_DIR [SCENARIO ...]

Scenarios (all by default):
  refuse      bad --api-bind values and a bind beyond loopback without a token
              refuse to start (exit 2, one clear line); nothing listens
  http        a CPU benchmark with the API: summary/devices/history, every
              status code (404, 405 + Allow, 401, 403, 400, 413, oversized
              headers), raw garbage, half requests, a slow client, concurrent
              clients, pause/resume; lode keeps hashing and answering; the
              token is in no log line
  prometheus  promtool check metrics on /metrics; Debian's prometheus scrapes
              lode every second and its HTTP API returns lode_hashes_total
              values that agree with lode's own
  pool        mining on the CPU against two stratum test pools (litecoind
              regtest): /api/summary's counts equal the pools' own, hashes
              grow, /api/devices agrees; headless chromium draws the dashboard
              (screenshot ARTIFACT_DIR/dashboard.png, DOM point counts);
              POST /api/pool/next moves lode to the second pool

lode tf's API and its dashboard view are tests/test_api_tf.py. Every server
binds 127.0.0.1 port 0 (ephemeral); the port is read from lode's log. Every
process started is stopped, also on failure.
"""
import concurrent.futures
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
import api_client  # noqa: E402
from api_client import (Lode, chromium, chromium_binary, get_json, log, parse_metrics,  # noqa: E402
                        promtool_check, request, run_scenarios, wait_until)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "pool"))

LODE = os.path.abspath(sys.argv[1])
ARTIFACTS = sys.argv[2]
ONLY = sys.argv[3:]
TMP = tempfile.mkdtemp(prefix="lode-api-test-")
TOKEN = "tok-" + os.urandom(12).hex()
check = Checks()
api_client.configure(LODE, TMP, check, TOKEN)


def newest_sample_ms(lode):
    """When the sampler took its newest snapshot (ms, /api/history's clock)."""
    rate = get_json(lode, "/api/history")["devices"][0]["hashrate"]
    return rate[-1][0] if rate else None


def device_snapshot(lode, timeout=30):
    """(time ms, the first device of /api/devices) from one sampler snapshot:
    the newest snapshot is the same one before and after the read."""
    deadline = time.monotonic() + timeout
    while True:
        t = newest_sample_ms(lode)
        d = get_json(lode, "/api/devices")["devices"][0]
        if newest_sample_ms(lode) == t or time.monotonic() > deadline:
            return t, d


def raw(port, data, read=True, timeout=15):
    """Sends bytes on a fresh connection; returns what comes back until close."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            if data:
                s.sendall(data)
            if not read:
                return b""
            s.shutdown(socket.SHUT_WR)
        except OSError:  # lode answered and closed before it had all (oversized requests)
            pass
        out = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except OSError:
            pass
        return out


def status_of(response):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", response)
    return int(m.group(1)) if m else None


def check_token_not_logged(lode, what):
    for path in (lode.err_path, lode.out_path):
        with open(path, errors="replace") as f:
            text = f.read()
        check(TOKEN not in text, f"{what}: the token appears in {os.path.basename(path)}")


def token_file():
    path = os.path.join(TMP, "token")
    with open(path, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(path, 0o600)
    return path


_sensors_hook = None


def sensors_hook():
    """Whether this lode reads fake sensor readings from LODE_TEST_SENSORS
    (core/dispatch's lode_device_read_sensors; listed by --help-env)."""
    global _sensors_hook
    if _sensors_hook is None:
        r = subprocess.run([LODE, "--help-env"], capture_output=True, text=True, timeout=60)
        _sensors_hook = "LODE_TEST_SENSORS" in r.stdout
        if not _sensors_hook:
            log("NOTE: this lode has no LODE_TEST_SENSORS: the sensor fields are checked absent only")
    return _sensors_hook


def sensors_env(lines):
    """An environment whose fake sensor file holds lines; (env, path)."""
    path = os.path.join(TMP, f"sensors-{os.urandom(4).hex()}")
    write_sensors(path, lines)
    env = dict(os.environ)
    env["LODE_TEST_SENSORS"] = path
    return env, path


def write_sensors(path, lines):
    with open(path + ".new", "w") as f:
        f.write("".join(line + "\n" for line in lines))
    os.replace(path + ".new", path)


def bench_args(extra=()):
    return ["-a", "sha256d", "--benchmark", "-d", "cpu", "-t", "1", "--no-color",
            "--api-bind", "127.0.0.1:0", *extra]


# ---------------------------------------------------------------------------

def scenario_refuse():
    cases = [
        (["--api-bind", "0.0.0.0:0"], "listens beyond this machine"),
        (["--api-bind", "[::]:0"], "listens beyond this machine"),
        (["--api-bind", "127.0.0.1"], "HOST:PORT"),
        (["--api-bind", "127.0.0.1:99999"], "port"),
        (["--api-bind", "127.0.0.1:0", "--api-token-file", os.path.join(TMP, "missing")], "token file"),
        (["--api-bind", "127.0.0.1:0", "--api-token", "has space"], "printable"),
        (["--api-token", "x"], "--api-bind"),
    ]
    for extra, want in cases:
        args = ["-a", "sha256d", "--benchmark", "-d", "cpu", "-t", "1", "--time-limit", "30", *extra]
        r = subprocess.run([LODE, *args], capture_output=True, text=True, timeout=60)
        check(r.returncode == 2, f"refuse {extra}: exit {r.returncode}, want 2: {r.stderr[-500:]}")
        check(want in r.stderr, f"refuse {extra}: stderr lacks {want!r}: {r.stderr[-500:]}")
        check("API listening" not in r.stderr and "benchmarking" not in r.stderr,
              f"refuse {extra}: lode started anyway: {r.stderr[-500:]}")
    # The same refusal for lode tf and for mining.
    r = subprocess.run([LODE, "tf", "100003", "1", "40", "-d", "cpu", "--api-bind", "0.0.0.0:0"],
                       capture_output=True, text=True, timeout=60, cwd=TMP)
    check(r.returncode == 2 and "beyond this machine" in r.stderr, f"tf refuse: {r.returncode} {r.stderr[-300:]}")
    r = subprocess.run([LODE, "-a", "scrypt", "-o", "stratum+tcp://127.0.0.1:1", "-u", "w", "--api-bind",
                        "0.0.0.0:0"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "beyond this machine" in r.stderr, f"mine refuse: {r.returncode} {r.stderr[-300:]}")


def http_summary(lode, sensor_file):
    """The first summary of a mining cpu:0, its sensors included; the summary
    and its device."""
    s = wait_until(lambda: (lambda j: j if j["devices"] and j["devices"][0]["state"] == "mining" else None)(
        get_json(lode, "/api/summary")), 120, "http: cpu:0 never mining")
    check(s["source"]["kind"] == "benchmark" and s["algorithm"] == "sha256d", f"http: summary {s}")
    check(s["control"] is True, "http: control should be on with a token")
    d = s["devices"][0]
    check(d["id"] == "cpu:0" and d["backend"] == "cpu" and d["name"], f"http: device {d}")
    for key in ("temperature_c", "power_w", "fan_percent", "sm_clock_mhz", "mem_clock_mhz", "throttle"):
        check(key not in d or d[key] is None or isinstance(d[key], (int, float, str)),
              f"http: sensor {key} malformed: {d.get(key)}")
    if sensor_file:
        want = {"temperature_c": 61.5, "power_w": 88.25, "fan_percent": 40, "sm_clock_mhz": 3000,
                "mem_clock_mhz": 1600, "throttle": "none"}
        check(all(d.get(k) == v for k, v in want.items()), f"http: sensors {d}, want {want}")
        m = parse_metrics(request(lode.url("/metrics"))[2].decode())
        dev = frozenset({("device", "cpu:0")})
        for name, v in (("lode_device_temperature_celsius", 61.5), ("lode_device_power_watts", 88.25),
                        ("lode_device_fan_ratio", 0.4)):
            check(m.get((name, dev)) == v, f"http: {name} = {m.get((name, dev))}, want {v}")
        check(m.get(("lode_device_clock_hertz", dev | {("clock", "sm")})) == 3e9 and
              m.get(("lode_device_clock_hertz", dev | {("clock", "mem")})) == 1.6e9, "http: clocks in /metrics")
        # New readings reach the API and the history.
        write_sensors(sensor_file, ["cpu:0 temp=70 power=90"])
        wait_until(lambda: (lambda x: x.get("temperature_c") == 70 and "fan_percent" not in x)(
            get_json(lode, "/api/devices")["devices"][0]), 60, "http: new sensor readings never shown")
        hist = get_json(lode, "/api/history")["devices"][0]
        check([t for _, t in hist["temperature_c"]][-1] == 70 and 61.5 in [t for _, t in hist["temperature_c"]],
              f"http: temperature history {hist['temperature_c'][-5:]}")
    else:
        check(not any(k in d for k in ("temperature_c", "power_w", "fan_percent")), f"http: sensors {d}")
    return s, d


def http_rates(lode, s, d):
    """Counts, rates and history grow; the dashboard and its script are served."""
    h1 = d["hashes"]
    # Counts and rates move with the sampler's snapshots: wait (a hang
    # guard) for one that shows the device has hashed since.
    s2 = wait_until(lambda: (lambda j: j if j["devices"][0]["hashes"] > h1 and j["uptime_s"] > s["uptime_s"] and
                             all(j["devices"][0][k] for k in ("hashrate_10s", "hashrate_60s", "hashrate_15m"))
                             else None)(get_json(lode, "/api/summary")), 60, f"http: hashes never grew past {h1}")
    s2 = s2 or get_json(lode, "/api/summary")
    check(s2["devices"][0]["hashes"] > h1, f"http: hashes did not grow ({h1} -> {s2['devices'][0]['hashes']})")
    check(s2["uptime_s"] > s["uptime_s"], "http: uptime did not grow")
    for k in ("hashrate_10s", "hashrate_60s", "hashrate_15m"):
        check(isinstance(s2["devices"][0][k], (int, float)) and s2["devices"][0][k] > 0,
              f"http: {k} = {s2['devices'][0][k]}")
    devs = get_json(lode, "/api/devices")
    check([x["id"] for x in devs["devices"]] == [x["id"] for x in s2["devices"]], f"http: /api/devices {devs}")
    hist = get_json(lode, "/api/history")
    check(len(hist["devices"]) == 1 and len(hist["devices"][0]["hashrate"]) >= 1, f"http: history {hist}")
    check(hist["shares"] == [], "http: a benchmark has no shares history")

    status, headers, body = request(lode.url("/"))
    check(status == 200 and b"<canvas" in body and "text/html" in headers["Content-Type"], "http: / page")
    check("Content-Security-Policy" in headers, "http: / without a CSP")
    status, _, body = request(lode.url("/chart.js"))
    check(status == 200 and b"Chart.js" in body[:400] and len(body) > 100000, "http: /chart.js")


def http_status_codes(lode, port):
    """Unknown paths, wrong methods, missing or wrong tokens, bad and oversized bodies."""
    st, _, _ = request(lode.url("/nope"))
    check(st == 404, f"http: unknown path -> {st}")
    st, hd, _ = request(lode.url("/api/summary"), method="POST", body="{}")
    check(st == 405 and "GET" in (hd.get("Allow") or ""), f"http: POST summary -> {st} Allow={hd.get('Allow')}")
    st, hd, _ = request(lode.url("/api/pause"), method="GET")
    check(st == 405 and hd.get("Allow") == "POST", f"http: GET pause -> {st} Allow={hd.get('Allow')}")
    st, _, _ = request(lode.url("/metrics"), method="DELETE")
    check(st == 405, f"http: DELETE metrics -> {st}")
    st, hd, _ = request(lode.url("/api/pause"), method="POST", body='{"device":"cpu:0"}')
    check(st == 401 and "Bearer" in (hd.get("WWW-Authenticate") or ""), f"http: no token -> {st}")
    st, _, _ = request(lode.url("/api/pause"), method="POST", body='{"device":"cpu:0"}', token=TOKEN + "x")
    check(st == 403, f"http: wrong token -> {st}")
    st, _, _ = request(lode.url("/api/pause"), method="POST", body='{"device":"cpu:0"}', token=TOKEN[:-1])
    check(st == 403, f"http: token prefix -> {st}")
    st, _, _ = request(lode.url("/api/pause"), method="POST", body='{"device":"cpu:0"}',
                       headers={"Authorization": "Basic " + TOKEN})
    check(st == 401, f"http: Basic auth -> {st}")
    for bad in ('{"device":', "not json", "[1,2]", '{"device": 7}', '{}'):
        st, _, _ = request(lode.url("/api/pause"), method="POST", body=bad, token=TOKEN)
        check(st == 400, f"http: body {bad!r} -> {st}")
    st, _, _ = request(lode.url("/api/pause"), method="POST", body='{"device":"cuda:9"}', token=TOKEN)
    check(st == 404, f"http: unknown device -> {st}")
    st, _, _ = request(lode.url("/api/pool/next"), method="POST", body="{}", token=TOKEN)
    check(st == 409, f"http: next pool in a benchmark -> {st}")
    st, _, _ = request(lode.url("/api/pause"), method="POST", body="x" * 5000, token=TOKEN)
    check(st == 413, f"http: 5000-byte body -> {st}")
    # A big body without Content-Length (chunked).
    chunked = (b"POST /api/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode() +
               b"\r\nTransfer-Encoding: chunked\r\n\r\n" + b"".join(b"400\r\n" + b"a" * 1024 + b"\r\n"
                                                              for _ in range(8)) + b"0\r\n\r\n")
    check(status_of(raw(port, chunked)) == 413, "http: chunked oversized body not 413")
    big = b"GET /api/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n"
    st = status_of(raw(port, big))
    check(st in (413, 414, 431), f"http: 100 kB header -> {st}")
    long_url = b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    st = status_of(raw(port, long_url))
    check(st in (413, 414, 431), f"http: 100 kB URL -> {st}")


def http_bad_clients(lode, port):
    """Garbage and half requests, a flood of bad connections, a slow client
    holding a connection, and concurrent clients."""
    big = b"GET /api/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n"
    for junk in (b"\x00\xff" * 500, b"GARBAGE\r\n\r\n", b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                 os.urandom(4096)):
        raw(port, junk)
    raw(port, b"GET /api/summary HTTP/1.1\r\nHost:", read=False)  # closed mid-header
    raw(port, b"POST /api/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"dev", read=False)
    # A flood of bad connections: each would be a libmicrohttpd message;
    # the log keeps a bounded number of them.
    for _ in range(30):
        raw(port, big)  # 431, and a message from libmicrohttpd each time
    slow = socket.create_connection(("127.0.0.1", port), timeout=30)
    slow.sendall(b"GET /api/summary HTTP/1.1\r\nHo")
    try:
        st, _, _ = request(lode.url("/api/summary"))
        check(st == 200, f"http: a slow client blocks others ({st})")
        # Concurrent clients.
        paths = ["/api/summary", "/api/devices", "/api/history", "/metrics", "/"] * 8
        with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
            results = list(pool.map(lambda p: request(lode.url(p))[0], paths))
        check(all(r == 200 for r in results), f"http: concurrent requests: {results}")
    finally:
        slow.close()


def http_pause_resume(lode):
    """A device paused through the API stops hashing, and hashes again once resumed."""
    st, _, body = request(lode.url("/api/pause"), method="POST", body='{"device":"cpu:0"}', token=TOKEN)
    check(st == 200, f"http: pause -> {st} {body!r}")
    wait_until(lambda: get_json(lode, "/api/devices")["devices"][0]["state"] == "paused", 60,
               "http: state never 'paused'")
    # The counts are the sampler's snapshots (one a second). The scans in
    # flight at the pause are counted when their threads next run (late on
    # a loaded machine): first wait for a snapshot with none in flight,
    # then the count must stay put, with none claimed, over 2.5 s more.
    # The waits are hang guards: a device that still takes work fails below.
    t_a, d_a = wait_until(lambda: (lambda x: x if x[1]["scans_in_flight"] == 0 else None)(device_snapshot(lode)),
                          60, "http: a paused device's scans never came back") or device_snapshot(lode)
    t_b, d_b = wait_until(lambda: (lambda x: x if x[0] - t_a >= 2500 else None)(device_snapshot(lode)), 30,
                          "http: no sampler snapshot 2.5 s after the settled one") or device_snapshot(lode)
    check(d_b["scans_in_flight"] == 0, f"http: a paused device claimed {d_b['scans_in_flight']} scan(s)")
    a, b = d_a["hashes"], d_b["hashes"]
    check(a == b, f"http: a paused device still hashes ({a} -> {b} over {t_b - t_a} ms of snapshots)")
    m = request(lode.url("/metrics"))[2].decode()
    check('lode_device_state{device="cpu:0",state="paused"} 1' in m, "http: metrics state not paused")
    st, _, _ = request(lode.url("/api/resume"), method="POST", body='{"device":"cpu:0"}', token=TOKEN)
    check(st == 200, f"http: resume -> {st}")
    wait_until(lambda: get_json(lode, "/api/devices")["devices"][0]["hashes"] > b, 30,
               "http: hashes did not grow after resume")
    check(get_json(lode, "/api/devices")["devices"][0]["state"] == "mining", "http: not mining after resume")


def http_exit(lode):
    """lode stops at SIGINT with status 130, its log as the scenario wants it."""
    check(lode.alive(), "http: lode died")
    st, _, _ = request(lode.url("/api/summary"))
    check(st == 200, "http: lode stopped answering")
    rc = lode.stop()
    check(rc == 130, f"http: exit status {rc}, want 130")
    err = lode.stderr()
    check("pausing cpu:0" in err and "resuming cpu:0" in err, "http: control actions not logged")
    mhd = err.count("API: libmicrohttpd:")
    check(mhd <= 22 and "further messages are not logged" in err,
          f"http: {mhd} libmicrohttpd lines after a flood of bad connections (want at most 22)")
    for s_ in ("runtime error", "AddressSanitizer", "ThreadSanitizer"):
        check(s_ not in err, f"http: sanitizer report {s_}")
    check_token_not_logged(lode, "http")


def scenario_http():
    env, sensor_file = (sensors_env(["cpu:0 temp=61.5 power=88.25 fan=40 sm=3000 mem=1600 throttle=none"])
                        if sensors_hook() else (None, None))
    lode = Lode(bench_args(["--api-token-file", token_file()]), env=env)
    try:
        lode.wait_port()
        port = lode.port
        s, d = http_summary(lode, sensor_file)
        http_rates(lode, s, d)
        http_status_codes(lode, port)
        http_bad_clients(lode, port)
        http_pause_resume(lode)
        http_exit(lode)
    finally:
        lode.stop()


def scenario_nonloopback_reads():
    """Reads need the token when listening beyond loopback (bound to
    0.0.0.0, but only ever spoken to on 127.0.0.1)."""
    env = sensors_env(["cuda:7 temp=50"])[0] if sensors_hook() else dict(os.environ)
    env["LODE_API_TOKEN"] = TOKEN
    args = ["-a", "sha256d", "--benchmark", "-d", "cpu", "-t", "1", "--no-color", "--api-bind", "0.0.0.0:0"]
    lode = Lode(args, env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not re.search(r"API listening on http://0\.0\.0\.0:(\d+)",
                                                            lode.stderr()):
            time.sleep(0.1)
        m = re.search(r"API listening on http://0\.0\.0\.0:(\d+)", lode.stderr())
        if not check(m, f"wide: no listening line: {lode.stderr()[-500:]}"):
            return
        lode.port = int(m.group(1))
        st, _, _ = request(lode.url("/api/summary"))
        check(st == 401, f"wide: read without token -> {st}")
        st, _, _ = request(lode.url("/metrics"), token="wrong")
        check(st == 403, f"wide: metrics wrong token -> {st}")
        st, _, body = request(lode.url("/api/summary"), token=TOKEN)
        check(st == 200, f"wide: read with token -> {st}")
        if st == 200:  # a device without sensors: absent, never 0 or null-as-0
            d = json.loads(body)["devices"][0]
            check(not any(k in d for k in ("temperature_c", "power_w", "fan_percent", "sm_clock_mhz")),
                  f"wide: a device without sensors shows {d}")
            m = request(lode.url("/metrics"), token=TOKEN)[2].decode()
            check("lode_device_temperature_celsius" not in m and "lode_device_power_watts" not in m,
                  "wide: /metrics has sensor samples for a device without sensors")
        st, _, _ = request(lode.url("/"))
        check(st == 200, f"wide: the page (no data in it) -> {st}")
        check(lode.stop() == 130, "wide: exit status")
        check_token_not_logged(lode, "wide")
    finally:
        lode.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prom_metrics(lode):
    """/metrics through promtool and against lode's own API."""
    wait_until(lambda: get_json(lode, "/api/devices")["devices"][0]["hashes"] > 0, 120, "prom: no hashes")
    text = request(lode.url("/metrics"))[2].decode()
    promtool_check(text, "prom")
    parse_metrics(text)
    check("# TYPE lode_hashes_total counter" in text, "prom: lode_hashes_total is not a counter")
    # What the hashes should have given beside what they gave (sha256d at the
    # benchmark's difficulty 1 or more: about hashes x 2^-32 at most; the two
    # counters are read a scan apart at worst, hence the factor 2).
    dev = get_json(lode, "/api/devices")["devices"][0]
    check(0 < dev["hits_expected"] <= 2 * dev["hashes"] / 2 ** 32 and dev["hits_dropped"] == 0,
          f"prom: hits_expected {dev.get('hits_expected')} for {dev['hashes']} hashes, dropped {dev.get('hits_dropped')}")
    check("# TYPE lode_hits_expected_total counter" in text and 'lode_hits_dropped_total{device="cpu:0"} 0' in text,
          "prom: lode_hits_expected_total and lode_hits_dropped_total missing")
    check("# TYPE lode_device_scans_in_flight gauge" in text
          and re.search(r'^lode_device_scans_in_flight\{device="cpu:0"\} [0-9]+$', text, re.M) is not None,
          "prom: lode_device_scans_in_flight missing")
    # A sensor the device lacks is absent from both, never 0.
    for key, metric in (("temperature_c", "lode_device_temperature_celsius"), ("power_w", "lode_device_power_watts"),
                        ("fan_percent", "lode_device_fan_ratio")):
        check((key in dev) == (metric + '{device="cpu:0"}' in text),
              f"prom: {key} in the API: {key in dev}, {metric} in /metrics: {metric in text}")


def prom_start(lode):
    """Prometheus scraping lode every second: its port and process."""
    # Prometheus itself, scraping every second.
    port = free_port()
    d = os.path.join(TMP, "prom")
    os.makedirs(d, exist_ok=True)
    cfg = os.path.join(d, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write(f"global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                f"scrape_configs:\n  - job_name: lode\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{lode.port}']\n")
    r = subprocess.run(["promtool", "check", "config", cfg], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"prom: config: {r.stdout}{r.stderr}")
    prom_log = open(os.path.join(TMP, "prometheus.log"), "w")
    prom = subprocess.Popen(["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={d}/data",
                             f"--web.listen-address=127.0.0.1:{port}", "--web.enable-lifecycle"],
                            stdout=prom_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return port, prom


def prom_queries(lode, port):
    """What Prometheus scraped: lode's counter, up, a rate over several scrapes."""
    def query(q):
        try:
            st, _, body = request(f"http://127.0.0.1:{port}/api/v1/query?query={q}", timeout=10)
        except OSError:
            return None
        if st != 200:
            return None
        j = json.loads(body)
        return j["data"]["result"] if j.get("status") == "success" else None

    before = get_json(lode, "/api/devices")["devices"][0]["hashes"]
    res = wait_until(lambda: (lambda r: r if r and float(r[0]["value"][1]) >= before else None)(
        query("lode_hashes_total")), 180, "prom: lode_hashes_total never arrived in prometheus")
    if res:
        after = get_json(lode, "/api/devices")["devices"][0]["hashes"]
        got = float(res[0]["value"][1])
        check(res[0]["metric"].get("device") == "cpu:0" and res[0]["metric"].get("job") == "lode",
              f"prom: labels {res[0]['metric']}")
        # The value Prometheus scraped lies between lode's counter before
        # and after it (the counter only grows).
        check(before <= got <= after, f"prom: scraped {got}, lode said {before} before and {after} after")
    up = wait_until(lambda: query("up"), 30, "prom: no 'up' series")
    check(up and up[0]["value"][1] == "1", f"prom: up = {up}")
    # Several scrapes: a rate over them is positive (counter semantics).
    rate = wait_until(lambda: (lambda r: r if r and float(r[0]["value"][1]) > 0 else None)(
        query("rate(lode_hashes_total[10s])")), 60, "prom: rate(lode_hashes_total) never positive")
    check(bool(rate), "prom: rate")
    info = query("lode_build_info")
    check(info and info[0]["metric"].get("algorithm") == "sha256d", f"prom: build info {info}")


def scenario_prometheus():
    if shutil.which("prometheus") is None:
        check(False, "prometheus is not installed (Debian package prometheus)")
        return
    lode = Lode(bench_args())
    prom = None
    try:
        lode.wait_port()
        prom_metrics(lode)
        port, prom = prom_start(lode)
        prom_queries(lode, port)
        check(lode.alive(), "prom: lode died")
    finally:
        if prom is not None:
            prom.terminate()
            try:
                prom.wait(timeout=30)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
        lode.stop()


# ---------------------------------------------------------------------------

def check_dashboard(lode, what):
    if chromium_binary() is None:
        check(False, "chromium is not installed (Debian package chromium)")
        return
    os.makedirs(ARTIFACTS, exist_ok=True)
    r = chromium(lode.url("/"), "dom")
    m = re.search(r'<div id="chart-status"([^>]*)>', r.stdout)
    if not check(m, f"{what}: chromium's DOM has no chart-status: {r.stdout[-800:]} {r.stderr[-800:]}"):
        return
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1)))
    log(f"{what}: dashboard DOM: {attrs}")
    check(int(attrs.get("updates", "0")) >= 1, f"{what}: the page never updated: {attrs}")
    check(int(attrs.get("rate-points", "0")) >= 3, f"{what}: the hashrate chart drew too little: {attrs}")
    check(int(attrs.get("shares-points", "0")) >= 3, f"{what}: the shares chart drew too little: {attrs}")
    check("error" not in attrs, f"{what}: the page saw an error: {attrs}")
    if sensors_hook():
        check(int(attrs.get("temp-points", "0")) >= 3 and int(attrs.get("power-points", "0")) >= 3,
              f"{what}: the temperature and power charts drew too little: {attrs}")
    check("cpu:0" in r.stdout and "mining" in r.stdout, f"{what}: the device table lacks cpu:0 mining")
    shot = os.path.join(ARTIFACTS, "dashboard.png")
    if os.path.exists(shot):
        os.remove(shot)
    r = chromium(lode.url("/"), "shot", shot)
    ok = os.path.exists(shot) and os.path.getsize(shot) > 10000
    check(ok, f"{what}: no screenshot: {r.stderr[-800:]}")
    if ok:
        with open(shot, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{what}: the screenshot is no PNG")
        log(f"{what}: dashboard screenshot kept in {shot}")


def pool_counts(lode, pools):
    """Both pools held: the API's share counts match each pool's own, and
    each pool saw a clean miner; the summary that matched."""
    import harness  # noqa: E402 (needs litecoind)
    # Counts: hold both pools (their counts are final), then wait for
    # lode to read the last answers and the sampler (a snapshot a
    # second) to take them; the wait is a hang guard, and a share lost
    # or counted twice still never matches.
    for p in pools:
        p.hold()
    totals = [p.totals() for p in pools]

    def rejected(t):  # code 21 is the pool's stale answer, counted as stale by lode
        return sum(v for k, v in t["rejected_by_code"].items() if k != "21")

    def counted():
        j = get_json(lode, "/api/summary")
        return j if all(j["pools"][i]["accepted"] == t["accepted"] and j["pools"][i]["rejected"] == rejected(t)
                        and j["pools"][i]["stale"] == t["rejected_by_code"].get("21", 0)
                        for i, t in enumerate(totals)) else None
    s = (wait_until(counted, 60, "pool: the API's share counts never matched the pools' own")
         or get_json(lode, "/api/summary"))
    for i, p in enumerate(pools):
        t = totals[i]
        codes = t["rejected_by_code"]
        other = rejected(t)
        api = s["pools"][i]
        check(api["accepted"] == t["accepted"], f"pool {i}: API accepted {api['accepted']}, "
              f"the pool accepted {t['accepted']}")
        check(api["rejected"] == other, f"pool {i}: API rejected {api['rejected']}, pool {other}")
        check(api["stale"] == codes.get("21", 0), f"pool {i}: API stale {api['stale']} != pool's code 21")
        # Two pools on one node: a block can lose the race to the
        # other pool's at the same height (valid, "inconclusive").
        harness.check_pool_clean(check, p, f"pool {i}", allow_orphans=True)
    return s


def scenario_pool():
    from harness import PoolProc, regtest  # noqa: E402 (needs litecoind)
    if shutil.which(regtest.LITECOIND) is None:
        check(False, f"{regtest.LITECOIND} is not on PATH (Debian package litecoind)")
        return
    regtest.install_signal_handlers()
    with regtest.Regtest(mature=True) as net:
        net.send_txs(2)
        pools = [PoolProc(net, difficulty=0.05, extra=["--min-block-interval", "0.3"]) for _ in range(2)]
        args = ["-a", "scrypt", "-d", "cpu", "-t", "2", "--no-color", "--log-interval", "5", "--retry-pause", "1",
                "--api-bind", "127.0.0.1:0", "--api-token", TOKEN]
        for p in pools:
            args += ["-o", p.url, "-u", "worker", "-p", "x"]
        env, sensor_file = sensors_env(["cpu:0 temp=55 power=60 fan=35 sm=3100"]) if sensors_hook() else (None, None)
        lode = Lode(args, env=env)
        try:
            lode.wait_port()
            with open(f"/proc/{lode.proc.pid}/cmdline", "rb") as f:
                check(TOKEN.encode() not in f.read(), "pool: --api-token is readable in /proc/PID/cmdline (ps)")
            t0 = time.monotonic()
            while sensor_file and pools[0].totals()["accepted"] < 8 and time.monotonic() - t0 < 90:
                k = time.monotonic() - t0  # readings that move, for the charts
                write_sensors(sensor_file, [f"cpu:0 temp={55 + 10 * min(k, 20) / 20:.1f} "
                                            f"power={60 + 25 * min(k, 20) / 20:.1f} fan=35 sm=3100"])
                time.sleep(0.5)
            check(pools[0].wait_accepted(8, 90), f"pool: fewer than 8 shares accepted: {pools[0].totals()}")
            # The sampler takes a snapshot a second: wait for one after the shares.
            s = wait_until(lambda: (lambda j: j if j["pools"][0]["accepted"] > 0 else None)(
                get_json(lode, "/api/summary")), 60, "pool: no accepted share in the summary")
            s = s or get_json(lode, "/api/summary")
            check(s["source"]["kind"] == "stratum" and s["source"]["url"] == pools[0].url, f"pool: source {s['source']}")
            check(len(s["pools"]) == 2 and s["pools"][0]["active"] and s["pools"][0]["state"] == "mining"
                  and s["pools"][1]["state"] == "standby", f"pool: pools {s['pools']}")
            check(s["pools"][0]["difficulty"] is not None, "pool: no difficulty")
            h1 = s["devices"][0]["hashes"]
            time.sleep(3)  # history for the charts
            check_dashboard(lode, "pool")
            s = wait_until(lambda: (lambda j: j if j["devices"][0]["hashes"] > h1 else None)(
                get_json(lode, "/api/summary")), 60, f"pool: hashes never grew past {h1}")
            metrics = request(lode.url("/metrics"))[2].decode()
            promtool_check(metrics, "pool")
            check(f'lode_shares_total{{pool="{pools[0].url}",result="accepted"}}' in metrics,
                  "pool: no lode_shares_total for the pool")

            # Next pool: the second pool gets the work.
            st, _, body = request(lode.url("/api/pool/next"), method="POST", body="{}", token=TOKEN)
            check(st == 200, f"pool: next pool -> {st} {body!r}")
            check(pools[1].wait_accepted(3, 90), f"pool: no shares on the second pool after the switch: "
                  f"{pools[1].totals()}")
            s = wait_until(lambda: (lambda j: j if j["pools"][1]["active"] else None)(get_json(lode, "/api/summary")),
                           60, "pool: the second pool is not active in the summary")
            if s:
                check(not s["pools"][0]["active"], "pool: both pools active")

            s = pool_counts(lode, pools)
            devs = get_json(lode, "/api/devices")
            check([d["id"] for d in devs["devices"]] == [d["id"] for d in s["devices"]] and
                  devs["devices"][0]["hashes"] >= s["devices"][0]["hashes"], f"pool: /api/devices {devs}")
            check(lode.alive(), "pool: lode died")
            rc = lode.stop()
            check(rc == 130, f"pool: exit {rc}")
            # lode's own summary lines say the same as the API.
            sums = re.findall(r"summary: pool (\d+) \S+: accepted (\d+), rejected (\d+)", lode.stderr())
            for idx, acc, rej in sums:
                check(int(acc) == s["pools"][int(idx)]["accepted"], f"pool {idx}: summary {acc} vs API")
            check_token_not_logged(lode, "pool")
        finally:
            lode.stop()
            for p in pools:
                p.stop()


SCENARIOS = {"refuse": scenario_refuse, "http": scenario_http, "wide": scenario_nonloopback_reads,
             "prometheus": scenario_prometheus, "pool": scenario_pool}


run_scenarios(SCENARIOS, ONLY)
