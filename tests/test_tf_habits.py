#!/usr/bin/env python3
"""The habits of mfaktc users in `lode tf` (issue 40), on the CPU backend,
against Python's pow(2, p, q) == 1 (tests/tf_oracle.py) and zlib.crc32 for
the result checksum (PrimeNet v5's result CRC):

- --stop-after-factor 0|1|2 with and without --stages on a range whose
  first bit level holds a factor: where the run stops, the results (one per
  bit level with stages; bithi the top of what ran, rangecomplete false for
  a partial range, its checksum over "0"), the worktodo line removed;
- a SIGKILL at each finishing step of a stage: each stage reported once;
- a factor logged (JSON event tf_factor) and saved in the checkpoint as
  its class ends (a SIGKILL right after: the next run reports it once);
- worktodo.add merged while an assignment runs (--worktodo-add-delay 0),
  one that cannot be merged said once, and lines written to worktodo.txt during a run read after the
  assignment;
- a class that takes a CPU thread half an hour: progress lines while it
  runs, and a SIGTERM that stops the run before the class ends with the
  classes done kept;
- without -d: the GPUs only on a machine with one, else the CPU (never an
  OpenCL CPU device such as PoCL's).
Every wait is a hang guard, never a speed limit.

usage: test_tf_habits.py PATH_TO_LODE   (LODE_TEST_ONLY=name,... runs some)
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
import tf_oracle  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
GUARD_S = 120
CLASSES = 4620
check = Checks()


def oracle_factors(p, lo, hi):
    return [q for q in tf_oracle.candidates(p, lo, hi) if pow(2, p, q) == 1]


def needed_classes(p):
    """Classes k mod 4620 whose q can be a factor: q = +-1 mod 8, no factor 3, 5, 7, 11."""
    return [c for c in range(CLASSES)
            if (2 * c * p + 1) % 8 in (1, 7) and all((2 * c * p + 1) % m for m in (3, 5, 7, 11))]


def results_of(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f.read().splitlines() if line]


def checksum_ok(r):
    """The result's checksum against zlib.crc32 of PrimeNet's checksum string."""
    s = ";".join([str(r["exponent"]), "TF", ",".join(r.get("factors", [])), "", str(r["bitlo"]),
                  str(r["bithi"]), "1" if r["rangecomplete"] else "0", "", "", r["program"]["name"],
                  r["program"]["version"], r["program"]["kernel"], r["program"]["details"], r["os"]["os"],
                  r["os"]["architecture"], r["timestamp"]])
    return r["checksum"] == {"version": 1, "checksum": "%08X" % zlib.crc32(s.encode())}


def factor_lines(path):
    with open(path) as f:
        return [line for line in f.read().splitlines() if line.startswith("Factor=")]


def fresh(tmp, name):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    return d


def run_worktodo(d, lines, *args, env=None):
    wt = os.path.join(d, "worktodo.txt")
    with open(wt, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    r = subprocess.run([LODE, "tf", "-w", wt, "-d", "cpu", "-t", "1", "--class-log", os.path.join(d, "classes"),
                        *args], capture_output=True, text=True, timeout=GUARD_S, cwd=d,
                       env=dict(os.environ, **(env or {})))
    return r, wt


# M100003: one factor in 2^22..2^26, 6400193 (2^22.6), in class 32.
P, LO, HI = 100003, 22, 26


def test_stop_after_factor(tmp):
    """mfaktc 0.24's StopAfterFactor, with and without Stages."""
    want = {(a, a + 1): oracle_factors(P, a, a + 1) for a in range(LO, HI)}
    whole = oracle_factors(P, LO, HI)
    check(whole == [6400193] and want[(22, 23)] == whole, f"the oracle's factors: {whole}")
    k = (whole[0] - 1) // (2 * P)
    upto = [c for c in needed_classes(P) if c <= k % CLASSES]  # the classes up to the factor's
    cases = [  # (options, the ranges reported, partial, the classes the first range ran)
        (["--stages"], [(22, 23)], False, needed_classes(P)),
        (["--stages", "--stop-after-factor", "1"], [(22, 23)], False, needed_classes(P)),
        (["--stages", "--stop-after-factor", "0"], [(a, a + 1) for a in range(LO, HI)], False, None),
        (["--stages", "--stop-after-factor", "2"], [(22, 23)], True, upto),
        (["--stop-after-factor", "2"], [(22, 26)], True, upto),
        ([], [(22, 26)], False, needed_classes(P)),
        (["--stop-after-factor", "0"], [(22, 26)], False, needed_classes(P)),
    ]
    for n, (opts, ranges, partial, classes) in enumerate(cases):
        d = fresh(tmp, f"saf{n}")
        r, wt = run_worktodo(d, [f"Factor=N/A,{P},{LO},{HI}"], *opts)
        tag = " ".join(opts) or "defaults"
        got = results_of(os.path.join(d, "results.json.txt"))
        check(r.returncode == 0, f"{tag}: exit {r.returncode} {r.stderr[-400:]!r}")
        check([(x["bitlo"], x["bithi"]) for x in got] == ranges, f"{tag}: results {[(x['bitlo'], x['bithi']) for x in got]}, want {ranges}")
        for x in got:
            fs = want.get((x["bitlo"], x["bithi"]), whole)
            check(x.get("factors", []) == [str(q) for q in fs] and x["status"] == ("F" if fs else "NF"),
                  f"{tag}: {x['bitlo']}-{x['bithi']} factors {x.get('factors')} want {fs}")
            check(x["rangecomplete"] is (not partial) and checksum_ok(x), f"{tag}: rangecomplete and checksum: {x}")
            check(("lode_proof" in x) is (not partial), f"{tag}: a proof with a whole range only: {x.keys()}")
        check(factor_lines(wt) == [], f"{tag}: the line removed: {factor_lines(wt)}")
        if classes is not None:
            with open(os.path.join(d, "classes")) as f:
                ran = [int(c) for c in f.read().split()]
            check(ran == classes, f"{tag}: {len(ran)} classes ran, want {len(classes)}")
        summary = [line for line in r.stdout.splitlines() if line.startswith("found ")]
        check(all(line.endswith("(partially tested)") == partial for line in summary) and summary,
              f"{tag}: stdout summary {summary}")
        check(("is discouraged" in r.stderr) == ("2" in opts),
              f"{tag}: the warning about --stop-after-factor 2: {r.stderr[:300]!r}")
        check(not glob.glob(os.path.join(d, "*.ckp")), f"{tag}: no checkpoint left: {os.listdir(d)}")
    d = fresh(tmp, "saf-bad")
    r, _ = run_worktodo(d, [f"Factor=N/A,{P},{LO},{HI}"], "--stop-after-factor", "3")
    check(r.returncode == 2 and "--stop-after-factor" in r.stderr, f"--stop-after-factor 3: {r.returncode}")


