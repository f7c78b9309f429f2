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
import re
import signal
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
import tf_oracle  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
SEED = int(os.environ.get("LODE_TEST_SEED", time.time_ns() % 2**32))
rng = random.Random(SEED)
print(f"random seed {SEED} (replay with LODE_TEST_SEED={SEED})")
check = Checks()
CLASSES = 4620


def run(*args, cwd=None, timeout=300):
    return subprocess.run([LODE, "tf", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def oracle_factors(p, lo, hi):
    """Every q = 2kp+1 in [2^lo, 2^hi) with 2^p mod q == 1 (no sieve, no classes)."""
    return [q for q in tf_oracle.candidates(p, lo, hi) if pow(2, p, q) == 1]


def oracle_proof(p, lo, hi):
    """t, the expected count and the list of a proof of (p, lo, hi), from
    first principles (tests/tf_oracle.py)."""
    t, e = tf_oracle.expected(p, lo, hi)
    return t, e, tf_oracle.listing(p, lo, hi, t)


def check_proof_file(res, p, lo, hi, want):
    """The proof file beside results file res, and the JSON line's
    lode_proof, against oracle_proof's (t, expected, list)."""
    t, expected, listed = want
    path = os.path.join(os.path.dirname(res), f"M{p}_{lo}_{hi}.proof")
    text = open(path).read() if os.path.exists(path) else ""
    lines = text.splitlines()
    digest = tf_oracle.digest(listed)
    head = ["lode-tf-proof 1", f"exponent {p}", f"bits {lo} {hi}", f"t {t}"]
    check(lines[:4] == head and lines[5:7] == [f"count {len(listed)}", f"sha256 {digest}"]
          and lines[7:] == [str(q) for q in listed] + ["end"],
          f"proof M{p} {lo}-{hi}: {len(lines) - 8} listed, oracle {len(listed)} with t {t}: {lines[:7]}")
    check(len(lines) > 4 and lines[4].startswith("expected ")
          and abs(float(lines[4].split()[1]) - expected) <= 0.051 + 1e-3 * expected,
          f"proof expected {lines[4:5]} oracle {expected:.3f}")
    with open(res) as f:
        results = [json.loads(x) for x in f.read().splitlines()]
    ours = [r for r in results if r["exponent"] == p and r["bitlo"] == lo and r["bithi"] == hi]
    pf = ours[-1].get("lode_proof", {}) if ours else {}
    check(pf.get("t") == t and pf.get("count") == len(listed) and pf.get("sha256") == digest
          and pf.get("file") == os.path.basename(path), f"lode_proof {pf}")
    r = subprocess.run([LODE, "tf", "--verify", path], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"lode tf --verify {path}: {r.returncode} {r.stdout[-300:]} {r.stderr[-300:]}")
    return digest


def test_proof(tmp):
    """Issue #18: every result carries a proof; the list is exactly the one
    Python finds, on the CPU backend and on every CUDA and OpenCL device here
    (PoCL in CI; on a GPU machine CPU against CUDA and OpenCL), with the same
    digest; LODE_TF_NO_PROOF leaves it out."""
    listing = subprocess.run([LODE, "--list-devices"], capture_output=True, text=True, timeout=120).stdout
    devices = ["cpu"] + sorted(set(re.findall(r"^((?:cuda|opencl):\d+)", listing, re.M)))
    for p, lo, hi in [(100003, 20, 38), (1000003, 30, 42), (100043, 1, 30)]:
        want = oracle_proof(p, lo, hi)
        digests = set()
        for dev in devices:
            d = fresh(tmp, f"proof-{p}-{dev.replace(':', '')}")
            res = os.path.join(d, "results.json.txt")
            r = run(str(p), str(lo), str(hi), "-q", "-d", dev, "--results", res, "--no-checkpoints")
            check(r.returncode == 0, f"tf {p} {lo} {hi} on {dev}: {r.returncode} {r.stderr[-300:]}")
            digests.add(check_proof_file(res, p, lo, hi, want))
        check(len(digests) == 1, f"M{p} {lo}-{hi}: one list on {devices}")
    d = fresh(tmp, "no-proof")
    res = os.path.join(d, "results.json.txt")
    r = subprocess.run([LODE, "tf", "100003", "20", "30", "-q", "--results", res, "--no-checkpoints"],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, LODE_TF_NO_PROOF="1"))
    with open(res) as f:
        line = f.read()
    check(r.returncode == 0 and "lode_proof" not in line and "carries no proof" in r.stderr
          and not [n for n in os.listdir(d) if n.endswith(".proof")],
          f"LODE_TF_NO_PROOF: {r.returncode} {line} {r.stderr[-200:]}")


def test_profile(tmp):
    """LODE_TF_PROFILE=1 on every GPU backend here (PoCL in CI): the profiled
    path (OpenCL: both lanes on one profiling queue) finds exactly Python's
    factors, and the log reports the kernels it timed, a sub-launch at least
    for every class the range needs."""
    listing = subprocess.run([LODE, "--list-devices"], capture_output=True, text=True, timeout=120).stdout
    devices = sorted(set(re.findall(r"^((?:cuda|opencl):\d+)", listing, re.M)))
    p, lo, hi = 100043, 20, 36
    want = oracle_factors(p, lo, hi)
    line_re = re.compile(r"tf: (\d+) (?:sub-)?launches, \S+ indices each, ([\d.]+)% survive the sieve "
                         r"\((\d+) primes\); ms per (?:sub-)?launch: .*?segments ([\d.]+)")
    for dev in devices:
        d = fresh(tmp, f"profile-{dev.replace(':', '')}")
        r = subprocess.run([LODE, "tf", str(p), str(lo), str(hi), "-d", dev, "--no-checkpoints",
                            "--results", os.path.join(d, "results.json.txt")],
                           capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, LODE_TF_PROFILE="1", LODE_TF_LAUNCH_BITS="20"))
        got = [int(q) for q in re.findall(r"M\d+ has a factor: (\d+)", r.stdout)]
        check(r.returncode == 0 and got == want, f"profiled tf on {dev}: rc {r.returncode}, {got}, oracle {want}")
        m = line_re.findall(r.stderr)
        check(len(m) == 1, f"profiled tf on {dev}: one profile line: {r.stderr[-600:]}")
        if len(m) == 1:
            launches, survive, primes, seg_ms = int(m[0][0]), float(m[0][1]), int(m[0][2]), float(m[0][3])
            check(launches >= len(needed_classes(p)) and 0 < survive < 100 and primes > 0 and seg_ms > 0,
                  f"profiled tf on {dev}: {m[0]} ({len(needed_classes(p))} classes)")


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
        while not tf_oracle.is_prime(p):
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
    attempts = 40
    for attempt in range(attempts):
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # The first run is cut short for sure (the whole run takes ~0.4 s
            # here, and a run that finished before its timeout left the kill
            # path untested: a CI failure); later ones at random points, a
            # little later each time so that a slow (loaded) machine still
            # gets past the start-up; the last run is left to finish.
            wait = rng.uniform(0.02, 0.1) if attempt == 0 else rng.uniform(0.05, 0.4) * (1 + attempt / 8)
            out, err = proc.communicate(timeout=None if attempt == attempts - 1 else wait)
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
    check_proof_file(res, p, lo, hi, oracle_proof(p, lo, hi))  # the same list across the kills

    # Ctrl-C: the class (milliseconds here) finishes within the stop's 2 s, is saved, exit 130;
    # the next run completes.
    os.remove(log)
    proc = subprocess.Popen(args[:-4] + ["--checkpoint-interval", "1000", "--class-log", log],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Ctrl-C once classes are being scanned (its handler is in place then),
    # not at a fixed time a loaded machine may not have reached.
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline and not (os.path.exists(log) and os.path.getsize(log) > 0):
        time.sleep(0.005)
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
    check(r.returncode == 0 and "FAILED" not in r.stdout and ": all found" in r.stdout, f"--selftest {r.stdout}")
    r = subprocess.run([LODE, "--selftest", "-a", "tf"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"lode --selftest -a tf: {r.stdout} {r.stderr}")


# ---- issue 14 section 2: no result lost or reported twice ----

def results_of(path):
    """(exponent, bitlo, bithi) of every results.json.txt line, in order; a
    line that is not JSON counts as ("bad", line)."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, "rb") as f:
        for line in f.read().split(b"\n"):
            if not line:
                continue
            try:
                r = json.loads(line)
                out.append((r["exponent"], r["bitlo"], r["bithi"]))
            except (ValueError, KeyError, TypeError):
                out.append(("bad", line[:80]))
    return out


def summaries_of(path):
    """(p, lo, hi) of every legacy summary line ('no factor for' / 'found n factors for')."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            w = line.split()
            if line.startswith(("no factor for M", "found ")) and " from 2^" in line:
                i = w.index("from")
                out.append((int(w[i - 1][1:]), int(w[i + 1][2:]), int(w[i + 3][2:])))
    return out


def fresh(tmp, name):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    return d


def factor_lines(path):
    with open(path, "rb") as f:
        return [l for l in f.read().split(b"\n") if l.startswith(b"Factor=")]


def test_worktodo_bytes(tmp):
    """Bullets 1 and 6: a line with a NUL (alone, or inside the line), a
    1 MiB line and one with escape sequences are reported, cut and escaped,
    and kept byte for byte with everything around them; the good lines run."""
    long_line = b"Factor=" + b"7" * (1 << 20)
    evil = b"\x1b[2J\x1b[31mFactor=evil\x07\x1b[0m"
    cases = [
        (b"Factor=100003,1,30\n\x00junk\nFactor=100019,1,30\nFactor=100043,1,30\n", [b"\x00junk\n"]),
        (b"Factor=100003,1,30\nFactor=100019,\x00,1,30\nFactor=100043,1,30\n", [b"Factor=100019,\x00,1,30\n"]),
        (b"// keep\r\nFactor=100003,1,30\r\n" + long_line + b"\n" + evil + b"\r\nFactor=100043,1,30\n\n\\\\ end",
         [b"// keep\r\n", long_line + b"\n", evil + b"\r\n", b"\n", b"\\\\ end"]),
    ]
    for n, (text, kept) in enumerate(cases):
        d = fresh(tmp, f"bytes{n}")
        wt = os.path.join(d, "worktodo.txt")
        with open(wt, "wb") as f:
            f.write(text)
        r = subprocess.run([LODE, "tf", "-w", wt, "-d", "cpu", "-q"], capture_output=True, timeout=300, cwd=d)
        with open(wt, "rb") as f:
            left = f.read()
        check(r.returncode == 2, f"case {n}: malformed lines exit 2: {r.returncode} {r.stderr[:300]!r}")
        check(left == b"".join(kept), f"case {n}: only the finished lines removed, rest byte for byte: {left[:200]!r}")
        want = [(int(l.split(b"=")[1].split(b",")[0]), 1, 30) for l in text.split(b"\n")
                if l.rstrip(b"\r").endswith(b",1,30") and b"\x00" not in l]
        check(results_of(os.path.join(d, "results.json.txt")) == want, f"case {n}: results {want}")
        err = r.stderr
        check(b"\x1b" not in err and b"\x00" not in err and b"\x07" not in err,
              f"case {n}: no raw control bytes echoed: {err[:300]!r}")
        longest = max(len(l) for l in err.split(b"\n"))
        check(longest < 400, f"case {n}: stderr lines cut: {longest} bytes")
        check(err.count(b"malformed") == sum(1 for k in kept if k.strip() and not k.startswith((b"//", b"\\\\"))),
              f"case {n}: each malformed line reported: {err[:600]!r}")


def test_results_unwritable(tmp):
    """Bullet 2: a results file that cannot be written (a directory, a
    file system that is full: /dev/full, a file-size limit) stops lode with
    a non-zero exit; the checkpoint and the worktodo line stay, and the next
    run writes the result once without running the classes again."""
    p, lo, hi = 100043, 1, 33
    want = oracle_factors(p, lo, hi)
    for how in ("directory", "devfull", "fsize"):
        for ckp in ((), ("--no-checkpoints",)):
            d = fresh(tmp, f"unwritable-{how}{len(ckp)}")
            wt, res, log = (os.path.join(d, n) for n in ("worktodo.txt", "results.json.txt", "classes.log"))
            with open(wt, "w") as f:
                f.write(f"Factor=N/A,{p},{lo},{hi}\n")
            args = [LODE, "tf", "-w", wt, "-d", "cpu", "-q", "--class-log", log, *ckp]
            pre = None
            if how == "directory":
                os.mkdir(res)
                first = args
            elif how == "devfull":
                if not os.path.exists("/dev/full"):
                    continue
                first = args + ["--results", "/dev/full"]
            else:
                # The limit passes the checkpoint (with its proof list, ~10 KB)
                # and stops the append after an earlier, long result line.
                earlier = json.dumps({"exponent": 100003, "worktype": "TF", "note": "x" * 70000}) + "\n"
                with open(res, "w") as f:
                    f.write(earlier)
                first = args

                def pre():
                    import resource
                    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
            r = subprocess.run(first, capture_output=True, text=True, timeout=300, cwd=d, preexec_fn=pre)
            tag = f"{how} {ckp}"
            check(r.returncode != 0 and "cannot append" in r.stderr, f"{tag}: non-zero exit: {r.returncode} {r.stderr!r}")
            check(factor_lines(wt) == [f"Factor=N/A,{p},{lo},{hi}".encode()], f"{tag}: worktodo line kept")
            check(os.path.exists(os.path.join(d, f"M{p}_{lo}_{hi}.ckp")), f"{tag}: checkpoint kept")
            # The proof goes beside the results only when they are a regular
            # file (else beside the checkpoints): never into /dev.
            check(not os.path.exists(f"/dev/M{p}_{lo}_{hi}.proof"), f"{tag}: no proof written into /dev")
            if how == "directory":
                os.rmdir(res)
            with open(log) as f:
                ran = f.read()
            r = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=d)
            check(r.returncode == 0 and r.stdout.splitlines() == legacy(p, lo, hi, want), f"{tag}: next run {r}")
            got = results_of(res)
            check(got.count((p, lo, hi)) == 1, f"{tag}: the result written once by the next run: {got}")
            check(factor_lines(wt) == [] and not os.path.exists(os.path.join(d, f"M{p}_{lo}_{hi}.ckp")),
                  f"{tag}: line and checkpoint gone: {os.listdir(d)}")
            with open(log) as f:
                check(f.read() == ran and len(ran.split()) == len(needed_classes(p)),
                      f"{tag}: the next run ran no class again")


def test_worktodo_rewrite_fails(tmp):
    """Bullet 3: the worktodo file cannot be rewritten (a file-size limit:
    the disk-full case, for root too): lode exits non-zero, and the next run
    removes the line without reporting the assignment a second time."""
    d = fresh(tmp, "rewrite")
    wt, res = os.path.join(d, "worktodo.txt"), os.path.join(d, "results.json.txt")
    pad = "".join(f"// comment line {i:04d} to make the file bigger than the limit\n" for i in range(1200))
    with open(wt, "w") as f:
        f.write(pad + "Factor=N/A,100043,1,32\n" + pad)

    def limit():
        import resource
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))  # above the checkpoint, below the file
    r = subprocess.run([LODE, "tf", "-w", wt, "-d", "cpu", "-q"], capture_output=True, text=True, timeout=300,
                       cwd=d, preexec_fn=limit)
    check(r.returncode != 0 and "cannot remove" in r.stderr, f"rewrite fails: exit {r.returncode} {r.stderr!r}")
    for attempt in range(2):
        r = subprocess.run([LODE, "tf", "-w", wt, "-d", "cpu", "-q"], capture_output=True, text=True,
                           timeout=300, cwd=d)
        check(r.returncode == 0, f"later run {attempt}: {r.returncode} {r.stderr!r}")
    check(results_of(res) == [(100043, 1, 32)], f"reported exactly once: {results_of(res)}")
    with open(wt) as f:
        check(f.read() == pad + pad, "the line removed, the rest kept")


