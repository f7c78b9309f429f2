#!/usr/bin/env python3
"""`lode check` through the program, on every device this machine has (the
CPU backend, PoCL's OpenCL device in CI, CUDA where there is a GPU) and on
the fault-injecting test devices (LODE_TEST_FAULT, core/dispatch/fault_backend.h):

- a clean run of every algorithm on every device and variant `lode
  --list-devices` shows passes (exit 0), each row with its jobs, re-checked
  hits and the whole range compared exactly;
- a device that corrupts one hit in N, drops one, or adds one is caught and
  named, the others go on and match, the exit status is 1, and each
  difference's reproduce command, run again, shows that difference against
  Python's hashlib (an independent oracle);
- the seed reproduces the run; --duration runs for its time and reports
  errors per hour per device; Ctrl-C stops it with status 130;
- `lode scan -a tf` finds a known factor (checked with Python's pow);
- bad options are usage errors (exit 2), never a crash.

usage: test_check.py PATH_TO_LODE
"""
import hashlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE = sys.argv[1]
VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors")
check = Checks()


def run(args, fault=None, timeout=1200):
    env = dict(os.environ)
    env.pop("LODE_TEST_FAULT", None)
    if fault is not None:
        env["LODE_TEST_FAULT"] = fault
    return subprocess.run([LODE, *args], capture_output=True, text=True, timeout=timeout, env=env)


def listed():
    """{device id: {algorithm: [variants]}} from lode --list-devices."""
    out = run(["--list-devices"]).stdout
    devices, current = {}, None
    for line in out.splitlines():
        m = re.match(r"^(\w+:\d+)\s", line)
        if m:
            current = devices.setdefault(m.group(1), {})
            continue
        m = re.match(r"^\s+(sha256d|scrypt|momentum|tf)\s+variants: (.*)$", line)
        if m and current is not None:
            current[m.group(1)] = m.group(2).split()
    return devices


def rows_of(doc):
    return {(r["device"], r["variant"] or "default", r["algorithm"]): r for r in doc["rows"]}


def sha256d_int(header):
    return int.from_bytes(hashlib.sha256(hashlib.sha256(header).digest()).digest(), "little")


def oracle_hits(header_hex, target_hex, start, count, versions=None):
    """The nonces of [start, start+count) whose SHA-256d meets the target;
    with versions (a version-rolled job), the (nonce, version) pairs."""
    header, target = bytearray(bytes.fromhex(header_hex)), int(target_hex, 16)
    hits = set()
    for n in range(start, start + count):
        header[76:80] = n.to_bytes(4, "little")
        for v in versions or [None]:
            if v is not None:
                header[0:4] = v.to_bytes(4, "little")
            if sha256d_int(bytes(header)) <= target:
                hits.add(n if v is None else (n, v))
    return hits


def clean_run():
    devices = listed()
    check(devices, f"lode --list-devices lists devices: {devices}")
    algos = ["sha256d", "scrypt", "tf"]
    r = run(["check", "-a", ",".join(algos), "--jobs", "2", "--seed", "11", "--json"])
    check(r.returncode == 0, f"clean check exits 0, not {r.returncode}:\n{r.stderr[-3000:]}")
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        check(False, f"--json prints JSON: {r.stdout[:500]}")
        return
    check(doc["verdict"] == "pass" and doc["seed"] == 11, f"verdict pass, seed 11: {doc['verdict']} {doc['seed']}")
    rows = rows_of(doc)
    want = {(d, v, a) for d, algs in devices.items() for a in algos for v in algs.get(a, [])}
    check(set(rows) == want, f"a row for every device x variant x algorithm listed:\n"
          f"  missing {sorted(want - set(rows))}\n  extra {sorted(set(rows) - want)}")
    for key, row in rows.items():
        check(row["ran"] and row["error"] is None and row["differences"] == 0 and row["jobs"] == 2,
              f"{key}: ran 2 jobs and matched: {row}")
        check(row["indices"] > 0 and row["indices_exact"] == row["indices"],
              f"{key}: with --jobs the reference enumerates the whole range: {row}")
        if key[2] != "tf":
            check(row["hits_reported"] >= 10 and row["hits_compared"] == row["hits_reported"],
                  f"{key}: dozens of hits, each matched to the reference's: {row}")
        else:  # the even job holds a known factor
            check(row["hits_compared"] >= 1 and row["hits_compared"] == row["hits_reported"],
                  f"{key}: the known factor found and matched: {row}")
    sums = {a: {r["hits_reported"] for k, r in rows.items() if k[2] == a} for a in algos}
    check(all(len(s) == 1 for s in sums.values()),
          f"the same jobs on every device and variant give the same hit counts: {sums}")
    # --no-color as users pass it to every lode command (before: "unknown
    # option" for lode check, which prints no colours anyway).
    text = run(["check", "-a", "sha256d", "-d", "cpu", "--jobs", "1", "--seed", "11", "--no-color"])
    check(text.returncode == 0 and re.search(r"^cpu:0\s+\S+\s+sha256d\s+1\s", text.stdout, re.M)
          and "check passed" in text.stderr, f"the text table and verdict:\n{text.stdout}\n{text.stderr[-500:]}")


