#!/usr/bin/env python3
"""`lode tf` (Mersenne trial factoring) against Python's pow(2, p, q) == 1,
an oracle that shares no code with lode: the factors of whole ranges, the
legacy lines, results.json.txt with its CRC-32 (zlib.crc32), worktodo.txt
processing with malformed lines, checkpoints with SIGKILL at random moments
and Ctrl-C, and --selftest.

usage: test_tf.py PATH_TO_LODE   (LODE_TEST_SEED replays a random run)
"""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import zlib

LODE = os.path.abspath(sys.argv[1])
SEED = int(os.environ.get("LODE_TEST_SEED", time.time_ns() % 2**32))
rng = random.Random(SEED)
print(f"random seed {SEED} (replay with LODE_TEST_SEED={SEED})")
passed = failed = 0
CLASSES = 4620


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}", file=sys.stderr)


def run(*args, cwd=None, timeout=300):
    return subprocess.run([LODE, "tf", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def oracle_factors(p, lo, hi):
    """Every q = 2kp+1 in [2^lo, 2^hi) with 2^p mod q == 1 (no sieve, no classes)."""
    out = []
    k = max(1, (2**lo - 1 + 2 * p - 1) // (2 * p))
    while True:
        q = 2 * k * p + 1
        if q >= 2**hi:
            break
        if q >= 2**lo and q % 8 in (1, 7) and pow(2, p, q) == 1:
            out.append(q)
        k += 1
    return out


def needed_classes(p):
    """Classes k mod 4620 whose q can be a factor: q = +-1 mod 8, no factor 3, 5, 7, 11."""
    out = []
    for c in range(CLASSES):
        q = 2 * c * p + 1
        if q % 8 in (1, 7) and all(q % m for m in (3, 5, 7, 11)):
            out.append(c)
    return out


def legacy(p, lo, hi, factors):
    lines = [f"M{p} has a factor: {q}" for q in factors]
    if factors:
        lines.append(f"found {len(factors)} factor{'s' if len(factors) > 1 else ''} for M{p} from 2^{lo} to 2^{hi}")
    else:
        lines.append(f"no factor for M{p} from 2^{lo} to 2^{hi}")
    return lines


def check_json(line, p, lo, hi, factors, aid=None):
    r = json.loads(line)
    check(r["exponent"] == p and r["worktype"] == "TF" and r["bitlo"] == lo and r["bithi"] == hi
          and r["rangecomplete"] is True, f"json fields {line}")
    check(r["status"] == ("F" if factors else "NF"), f"json status {line}")
    check(r.get("factors", []) == [str(q) for q in factors], f"json factors {line} want {factors}")
    check(r["program"]["name"] == "lode", "json program")
    if aid is not None and len(aid) == 32:
        check(r.get("aid") == aid, f"json aid {line}")
    else:
        check("aid" not in r, f"no aid key for {aid}: {line}")
    s = ";".join([str(p), "TF", ",".join(r.get("factors", [])), "", str(lo), str(hi),
                  "1" if r["rangecomplete"] else "0", "", "", r["program"]["name"],
                  r["program"]["version"], r["program"]["kernel"], r["program"]["details"],
                  r["os"]["os"], r["os"]["architecture"], r["timestamp"]])
    want = "%08X" % zlib.crc32(s.encode())
    check(r["checksum"] == {"version": 1, "checksum": want}, f"checksum {r['checksum']} want {want}")


def test_ranges(tmp):
    cases = [(100003, 1, 37), (100043, 20, 36)]
    for _ in range(3):
        p = rng.randrange(100000, 3000000)
        while not is_prime(p):
            p += 1
        lo = rng.randrange(20, 34)
        cases.append((p, lo, lo + rng.randrange(1, 4)))
    for p, lo, hi in cases:
        want = oracle_factors(p, lo, hi)
        res = os.path.join(tmp, f"r{p}.json")
        r = run(str(p), str(lo), str(hi), "-q", "--results", res, "--legacy-results", res + ".txt",
                "--no-checkpoints")
        check(r.returncode == 0, f"tf {p} {lo} {hi}: rc {r.returncode} {r.stderr}")
        check(r.stdout.splitlines() == legacy(p, lo, hi, want),
              f"tf {p} {lo} {hi}: stdout {r.stdout!r}, oracle {want}")
        with open(res) as f:
            lines = f.read().splitlines()
        check(len(lines) == 1, "one JSON line")
        if lines:
            check_json(lines[0], p, lo, hi, want)
        with open(res + ".txt") as f:
            txt = f.read().splitlines()
        check([t.split(" [")[0] for t in txt] == legacy(p, lo, hi, want), f"results.txt {txt}")


def test_errors(tmp):
    for args in (["100001", "1", "40"], ["99991", "1", "40"], ["100003", "0", "40"],
                 ["100003", "40", "40"], ["100003", "94", "96"], ["100003", "80", "82"],
                 ["100003", "1"], ["x", "1", "40"]):
        r = run(*args, "-q", cwd=tmp)
        check(r.returncode == 2 and "error" in r.stderr, f"tf {args}: rc {r.returncode} {r.stderr!r}")


def test_worktodo(tmp):
    wt = os.path.join(tmp, "worktodo.txt")
    aid = "0123456789ABCDEF0123456789abcdef"
    lines = ["// a comment", f"Factor={aid},100003,1,38", "", "Factor=N/A,M100043,20,36 trailing comment",
             "Factor=bogus,line", "\\\\ another comment", "factor=1000003,30,36", "Factor=100001,1,30",
             "Test=12345,1,2"]
    with open(wt, "w") as f:
        f.write("\n".join(lines) + "\n")
    res = os.path.join(tmp, "results.json.txt")
    r = run("-w", wt, "--results", res, "--checkpoint-dir", tmp, "-q", cwd=tmp)
    check(r.returncode == 2, f"worktodo with malformed lines exits 2: {r.returncode} {r.stderr}")
    for bad in ("Factor=bogus,line", "Factor=100001,1,30", "Test=12345,1,2"):
        check(bad in r.stderr and "worktodo.txt:" in r.stderr, f"error names {bad!r}: {r.stderr!r}")
    with open(wt) as f:
        left = f.read().splitlines()
    check(left == ["// a comment", "", "Factor=bogus,line", "\\\\ another comment", "Factor=100001,1,30",
                   "Test=12345,1,2"], f"worktodo keeps the rest: {left}")
    with open(res) as f:
        got = f.read().splitlines()
    jobs = [(100003, 1, 38, aid), (100043, 20, 36, "N/A"), (1000003, 30, 36, None)]
    check(len(got) == 3, f"three results: {got}")
    out = r.stdout.splitlines()
    want_out = []
    for line, (p, lo, hi, a) in zip(got, jobs):
        fs = oracle_factors(p, lo, hi)
        check_json(line, p, lo, hi, fs, a)
        want_out += legacy(p, lo, hi, fs)
    check(out == want_out, f"stdout in worktodo order: {out}")
    check(not [n for n in os.listdir(tmp) if n.endswith(".ckp") or n.endswith(".tmp")],
          f"no checkpoint or temporary left: {os.listdir(tmp)}")


def test_worktodo_add(tmp):
    """worktodo.add (mfaktc's drop box) is appended to worktodo.txt and removed;
    its assignments run after the ones already there."""
    d = os.path.join(tmp, "add")
    os.makedirs(d)
    wt, add = os.path.join(d, "worktodo.txt"), os.path.join(d, "worktodo.add")
    with open(wt, "w") as f:
        f.write("Factor=N/A,100003,1,34")  # no final newline: the merge adds one
    with open(add, "w") as f:
        f.write("Factor=N/A,100043,20,33\n")
    res = os.path.join(d, "results.json.txt")
    r = run("-w", wt, "--results", res, "--no-checkpoints", "-q", cwd=d)
    check(r.returncode == 0, f"worktodo.add run: {r.returncode} {r.stderr}")
    check(not os.path.exists(add), "worktodo.add removed after the merge")
    with open(wt) as f:
        left = [l for l in f.read().splitlines() if l.strip()]
    check(left == [], f"both assignments done and removed: {left}")
    with open(res) as f:
        got = f.read().splitlines()
    check(len(got) == 2, f"two results: {got}")
    for line, (p, lo, hi) in zip(got, [(100003, 1, 34), (100043, 20, 33)]):
        check_json(line, p, lo, hi, oracle_factors(p, lo, hi), "N/A")


def test_report_once(tmp):
    """A run killed after appending its result but before removing its
    checkpoint does not report twice; one killed just before appending does."""
    d = os.path.join(tmp, "once")
    os.makedirs(d)
    p, lo, hi = 100043, 20, 33
    res = os.path.join(d, "results.json.txt")
    args = [str(p), str(lo), str(hi), "--results", res, "--checkpoint-dir", d, "-q"]
    r = run(*args, cwd=d)
    check(r.returncode == 0, f"first run {r.returncode} {r.stderr}")
    fs = oracle_factors(p, lo, hi)
    ks = [(q - 1) // (2 * p) for q in fs]

    def checkpoint(offset):
        text = (f"lode-tf-checkpoint 1\nexponent {p}\nbits {lo} {hi}\nnext_class 4620\n"
                f"classes_done 960\nclass_log 0\nfactors {len(ks)}" + "".join(f" {k}" for k in ks) +
                f"\nresults_offset {offset}\n")
        with open(os.path.join(d, f"M{p}_{lo}_{hi}.ckp"), "w") as f:
            f.write(text + "crc32 %08X\n" % zlib.crc32(text.encode()))

    checkpoint(0)  # the result after offset 0 is this assignment's: already reported
    r = run(*args, cwd=d)
    with open(res) as f:
        n = len(f.read().splitlines())
    check(r.returncode == 0 and r.stdout.splitlines() == legacy(p, lo, hi, fs) and n == 1,
          f"not reported twice: rc {r.returncode}, {n} lines, {r.stdout!r}")
    checkpoint(os.path.getsize(res))  # killed before the append: report now
    r = run(*args, cwd=d)
    with open(res) as f:
        lines = f.read().splitlines()
    check(r.returncode == 0 and len(lines) == 2, f"reported after a kill before the append: {len(lines)}")
    check_json(lines[-1], p, lo, hi, fs)


def test_double_interrupt(tmp):
    """The first Ctrl-C lets the class finish (minutes on a CPU at 2^73); a
    second one stops at once, with the class left undone in the checkpoint."""
    d = os.path.join(tmp, "int2")
    os.makedirs(d)
    proc = subprocess.Popen([LODE, "tf", "66362159", "73", "74", "-d", "cpu", "-t", "1", "--checkpoint-dir", d,
                             "--results", os.path.join(d, "r.json")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)
    check(proc.poll() is None, "one Ctrl-C: still finishing the class")
    t0 = time.time()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    check(proc.returncode == 130 and time.time() - t0 < 10, f"second Ctrl-C stops: rc {proc.returncode} {err!r}")
    with open(os.path.join(d, "M66362159_73_74.ckp")) as f:
        ckp = f.read()
    check("next_class 0\n" in ckp and "classes_done 0\n" in ckp, f"class 0 not done in the checkpoint: {ckp!r}")
    check(not os.path.exists(os.path.join(d, "r.json")), "no result for an unfinished assignment")


def test_kill_resume(tmp):
    p, lo, hi = 100003, 1, 39
    want = oracle_factors(p, lo, hi)
    log = os.path.join(tmp, "classes.log")
    res = os.path.join(tmp, "kr.json")
    args = [LODE, "tf", str(p), str(lo), str(hi), "-q", "--results", res, "--checkpoint-dir", tmp,
            "--checkpoint-interval", "0.05", "--class-log", log, "-t", "1"]
    kills = 0
    final = None
    done_before_kill = False  # killed after it had finished (result written, checkpoint gone)
    for attempt in range(60):
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # The first run is cut short for sure (the whole run takes ~0.4 s
            # here, and a run that finished before its timeout left the kill
            # path untested: a CI failure); later ones at random points.
            wait = rng.uniform(0.02, 0.1) if attempt == 0 else rng.uniform(0.05, 0.4)
            out, err = proc.communicate(timeout=wait)
            final = (proc.returncode, out, err)
            break
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            kills += 1
            # A run that had finished and was killed on its way out: running the
            # command again would rightly factor the range again; stop here.
            if os.path.exists(res) and not os.path.exists(os.path.join(tmp, f"M{p}_{lo}_{hi}.ckp")):
                done_before_kill = True
                break
    check((final is not None and final[0] == 0) or done_before_kill,
          f"finished after {kills} SIGKILLs: {final}")
    check(kills >= 1, f"killed at least once ({kills})")
    if final:
        check(final[1].splitlines() == legacy(p, lo, hi, want), f"resumed result {final[1]!r} want {want}")
    with open(log) as f:
        classes = [int(x) for x in f.read().split()]
    check(classes == needed_classes(p), f"each needed class exactly once, in order: {len(classes)} logged, "
          f"{len(set(classes))} distinct, want {len(needed_classes(p))}")
    with open(res) as f:
        check(len(f.read().splitlines()) == 1, "one result line despite the kills")

    # Ctrl-C: finishes the class, saves, exits 130; the next run completes.
    os.remove(log)
    proc = subprocess.Popen(args[:-4] + ["--checkpoint-interval", "1000", "--class-log", log],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    ckps = [n for n in os.listdir(tmp) if n.endswith(".ckp")]
    if proc.returncode == 130:
        check(len(ckps) == 1, f"Ctrl-C saved a checkpoint: {os.listdir(tmp)}")
        with open(log) as f:
            first = [int(x) for x in f.read().split()]
        r = subprocess.run(args[:-4] + ["--class-log", log], capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and r.stdout.splitlines() == legacy(p, lo, hi, want), f"resume after Ctrl-C {r}")
        with open(log) as f:
            classes = [int(x) for x in f.read().split()]
        check(len(first) > 0 and classes == needed_classes(p), "Ctrl-C then resume: each class once")
    else:
        check(proc.returncode == 0, f"Ctrl-C: rc {proc.returncode} {err}")

    # A damaged checkpoint is refused (checksum) and the run starts over.
    with open(os.path.join(tmp, f"M{p}_{lo}_{hi}.ckp"), "w") as f:
        f.write("lode-tf-checkpoint 1\nexponent 100003\nbits 1 41\nnext_class 4000\nclasses_done 900\n"
                "class_log 0\nfactors 0\ncrc32 00000000\n")
    r = subprocess.run(args[:-4], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and "damaged" in r.stderr and r.stdout.splitlines() == legacy(p, lo, hi, want),
          f"damaged checkpoint ignored: {r.stdout!r} {r.stderr!r}")


def test_selftest():
    r = run("--selftest")
    check(r.returncode == 0 and "FAILED" not in r.stdout and "0 failed" in r.stdout, f"--selftest {r.stdout}")
    r = subprocess.run([LODE, "--selftest", "-a", "tf"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"lode --selftest -a tf: {r.stdout} {r.stderr}")


with tempfile.TemporaryDirectory() as tmp:
    for test in (test_selftest, test_errors, test_ranges, test_worktodo, test_worktodo_add, test_report_once,
                 test_double_interrupt, test_kill_resume):
        t0 = time.time()
        test(*([tmp] if test is not test_selftest else []))
        print(f"{test.__name__}: {time.time() - t0:.1f} s")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