FINISH_STEPS = ("pending-saved", "proof-written", "result-appended", "reported-saved", "worktodo-rewritten",
                "checkpoint-removed")


def test_stages_killed(tmp):
    """A SIGKILL at each finishing step of the first stage: over the killed
    run and the next, each stage is reported exactly once, and the line
    goes after the last; a kill after the line was rewritten leaves it
    raised past the first stage."""
    line = f"Factor=N/A,{P},{LO},{HI}"
    for step in FINISH_STEPS:
        d = fresh(tmp, f"stagekill-{step}")
        r, wt = run_worktodo(d, [line], "--stages", "--stop-after-factor", "0", env={"LODE_TF_CRASH_AT": step})
        check(r.returncode == -signal.SIGKILL, f"{step}: killed: {r.returncode} {r.stderr[-300:]!r}")
        if step in ("worktodo-rewritten", "checkpoint-removed"):
            check(factor_lines(wt) == [f"Factor=N/A,{P},23,{HI}"], f"{step}: the line raised: {factor_lines(wt)}")
        r = subprocess.run([LODE, "tf", "-w", wt, "-d", "cpu", "-t", "1", "--stages", "--stop-after-factor", "0"],
                           capture_output=True, text=True, timeout=GUARD_S, cwd=d)
        got = [(x["bitlo"], x["bithi"]) for x in results_of(os.path.join(d, "results.json.txt"))]
        check(r.returncode == 0 and got == [(a, a + 1) for a in range(LO, HI)],
              f"{step}: each stage once: {got} (exit {r.returncode} {r.stderr[-300:]!r})")
        check(factor_lines(wt) == [] and not glob.glob(os.path.join(d, "*.ckp")),
              f"{step}: line and checkpoints gone: {os.listdir(d)}")