def momentum_run():
    r = run(["check", "-a", "momentum", "--jobs", "1", "--seed", "3", "--json"])
    check(r.returncode == 0, f"Momentum check exits 0, not {r.returncode}:\n{r.stderr[-3000:]}")
    if r.returncode != 0:
        return
    rows = rows_of(json.loads(r.stdout))
    variants = {(d, v) for d, algs in listed().items() for v in algs.get("momentum", [])}
    check({(k[0], k[1]) for k in rows} == variants, f"every Momentum variant checked: {sorted(rows)}")
    counts = {r["hits_compared"] for r in rows.values()}
    check(len(counts) == 1 and all(r["hits_reported"] == r["hits_compared"] for r in rows.values()),
          f"every variant reports exactly the reference's colliding pairs: {counts}")


def check_reproductions(by_dev, fault):
    """Runs every kept mismatch's reproduce command (lode scan on the same
    device) and holds its output against hashlib: the difference must show
    again. Returns, per faulty device, the kinds seen (reported or missed)."""
    kinds = {"fault:0": set(), "fault:1": set(), "fault:2": set()}
    for dev in kinds:
        for m in by_dev.get(dev, {}).get("mismatches", []):
            kinds[dev].add(m["reported_by_device"])
            argv = shlex.split(m["reproduce"])
            check(argv[:2] == ["lode", "scan"] and f"-d" in argv and dev in argv, f"a lode scan command on {dev}: {argv}")
            opt = {argv[i]: argv[i + 1] for i in range(2, len(argv) - 1) if argv[i].startswith("--")}
            start, count = int(opt["--start"]), int(opt["--count"])
            # A version-rolled job's command names its versions; lode scan then
            # prints '<nonce> <version> <hash>' and the mismatch its version.
            versions = [int(v, 16) for v in opt["--versions"].split(",")] if "--versions" in opt else None
            expected = oracle_hits(opt["--header"], opt["--target"], start, count, versions)
            rep = run([*argv[1:]], fault, timeout=300)
            lines = [line.split() for line in rep.stdout.splitlines() if line.strip()]
            got = {(int(f[0]), int(f[1], 16)) if versions else int(f[0]) for f in lines}
            n = (m["index"], m["version"]) if versions else m["index"]
            if m["reported_by_device"]:
                # A made-up nonce fails lode scan's own re-check. A moved hit
                # (corrupt) may be moved only within one of the dispatcher's
                # chunks: then the real one goes missing instead.
                shown = n not in expected and (re.search(rf"hardware error: index {m['index']} fails", rep.stderr)
                                               or (dev == "fault:0" and got != expected))
            else:
                shown = n in expected and n not in got
            # A hit the re-check rejects is a hardware error: exit 1.
            hardware = re.search(r"hardware error: index \d+ fails", rep.stderr) is not None
            check(rep.returncode == (1 if hardware else 0) and shown,
                  f"{dev}: the reproduce command shows '{m['what']}' again (hashlib: {sorted(expected)}, "
                  f"lode scan: {sorted(got)}):\n  {m['reproduce']}\n  {rep.stderr[-600:]}")
    return kinds


