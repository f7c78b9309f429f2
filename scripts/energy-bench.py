#!/usr/bin/env python3
"""Rate, board power and energy per unit of work on GPU 0, lode and its
peers one after the other on the same machine (issue #43's figures).

    scripts/energy-bench.py SECONDS [RUN ...]

Each RUN (default: all, in the order listed) runs SECONDS while nvidia-smi
samples the board's power every 500 ms; the samples of the first quarter
are left out (warm-up). A table last: the rate the program prints, the mean
board power from nvidia-smi, energy per unit from those two, and lode's own
figure (from NVML's energy counter, its summary or progress line) beside it.

    labels       lode's /metrics energy series for cuda:0 against nvidia-smi:
                 the DCGM exporter's labels (gpu, UUID, pci_bus_id,
                 modelName) must carry nvidia-smi's index, uuid, pci.bus_id
                 and name
    tf           lode tf M66362159 2^73-2^74 on cuda:0 (GHz-days/day)
    tf-opencl    the same on the GPU's OpenCL device
    mfaktc       mfaktc (PEERS/mfaktc, PEERS/mfaktc-2047.ini) on the same
                 assignment: the median GHz-days/day of its class lines
    sha256d      lode -a sha256d --benchmark (8 versions a nonce), cuda:0
    momentum     lode -a momentum --benchmark, cuda:0
    momentum-opencl  the same on the GPU's OpenCL device

LODE (default .devbin/lode) and PEERS (default .devbin/peers) locate the
programs; stage as for the other device scripts (scripts/device-check.sh
--stage). VARIANT_ENV="NAME=VALUE ..." is added to every lode run."""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LODE = os.path.abspath(os.environ.get("LODE", os.path.join(ROOT, ".devbin", "lode")))
PEERS = os.path.abspath(os.environ.get("PEERS", os.path.join(ROOT, ".devbin", "peers")))
OCL = {"LODE_OPENCL_SHOW_ALL": "1"}


class PowerSampler:
    """nvidia-smi's power.draw of GPU 0 every 500 ms, with arrival times."""

    def __init__(self):
        self.samples = []
        self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=power.draw", "--format=csv,noheader,nounits",
                                      "-lms", "500", "-i", "0"], stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for line in self.proc.stdout:
            try:
                self.samples.append((time.monotonic(), float(line.strip())))
            except ValueError:
                pass

    def mean_after(self, t0):
        self.proc.terminate()
        self.proc.wait()
        self.thread.join(2)
        kept = [w for t, w in self.samples if t >= t0]
        return statistics.mean(kept) if kept else float("nan")


def opencl_gpu():
    """The GPU's OpenCL device name (listed only with LODE_OPENCL_SHOW_ALL)."""
    out = subprocess.run([LODE, "--list-devices"], env=dict(os.environ, **OCL), capture_output=True,
                         text=True).stdout
    m = re.search(r"^(opencl:\d+) .*NVIDIA", out, re.M)
    return m.group(1) if m else "opencl:0"


def run(argv, seconds, env=None, cwd=None):
    """(output, mean board watts after the warm-up) of argv stopped by
    SIGINT after seconds."""
    env = dict(os.environ, **(env or {}))
    power = PowerSampler()
    start = time.monotonic()
    p = subprocess.run(["timeout", "-s", "INT", str(seconds)] + argv, env=env, cwd=cwd, capture_output=True,
                       text=True)
    return p.stdout + p.stderr, power.mean_after(start + seconds / 4)


def lode_env(extra=None):
    env = dict(extra or {})
    for kv in os.environ.get("VARIANT_ENV", "").split():
        k, _, v = kv.partition("=")
        env[k] = v
    return env


def bench(algo, device, env=None):
    def go(seconds):
        out, watts = run([LODE, "-a", algo, "-d", device, "--benchmark", "--time-limit", str(seconds), "-q",
                          "--no-color"], seconds + 5, lode_env(env))
        m = re.search(r"^\S+ total ([0-9.e+]+) (\S+)", out, re.M)
        own = re.search(r"summary: " + re.escape(device) + r": .*; ([0-9.]+ J/\S+),", out)
        rate = float(m.group(1)) if m else float("nan")
        return rate, m.group(2) if m else "?", watts, own.group(1) if own else "-", out
    return go