def test_factor_at_class(tmp):
    """The factor is logged with its class and saved in the checkpoint as
    the class ends (killed right after: LODE_TF_CRASH_AT=factor-saved), long
    before the range is done; the next run reports it once."""
    p, lo, hi = 100003, 1, 30
    want = oracle_factors(p, lo, hi)
    k = (want[0] - 1) // (2 * p)
    d = fresh(tmp, "factor-class")
    res = os.path.join(d, "results.json.txt")
    args = [LODE, "tf", str(p), str(lo), str(hi), "-d", "cpu", "-t", "1", "--checkpoint-dir", d, "--results", res,
            "--checkpoint-interval", "100000"]
    r = subprocess.run(args + ["--log-format", "json"], capture_output=True, text=True, timeout=GUARD_S, cwd=d,
                       env=dict(os.environ, LODE_TF_CRASH_AT="factor-saved"))
    events = []
    for line in r.stderr.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    found = [e for e in events if e.get("event") == "tf_factor"]
    check(r.returncode == -signal.SIGKILL and len(found) == 1, f"killed after the factor event: {r.returncode} {found}")
    if found:
        e = found[0]
        check(e.get("exponent") == p and e.get("bit_min") == lo and e.get("bit_max") == hi
              and e.get("class") == k % CLASSES and e.get("factor") == str(want[0]), f"the event: {e}")
    ckp = os.path.join(d, f"M{p}_{lo}_{hi}.ckp")
    text = open(ckp).read() if os.path.exists(ckp) else ""
    check(f"\nfactors 1 {k}\n" in text and f"\nnext_class {k % CLASSES + 1}\n" in text,
          f"the checkpoint holds the factor, saved as its class ended: {text[:200]!r}")
    check(not os.path.exists(res), "no result yet")
    r = subprocess.run(args + ["-q"], capture_output=True, text=True, timeout=GUARD_S, cwd=d)
    got = results_of(res)
    check(r.returncode == 0 and len(got) == 1 and got[0].get("factors") == [str(q) for q in want],
          f"the next run reports it once: {got}")
    check(r.stdout.count(f"M{p} has a factor: {want[0]}") == 1, f"printed once at the end: {r.stdout!r}")


class Lines:
    """A process's stderr lines, read on a thread of their own."""

    def __init__(self, proc):
        self.lines, self.cond = [], threading.Condition()
        threading.Thread(target=self.read, args=(proc,), daemon=True).start()

    def read(self, proc):
        for line in proc.stderr:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()

    def wait(self, pred, timeout=GUARD_S):
        with self.cond:
            return self.cond.wait_for(lambda: pred(self.lines), timeout)

    def text(self):
        with self.cond:
            return "".join(self.lines)


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=GUARD_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def wait_until(pred, timeout=GUARD_S):
    t0 = time.monotonic()
    while not pred() and time.monotonic() - t0 < timeout:
        time.sleep(0.02)
    return pred()


# A class of M66362159 from 2^73 to 2^74 takes a CPU thread half an hour.
LONG = (66362159, 73, 74)