def fault_runs():
    fault = "corrupt:0:8,drop:1:8,extra:2:20000"
    args = ["check", "-a", "sha256d", "-d", "fault:0,fault:1,fault:2,fault:3", "--jobs", "3", "--seed", "5"]
    r = run(args + ["--json"], fault)
    check(r.returncode == 1, f"a mismatching device makes the exit status 1, not {r.returncode}:\n{r.stderr[-2000:]}")
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        check(False, f"--json prints JSON on a failed check: {r.stdout[:500]}")
        return
    check(doc["verdict"] == "fail", f"verdict fail: {doc['verdict']}")
    by_dev = {row["device"]: row for row in doc["rows"]}
    for dev in ("fault:0", "fault:1", "fault:2"):
        row = by_dev.get(dev, {})
        check(row.get("differences", 0) > 0 and row.get("mismatches"), f"{dev}'s faults are caught: {row}")
        check(re.search(rf"check FAILED.*{dev} sha256d", r.stderr) is not None, f"{dev} named in the verdict:\n{r.stderr[-800:]}")
    row3 = by_dev.get("fault:3", {})
    check(row3.get("differences") == 0 and row3.get("jobs") == 3, f"the healthy fault:3 goes on and matches: {row3}")
    check("fault:3" not in r.stderr.split("check FAILED")[-1], "fault:3 is not named as failing")
    kinds = check_reproductions(by_dev, fault)
    check(kinds["fault:0"] == {True, False}, f"corrupt: a wrong nonce reported and the real one missed: {kinds['fault:0']}")
    check(kinds["fault:1"] == {False}, f"drop: only missed hits: {kinds['fault:1']}")
    check(kinds["fault:2"] == {True}, f"extra: only made-up hits: {kinds['fault:2']}")
    # The seed reproduces the whole run.
    again = run(args + ["--json"], fault)
    if again.returncode == 1:
        def essence(d):
            return [(x["device"], x["jobs"], x["hits_reported"], x["differences"], [m["what"] for m in x["mismatches"]])
                    for x in d["rows"]]
        check(essence(json.loads(again.stdout)) == essence(doc), "the same seed gives the same run")
    else:
        check(False, f"second fault run exits 1, not {again.returncode}")
    # A version-rolled job (seed 1's only job): the commands name its versions
    # and lode scan hashes each nonce under each of them.
    rolled = run(["check", "-a", "sha256d", "-d", "fault:0,fault:1,fault:2", "--jobs", "1", "--seed", "1", "--json"],
                 fault)
    try:
        rows = {row["device"]: row for row in json.loads(rolled.stdout)["rows"]}
    except (ValueError, KeyError):
        check(False, f"--json of the version-rolled run: {rolled.stdout[:500]}")
        rows = {}
    check(all("version" in m and "--versions" in m["reproduce"] for row in rows.values() for m in row["mismatches"])
          and all(rows.get(d, {}).get("mismatches") for d in ("fault:0", "fault:1", "fault:2")),
          "every difference of the version-rolled job names its version and the versions to scan")
    check_reproductions(rows, fault)
    text = run(args, fault)
    check(re.search(r"^MISMATCH fault:1 sha256d job \d+ \(seed 5\).*not reported; the reference finds it\n"
                    r"  reproduce: lode scan -a sha256d -d fault:1 --header [0-9a-f]{160} --target [0-9a-f]{64} "
                    r"--start \d+ --count \d+( --versions [0-9a-f]{8}(,[0-9a-f]{8})*)?$", text.stdout, re.M) is not None,
          f"the text report names the difference and its command:\n{text.stdout[-1500:]}")


