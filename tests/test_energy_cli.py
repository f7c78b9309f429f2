#!/usr/bin/env python3
"""Energy per unit of work where users look, end to end: lode mines on the
CPU with its sensors from a fake source (LODE_TEST_SENSORS) that a thread
here keeps current, as a board's driver would: a constant power and, in
the counter scenario, an energy counter that grows at that power.

What is held against what this test knows independently (the watts it
set, the hashes and seconds it measures itself from the API):
  counter   the hashrate lines and the summary show J/MH; the summary's
            joules over its seconds are the watts set; /api/devices'
            energy_per_unit is its joules over hashes that lie within
            the bounds the API's snapshots (polled every 50 ms) set for
            the meter's 30-s span;
            /metrics has lode_device_energy_joules_total as a counter that
            grows, passes promtool, and a real Prometheus loading
            contrib/prometheus/lode-rules.yml computes joules per hash from
            it that agree
  power     the same from power readings alone (integrated), source "power"
  none      no sensors: no figure anywhere, no energy metric
  tf        lode tf's progress line and summary: GHz-days per kWh equal to
            the GHz-days/day it prints over the watts set

usage: test_energy_cli.py PATH_TO_LODE REPOSITORY_ROOT [SCENARIO ...]
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
import api_client  # noqa: E402
from api_client import Lode, get_json, log, parse_metrics, promtool_check, request, run_scenarios, wait_until  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
ONLY = sys.argv[3:]
TMP = tempfile.mkdtemp(prefix="lode-energy-test-")
check = Checks()
api_client.configure(LODE, TMP, check)


class FakeBoard:
    """Writes the fake sensor file every 50 ms: power `watts` and, with a
    counter, energy = 5000 J + watts x the seconds since it started."""

    def __init__(self, watts, counter, device="cpu:0"):
        self.path = os.path.join(TMP, f"sensors-{os.urandom(4).hex()}")
        self.watts, self.counter, self.device = watts, counter, device
        self.t0 = time.monotonic()
        self.stopping = threading.Event()
        self.write()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def write(self):
        line = f"{self.device} temp=60 power={self.watts}"
        if self.counter:
            line += f" energy={5000 + self.watts * (time.monotonic() - self.t0):.4f}"
        with open(self.path + ".new", "w") as f:
            f.write(line + "\n")
        os.replace(self.path + ".new", self.path)

    def run(self):
        while not self.stopping.wait(0.05):
            self.write()

    def env(self):
        return dict(os.environ, LODE_TEST_SENSORS=self.path) if self.watts else dict(os.environ)

    def stop(self):
        self.stopping.set()
        self.thread.join()


def near(got, want, rel):
    return got is not None and want and abs(got - want) <= rel * abs(want)


class DevicePolls:
    """cpu:0's /api/devices entries, read every 50 ms. The API answers from
    a snapshot its sampler takes once a second, so the entries come in runs
    of one snapshot each; `snapshots` keeps the first entry of each.
    `background()` polls from a thread while other checks run, so that the
    meter's span is long enough for the snapshots to bound it tightly."""

    def __init__(self, lode):
        self.lode, self.snapshots, self.error = lode, [], None
        self.stopping, self.thread = threading.Event(), None

    def poll(self):
        dev = get_json(self.lode, "/api/devices")["devices"][0]
        if not self.snapshots or snapshot_key(self.snapshots[-1]) != snapshot_key(dev):
            self.snapshots.append(dev)
        time.sleep(0.05)
        return dev

    def poll_for(self, seconds):
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            self.poll()

    def run(self):
        try:
            while not self.stopping.is_set():
                self.poll()
        except (OSError, ValueError, KeyError) as e:
            self.error = e

    def background(self):
        self.stopping.clear()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join()
        check(self.error is None, f"polling /api/devices failed: {self.error!r}")


def reading(dev):
    """What identifies the meter's last reading in an entry: each reading
    changes its joules or (with a step of none) its mean power."""
    return (dev.get("energy_j"), dev.get("energy_power_w"), dev.get("energy_per_unit"))