CRASH_STEPS = ("pending-saved", "proof-written", "legacy-appended", "result-appended", "reported-saved", "worktodo-rewritten",
               "checkpoint-removed", "add-renamed", "add-merged")


def test_crash_steps(tmp):
    """Bullet 3: SIGKILL at each step of finishing an assignment (the test
    hook LODE_TF_CRASH_AT) and of merging worktodo.add, with and without
    checkpoints: over the killed run and the next one every assignment is
    reported exactly once (JSON and legacy lines) and leaves the worktodo."""
    jobs = [(100003, 1, 31), (100019, 1, 31)]
    extra, later = (100043, 1, 31), (100057, 1, 31)
    for step in CRASH_STEPS:
        for ckp in ((), ("--no-checkpoints",)):
            d = fresh(tmp, f"crash-{step}{len(ckp)}")
            wt, res, leg = (os.path.join(d, n) for n in ("worktodo.txt", "results.json.txt", "results.txt"))
            with open(wt, "w") as f:
                f.write("".join(f"Factor=N/A,{p},{lo},{hi}\n" for p, lo, hi in jobs))
            with open(os.path.join(d, "worktodo.add"), "w") as f:
                f.write("Factor=N/A,%d,%d,%d\n" % extra)
            args = [LODE, "tf", "-w", wt, "-d", "cpu", "-q", "--legacy-results", leg, *ckp]
            r = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=d,
                               env=dict(os.environ, LODE_TF_CRASH_AT=step))
            check(r.returncode == -signal.SIGKILL, f"{step}{ckp}: killed at the step: {r.returncode} {r.stderr!r}")
            with open(os.path.join(d, "worktodo.add"), "a") as f:  # more work dropped meanwhile
                f.write("Factor=N/A,%d,%d,%d\n" % later)
            r = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=d)
            check(r.returncode == 0, f"{step}{ckp}: next run {r.returncode} {r.stderr!r}")
            want = sorted(jobs + [extra, later])
            check(sorted(results_of(res)) == want, f"{step}{ckp}: each result once: {results_of(res)}")
            check(sorted(summaries_of(leg)) == want, f"{step}{ckp}: each legacy result once: {summaries_of(leg)}")
            check(factor_lines(wt) == [], f"{step}{ckp}: worktodo emptied: {factor_lines(wt)}")
            check(not [n for n in os.listdir(d) if n.endswith((".ckp", ".tmp", ".merging", ".add"))],
                  f"{step}{ckp}: nothing left behind: {os.listdir(d)}")


