#!/usr/bin/env python3
"""Several GPUs in one lode process (issue #19): runs on a machine with two or
more GPUs and prints a table of checks and figures last.

    scripts/multi-gpu-check.py LODE [SECONDS]

Stage the binary and its libraries with `scripts/device-check.sh --stage`
(and litecoind with its libraries, for the pool part: LITECOIND=path). GPUS
(default: every cuda:N that `lode --list-devices` shows) and PARTS (default
"devices bench tf fault pool") narrow it; here on a machine without GPUs,
GPUS="cpu:0 opencl:0" walks the same steps on other devices.

What it shows, each against lode's own single-device runs in the same lease:
- devices: every GPU listed once (CUDA and OpenCL views merged: unique PCI bus
  ids), and `--selftest` passes on each;
- bench: sha256d, scrypt and Momentum on all GPUs at >= 0.97 x GPUs x the
  one-GPU rate, with the process's host CPU time per GPU;
- tf: M66362159 2^73-2^74 on all GPUs at >= 0.95 x the sum of each GPU's
  single rate; a smaller assignment killed (SIGKILL) and resumed until done
  logs every needed class exactly once and reports the same result as a run
  on one GPU;
- fault: a device failing mid-run beside the GPUs (the fault-injecting test
  backend, LODE_TEST_FAULT) leaves every GPU mining, and the summary names
  the device that stopped;
- pool: scrypt on all GPUs against the stratum test pool (which re-hashes
  every share): the pool's accepted count equals lode's, nothing invalid,
  no duplicate share.
"""
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LODE = os.path.abspath(sys.argv[1])
SECS = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
TICK = os.sysconf("SC_CLK_TCK")
TMP = tempfile.mkdtemp(prefix="lode-multi-gpu-")
OUT = os.environ.get("OUT", TMP)
PARTS = os.environ.get("PARTS", "devices bench tf fault pool").split()
table = []
failures = 0


def row(what, ok, detail=""):
    global failures
    mark = "ok" if ok is True else ("FAIL" if ok is False else str(ok))
    if ok is False:
        failures += 1
    table.append(f"{what:58} {mark:5} {detail}")
    print(table[-1], flush=True)


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


steady = {}  # name -> host CPU in % of a core from 6 s after the start to 3 s before the end