def snapshot_key(dev):
    return (dev["hashes"],) + reading(dev)


def check_work_bracket(polls, unit_hashes):
    """The work behind the newest energy_per_unit (its joules over the
    figure) lies within what the snapshots allow for the hashes between
    the meter's first and last readings. Each snapshot holds the hash
    counter and the meter as they were at one instant: the meter's last
    reading was taken before the first snapshot that shows it, and after
    the one before the last snapshot that does not (a snapshot of margin
    for the lock between a reading and its entry); its first reading was
    before the first snapshot with energy (a second reading is needed for
    a span) and after the three before it (readings and snapshots are a
    second or more apart). A bound, not a rate over a window, so a loaded
    machine cannot break it; the span is long enough that it is tight."""
    snaps = polls.snapshots
    last = reading(snaps[-1])
    shows = next(i for i, d in enumerate(snaps) if reading(d) == last)
    first = next(i for i, d in enumerate(snaps) if d.get("energy_j", 0) > 0)
    if shows < 2:
        check(False, f"too few snapshots before the meter's last reading: {len(snaps)}")
        return
    dev = snaps[-1]
    lo = snaps[shows - 2]["hashes"] - snaps[first]["hashes"]
    hi = snaps[shows]["hashes"] - (snaps[first - 3]["hashes"] if first >= 3 else 0)
    work = dev["energy_j"] / dev["energy_per_unit"] * unit_hashes
    span = dev["energy_j"] / dev["energy_power_w"]
    check(lo * (1 - 1e-9) <= work <= hi * (1 + 1e-9),
          f"energy_per_unit {dev['energy_per_unit']} is {work:.0f} hashes over {span:.1f} s; the snapshots allow "
          f"{lo} to {hi}")
    check(hi - lo < 0.3 * work, f"the snapshots bracket the work too loosely to test it: {lo} to {hi}, {work:.0f}")


def check_total(lode):
    """/api/summary's energy_per_unit is cpu:0's, read between two entries
    of the same meter reading."""
    for _ in range(10):
        dev = get_json(lode, "/api/devices")["devices"][0]
        total = get_json(lode, "/api/summary")["total"]
        if reading(get_json(lode, "/api/devices")["devices"][0]) == reading(dev):
            check(near(total.get("energy_per_unit"), dev["energy_per_unit"], 1e-9) and
                  total.get("energy_unit") == "J/MH", f"total energy {total}, device {dev}")
            return
    check(False, "the meter read anew between every pair of entries")


def summary_energy(stderr):
    """(J/MH, joules, seconds, source) of the summary's cpu:0 line, or None."""
    m = re.search(r"summary: cpu:0: .*; ([0-9.]+) J/MH, ([0-9]+) J over ([0-9.]+) s \((energy counter|power "
                  r"readings)\)", stderr)
    return (float(m.group(1)), float(m.group(2)), float(m.group(3)), m.group(4)) if m else None


def mine_and_check(watts, counter, prometheus=False):
    board = FakeBoard(watts, counter)
    lode = Lode(["-a", "scrypt", "--benchmark", "-d", "cpu:0", "-t", "1", "--no-color", "--api-bind",
                 "127.0.0.1:0", "--time-limit", "120"], env=board.env())
    try:
        lode.wait_port()
        polls = DevicePolls(lode)
        dev = wait_until(lambda: (lambda d: d if d.get("energy_j", 0) > 0 else None)(polls.poll()), 60,
                         "no energy_j in /api/devices")
        want_source = "counter" if counter else "power"
        check(dev and dev.get("energy_source") == want_source and dev.get("energy_unit") == "J/MH",
              f"source and unit: {dev}")
        energy_seen = time.monotonic()
        polls.background()
        try:
            metrics_energy(lode)
            if prometheus:
                prometheus_rules(lode, watts)
                dashboard_energy(lode)
        finally:
            polls.stop()
        # At least 30 s of the meter's span: the bracket is ~5 s of hashes wide.
        polls.poll_for(max(0.0, 30 - (time.monotonic() - energy_seen)))
        dev = polls.poll()
        check_work_bracket(polls, 1e6)
        # 5%: the fake board's file is as old as its writer's last pass, up
        # to a few hundred ms on a loaded machine, at each end of the span.
        check(near(dev.get("energy_power_w"), watts, 0.05), f"energy_power_w {dev.get('energy_power_w')}, want {watts}")
        check_total(lode)
    finally:
        status = lode.stop()
        board.stop()
    err = lode.stderr()
    check(status == 130, f"lode stopped by SIGINT: exit {status}, want 130: {err[-1500:]}")
    s = summary_energy(err)
    check(s is not None, f"summary without energy: {err[-1500:]}")
    if s:
        per_unit, joules, seconds, source = s
        check(source == ("energy counter" if counter else "power readings"), f"summary source {source}")
        check(near(joules / seconds, watts, 0.03), f"summary: {joules} J over {seconds} s, want {watts} W")
    check(re.search(r"cpu:0: [0-9.]+ kH/s 60C [0-9]+W [0-9.]+ J/MH$", err, re.M) is not None,
          f"no hashrate line with J/MH: {err[-1500:]}")