def run_killed(args, d, kill_when, timeout=60, pause=0.0):
    """Starts lode, SIGKILLs it when kill_when(t0) says so; returns the exit status."""
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=d)
    t0 = time.time()
    while proc.poll() is None and time.time() - t0 < timeout:
        if kill_when(t0):
            proc.kill()
            break
        if pause:
            time.sleep(pause)
    return proc.wait()


def test_kill_window(tmp):
    """Bullet 3: SIGKILL the moment the finished assignment's checkpoint
    disappears (8 of 8 double reports before), then SIGKILLs at random
    moments of a multi-assignment run: each assignment reported once."""
    jobs = [(100003, 1, 36), (100019, 1, 30), (100043, 1, 30)]
    # The window is a fraction of a second: an attempt whose poller a loaded
    # machine delays past it (lode exits on its own, or the checkpoint came
    # and went unseen) is retried; four must land inside it.
    in_window = attempts = 0
    while in_window < 4 and attempts < 20:
        attempt, attempts = attempts, attempts + 1
        d = fresh(tmp, f"window{attempt}")
        wt, res = os.path.join(d, "worktodo.txt"), os.path.join(d, "results.json.txt")
        with open(wt, "w") as f:
            f.write("".join(f"Factor=N/A,{p},{lo},{hi}\n" for p, lo, hi in jobs))
        ckp = os.path.join(d, "M%d_%d_%d.ckp" % jobs[0])
        seen = [False]

        def gone(t0):
            if os.path.exists(ckp):
                seen[0] = True
                return False
            return seen[0]
        args = [LODE, "tf", "-w", wt, "-d", "cpu", "-t", "1", "--checkpoint-interval", "0.05"]
        rc = run_killed(args, d, gone)
        in_window += seen[0] and rc == -signal.SIGKILL
        r = subprocess.run(args + ["-q"], capture_output=True, text=True, timeout=300, cwd=d)
        check(r.returncode == 0 and sorted(results_of(res)) == sorted(jobs) and factor_lines(wt) == [],
              f"window {attempt}: each result once: {results_of(res)} {factor_lines(wt)}")
    check(in_window == 4, f"4 kills as the checkpoint went ({in_window} in {attempts} attempts)")

    d = fresh(tmp, "random-kills")
    wt, res = os.path.join(d, "worktodo.txt"), os.path.join(d, "results.json.txt")
    jobs = [(100003, 1, 31), (100019, 1, 30), (100043, 1, 30), (100049, 1, 30), (100057, 1, 31)]
    jobs = [j for j in jobs if tf_oracle.is_prime(j[0])]
    with open(wt, "w") as f:
        f.write("".join(f"Factor=N/A,{p},{lo},{hi}\n" for p, lo, hi in jobs))
    args = [LODE, "tf", "-w", wt, "-d", "cpu", "-t", "1", "--checkpoint-interval", "0.02", "-q"]
    timing = os.path.join(d, "timing.txt")  # the same work once, unkilled: how long it takes
    with open(timing, "w") as f:
        f.write("".join(f"Factor=N/A,{p},{lo},{hi}\n" for p, lo, hi in jobs))
    t0 = time.time()
    subprocess.run([LODE, "tf", "-w", timing, "-d", "cpu", "-t", "1", "--checkpoint-interval", "0.02", "-q",
                    "--results", os.path.join(d, "timing.json")], capture_output=True, timeout=300, cwd=d)
    full = max(time.time() - t0, 0.2)
    kills = 0
    for attempt in range(40):
        # The first kill surely lands inside the run; later ones anywhere.
        when = rng.uniform(0.05, 0.5) * full if attempt == 0 else rng.uniform(0.0, full)
        rc = run_killed(args, d, lambda t: time.time() - t >= when, pause=0.001)
        if rc == 0:
            break
        kills += rc == -signal.SIGKILL
    else:
        rc = subprocess.run(args, capture_output=True, timeout=300, cwd=d).returncode
    check(rc == 0 and kills > 0, f"random kills: {kills} kills, then exit {rc}")
    check(sorted(results_of(res)) == sorted(jobs), f"random kills: each result once: {results_of(res)}")
    check(factor_lines(wt) == [], "random kills: worktodo emptied")


