#!/usr/bin/env python3
"""lode tf's HTTP API, /metrics and dashboard view, on `lode tf -d cpu`,
against independent oracles: the classes and PrimeNet's credit formula in
Python (tests/tf_oracle.py), Python's pow for the known factor, Python's
HTTP and JSON, Debian's promtool and headless chromium.

usage: test_api_tf.py PATH_TO_LODE ARTIFACT_DIR

- /api/summary: the assignment, classes done of 960 (growing), the
  assignment's candidates and GHz-days as Python counts them, each
  device's GHz-days/day (its candidates a second times a day times the
  credit of one candidate) and the total, factors found (the known factor
  6400193 once its class is done, the device's count the same), and
  "primenet": {"enabled": false} without a client;
- /api/history: per device GHz-days/day points, each its candidates-rate
  point at that credit;
- /metrics: promtool-clean, the tf counters growing, lode_primenet_enabled
  0, the per-device credit rate, help texts in the words of trial
  factoring (candidates, proof entries);
- the dashboard in chromium: the TF view (data-view "tf") shows the
  assignment, class progress, ETA, factors, results, PrimeNet "not used"
  and draws the GHz-days/day chart; no pool panel (accepted, rejected,
  shares, pools) is visible; a screenshot is kept as ARTIFACT_DIR/dashboard-tf.png;
- the run's summary at the stop says candidates and proof entries.

The server binds 127.0.0.1 port 0; every process started is stopped, also
on failure.
"""
import html.parser
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
import api_client  # noqa: E402
from api_client import Lode, chromium, chromium_binary, get_json, log, parse_metrics, promtool_check, request  # noqa: E402
from api_client import run_scenarios, wait_until  # noqa: E402
import tf_oracle  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
ARTIFACTS = sys.argv[2]
TMP = tempfile.mkdtemp(prefix="lode-api-tf-test-")
check = Checks()
api_client.configure(LODE, TMP, check)
P, LO, HI = 100003, 1, 53
KNOWN_FACTOR = 6400193  # of M100003, k = 32: class 32, the 6th needed class


def close(a, b, rel=1e-6):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def check_credit(s, candidates, credit):
    """The assignment's figures and each device's GHz-days/day."""
    tf = s["tf"]
    check(tf["candidates"] == candidates, f"tf: candidates {tf.get('candidates')}, Python {candidates}")
    check(close(tf["ghz_days"], credit, 1e-9), f"tf: GHz-days {tf.get('ghz_days')}, Python {credit}")
    for dev in s["devices"]:
        want = dev["hashrate_60s"] * 86400 * credit / candidates if dev["hashrate_60s"] is not None else None
        check(dev["ghz_days_per_day"] is not None and dev["ghz_days_per_day"] > 0
              and close(dev["ghz_days_per_day"], want), f"{dev['id']}: GHz-days/day {dev.get('ghz_days_per_day')}, "
              f"its {dev['hashrate_60s']} candidates/s at {credit} GHz-days per {candidates}: {want}")
    total = sum(d["ghz_days_per_day"] or 0 for d in s["devices"])
    check(close(s["total"]["ghz_days_per_day"], total), f"total GHz-days/day {s['total'].get('ghz_days_per_day')}")


def check_history(lode, candidates, credit):
    h = get_json(lode, "/api/history")
    dev = h["devices"][0]
    rate = dict((t, v) for t, v in dev["hashrate"])
    points = dev.get("ghz_days_per_day", [])
    check(len(points) >= 3 and all(close(v, rate.get(t, -1) * 86400 * credit / candidates) for t, v in points),
          f"history: GHz-days/day points at the candidates rate: {points[-3:]} {dev['hashrate'][-3:]}")


def check_metrics(lode, factors_found):
    text = request(lode.url("/metrics"))[2].decode()
    promtool_check(text, "tf")
    m = parse_metrics(text)
    check(m.get(("lode_primenet_enabled", frozenset())) == 0, "metrics: lode_primenet_enabled 0 without a client")
    r = m.get(("lode_tf_device_credit_rate", frozenset({("device", "cpu:0")})))
    check(r is not None and r > 0, f"metrics: lode_tf_device_credit_rate of cpu:0: {r}")
    f = m.get(("lode_tf_factors_found_total", frozenset()))
    check(f is not None and f >= factors_found, f"metrics: lode_tf_factors_found_total {f} >= {factors_found}")
    check(("lode_tf_proof_entries_total", frozenset({("device", "cpu:0")})) in m, "metrics: proof entries of cpu:0")
    check("# HELP lode_hashes_total Candidates" in text and re.search(r"# HELP lode_hits_total .*proof", text)
          and "# HELP lode_device_hashrate Candidates" in text, "metrics: help texts in the words of tf")
    return m


class VisibleText(html.parser.HTMLParser):
    """The text of a DOM outside elements with the hidden attribute (and
    outside script and style)."""
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack, self.parts = [], []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        hidden = (self.stack and self.stack[-1]) or "hidden" in dict(attrs) or tag in ("script", "style")
        self.stack.append(bool(hidden))

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]) and data.strip():
            self.parts.append(data.strip())