def metrics_energy(lode):
    """/metrics: lode_device_energy_joules_total is a counter that grows."""
    text = request(lode.url("/metrics"))[2].decode()
    promtool_check(text, "energy")
    check("# TYPE lode_device_energy_joules_total counter" in text, "energy metric is a counter")
    key = ("lode_device_energy_joules_total", frozenset({("device", "cpu:0")}))
    joules = parse_metrics(text).get(key)
    check(joules is not None and joules > 0,
          f"energy metric {joules}; keys {[k for k in parse_metrics(text) if 'energy' in k[0]]}")
    time.sleep(2)
    later = parse_metrics(request(lode.url("/metrics"))[2].decode()).get(key)
    check(later is not None and joules is not None and later > joules, f"the counter grows: {joules} -> {later}")


def dashboard_energy(lode):
    """Headless chromium draws the dashboard: cpu:0's row shows J/MH."""
    if api_client.chromium_binary() is None:
        check(False, "chromium is not installed (Debian package chromium)")
        return
    r = api_client.chromium(lode.url("/"), "dom")
    cell = re.search(r'<td class="num energy">([^<]*)</td>', r.stdout)
    check(cell is not None and re.fullmatch(r"[0-9.]+ J/MH", cell.group(1)),
          f"dashboard: energy cell {cell.group(1) if cell else None}: {r.stdout[-600:]} {r.stderr[-400:]}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prometheus_rules(lode, watts):
    """A real Prometheus scraping lode every second with the shipped rules,
    their windows shortened from 5 minutes to 15 s (a rate over a window
    that the samples do not fill is scaled down by Prometheus): its joules
    per hash from lode's series equal the watts set over lode's rate."""
    if shutil.which("prometheus") is None:
        check(False, "prometheus is not installed (Debian package prometheus)")
        return
    port, d = free_port(), os.path.join(TMP, "prom")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(ROOT, "contrib", "prometheus", "lode-rules.yml")) as f:
        shipped = f.read()
    check("[5m]" in shipped, "prometheus: the shipped rules have no 5-minute windows to shorten")
    rules = os.path.join(d, "lode-rules.yml")
    with open(rules, "w") as f:
        f.write(shipped.replace("[5m]", "[15s]"))
    cfg = os.path.join(d, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write(f"global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {rules}\n"
                f"scrape_configs:\n  - job_name: lode\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{lode.port}']\n")
    log_file = open(os.path.join(TMP, "prometheus.log"), "w")
    prom = subprocess.Popen(["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={d}/data",
                             f"--web.listen-address=127.0.0.1:{port}"], stdout=log_file, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)

    def query(q):
        try:
            st, _, body = request(f"http://127.0.0.1:{port}/api/v1/query?query={q}", timeout=10)
        except OSError:
            return None
        j = json.loads(body) if st == 200 else {}
        return j["data"]["result"] if j.get("status") == "success" and j["data"]["result"] else None

    try:
        wait_until(lambda: query("device:lode_joules_per_hash:rate5m"), 120,
                   "prometheus: device:lode_joules_per_hash:rate5m never computed")
        time.sleep(20)  # a 15-s window full of scrapes
        res = query("device:lode_joules_per_hash:rate5m")
        # The hash rate over the window the rule's sample covers: at the
        # sample's own time, so that a rate that varies cannot tell them apart.
        rate = res and query(f"rate(lode_hashes_total[15s])&time={res[0]['value'][0]}")
        if res and rate:
            got, hashes_per_s = float(res[0]["value"][1]), float(rate[0]["value"][1])
            check(res[0]["metric"].get("device") == "cpu:0", f"prometheus: labels {res[0]['metric']}")
            # Joules per hash times the hash rate is power; the joules step
            # once a second with lode's meter, the hashes a scan at a time,
            # so a 15-s window is up to a step of each off: hence 15%.
            check(near(got * hashes_per_s, watts, 0.15), f"prometheus: {got} J/H x {hashes_per_s} H/s, want {watts} W")
        firing = query('ALERTS{alertstate="firing"}')
        check(firing is None, f"prometheus: alerts firing on a healthy run: {firing}")
    finally:
        prom.terminate()
        prom.wait(timeout=30)
        log_file.close()


def scenario_counter():
    mine_and_check(150.0, counter=True, prometheus=True)


def scenario_power():
    mine_and_check(80.0, counter=False)


def scenario_none():
    lode = Lode(["-a", "scrypt", "--benchmark", "-d", "cpu:0", "-t", "1", "--no-color", "--api-bind", "127.0.0.1:0",
                 "--time-limit", "8"], env=dict(os.environ, LODE_TEST_SENSORS=os.path.join(TMP, "absent")))
    lode.wait_port()
    wait_until(lambda: get_json(lode, "/api/devices")["devices"][0]["hashes"] > 0, 60, "none: no hashes")
    time.sleep(3)
    dev = get_json(lode, "/api/devices")["devices"][0]
    check(not any(k.startswith("energy") for k in dev), f"none: energy fields without sensors: {dev}")
    check("lode_device_energy_joules_total" not in request(lode.url("/metrics"))[2].decode(),
          "none: an energy metric without sensors")
    lode.proc.wait(timeout=60)
    lode.stop()
    err = lode.stderr()
    check("J/MH" not in err and "summary: cpu:0" in err, f"none: {err[-800:]}")


def scenario_tf():
    board = FakeBoard(100.0, counter=True)
    work = os.path.join(TMP, "tf")
    os.makedirs(work, exist_ok=True)
    r = subprocess.run([LODE, "tf", "100003", "1", "47", "-d", "cpu:0", "--no-checkpoints", "--no-color",
                        "--progress-interval", "1"], capture_output=True, text=True, timeout=600, cwd=work,
                       env=board.env())
    board.stop()
    check(r.returncode == 0, f"tf: exit {r.returncode}: {r.stderr[-1500:]}")
    lines = re.findall(r"([0-9.]+) GHz-days/day, ETA [^,;]+, ([0-9.]+) GHz-days/kWh", r.stderr)
    check(bool(lines), f"tf: no progress line with GHz-days/kWh: {r.stderr[-1500:]}")
    for gdd, per_kwh in lines[-3:]:
        # GHz-days/day over the kWh a day at 100 W (2.4 kWh).
        check(near(float(per_kwh), float(gdd) / 2.4, 0.05), f"tf: {per_kwh} GHz-days/kWh at {gdd} GHz-days/day")
    m = re.search(r"summary: energy: ([0-9.]+) GHz-days/kWh at ([0-9.]+) GHz-days/day, ([0-9]+) W", r.stderr)
    check(m is not None, f"tf: no energy in the summary: {r.stderr[-1500:]}")
    if m:
        check(near(float(m.group(1)), float(m.group(2)) / 2.4, 0.01) and near(float(m.group(3)), 100, 0.05),
              f"tf summary: {m.group(0)}")


run_scenarios({"counter": scenario_counter, "power": scenario_power, "none": scenario_none, "tf": scenario_tf},
              ONLY)