def test_two_instances(tmp):
    """Bullet 4: a second lode tf on the same worktodo is refused with a
    clear message while the first runs; the lock dies with its process."""
    d = fresh(tmp, "two")
    wt, res = os.path.join(d, "worktodo.txt"), os.path.join(d, "results.json.txt")
    jobs = [(100003, 1, 41), (100019, 1, 30), (100043, 1, 30)]
    with open(wt, "w") as f:
        f.write("".join(f"Factor=N/A,{p},{lo},{hi}\n" for p, lo, hi in jobs))
    args = [LODE, "tf", "-w", wt, "-d", "cpu", "-t", "1", "--checkpoint-interval", "0.05", "-q"]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=d)
    ckp = os.path.join(d, "M%d_%d_%d.ckp" % jobs[0])
    t0 = time.time()
    while not os.path.exists(ckp) and first.poll() is None and time.time() - t0 < 60:
        time.sleep(0.005)
    # Stopped (not ended) while the second runs: it holds its lock however
    # slowly the second starts on a loaded machine.
    first.send_signal(signal.SIGSTOP)
    try:
        second = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=d)
        running = first.poll() is None
    finally:
        first.send_signal(signal.SIGCONT)
    out, err = first.communicate(timeout=300)
    check(running, "the first instance was still running when the second started (make its work longer)")
    check(second.returncode != 0 and "another lode tf" in second.stderr and wt in second.stderr
          and second.stdout == "", f"second instance refused: {second.returncode} {second.stderr!r}")
    check(first.returncode == 0, f"first instance: {first.returncode} {err!r}")
    check(sorted(results_of(res)) == sorted(jobs), f"three results for three assignments: {results_of(res)}")

    # A lock left by a killed run does not block the next one.
    with open(wt, "w") as f:
        f.write("Factor=N/A,100003,1,41\n")
    rc = run_killed(args, d, lambda t: time.time() - t > 0.2, pause=0.001)
    r = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=d)
    check(rc == -signal.SIGKILL and r.returncode == 0 and factor_lines(wt) == [],
          f"after a killed run: {rc} {r.returncode} {r.stderr!r}")