def check_dashboard(lode):
    if chromium_binary() is None:
        check(False, "chromium is not installed (Debian package chromium)")
        return
    r = chromium(lode.url("/"), "dom")
    m = re.search(r'<div id="chart-status"([^>]*)>', r.stdout)
    if not check(m, f"tf dashboard: no chart-status in the DOM: {r.stdout[-800:]} {r.stderr[-800:]}"):
        return
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1)))
    log(f"tf dashboard DOM: {attrs}")
    check(attrs.get("view") == "tf" and int(attrs.get("updates", "0")) >= 1 and "error" not in attrs,
          f"tf dashboard: the TF view drawn without error: {attrs}")
    check(int(attrs.get("ghzd-points", "0")) >= 3 and int(attrs.get("rate-points", "0")) >= 3,
          f"tf dashboard: the GHz-days/day and candidates charts drew too little: {attrs}")
    parser = VisibleText()
    parser.feed(r.stdout)
    text = " | ".join(parser.parts)
    for want in ("M100003 2^1..2^53", "Class progress", "ETA", "GHz-days/day per device", "Factors found",
                 "Results sent / queued", "PrimeNet", "not used", "Proof entries", "cpu:0"):
        check(want in text, f"tf dashboard: '{want}' is not shown: {text[:1500]}")
    check(re.search(r"\b\d+ of 960\b", text), f"tf dashboard: no class progress 'N of 960': {text[:800]}")
    for pool_word in ("Accepted", "Rejected", "Shares", "Pools", "no pool in this run", "Hashrate (60 s)", "Hits"):
        check(pool_word not in text, f"tf dashboard: a pool or mining panel shows ('{pool_word}'): {text[:1500]}")
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "dashboard-tf.png")
    if os.path.exists(shot):
        os.remove(shot)
    r = chromium(lode.url("/"), "shot", shot)
    check(os.path.exists(shot) and os.path.getsize(shot) > 10000, f"tf dashboard: no screenshot: {r.stderr[-800:]}")
    log(f"tf dashboard screenshot kept in {shot}")


def scenario_tf():
    d = tempfile.mkdtemp(prefix="tf-", dir=TMP)
    candidates, credit = tf_oracle.candidates_tested(P, LO, HI), tf_oracle.ghz_days(P, LO, HI)
    position = tf_oracle.needed_classes(P).index((KNOWN_FACTOR - 1) // (2 * P) % 4620)
    check(pow(2, P, KNOWN_FACTOR) == 1 and (KNOWN_FACTOR - 1) % (2 * P) == 0, "the known factor divides M100003")
    lode = Lode(["tf", str(P), str(LO), str(HI), "-d", "cpu", "-t", "1", "--no-checkpoints", "--results",
                 os.path.join(d, "results.json.txt"), "--api-bind", "127.0.0.1:0"], cwd=d)
    try:
        lode.wait_port()
        s = wait_until(lambda: (lambda j: j if j.get("tf", {}).get("running") and j["tf"]["classes_done"] > position
                                else None)(get_json(lode, "/api/summary")), 120, "tf: no progress in the API")
        if not s:
            return
        tf = s["tf"]
        check(s["source"]["kind"] == "tf" and tf["assignment"] == f"M{P} 2^{LO}..2^{HI}", f"tf: {tf}")
        check(tf["classes_total"] == 960 and tf["exponent"] == P, f"tf: {tf}")
        check(tf["ghz_days_per_day"] is not None and tf["ghz_days_per_day"] > 0, f"tf: rate {tf}")
        check(tf["eta_s"] is not None and tf["eta_s"] > 0, f"tf: eta {tf}")
        check(s.get("primenet") == {"enabled": False}, f"tf: primenet without a client: {s.get('primenet')}")
        check(tf["factors"] >= 1 and tf["factors_found"] == tf["factors"] and s["devices"][0]["factors"] == tf["factors"],
              f"tf: the known factor counted once its class is done (class {position + 1} of 960): {tf} "
              f"{s['devices'][0]}")
        check(s["devices"][0]["hashes"] > 0 and s["devices"][0]["proof_entries"] >= 0, "tf: no candidates counted")
        time.sleep(2)  # a minute's rate needs at least two samples past the start
        s = get_json(lode, "/api/summary")
        check_credit(s, candidates, credit)
        check_history(lode, candidates, credit)
        m1 = check_metrics(lode, tf["factors_found"])
        c1 = m1.get(("lode_tf_classes_done_total", frozenset()))
        s2 = wait_until(lambda: (lambda j: j if j["tf"]["classes_done"] > s["tf"]["classes_done"] else None)(
            get_json(lode, "/api/summary")), 60, "tf: classes_done did not grow")
        if s2:
            check(s2["tf"]["classes_done_total"] >= s2["tf"]["classes_done"], f"tf: totals {s2['tf']}")
        c2 = parse_metrics(request(lode.url("/metrics"))[2].decode()).get(("lode_tf_classes_done_total", frozenset()))
        check(c1 is not None and c2 is not None and c2 > c1, f"tf: lode_tf_classes_done_total {c1} -> {c2}")
        check_dashboard(lode)
        rc = lode.stop()
        check(rc == 130, f"tf: exit {rc}")
        err = lode.stderr()
        check(re.search(r"summary: cpu:0: .* candidates/s, \d+ candidates, \d+ proof entries, \d+ factors?, 0 hardware "
                        r"errors", err), f"tf: the summary at the stop: {err[-600:]}")
    finally:
        lode.stop()


run_scenarios({"tf": scenario_tf})
