#!/usr/bin/env python3
"""`lode tf --primenet` against the PrimeNet v5 stand-in server
(tests/primenet_standin.py, which checks every request as PrimeNet requires
it, recomputes each result's checksum with zlib.crc32 and each factor with
pow): registration, filling the queue, progress, each result sent exactly
once (also across a SIGKILL at every step from "result written" to "result
recorded as sent"), the server down and back, each error code, hostile
replies, ra, unreserve, --no-more-work, a refused user, two devices. The
factors credited are held against Python's own search (tests/tf_oracle.py).

usage: test_primenet.py PATH_TO_LODE   (LODE_TEST_ONLY=test_x,test_y runs some)
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
from primenet_standin import StandIn  # noqa: E402
import tf_oracle  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
check = Checks()
# Short pacing so that a retry takes a second, a slow reply three.
ENV = dict(os.environ, LODE_PRIMENET_RETRY_S="1", LODE_PRIMENET_TIMEOUT_S="3", LODE_PRIMENET_CHECKIN_S="3600")
SMALL = [(100003, 1, 31), (100019, 1, 31), (100043, 1, 31), (100057, 1, 31), (100069, 1, 31)]
CRASH_STEPS = ("pending-saved", "proof-written", "result-appended", "reported-saved", "worktodo-rewritten",
               "checkpoint-removed", "primenet-sent", "sent-recorded")
tmp_root = tempfile.mkdtemp(prefix="lode-primenet-")
serial = [0]


def fresh(name):
    serial[0] += 1
    d = os.path.join(tmp_root, f"{serial[0]:02d}-{name}")
    os.makedirs(d)
    return d


def args_for(s, *extra, devices="cpu"):
    return [LODE, "tf", "--primenet", "--primenet-url", s.url, "-d", devices, "--user", "tester",
            "--computer", "box", *extra]


def run(s, d, *extra, env=None, timeout=90, devices="cpu"):
    """One lode tf run in d to its end: (exit status, stderr)."""
    r = subprocess.run(args_for(s, *extra, devices=devices), cwd=d, capture_output=True, text=True,
                       timeout=timeout, env=env or ENV)
    return r.returncode, r.stderr


class Running:
    """lode tf in the background, its log in a file; stop() sends SIGINT."""

    def __init__(self, s, d, *extra, env=None, devices="cpu"):
        self.log = open(os.path.join(d, "lode.log"), "w+")
        self.proc = subprocess.Popen(args_for(s, *extra, devices=devices), cwd=d, stdout=subprocess.DEVNULL,
                                     stderr=self.log, env=env or ENV)

    def stop(self, sig=signal.SIGINT):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = "hung"
        self.log.seek(0)
        text = self.log.read()
        self.log.close()
        return rc, text


def wait_for(cond, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [x for x in f.read().split("\n") if x]


def factor_lines(d):
    return [x for x in lines(os.path.join(d, "worktodo.txt")) if x.startswith("Factor=")]


def oracle_factors(p, lo, hi):
    return [str(q) for q in tf_oracle.candidates(p, lo, hi) if pow(2, p, q) == 1]


def check_sent_once(d, what):
    """Every result line was recorded as sent, each exactly once."""
    res, sent = lines(os.path.join(d, "results.json.txt")), lines(os.path.join(d, "results_sent.txt"))
    check(sorted(res) == sorted(sent) and len(set(sent)) == len(sent),
          f"{what}: results_sent.txt holds each result once: {len(res)} results, {len(sent)} sent")


def check_clean(s, what):
    check(not s.violations, f"{what}: no protocol violation: {s.violations}")


def types(s):
    return [r["t"] for r in s.requests]


def keyed_worktodo(d, s, jobs):
    """A worktodo of PrimeNet assignments added to the stand-in; their keys."""
    keys = [s.add_assignment(*j) for j in jobs]
    with open(os.path.join(d, "worktodo.txt"), "w") as f:
        f.write("".join(f"Factor={k},{p},{lo},{hi}\n" for k, (p, lo, hi) in zip(keys, jobs)))
    return keys


def test_fresh_run():
    """A first run on an empty folder: uc then po, the state file, two
    assignments fetched while the rate is unknown (the driver is still
    waiting), the rest once it is measured, ap at start, every result sent
    once with the factors Python finds, the worktodo emptied."""
    s = StandIn()
    keys = [s.add_assignment(*j) for j in SMALL[:4]]
    d = fresh("fresh")
    lode = Running(s, d)
    done = wait_for(lambda: len(s.results) == 4 and len(lines(os.path.join(d, "results_sent.txt"))) == 4)
    rc, log = lode.stop()
    check(done and rc == 130, f"fresh: 4 results sent, then Ctrl-C: {rc} {log[-800:]}")
    t = types(s)
    check(t[:4] == ["uc", "po", "ga", "ga"] and t[4] == "ap", f"fresh: uc, po, two ga, then ap: {t}")
    with open(os.path.join(d, "primenet.json")) as f:
        state = json.load(f)
    guid = s.requests[0]["params"].get("g")
    check(state["guid"] == guid and re.fullmatch(r"[0-9a-f]{32}", guid) and state["registered"] is True
          and state["options_sent"] is True and state["user"] == "tester" and state["computer"] == "box"
          and state["work_pref"] == 12, f"fresh: the state file {state}")
    check(s.computers.get(guid, {}).get("u") == "tester" and s.computers[guid].get("cn") == "box"
          and s.computers[guid]["hg"] == state["hardware_guid"], f"fresh: registered {s.computers}")
    po = s.requests[1]["params"]
    check(po.get("w") == "12" and po.get("DaysOfWork") == "1", f"fresh: po options {po}")
    for key, (p, lo, hi) in zip(keys, SMALL):
        got = [r for r in s.results if r["k"] == key]
        check(len(got) == 1 and s.credited(p, lo, hi) == 1, f"fresh: M{p} credited once: {got}")
        if got:
            check(got[0]["json"].get("factors", []) == oracle_factors(p, lo, hi) and got[0]["json"]["aid"] == key,
                  f"fresh: M{p} factors {got[0]['json'].get('factors')} against Python's")
        check(s.assignments[key]["done"], f"fresh: assignment {key} completed")
    aps = [r for r in s.requests if r["t"] == "ap"]
    check(aps and all(r["params"]["d"] == "3600" and re.fullmatch(r"\d+", r["params"]["e"]) for r in aps),
          f"fresh: ap d and e: {[r['params'] for r in aps]}")
    check(factor_lines(d) == [], f"fresh: worktodo emptied: {factor_lines(d)}")
    check_sent_once(d, "fresh")
    check("waiting for PrimeNet" in log, "fresh: says it waits for work")
    check_clean(s, "fresh")
    s.close()


def fetch_runs(s):
    """The lengths of the runs of successful ga in the requests (a pass
    fetches in one run)."""
    runs, n = [], 0
    for r in s.requests:
        if r["t"] == "ga" and r["code"] == 0:
            n += 1
        elif n:
            runs, n = runs + [n], 0
    return runs + ([n] if n else [])


def test_days_of_work():
    """Once the rate is measured, the queue covers --days-of-work: almost
    none (a billionth of a day) fetches one assignment at a time, 180 days
    fetches all that are left in one pass."""
    jobs = [(100003, 1, 33), (100019, 1, 33), (100043, 1, 33), (100057, 1, 33), (100069, 1, 33), (100103, 1, 33)]
    for days, want in (("0.000000001", "one at a time"), ("180", "all in one pass")):
        s = StandIn()
        for j in jobs:
            s.add_assignment(*j)
        d = fresh(f"days-{days}")
        lode = Running(s, d, "--days-of-work", days)
        done = wait_for(lambda: len(lines(os.path.join(d, "results_sent.txt"))) == len(jobs))
        rc, log = lode.stop()
        runs = fetch_runs(s)
        check(done and runs[:1] == [2], f"days {days}: two fetched before the rate is known: {runs} {types(s)}")
        if days == "180":
            check(len(runs) >= 2 and runs[1] == len(jobs) - 2, f"days {days}: {want}: {runs}")
        else:
            check(len(runs) >= 2 and max(runs[1:]) == 1, f"days {days}: {want}: {runs}")
        check_sent_once(d, f"days {days}")
        check_clean(s, f"days {days}")
        s.close()


def test_progress():
    """ap about every check-in (1 s here) for the running assignment: p
    above 0 with 4 decimals and below 100, stage TF<lo>-<hi>, e counting
    down to its end."""
    s = StandIn()
    d = fresh("progress")
    key = keyed_worktodo(d, s, [(1000003, 1, 48)])[0]
    rc, log = run(s, d, "--no-more-work", env=dict(ENV, LODE_PRIMENET_CHECKIN_S="1"))
    prog = s.assignments[key]["progress"]
    moving = [a for a in prog if a["p"] > 0]
    check(rc == 0 and s.credited(1000003, 1, 48) == 1, f"progress: run {rc} {log[-500:]}")
    check(moving and all(a["stage"] == "TF1-48" and a["p"] < 100 for a in moving),
          f"progress: ap with p > 0 and the stage: {prog}")
    aps = [r["params"] for r in s.requests if r["t"] == "ap" and float(r["params"]["p"]) > 0]
    check(all(re.fullmatch(r"\d{1,2}\.\d{4}", a["p"]) for a in aps), f"progress: p with 4 decimals: {aps}")
    check_clean(s, "progress")
    s.close()


def test_crash_steps():
    """A SIGKILL at each step from the result's first record to its record
    as sent (LODE_TF_CRASH_AT), then a run with --no-more-work: the result
    is sent and credited exactly once and recorded once."""
    p, lo, hi = SMALL[0]
    for step in CRASH_STEPS:
        s = StandIn()
        d = fresh(f"crash-{step}")
        key = s.add_assignment(p, lo, hi)
        rc, log = run(s, d, env=dict(ENV, LODE_TF_CRASH_AT=step))
        check(rc == -signal.SIGKILL, f"{step}: killed there: {rc} {log[-400:]}")
        rc, log = run(s, d, "--no-more-work")
        check(rc == 0, f"{step}: the next run: {rc} {log[-600:]}")
        check(s.credited(p, lo, hi) == 1 and s.assignments[key]["done"], f"{step}: credited once: {s.results}")
        check_sent_once(d, step)
        check(len(lines(os.path.join(d, "results.json.txt"))) == 1, f"{step}: one result line")
        check(factor_lines(d) == [], f"{step}: worktodo emptied")
        check_clean(s, step)
        s.close()


def test_server_down():
    """The server goes away after the assignments are fetched: the work goes
    on, results stay queued, the retries back off (1, 2, 4 s); once it is
    back every result goes out, once."""
    s = StandIn()
    jobs = SMALL[:2]
    for j in jobs:
        s.add_assignment(*j)
    d = fresh("down")
    lode = Running(s, d)
    fetched = wait_for(lambda: len(factor_lines(d)) == 2 or len(s.results) > 0)
    s.down()
    written = wait_for(lambda: len(lines(os.path.join(d, "results.json.txt"))) == 2)
    # Two failed passes at least (their waits in the log), then back.
    wait_for(lambda: "next try in 2 s" in open(lode.log.name).read(), timeout=20)
    queued = lines(os.path.join(d, "results_sent.txt"))
    s.up()
    sent = wait_for(lambda: len(lines(os.path.join(d, "results_sent.txt"))) == 2, timeout=40)
    rc, log = lode.stop()
    check(fetched and written and sent and rc == 130, f"down: fetched, computed, sent after: {rc} {log[-800:]}")
    check(len(queued) < 2, f"down: nothing recorded as sent while the server was away: {queued}")
    waits = [int(x) for x in re.findall(r"next try in (\d+) s", log)]
    check(waits[:2] == [1, 2], f"down: the wait doubles: {waits}")
    for p, lo, hi in jobs:
        check(s.credited(p, lo, hi) == 1, f"down: M{p} credited once")
    check_sent_once(d, "down")
    check_clean(s, "down")
    s.close()


def error_run(name, setup, *extra, jobs=SMALL[:1], prefill=True, sent=None):
    """After setup(s) injected failures: a run with --no-more-work on a
    worktodo of keyed assignments (prefill), or a run that fetches them,
    stopped once `sent` results (all by default) are recorded as sent.
    (s, d, rc, log, keys)."""
    s = StandIn()
    d = fresh(name)
    keys = keyed_worktodo(d, s, jobs) if prefill else [s.add_assignment(*j) for j in jobs]
    setup(s)
    if prefill:
        rc, log = run(s, d, "--no-more-work", *extra)
    else:
        lode = Running(s, d, *extra)
        want = len(jobs) if sent is None else sent
        wait_for(lambda: len(lines(os.path.join(d, "results_sent.txt"))) == want and
                 not [x for x in factor_lines(d)], timeout=30)
        rc, log = lode.stop()
    return s, d, rc, log, keys


def test_reregister():
    """30: a new GUID, uc and the call again; 32 and 34: uc again with the
    same GUID; 3: a quick retry; 40: ga again after the wait."""
    p, lo, hi = SMALL[0]
    s, d, rc, log, keys = error_run("e30", lambda s: s.fail_next("ga", 30), prefill=False)
    guids = [r["params"]["g"] for r in s.requests if r["t"] == "uc"]
    with open(os.path.join(d, "primenet.json")) as f:
        state = json.load(f)
    check(len(guids) == 2 and guids[0] != guids[1] and state["guid"] == guids[1] and s.credited(p, lo, hi) == 1,
          f"30: a new GUID registered and used: {types(s)} {guids} {state['guid']}")
    for code in (32, 34):
        s, d, rc, log, keys = error_run(f"e{code}", lambda s, c=code: s.fail_next("ga", c), prefill=False)
        guids = [r["params"]["g"] for r in s.requests if r["t"] == "uc"]
        check(len(guids) == 2 and guids[0] == guids[1] and s.credited(p, lo, hi) == 1 and rc == 130,
              f"{code}: uc again, same GUID: {types(s)} {rc}")
        check_clean(s, f"error {code}")
    s, d, rc, log, keys = error_run("e3", lambda s: s.fail_next("ar", 3), prefill=True)
    check(rc == 0 and types(s).count("ar") == 2 and s.credited(p, lo, hi) == 1 and "server is busy" in log,
          f"3: the ar again: {types(s)} {log[-400:]}")
    t0 = time.time()
    s, d, rc, log, keys = error_run("e40", lambda s: s.fail_next("ga", 40), prefill=False)
    gas = [r for r in s.requests if r["t"] == "ga"]
    check(rc == 130 and len(gas) >= 2 and gas[0]["code"] == 40 and s.credited(p, lo, hi) == 1
          and "no assignment for now" in log, f"40: ga again later: {[r['code'] for r in gas]} {time.time() - t0}")
    check_clean(s, "error 3/30/40")


def test_final_codes():
    """ar refused for good (40, 43, 44, 45, 47, 48): recorded as sent with a
    message, never sent again; 7: logged, sent again (and taken); an ap
    answered 47 or 43 drops its assignment from the worktodo."""
    codes = (40, 43, 44, 45, 47, 48)
    jobs = [(100003, 1, 31), (100019, 1, 31), (100043, 1, 31), (100057, 1, 31), (100069, 1, 31),
            (100103, 1, 31)]

    def refuse_all(s):
        for c in codes:
            s.fail_next("ar", c)
    s, d, rc, log, keys = error_run("final", refuse_all, jobs=jobs)
    check(rc == 0 and types(s).count("ar") == len(codes) and not s.results,
          f"final: each ar once, none credited: {rc} {types(s)}")
    check(len(re.findall(r"refused the result of M\d+ 1-31 for good", log)) == len(codes),
          f"final: a message each: {log[-1500:]}")
    check_sent_once(d, "final")
    s, d, rc, log, keys = error_run("e7", lambda s: s.fail_next("ar", 7, "parameter m: test"))
    check(rc == 0 and "a bug of lode" in log, f"7: logged: {types(s)} {log[-600:]}")
    if types(s).count("ar") == 1:  # the refused try was the run's last pass: the next run sends it
        check("1 result(s) of results.json.txt not sent yet" in log and not s.results, f"7: kept: {log[-300:]}")
        rc, log = run(s, d, "--no-more-work")
    check(rc == 0 and types(s).count("ar") == 2 and s.credited(*SMALL[0]) == 1, f"7: sent next pass: {types(s)}")
    check_sent_once(d, "7")
    for code in (47, 43):
        s, d, rc, log, keys = error_run(f"ap{code}", lambda s, c=code: s.fail_next("ap", c), jobs=SMALL[:2],
                                        prefill=False, sent=1)
        check(rc == 130 and s.credited(*SMALL[0]) == 0 and s.credited(*SMALL[1]) == 1
              and "no longer wants M100003" in log and not any(keys[0] in x for x in factor_lines(d)),
              f"ap {code}: the first assignment dropped: {types(s)} {factor_lines(d)} {log[-800:]}")
        check_clean(s, f"ap {code}")


def test_refused():
    """21 (invalid user) at registration and 9 (access denied) on ga: exit
    status 3 with a message naming the user."""
    for t, code in (("uc", 21), ("ga", 9)):
        s = StandIn()
        d = fresh(f"refused-{code}")
        s.fail_next(t, code)
        rc, log = run(s, d, timeout=60)
        check(rc == 3 and "refused user 'tester'" in log, f"{t} {code}: exit 3: {rc} {log[-600:]}")
        check_clean(s, f"refused {code}")
        s.close()


def test_hostile():
    """Broken replies to ar (each in turn, then a good one) and to ga: a
    clear error each, the retries, nothing lost, no crash; an assignment
    lode cannot run is given back; a slow reply times out; a CR in the
    detail is shown as a second line."""
    modes = ("garbage", "no_end", "huge", "http500", "truncated", "no_error_field", "binary")
    words = ("not name=value", "no ==END==", "longer than", "HTTP status 500", "", "no pnErrorResult", "NUL")

    def hostile(s):
        for m in modes:
            s.hostile_next("ar", m)
        s.hostile_next("ga", "garbage")
    s, d, rc, log, keys = error_run("hostile", hostile, prefill=False)
    check(rc == 130 and s.credited(*SMALL[0]) == 1, f"hostile: sent in the end: {rc} {log[-1500:]}")
    for m, w in zip(modes, words):
        check(w in log, f"hostile {m}: the message says '{w}'")
    check(types(s).count("ar") == len(modes) + 1, f"hostile: one ar a reply: {types(s)}")
    check_sent_once(d, "hostile")
    check_clean(s, "hostile")
    s = StandIn()
    d = fresh("bad-assignment")
    bad = s.add_assignment(100001, 1, 31)  # 100001 = 11 x 9091: no Mersenne exponent
    good = s.add_assignment(*SMALL[0])
    lode = Running(s, d)
    wait_for(lambda: s.credited(*SMALL[0]) == 1 and len(lines(os.path.join(d, "results_sent.txt"))) == 1)
    rc, log = lode.stop()
    aus = [r["params"]["k"] for r in s.requests if r["t"] == "au"]
    check(rc == 130 and aus == [bad] and s.assignments[good]["done"] and "cannot run" in log
          and not any(bad in x for x in lines(os.path.join(d, "worktodo.txt"))),
          f"an assignment lode cannot run is given back: {rc} {aus} {log[-600:]}")
    check_clean(s, "bad assignment")
    s, d, rc, log, keys = error_run("slow", lambda s: s.hostile_next("ar", "slow"))
    check(rc == 0 and s.credited(*SMALL[0]) == 1 and "timed out" in log.lower(), f"slow: {rc} {log[-600:]}")
    s, d, rc, log, keys = error_run("cr", lambda s: s.hostile_next("ar", "cr_in_value"))
    check(rc == 0 and s.credited(*SMALL[0]) == 1 and "/ and a second line" in log, f"cr: {rc} {log[-600:]}")
    check_sent_once(d, "cr")
    s.close()


def test_register_keyless():
    """ra for keyless lines the user added: the line gets its key in place
    and the result carries it; an N/A line is left alone."""
    s = StandIn()
    d = fresh("ra")
    with open(os.path.join(d, "worktodo.txt"), "w") as f:
        f.write("Factor=N/A,100003,1,31\nFactor=100019,1,31\nFactor=100043,1,31\n")
    rc, log = run(s, d, "--no-more-work")
    ras = [r for r in s.requests if r["t"] == "ra"]
    check(rc == 0 and ras and all(r["params"]["n"] in ("100019", "100043") for r in ras),
          f"ra: for the keyless lines only: {[r['params'] for r in ras]} {log[-500:]}")
    keyed = {a["n"]: k for k, a in s.assignments.items()}
    got = {r["json"]["exponent"]: r for r in s.results}
    check(got.get(100043, {}).get("k") == keyed.get(100043), f"ra: the result of M100043 carries its key: {got}")
    check(all(s.credited(*j) == 1 for j in SMALL[:3]), "ra: all three credited once")
    check(factor_lines(d) == [], f"ra: worktodo emptied: {factor_lines(d)}")
    check_sent_once(d, "ra")
    check_clean(s, "ra")
    s.close()


def test_no_more_work_and_unreserve():
    """--no-more-work finishes the queue and fetches nothing; --unreserve P
    and --unreserve-all give keyed lines back (au) and remove them."""
    s = StandIn()
    d = fresh("unreserve")
    s.add_assignment(*SMALL[3])  # would be fetched without --no-more-work
    keyed_worktodo(d, s, SMALL[:1])
    rc, log = run(s, d, "--no-more-work")
    check(rc == 0 and "ga" not in types(s) and s.credited(*SMALL[0]) == 1, f"no-more-work: {rc} {types(s)}")
    keys = keyed_worktodo(d, s, SMALL[1:3])
    with open(os.path.join(d, "worktodo.txt"), "a") as f:
        f.write("Factor=100057,1,31\n")
    rc, log = run(s, d, "--unreserve", "100019")
    check(rc == 0 and s.assignments[keys[0]]["done"] and not s.assignments[keys[1]]["done"]
          and len(factor_lines(d)) == 2, f"unreserve 100019: {rc} {factor_lines(d)} {log[-400:]}")
    rc, log = run(s, d, "--unreserve-all")
    check(rc == 0 and s.assignments[keys[1]]["done"] and factor_lines(d) == ["Factor=100057,1,31"],
          f"unreserve-all: {rc} {factor_lines(d)} {log[-400:]}")
    rc, log = run(s, d, "--unreserve", "100057")
    check(rc == 2 and "no PrimeNet assignment" in log, f"unreserve of a keyless line: {rc} {log[-300:]}")
    check(types(s).count("au") == 2, f"two au: {types(s)}")
    rc, log = run(s, fresh("unreserve-none"), "--unreserve-all")
    check(rc == 2 and "not registered" in log, f"unreserve unregistered: {rc} {log[-300:]}")
    check_clean(s, "unreserve")
    s.close()


def test_proxy():
    """-x: every PrimeNet request goes through the proxy (here a forward
    HTTP proxy of the test's own, which requires the user and password
    given in the proxy URL), and the result reaches the server."""
    import base64
    import http.server
    import threading
    import urllib.request
    seen = []

    class Proxy(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            auth = self.headers.get("Proxy-Authorization", "")
            seen.append((self.path, auth))
            if auth != "Basic " + base64.b64encode(b"pxuser:px pass").decode():
                self.send_response(407)
                self.send_header("Proxy-Authenticate", 'Basic realm="test"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(self.path, timeout=30) as r:
                body = r.read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    s = StandIn()
    d = fresh("proxy")
    keyed_worktodo(d, s, SMALL[:1])
    rc, log = run(s, d, "--no-more-work", "-x", f"http://pxuser:px%20pass@127.0.0.1:{proxy.server_address[1]}")
    proxy.shutdown()
    through = [p for p, auth in seen if p.startswith(s.url) and auth]
    check(rc == 0 and s.credited(*SMALL[0]) == 1 and through and len(through) >= len(s.requests),
          f"proxy: {rc}, {len(through)} requests through it for {len(s.requests)} at the server {log[-400:]}")
    check_clean(s, "proxy")
    s.close()


def test_usage():
    """http:// beyond loopback, options that need --primenet, an assignment on
    the command line, a bad proxy: exit 2 with a reason; the options as
    config-file keys; a broken state file stops lode before any request."""
    s = StandIn()
    d = fresh("usage")
    for extra, word in ((["--primenet-url", "http://v5.mersenne.org/v5server/"], "loopback"),):
        rc, log = run(s, d, *extra)
        check(rc == 2 and word in log, f"usage {extra}: {rc} {log[-300:]}")
    for bad, word in ((["--no-more-work"], "needs --primenet"), (["100003", "1", "31", "--primenet"], "command line"),
                      (["--primenet", "--work-pref", "5"], "--work-pref"),
                      (["--primenet", "--user", "x" * 21], "20 characters"),
                      (["--primenet", "-x", "ftp://proxy:21"], "proxy")):
        r = subprocess.run([LODE, "tf", *bad, "-d", "cpu"], cwd=d, capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and word in r.stderr, f"usage {bad}: {r.returncode} {r.stderr[-300:]}")
    cfg = os.path.join(d, "lode.json")
    with open(cfg, "w") as f:
        json.dump({"primenet": True, "primenet-url": s.url, "work-pref": 2, "days-of-work": 2.6,
                   "no-more-work": True, "user": "cfg-user"}, f)
    r = subprocess.run([LODE, "tf", "-c", cfg, "-d", "cpu"], cwd=d, capture_output=True, text=True, timeout=60,
                       env=ENV)
    po = [q["params"] for q in s.requests if q["t"] == "po"]
    check(r.returncode == 0 and po and po[0].get("w") == "2" and po[0].get("DaysOfWork") == "3"
          and s.computers and list(s.computers.values())[0].get("u") == "cfg-user",
          f"config keys: {r.returncode} {po} {r.stderr[-300:]}")
    os.unlink(os.path.join(d, "primenet.json"))
    s.requests.clear()
    with open(os.path.join(d, "primenet.json"), "w") as f:
        f.write("{broken")
    rc, log = run(s, d, "--no-more-work")
    check(rc == 1 and "primenet.json" in log and s.requests == [], f"a broken state file: {rc} {log[-300:]}")
    s.close()


def test_two_devices():
    """Two devices in one process (the CPU and an OpenCL device, PoCL in
    CI): their results go out once each, checksums and factors checked by
    the stand-in."""
    listing = subprocess.run([LODE, "--list-devices"], capture_output=True, text=True, timeout=60).stdout
    other = re.findall(r"^((?:cuda|opencl):\d+)", listing, re.M)
    if not other:
        print("test_two_devices: no second device here (no OpenCL or CUDA device): skipped")
        return
    s = StandIn()
    jobs = [(1000003, 1, 40), (1000033, 1, 40)]
    d = fresh("two")
    keyed_worktodo(d, s, jobs)
    # Under AddressSanitizer no leak check here: PoCL leaks when it compiles
    # a kernel with a cold cache (tests/CMakeLists.txt says the same of the
    # OpenCL tests); lode's own leaks are checked by the other runs.
    env = dict(ENV, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    rc, log = run(s, d, "--no-more-work", devices=f"cpu,{other[0]}", env=env)
    check(rc == 0 and all(s.credited(*j) == 1 for j in jobs), f"two devices: {rc} {log[-600:]}")
    kernels = {r["json"]["program"]["kernel"] for r in s.results}
    check(all("+" in k for k in kernels), f"two devices named in the results: {kernels}")
    for r in s.results:
        j = r["json"]
        check(j.get("factors", []) == oracle_factors(j["exponent"], j["bitlo"], j["bithi"]), f"two: factors {j}")
    check_sent_once(d, "two devices")
    check_clean(s, "two devices")
    s.close()


def test_api_section():
    """The HTTP API's "primenet" section follows the client: enabled, its
    state, and the results sent as the stand-in counts them."""
    import urllib.request
    if "libmicrohttpd:" not in subprocess.run([LODE, "-V"], capture_output=True, text=True, timeout=60).stdout:
        print("test_api_section: this lode is built without libmicrohttpd (no API): skipped")
        return
    s = StandIn()
    for j in SMALL[:2]:
        s.add_assignment(*j)
    d = fresh("api")
    lode = Running(s, d, "--api-bind", "127.0.0.1:0")
    port = []
    wait_for(lambda: port or port.extend(re.findall(r"API listening on http://127\.0\.0\.1:(\d+)",
                                                    open(lode.log.name).read())))

    def section():
        with urllib.request.urlopen(f"http://127.0.0.1:{port[0]}/api/summary", timeout=10) as r:
            return json.load(r).get("primenet", {})
    got = {}
    done = bool(port) and wait_for(lambda: (got.update(section()) or got.get("results_sent", 0) >= 2)
                                   and len(s.results) == 2)
    rc, log = lode.stop()
    check(done and got.get("enabled") is True and got.get("state") and got.get("results_queued") == 0
          and got.get("assignments_queued") == 0, f"api: the primenet section {got} ({len(s.results)} sent) "
          f"{log[-500:]}")
    check_clean(s, "api")
    s.close()


TESTS = (test_fresh_run, test_days_of_work, test_progress, test_crash_steps, test_server_down, test_reregister, test_final_codes,
         test_refused, test_hostile, test_register_keyless, test_no_more_work_and_unreserve, test_usage,
         test_two_devices, test_api_section, test_proxy)
ONLY = os.environ.get("LODE_TEST_ONLY")
for test in TESTS:
    if ONLY and test.__name__ not in ONLY.split(","):
        continue
    t0 = time.time()
    test()
    print(f"{test.__name__}: {time.time() - t0:.1f} s", flush=True)
subprocess.run(["rm", "-rf", tmp_root])
sys.exit(check.report())