def run(args, secs=None, env=None, name="run", sig=signal.SIGINT, length=None):
    """Runs lode; stops it with sig after secs (None: waits for it). Returns
    (rc, stderr+stdout, wall seconds, host CPU seconds); runs expected to last
    (length, default secs) more than 12 s also leave their steady-state CPU
    in steady[name]."""
    length = secs if length is None else length
    path = os.path.join(OUT, f"{name}.log")
    with open(path, "w") as log:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        p = subprocess.Popen([LODE, *args], stdout=log, stderr=subprocess.STDOUT,
                             env=dict(os.environ, **(env or {})))
        if length is not None and length > 12:
            samples = []
            for at in (6.0, length - 3.0):
                try:  # a run that ends early ends the wait (and has no steady part)
                    p.wait(timeout=max(0.0, t0 + at - time.monotonic()))
                    break
                except subprocess.TimeoutExpired:
                    pass
                try:
                    samples.append((time.monotonic(), proc_cpu(p.pid)))
                except (OSError, IndexError):
                    pass
            if len(samples) == 2:
                steady[name] = 100 * (samples[1][1] - samples[0][1]) / (samples[1][0] - samples[0][0])
        try:
            p.wait(timeout=None if secs is None else max(0.0, t0 + secs - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.send_signal(sig)
            try:
                p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(path, errors="replace") as f:
        return p.returncode, f.read(), wall, cpu


def device_rates(text):
    """{device: hashes per second} from the benchmark's summary lines."""
    rates = {}
    over = re.search(r"summary over ([0-9.]+) s", text)
    total = re.search(r"^\S+ total ([0-9.eE+]+) ", text, re.M)
    for dev, hashes in re.findall(r"summary: ([a-z]+:\d+): [^,]+, (\d+) hashes", text):
        rates[dev] = int(hashes) / float(over.group(1)) if over else 0.0
    return rates, float(total.group(1)) if total else 0.0


def tf_rate(text):
    lines = [l for l in text.splitlines() if "GHz-days/day" in l]
    m = re.search(r"([0-9.]+) GHz-days/day", lines[-1]) if lines else None
    return float(m.group(1)) if m else 0.0


def listed_gpus():
    out = subprocess.run([LODE, "--list-devices"], capture_output=True, text=True).stdout
    return out, [l.split()[0] for l in out.splitlines() if re.match(r"^cuda:\d+ ", l)]


def part_devices(gpus):
    out, _ = listed_gpus()
    # GPUs only: the CPU backend and OpenCL on the host's cores (PoCL) are not GPUs
    ids = [l.split()[0] for l in out.splitlines() if re.match(r"^[a-z]+:\d+ ", l)
           and not re.search(r"pthread|Portable|cpu-", l)]
    smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout if \
        subprocess.run(["which", "nvidia-smi"], capture_output=True).returncode == 0 else ""
    n_smi = len([l for l in smi.splitlines() if l.startswith("GPU ")])
    gpu_ids = [i for i in ids if not i.startswith("cpu:")]
    row(f"--list-devices: {len(gpu_ids)} GPU entries, nvidia-smi {n_smi}",
        n_smi == 0 or len(gpu_ids) == n_smi, " ".join(gpu_ids))
    rc, text, _, _ = run(["--selftest", "-d", ",".join(gpus)], None, name="selftest")
    m = re.search(r"(\d+) passed, (\d+) failed", text)
    per = {g: bool(re.search(rf"^{re.escape(g)}\s.*\bok\b", text, re.M)) for g in gpus}
    row(f"--selftest on {len(gpus)} GPUs", rc == 0 and all(per.values()),
        m.group(0) if m else f"rc {rc}")


def part_bench(gpus):
    n = len(gpus)
    for algo in ("sha256d", "scrypt", "momentum"):
        run(["-a", algo, "-d", ",".join(gpus), "--benchmark", "--time-limit", "4", "-q"], 60,
            name=f"warm-{algo}", length=4)  # tunes and caches the launch shape of every GPU
        _, one, _, _ = run(["-a", algo, "-d", gpus[0], "--benchmark", "--time-limit", str(int(SECS))],
                           SECS + 60, name=f"bench-{algo}-one", length=SECS)
        rc, alltext, wall, cpu = run(["-a", algo, "-d", ",".join(gpus), "--benchmark", "--time-limit",
                                      str(int(SECS))], SECS + 60, name=f"bench-{algo}-all", length=SECS)
        _, r1 = device_rates(one)
        per, rn = device_rates(alltext)
        ratio = rn / (n * r1) if r1 > 0 else 0.0
        row(f"{algo}: {n} GPUs / ({n} x one GPU) >= 0.97", rc == 0 and ratio >= 0.97,
            f"{ratio:.4f} ({rn:.4g} / {r1:.4g}; per GPU {' '.join(f'{v:.4g}' for v in per.values())})")
        cpu_row(f"{algo}: host CPU per GPU < 2% of a core", f"bench-{algo}-all", cpu, wall, n)


def cpu_row(what, name, cpu, wall, n):
    """Judged on the steady part where the run was long enough to have one
    (start-up, the driver contexts and self-tests, is a fixed cost that a
    short run cannot spread); the whole run's figure beside it."""
    whole = 100 * cpu / wall / n
    st = steady.get(name)
    per = st / n if st is not None else whole
    row(what, per < 2.0, f"steady {st / n if st is not None else float('nan'):.2f}%, whole run {whole:.2f}% "
        f"({wall:.0f} s, start-up included)")


def read_classes(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def part_tf(gpus):
    n = len(gpus)
    args = ["tf", "66362159", "73", "74", "--no-checkpoints", "--progress-interval", "2"]
    singles = []
    for g in gpus:
        _, text, _, _ = run(args + ["-d", g, "--results", os.path.join(TMP, "r1.json")], SECS, name=f"tf-{g}")
        singles.append(tf_rate(text))
    rc, text, wall, cpu = run(args + ["-d", ",".join(gpus), "--results", os.path.join(TMP, "rn.json")], SECS,
                              name="tf-all")
    rn = tf_rate(text)
    ratio = rn / sum(singles) if sum(singles) > 0 else 0.0
    row(f"tf M66362159 73-74: {n} GPUs / sum of singles >= 0.95", ratio >= 0.95,
        f"{ratio:.4f} ({rn:.0f} / {' + '.join(f'{s:.0f}' for s in singles)} GHz-d/d)")
    cpu_row("tf: host CPU per GPU < 2% of a core", "tf-all", cpu, wall, n)
    # Kill and resume: an assignment a few times a GPU's share of SECS long,
    # SIGKILLed at spread-out moments until it finishes.
    assignment = os.environ.get("TF_KILL_ASSIGNMENT", "66362159 66 68").split()
    ref_res = os.path.join(TMP, "ref.json")
    rc1, one_text, _, _ = run(["tf", *assignment, "-d", gpus[0], "--no-checkpoints", "--results", ref_res],
                              None, name="tf-ref")
    ckdir = os.path.join(TMP, "ck")
    os.makedirs(ckdir, exist_ok=True)
    log, res = os.path.join(TMP, "classes.log"), os.path.join(TMP, "kr.json")
    kills = 0
    final = None
    for attempt in range(12):
        last = attempt == 11
        rc, text, wall, _ = run(["tf", *assignment, "-d", ",".join(gpus), "--checkpoint-dir", ckdir,
                                 "--checkpoint-interval", "0", "--class-log", log, "--results", res],
                                None if last else 2.0 + 1.5 * attempt, name=f"tf-kill-{attempt}",
                                sig=signal.SIGKILL)
        if rc == -signal.SIGKILL:
            kills += 1
            continue
        final = (rc, text)
        break
    classes = read_classes(log)
    needed = 960
    row(f"tf {' '.join(assignment)} on {n} GPUs, {kills} SIGKILLs: finished", final is not None and final[0] == 0,
        f"rc {final[0] if final else None}")
    row("tf kill/resume: every class exactly once", len(classes) == needed and len(set(classes)) == needed,
        f"{len(classes)} logged, {len(set(classes))} distinct, want {needed}")

    def factors(path):
        try:
            with open(path) as f:
                return sorted(re.findall(r'"factors":\s*\[([^\]]*)\]', f.read()))
        except OSError:
            return None
    row("tf kill/resume: same factors as one uninterrupted GPU", rc1 == 0 and factors(res) == factors(ref_res),
        f"{factors(res)} vs {factors(ref_res)}")


def part_fault(gpus):
    """A device that fails mid-run beside the GPUs: the fault-injecting test
    backend's fault:0 (CPU SHA-256d) returns device errors from its 20th
    scan, is reopened, then quarantined; the GPUs mine on."""
    rc, text, _, _ = run(["-a", "sha256d", "-d", ",".join(gpus + ["fault:0"]), "--benchmark", "--time-limit",
                          str(int(SECS)), "--max-restarts", "1"], SECS + 60,
                         env={"LODE_TEST_FAULT": "error:0:20"}, name="fault", length=SECS)
    per, _ = device_rates(text)
    row("fault:0 fails mid-run: every GPU mines on", rc == 0 and all(per.get(g, 0) > 0 for g in gpus),
        " ".join(f"{g} {per.get(g, 0):.4g}" for g in gpus))
    named = re.search(r"summary: fault:0: .*; (quarantined|failed)", text)
    others = [g for g in gpus if re.search(rf"summary: {re.escape(g)}: .*; (quarantined|failed)", text)]
    row("the summary names the stopped device, and only it", named is not None and not others,
        named.group(1) if named else "")


def part_pool(gpus):
    sys.path.insert(0, os.path.join(ROOT, "tests", "pool"))
    from harness import Lode, PoolProc, regtest
    with regtest.Regtest(mature=True) as net:
        pool = PoolProc(net, difficulty=float(os.environ.get("POOL_DIFFICULTY", "4")))
        lode = Lode(LODE, ["-a", "scrypt", "-d", ",".join(gpus), "--no-color", "--log-interval", "5",
                           "-o", pool.url, "-u", "worker", "-p", "x"])
        try:
            time.sleep(SECS)
            pool.hold()
            time.sleep(0.5)
            lode.stop()
            sums = lode.pool_summaries()
            t = pool.totals()
            acc = sum(s[2] for s in sums)
            row(f"pool: scrypt on {len(gpus)} GPUs, accepted lode/pool", sums != [] and acc == t["accepted"],
                f"{acc} / {t['accepted']}")
            row("pool: nothing invalid, no duplicate share",
                t["invalid"] == 0 and t["duplicates"] == 0 and t["stale_violations"] == 0,
                f"invalid {t['invalid']}, duplicates {t['duplicates']}, stale violations {t['stale_violations']}")
            with open(os.path.join(OUT, "pool-lode.log"), "w") as f:
                f.write(lode.stderr())
        finally:
            if lode.alive():
                lode.stop()
            pool.stop()


def main():
    _, listed = listed_gpus()
    gpus = os.environ.get("GPUS", " ".join(listed)).split()
    if len(gpus) < 1:
        print("no GPU listed", file=sys.stderr)
        return 2
    print(f"devices: {gpus}; parts: {PARTS}; {SECS:.0f} s per run; logs in {OUT}", flush=True)
    for part in PARTS:
        try:
            globals()[f"part_{part}"](gpus)
        except Exception as e:  # a broken part is a failed row, the rest still runs
            row(f"{part}: raised", False, repr(e)[:120])
    print("\n== multi-GPU checks")
    print("\n".join(table))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