def test_add_mid_assignment(tmp):
    """worktodo.add dropped while a long assignment runs is merged within a
    tick with --worktodo-add-delay 0 (before: only after the assignment)."""
    d = fresh(tmp, "add-mid")
    wt, add = os.path.join(d, "worktodo.txt"), os.path.join(d, "worktodo.add")
    first = "Factor=N/A,%d,%d,%d" % LONG
    with open(wt, "w") as f:
        f.write(first + "\n")
    proc = subprocess.Popen([LODE, "tf", "-w", wt, "-d", "cpu", "-t", "1", "--worktodo-add-delay", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=d)
    err = Lines(proc)
    started = err.wait(lambda ls: any("trial factoring M66362159" in x for x in ls))
    with open(add + ".tmp", "w") as f:
        f.write("Factor=N/A,100003,1,30\n")
    os.rename(add + ".tmp", add)
    want = [first, "Factor=N/A,100003,1,30"]
    # The merge renames worktodo.add away, rewrites worktodo.txt, then
    # removes the renamed file.
    merged = wait_until(lambda: factor_lines(wt) == want and not glob.glob(add + "*"))
    lines = factor_lines(wt)
    rc = stop(proc)
    check(started and merged and lines == want,
          f"merged while the first assignment runs: {lines} {err.text()[-400:]!r}")
    check(rc == 130 and not os.path.exists(os.path.join(d, "results.json.txt")), f"stopped: {rc}")


def test_add_not_a_file(tmp):
    """A worktodo.add that cannot be merged (a directory) with
    --worktodo-add-delay 0: said once for the run (and at start and after
    the assignment), not after each of its 960 classes; left alone."""
    d = fresh(tmp, "add-dir")
    os.mkdir(os.path.join(d, "worktodo.add"))
    r, wt = run_worktodo(d, ["Factor=N/A,100003,1,36"], "--worktodo-add-delay", "0")
    said = r.stderr.count("cannot merge worktodo.add")
    check(r.returncode == 0 and 1 <= said <= 3 and os.path.isdir(os.path.join(d, "worktodo.add")),
          f"said {said} times, exit {r.returncode}: {r.stderr[-300:]!r}")
    check(factor_lines(wt) == [], f"the assignment ran: {factor_lines(wt)}")


def test_reload_after_assignment(tmp):
    """A line written into worktodo.txt itself while an assignment runs is
    read when the assignment is done (the list is read again after each)."""
    d = fresh(tmp, "reload")
    wt, log = os.path.join(d, "worktodo.txt"), os.path.join(d, "classes")
    with open(wt, "w") as f:
        f.write("Factor=N/A,100003,1,44\n")
    proc = subprocess.Popen([LODE, "tf", "-w", wt, "-d", "cpu", "-t", "1", "-q", "--class-log", log],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=d)
    running = wait_until(lambda: os.path.exists(log) and os.path.getsize(log) > 0)
    with open(wt, "a") as f:
        f.write("Factor=N/A,100043,1,30\n")
    out, err = proc.communicate(timeout=GUARD_S)
    got = [(x["exponent"], x["bitlo"], x["bithi"]) for x in results_of(os.path.join(d, "results.json.txt"))]
    check(running and proc.returncode == 0 and got == [(100003, 1, 44), (100043, 1, 30)],
          f"the added line ran after the first: {got} {err[-300:]!r}")
    check(factor_lines(wt) == [], f"both lines done: {factor_lines(wt)}")


def write_checkpoint(path, p, lo, hi, next_class, done):
    text = (f"lode-tf-checkpoint 1\nexponent {p}\nbits {lo} {hi}\nnext_class {next_class}\n"
            f"classes_done {done}\nclass_log 0\nfactors 0\n")
    with open(path, "w") as f:
        f.write(text + "crc32 %08X\n" % zlib.crc32(text.encode()))


PROGRESS_RE = re.compile(r"M66362159 73-74 class +(\d+): +([\d.]+)%.*ETA (.+)$")


def test_long_class(tmp):
    """Resumed at class 481 of 960 (a checkpoint written here), one CPU
    thread: progress lines come while the class runs, the percent counts
    the 480 classes done and the ETA the part of this class done (before:
    nothing for half an hour); a SIGTERM stops the run before the class
    ends, keeping the 480 classes in the checkpoint."""
    p, lo, hi = LONG
    d = fresh(tmp, "long-class")
    needed = needed_classes(p)
    ckp = os.path.join(d, f"M{p}_{lo}_{hi}.ckp")
    write_checkpoint(ckp, p, lo, hi, needed[480], 480)
    before = open(ckp).read()
    proc = subprocess.Popen([LODE, "tf", str(p), str(lo), str(hi), "-d", "cpu", "-t", "1", "--checkpoint-dir", d,
                             "--results", os.path.join(d, "r.json"), "--progress-interval", "0.3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=d)
    err = Lines(proc)
    seen = err.wait(lambda ls: sum(bool(PROGRESS_RE.search(x.strip())) for x in ls) >= 3)
    rc = stop(proc)
    text = err.text()
    lines = [m.groups() for m in (PROGRESS_RE.search(x.strip()) for x in text.splitlines()) if m]
    check(seen and lines, f"progress lines while the class runs: {text[-600:]!r}")
    check(all(int(c) == needed[480] and 50.0 <= float(pct) < 50.2 for c, pct, eta in lines),
          f"class {needed[480]}, from 50.0%: {lines[:4]}")
    # Without the class's part done no ETA can be known ("0s"); by the
    # third line (a second in) some of it is.
    check(lines and lines[-1][2] != "0s", f"an ETA from the part of the class done: {lines[-3:]}")
    check(rc == 130 and f"stopped in class {needed[480]}" in text, f"the stop leaves the class: {rc} {text[-400:]!r}")
    after = open(ckp).read() if os.path.exists(ckp) else ""
    check(f"next_class {needed[480]}\n" in after and "classes_done 480\n" in after,
          f"the 480 classes kept: {after[:160]!r} (was {before[:120]!r})")
    check(not os.path.exists(os.path.join(d, "r.json")), "no result for an unfinished assignment")


def has_gpu():
    """A GPU as the kernel shows one (no lode code): an NVIDIA or AMD
    device node."""
    return bool(glob.glob("/dev/nvidia[0-9]*") or os.path.exists("/dev/kfd"))


def test_gpu_default(tmp):
    """Without -d: on a machine with a GPU, the GPUs only and a line that
    says so; without one (CI), the CPU backend alone (PoCL's OpenCL CPU
    device is not a GPU)."""
    d = fresh(tmp, "default")
    res = os.path.join(d, "r.json")
    r = subprocess.run([LODE, "tf", "100003", "1", "30", "--no-checkpoints", "--results", res],
                       capture_output=True, text=True, timeout=GUARD_S * 3, cwd=d)
    got = results_of(res)
    kernel = got[0]["program"]["kernel"] if got else ""
    check(r.returncode == 0 and got and got[0].get("factors") == ["6400193"], f"default run: {r.stderr[-300:]!r}")
    if has_gpu():
        check("GPUs only" in r.stderr and "-d cpu," in r.stderr and "cpu_" not in kernel,
              f"a GPU here: GPUs only: kernel {kernel!r} {r.stderr[:400]!r}")
    else:
        check("GPUs only" not in r.stderr and re.fullmatch(r"cpu_\w+", kernel),
              f"no GPU: the CPU backend alone: kernel {kernel!r}")


ONLY = os.environ.get("LODE_TEST_ONLY")
with tempfile.TemporaryDirectory() as scratch:
    for test in (test_stop_after_factor, test_stages_killed, test_factor_at_class, test_add_mid_assignment,
                 test_add_not_a_file, test_reload_after_assignment, test_long_class, test_gpu_default):
        if ONLY and test.__name__ not in ONLY.split(","):
            continue
        t0 = time.time()
        test(scratch)
        print(f"{test.__name__}: {time.time() - t0:.1f} s")
sys.exit(check.report())
