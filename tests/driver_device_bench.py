#!/usr/bin/env python3
"""Host CPU time and rate of lode while a GPU works, old binary against new.

Runs on a machine with an NVIDIA GPU. For every workload (CUDA and
OpenCL; sha256d, scrypt, Momentum, trial factoring) it runs each binary for
SECONDS and reports the rate, the process's own user+system time over the
whole run (os.wait4, start-up included) and over the steady part (from
/proc/PID/stat, 6 s after the start to 3 s before the end), in % of one core.

usage: driver_device_bench.py SECONDS OUT_DIR LABEL=[VAR=VALUE,...@]LODE_BINARY...
(the VAR=VALUE list, if given, is set in that binary's environment: variants
of one binary by its LODE_* settings)
The OpenCL device is the GPU's (LODE_OPENCL_SHOW_ALL=1 lists it).
Environment: DEVS and ALGOS narrow the runs; SAMPLER=libcpu_sampler.so
preloads tests/tools/cpu_sampler.c into every measured run and keeps its
samples in OUT_DIR/NAME.samples (read them with tests/tools/cpu_profile.py).
"""
import os
import re
import resource
import signal
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def run(cmd, secs, out_path, stop_with_sigint, env=None):
    with open(out_path, "w") as log:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        samples = []
        for at in (6.0, secs - 3.0):
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            try:
                samples.append((time.monotonic(), proc_cpu(p.pid)))
            except (OSError, IndexError):
                pass
        if stop_with_sigint:
            time.sleep(max(0.0, t0 + secs - time.monotonic()))
            p.send_signal(signal.SIGINT)
        # The children's CPU time grows by this child's once it is reaped
        # (os.wait4 could lose the race with subprocess's own reaping).
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        status = p.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.monotonic() - t0
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    total = 100.0 * cpu / wall
    steady = None
    if len(samples) == 2 and samples[1][0] > samples[0][0]:
        steady = 100.0 * (samples[1][1] - samples[0][1]) / (samples[1][0] - samples[0][0])
    return status, wall, total, steady


def rate_of(text, algo):
    if algo == "tf":
        lines = [l for l in text.splitlines() if "GHz-days/day" in l]
        m = re.search(r"([0-9.]+) GHz-days/day", lines[-1]) if lines else None
        return (float(m.group(1)), "GHz-d/d") if m else (0.0, "?")
    m = re.search(r"total ([0-9.eE+]+) (\S+)", text)
    if not m:
        return 0.0, "?"
    r, unit = float(m.group(1)), m.group(2)
    if r >= 1e9:
        return r / 1e9, "G" + unit
    if r >= 1e6:
        return r / 1e6, "M" + unit
    return r, unit


def main():
    secs = float(sys.argv[1])
    out = sys.argv[2]
    bins, extra_env = [], {}
    for arg in sys.argv[3:]:
        label, lode = arg.split("=", 1)
        settings, _, binary = lode.rpartition("@")
        bins.append((label, binary))
        extra_env[label] = dict(kv.split("=", 1) for kv in settings.split(",") if kv)
    os.environ["LODE_OPENCL_SHOW_ALL"] = "1"
    listing = subprocess.run([bins[-1][1], "--list-devices"], capture_output=True, text=True).stdout
    ocl = next((l.split()[0] for l in listing.splitlines() if re.match(r"^opencl:\d+ .*NVIDIA", l)), None)
    devs = os.environ.get("DEVS", " ".join(["cuda:0"] + ([ocl] if ocl else []))).split()
    rows = []
    for dev in devs:
        for algo in os.environ.get("ALGOS", "sha256d scrypt momentum tf").split():
            def cmd(lode, t):
                if algo == "tf":
                    return [lode, "tf", "66362159", "73", "74", "-d", dev, "--no-checkpoints", "--results",
                            f"{out}/tf-results.txt", "--progress-interval", "1"]
                return [lode, "-a", algo, "-d", dev, "--benchmark", "--time-limit", str(int(t)), "-q"]
            # Warm-up with the new binary: tunes and caches the launch shape
            # (shared by both binaries), builds the OpenCL programs.
            subprocess.run(cmd(bins[-1][1], 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=60) if algo != "tf" else run(cmd(bins[-1][1], 5), 5, "/dev/null", True)
            for label, lode in bins:
                name = f"{dev.replace(':', '')}-{algo}-{label}"
                env = dict(os.environ, **extra_env[label])
                if os.environ.get("SAMPLER"):
                    env.update(LD_PRELOAD=os.path.realpath(os.environ["SAMPLER"]),
                               LODE_SAMPLER_OUT=f"{out}/{name}.samples")
                status, wall, total, steady = run(cmd(lode, secs), secs,
                                                  f"{out}/{name}.log", algo == "tf", env)
                with open(f"{out}/{name}.log") as f:
                    r, unit = rate_of(f.read(), algo)
                row = (f"{dev:9} {algo:9} {label:4} {r:10.3f} {unit:9} cpu total {total:6.2f}% "
                       f"steady {steady if steady is not None else -1:6.2f}%  wall {wall:5.1f}s rc {status}")
                print(row, flush=True)
                rows.append(row)
    print("\n== summary (rate; host CPU in % of one core: whole run, steady part)")
    print("\n".join(rows))
    with open(f"{out}/bench-table.txt", "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
