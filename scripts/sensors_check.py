#!/usr/bin/env python3
"""lode's sensor readings beside nvidia-smi's, in the same run (the GPU
machine; scripts/sensors-check.sh sets it up).

For each backend that drives the NVIDIA GPU (CUDA, and OpenCL where
NVIDIA's OpenCL driver is registered), runs a SHA-256d benchmark for
SECONDS with a hashrate line every second while nvidia-smi samples the same
GPU every 1000 ms, stamps every line on arrival, pairs each lode line with
the nvidia-smi sample nearest in time, and prints a table and the mean
differences.

usage: sensors_check.py LODE [SECONDS]
"""
import os
import re
import subprocess
import sys
import threading
import time

LODE = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 30
FIELDS = "timestamp,pci.bus_id,temperature.gpu,power.draw,fan.speed,clocks.sm,clocks.mem"
REASON_FIELDS = ("clocks_throttle_reasons.active", "clocks_event_reasons.active")
# NVML's reason bits by the names lode prints (core/backend_support/nvml_sensors.c).
REASONS = [(0x1, "idle"), (0x2, "app-clocks"), (0x4, "power"), (0x8, "hw-slowdown"), (0x10, "sync-boost"),
           (0x20, "sw-thermal"), (0x40, "thermal"), (0x80, "power-brake"), (0x100, "display")]


def reason_names(mask):
    if mask == 0:
        return "none"
    names = [n for bit, n in REASONS if mask & bit]
    if mask & ~sum(bit for bit, _ in REASONS):
        names.append("other")
    return ",".join(names)


def short_bus(bus_id):
    return bus_id.strip().lower()[-7:]  # "41:00.0" of "00000000:41:00.0"


def reader(stream, sink):
    for line in stream:
        sink.append((time.monotonic(), line.rstrip("\n")))


def smi_query():
    for reasons in REASON_FIELDS:
        q = FIELDS + "," + reasons
        r = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits", "-i", "0"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return q
    sys.exit("nvidia-smi answers neither reasons field: " + r.stderr)


def parse_smi(line):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 8:
        return None

    def num(s):
        try:
            return float(s)
        except ValueError:
            return None  # "[N/A]", "[Not Supported]"
    mask = int(parts[7], 16) if parts[7].startswith("0x") else None
    return {"bus": short_bus(parts[1]), "temp": num(parts[2]), "power": num(parts[3]), "fan": num(parts[4]),
            "sm": num(parts[5]), "mem": num(parts[6]), "throttle": reason_names(mask) if mask is not None else None}


LINE = re.compile(r"(\w+:\d+): [\d.]+ [kMGT]?H/s(?: (?P<temp>-?\d+)C)?(?: (?P<power>\d+)W)?(?: fan (?P<fan>\d+)%)?"
                  r"(?: (?P<sm>\d+)MHz)?(?: mem (?P<mem>\d+)MHz)?(?: throttle (?P<throttle>\S+))?$")


def parse_lode(line):
    m = LINE.search(line)
    if m is None:
        return None
    d = {k: (float(v) if v is not None and k != "throttle" else v) for k, v in m.groupdict().items()}
    if d["throttle"] is None and d["temp"] is not None:
        d["throttle"] = "none"  # lode leaves "none" out of the line
    d["device"] = m.group(1)
    return d


def bus_ids():
    """{device id: short bus id} from --list-devices (OpenCL aliases shown)."""
    out = subprocess.run([LODE, "--list-devices"], capture_output=True, text=True,
                         env=dict(os.environ, LODE_OPENCL_SHOW_ALL="1")).stdout
    return {m.group(1): short_bus(m.group(2)) for m in re.finditer(r"^(\w+:\d+)  .*\[(\S+)\]$", out, re.M)}


def run(device, bus, query):
    smi_lines, lode_lines = [], []
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=" + query, "--format=csv,noheader,nounits", "-lms", "1000"],
                           stdout=subprocess.PIPE, text=True)
    t_smi = threading.Thread(target=reader, args=(smi.stdout, smi_lines))
    t_smi.start()
    lode = subprocess.Popen([LODE, "-a", "sha256d", "--benchmark", "-d", device, "--time-limit", str(SECONDS),
                             "--log-interval", "1", "--no-color"], stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=dict(os.environ, LODE_OPENCL_SHOW_ALL="1"))
    t_lode = threading.Thread(target=reader, args=(lode.stderr, lode_lines))
    t_lode.start()
    lode.wait(timeout=SECONDS + 600)
    t_lode.join()
    smi.terminate()
    smi.wait()
    t_smi.join()
    samples = [(t, s) for t, s in ((t, parse_smi(l)) for t, l in smi_lines) if s is not None and s["bus"] == bus]
    rows = [(t, r) for t, r in ((t, parse_lode(l)) for t, l in lode_lines) if r is not None and r["device"] == device]
    print(f"\n== {device} (bus {bus}): {len(rows)} lode lines, {len(samples)} nvidia-smi samples")
    print(lode_lines[-1][1] if lode_lines else "(no output from lode)")
    if not rows or not samples:
        return False
    print(f"{'t/s':>5}  {'temp C':>11}  {'power W':>13}  {'fan %':>9}  {'SM MHz':>11}  {'mem MHz':>11}  throttle (lode | smi)")
    diffs = {k: [] for k in ("temp", "power", "sm", "mem")}
    t0 = rows[0][0]
    for t, r in rows:
        _, s = min(samples, key=lambda ts: abs(ts[0] - t))

        def pair(k, w):
            a, b = r[k], s[k]
            if a is not None and b is not None and k in diffs:
                diffs[k].append(abs(a - b))
            fa = "-" if a is None else f"{a:.0f}"
            fb = "-" if b is None else f"{b:.0f}"
            return f"{fa:>{w}}|{fb:<{w}}"
        print(f"{t - t0:5.1f}  {pair('temp', 5)}  {pair('power', 6)}  {pair('fan', 4)}  {pair('sm', 5)}  "
              f"{pair('mem', 5)}  {r['throttle'] or '-'} | {s['throttle'] or '-'}")
    print("mean |lode - nvidia-smi|: " + ", ".join(
        f"{k} {sum(v) / len(v):.1f} ({len(v)} pairs)" if v else f"{k} - (absent on one side)" for k, v in diffs.items()))
    return True


def main():
    query = smi_query()
    ids = bus_ids()
    gpus = sorted({b for d, b in ids.items() if d.startswith("cuda:")})
    if not gpus:
        sys.exit("no CUDA device: " + str(ids))
    ok = True
    for bus in gpus[:1]:  # the first GPU (nvidia-smi -i 0 above)
        for device in sorted(d for d, b in ids.items() if b == bus):
            ok &= run(device, bus, query)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