def tf(device, env=None):
    def go(seconds):
        work = tempfile.mkdtemp(prefix="energy-tf-")
        out, watts = run([LODE, "tf", "66362159", "73", "74", "-d", device, "--no-checkpoints", "--no-color",
                          "--progress-interval", "5"], seconds, lode_env(env), cwd=work)
        shutil.rmtree(work, ignore_errors=True)
        rates = re.findall(r"([0-9.]+) GHz-days/day", out)
        owns = re.findall(r"([0-9.]+) GHz-days/kWh", out)
        rate = float(rates[-1]) if rates else float("nan")
        own = f"{owns[-1]} GHz-days/kWh" if owns else "-"
        return rate, "GHz-days/day", watts, own, out
    return go


def mfaktc(seconds):
    work = tempfile.mkdtemp(prefix="energy-mfaktc-")
    shutil.copy(os.path.join(PEERS, "mfaktc"), work)
    shutil.copy(os.path.join(PEERS, "mfaktc-2047.ini"), os.path.join(work, "mfaktc.ini"))
    out, watts = run(["./mfaktc", "-tf", "66362159", "73", "74"], seconds, cwd=work)
    shutil.rmtree(work, ignore_errors=True)
    rates = []
    for line in out.splitlines():
        fields = line.split("|")
        if len(fields) > 2:
            try:
                rates.append(float(fields[1]))
            except ValueError:
                pass
    kept = rates[len(rates) // 4:]  # past the warm-up, as for the power
    return (statistics.median(kept) if kept else float("nan")), "GHz-days/day", watts, "-", out


def labels(seconds):
    """(rate, unit, watts, verdict, output) of the DCGM label check."""
    import urllib.request
    port = 18000 + os.getpid() % 1000
    p = subprocess.Popen([LODE, "-a", "sha256d", "-d", "cuda:0", "--benchmark", "--time-limit", str(seconds),
                          "--api-bind", f"127.0.0.1:{port}", "-q"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    text = ""
    for _ in range(seconds * 2):
        time.sleep(0.5)
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            if "lode_device_energy_joules_total{" in text:
                break
        except OSError:
            pass
    p.wait()
    series = [line for line in text.splitlines() if line.startswith("lode_device_energy_joules_total{")]
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,name", "--format=csv,noheader", "-i",
                          "0"], capture_output=True, text=True).stdout.strip()
    index, uuid, bus, name = [f.strip() for f in smi.split(",")]
    got = dict(re.findall(r'(\w+)="([^"]*)"', series[0])) if series else {}
    want = {"gpu": index, "UUID": uuid, "pci_bus_id": bus, "modelName": name}
    bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    verdict = "labels match nvidia-smi" if series and not bad else f"MISMATCH {bad}"
    return float("nan"), "-", float("nan"), verdict, "\n".join(series) + "\nnvidia-smi: " + smi


def per_unit(rate, unit, watts):
    """Energy per unit of work from a rate and a mean power."""
    if not rate or rate != rate or watts != watts:
        return "-"
    if unit == "GHz-days/day":
        return f"{rate / watts * 1000 / 24:.0f} GHz-days/kWh"
    if unit == "H/s":  # the benchmark's total line is in H/s for the hashing algorithms
        return f"{watts / rate * 1e9:.1f} J/GH" if rate > 1e8 else f"{watts / rate * 1e6:.1f} J/MH"
    return f"{watts / rate:.3f} J/{unit.split('/')[0].rstrip('s')}"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    seconds = int(sys.argv[1])
    gpu_cl = opencl_gpu()
    runs = {
        "labels": labels,
        "tf": tf("cuda:0"),
        "tf-opencl": tf(gpu_cl, OCL),
        "mfaktc": mfaktc,
        "sha256d": bench("sha256d", "cuda:0"),
        "momentum": bench("momentum", "cuda:0"),
        "momentum-opencl": bench("momentum", gpu_cl, OCL),
    }
    names = sys.argv[2:] or list(runs)
    rows = []
    for name in names:
        rate, unit, watts, own, out = runs[name](seconds)
        print(f"== {name}\n" + "\n".join(out.strip().splitlines()[-4:]), flush=True)
        rows.append((name, rate, unit, watts, per_unit(rate, unit, watts), own))
    print(f"\n{'run':<16} {'rate':>14} {'unit':<13} {'board W':>8}  {'per unit (smi)':<20} lode's own")
    for name, rate, unit, watts, pu, own in rows:
        print(f"{name:<16} {rate:>14.6g} {unit:<13} {watts:>8.1f}  {pu:<20} {own}")


if __name__ == "__main__":
    main()