def duration_run():
    # A hang guard, not a speed limit: run() raises (the test fails) if the
    # 4-s check has not ended in 300 s.
    r = run(["check", "-a", "sha256d", "-d", "cpu:0,fault:1", "--duration", "4", "--seed", "2"], "drop:1:4",
            timeout=300)
    check(r.returncode == 1, f"--duration with a dropping device exits 1, not {r.returncode}:\n{r.stderr[-1500:]}")
    check(re.search(r"^cpu:0: 0 mismatching jobs in [\d.]+ min \(0 per hour\)", r.stdout, re.M) is not None,
          f"errors per hour for the healthy device:\n{r.stdout}")
    m = re.search(r"^fault:1: (\d+) mismatching jobs in [\d.]+ min \(([\d.e+]+) per hour\)", r.stdout, re.M)
    check(m is not None and int(m.group(1)) > 0 and float(m.group(2)) > 0,
          f"errors per hour for the faulty device:\n{r.stdout}")
    # Jobs beyond the first on one row that has the whole duration: above,
    # cpu:0's 4 s are split over its variants, about 1 s a row, which a
    # loaded machine can spend opening, self-testing and tuning.
    one = run(["check", "-a", "sha256d", "-d", "cpu:0", "--variant", "portable", "--duration", "4", "--seed", "2"],
              timeout=300)
    jobs = re.search(r"^cpu:0\s+portable\s+sha256d\s+(\d+)\s", one.stdout, re.M)
    check(one.returncode == 0 and jobs is not None and int(jobs.group(1)) >= 2,
          f"the device kept getting jobs for 4 s (status {one.returncode}):\n{one.stdout}\n{one.stderr[-1000:]}")
    # Ctrl-C: status 130, no verdict of pass.
    p = subprocess.Popen([LODE, "check", "-a", "sha256d", "-d", "cpu:0", "--duration", "60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    p.send_signal(signal.SIGINT)
    try:  # a hang guard: the job being re-checked on the CPU finishes first (slow under TSan)
        out, err = p.communicate(timeout=300)
        check(p.returncode == 130 and "check interrupted" in err,
              f"SIGINT stops the check with 130, not {p.returncode}:\n{err[-500:]}")
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "SIGINT did not stop lode check within 300 s")


def streaming_rows():
    """#39: each row is printed as it finishes, under a "compared" column (the
    share of indices the reference enumerated, not a match rate), and -t
    is accepted. Two rows of a 20-s check, 10 s each: the first row shows
    while the second runs, so a SIGINT sent once it shows stops the check
    (130); printed only at the end, the row comes after the verdict is
    taken (exit 0)."""
    p = subprocess.Popen([LODE, "check", "-a", "sha256d", "-d", "cpu:0", "--variant", "portable", "-t", "1",
                          "--duration", "20", "--seed", "4", "-a", "scrypt"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:  # hang guards, not speed limits
        header = p.stdout.readline()
        first = p.stdout.readline()
        p.send_signal(signal.SIGINT)
        rest, err = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, "lode check did not end within 300 s of SIGINT")
        return
    check(header.split()[:6] == ["device", "variant", "algorithm", "jobs", "hits", "compared"]
          and "exact" not in header, f"the column is named 'compared': {header!r}")
    check(re.match(r"^cpu:0\s+portable\s+sha256d\s+[1-9]\d*\s+\d+\s+[\d.]+%\s+0\s", first) is not None,
          f"the first row, as it finished: {first!r}")
    check(p.returncode == 130 and "check interrupted" in err,
          f"the first row came while the second ran (SIGINT then stops it: 130), not {p.returncode}:\n{err[-500:]}")
    check(re.search(r"^cpu:0\s+portable\s+scrypt\s", rest, re.M) is not None and first not in rest,
          f"the unfinished row after it, each row once:\n{rest}")


def tf_scan():
    doc = json.load(open(os.path.join(VECTORS, "mersenne-factors.json")))
    v = min((x for x in doc["vectors"] if x["bit_min"] >= 50), key=lambda x: x["bit_max"])
    p, k = v["exponent"], int(v["k"])
    c, n = k % 4620, k // 4620
    r = run(["scan", "-a", "tf", "-d", "cpu", "--tf-class", f"{p},{v['bit_min']},{v['bit_max']},{c}",
             "--start", str(max(n - 3, 0)), "--count", "7"])
    lines = [line.split() for line in r.stdout.splitlines()]
    q = 2 * k * p + 1
    check(r.returncode == 0 and [n, k, q] in [[int(x) for x in line] for line in lines] and pow(2, p, q) == 1,
          f"lode scan -a tf finds M{p}'s factor {q} at n {n}: {r.stdout} {r.stderr[-300:]}")
    bad = run(["scan", "-a", "tf", "-d", "cpu", "--tf-class", f"{p},{v['bit_min']},{v['bit_max']}", "--start", "0",
               "--count", "1"])
    check(bad.returncode == 2 and "--tf-class" in bad.stderr, f"a short --tf-class is a usage error: {bad.stderr}")


def usage_errors():
    cases = [
        ["check", "--jobs", "0"],
        ["check", "--duration", "0"],
        ["check", "--duration", "5x"],
        ["check", "--jobs", "2", "--duration", "3"],
        ["check", "-a", "nope"],
        ["check", "-a", "sha256d,"],
        ["check", "-d", "nope:0"],
        ["check", "-a", "sha256d", "-d", "cpu", "--variant", "nosuch"],
        ["check", "--seed", "-1"],
        ["check", "--seed", str(2 ** 53)],
        ["check", "extra"],
        ["check", "--url", "stratum+tcp://x:1"],
    ]
    for args in cases:
        r = run(args, timeout=60)
        check(r.returncode == 2 and "lode: error:" in r.stderr,
              f"{' '.join(args)}: usage error (exit 2), not {r.returncode}: {r.stderr[-300:]}")
    h = run(["check", "--help"])
    check(h.returncode == 0 and "--duration" in h.stdout and "--seed" in h.stdout, "lode check --help")


clean_run()
momentum_run()
fault_runs()
duration_run()
streaming_rows()
tf_scan()
usage_errors()
sys.exit(check.report())
