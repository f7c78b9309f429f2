#!/usr/bin/env python3
"""On the GPU machine: where lode's host CPU time goes while a GPU works.

For every device and workload, runs lode for SECONDS under the sampler
(tests/tools/cpu_sampler.c), prints its host CPU time in % of one core, and
keeps the samples in OUT/profiles.tgz; read them on the build machine with
tests/tools/cpu_profile.py FILE BUILD/core/cli/lode.

usage: profile_device.py SECONDS SAMPLER_SO LODE   (env DEVS, ALGOS)"""
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import time


def timed(cmd, secs, env, log, interrupt):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    if interrupt:
        time.sleep(secs)
        p.send_signal(signal.SIGINT)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    return status, 100.0 * (ru.ru_utime + ru.ru_stime) / wall, wall


def main():
    secs, sampler, lode = float(sys.argv[1]), os.path.realpath(sys.argv[2]), os.path.realpath(sys.argv[3])
    env = dict(os.environ, LODE_OPENCL_SHOW_ALL="1")
    listing = subprocess.run([lode, "--list-devices"], env=env, capture_output=True, text=True).stdout
    ocl = next((l.split()[0] for l in listing.splitlines() if re.match(r"^opencl:\d+ .*NVIDIA", l)), None)
    devs = os.environ.get("DEVS", " ".join(["cuda:0"] + ([ocl] if ocl else []))).split()
    work = tempfile.mkdtemp()
    rows = []
    for dev in devs:
        for algo in os.environ.get("ALGOS", "sha256d scrypt momentum tf").split():
            name = f"{dev.replace(':', '')}-{algo}"

            def cmd(t):
                if algo == "tf":
                    return [lode, "tf", "66362159", "73", "74", "-d", dev, "--no-checkpoints", "--results",
                            f"{work}/tf-results.txt"]
                return [lode, "-a", algo, "-d", dev, "--benchmark", "--time-limit", str(int(t)), "-q"]
            with open(os.devnull, "w") as null:  # tunes and builds first
                timed(cmd(4), 4, env, null, algo == "tf")
            with open(f"{work}/{name}.log", "w") as log:
                status, cpu, wall = timed(cmd(secs), secs, dict(env, LD_PRELOAD=sampler,
                                          LODE_SAMPLER_OUT=f"{work}/{name}.txt"), log, algo == "tf")
            with open(f"{work}/{name}.log") as f:
                tail = [l for l in f.read().splitlines() if "total" in l or "GHz-days" in l][-1:]
            rows.append(f"{name:18} cpu {cpu:6.2f}% of one core over {wall:5.1f} s, rc {status}  {' '.join(tail)}")
            print(rows[-1], flush=True)
    with tarfile.open(os.path.join(os.environ.get("OUT", "/tmp"), "profiles.tgz"), "w:gz") as t:
        t.add(work, arcname="profiles")
    print("\n".join(["== summary"] + rows))


if __name__ == "__main__":
    main()