def test_json_escaping(tmp):
    """Bullet 5: --user/--computer with quotes, backslashes, control
    characters and UTF-8 give a valid JSON line carrying them exactly."""
    d = fresh(tmp, "json")
    res = os.path.join(d, "r.json")
    user, computer = 'ann "the miner"', "box\\1\t\u00e9\u4e2d\n\x1b[0m"
    r = subprocess.run([LODE, "tf", "100003", "1", "30", "-q", "--no-checkpoints", "--results", res,
                        "--user", user, "--computer", computer], capture_output=True, text=True, timeout=300, cwd=d)
    check(r.returncode == 0, f"run {r.returncode} {r.stderr!r}")
    with open(res, encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        got = [json.loads(l) for l in lines]
    except ValueError as e:
        got = [f"invalid JSON: {e}"]
    check(len(got) == 1 and isinstance(got[0], dict) and got[0].get("user") == user
          and got[0].get("computer") == computer, f"user and computer round-trip: {lines!r}")
    if got and isinstance(got[0], dict):
        check_json(lines[0], 100003, 1, 30, oracle_factors(100003, 1, 30))
    r = subprocess.run([LODE.encode(), b"tf", b"100003", b"1", b"30", b"--results", res.encode(), b"--user",
                        b"\xff\xfe"], capture_output=True, timeout=300, cwd=d)
    check(r.returncode == 2, f"a --user that is not UTF-8 is refused: {r.returncode}")


def test_worktodo_not_a_file(tmp):
    """Bullet 6: -w DIR is an error (not 'no assignments'); a directory
    named worktodo.add is reported and left alone."""
    d = fresh(tmp, "wdir")
    os.mkdir(os.path.join(d, "worktodo.txt"))
    r = run("-w", os.path.join(d, "worktodo.txt"), "-q", cwd=d)
    check(r.returncode == 2 and "directory" in r.stderr.lower() and "no assignments" not in r.stderr,
          f"-w DIR: {r.returncode} {r.stderr!r}")
    d = fresh(tmp, "adddir")
    wt, add = os.path.join(d, "worktodo.txt"), os.path.join(d, "worktodo.add")
    with open(wt, "w") as f:
        f.write("Factor=N/A,100003,1,30\n")
    os.mkdir(add)
    r = run("-w", wt, "-d", "cpu", "-q", cwd=d)
    check(os.path.isdir(add), "an empty directory named worktodo.add is not deleted")
    check("worktodo.add" in r.stderr, f"and it is reported: {r.stderr!r}")


# The ETA, then the devices' sensors after "; " where they have any.
ETA_RE = re.compile(r"ETA (\d+d [0-1]\dh [0-5]\dm|[1-9]\d?h [0-5]\dm|[1-9]\d?m [0-5]\ds|\d{1,2}s)(; \S.*)?$")


def test_messages(tmp):
    """Bullet 7: an interrupted --no-checkpoints run does not claim it saved
    progress; ETA is in d/h/m/s."""
    d = fresh(tmp, "msgs")
    r = run("100003", "1", "36", "-d", "cpu", "-t", "1", "--no-checkpoints", "--progress-interval", "0",
            "--results", os.path.join(d, "r.json"), cwd=d)
    etas = [l[l.index("ETA "):] for l in r.stderr.splitlines() if "ETA " in l]
    bad = [e for e in etas if not ETA_RE.match(e)]
    check(r.returncode == 0 and etas and not bad, f"ETA in d/h/m/s: {bad[:3]} of {len(etas)}")
    for signals in (1, 2):
        proc = subprocess.Popen([LODE, "tf", "100003", "1", "44", "-d", "cpu", "-t", "1", "--no-checkpoints",
                                 "--results", os.path.join(d, "r2.json")], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=d)
        first = proc.stderr.readline()  # started: the Ctrl-C handler is in place
        for _ in range(signals):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
        out, err = proc.communicate(timeout=120)
        err = first + err
        check(proc.returncode == 130 and "saved" in err and "progress saved" not in err
              and "progress before it saved" not in err and "not saved" in err,
              f"--no-checkpoints, {signals} Ctrl-C: {proc.returncode} {err!r}")


ONLY = os.environ.get("LODE_TEST_ONLY")  # e.g. LODE_TEST_ONLY=test_crash_steps
with tempfile.TemporaryDirectory() as tmp:
    for test in (test_selftest, test_errors, test_ranges, test_worktodo, test_worktodo_add, test_report_once,
                 test_kill_resume, test_worktodo_bytes, test_results_unwritable,
                 test_worktodo_rewrite_fails, test_crash_steps, test_kill_window, test_two_instances,
                 test_json_escaping, test_worktodo_not_a_file, test_messages, test_proof, test_profile):
        if ONLY and test.__name__ not in ONLY.split(","):
            continue
        t0 = time.time()
        test(*([tmp] if test is not test_selftest else []))
        print(f"{test.__name__}: {time.time() - t0:.1f} s")
sys.exit(check.report())
