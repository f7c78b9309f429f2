#!/usr/bin/env python3
"""`lode tf --primenet` on cuda:0 against the PrimeNet v5 stand-in server
(tests/primenet_standin.py): a fresh folder, two assignments fetched (ga),
run on the GPU, progress reported (ap) and both results sent (ar) and
credited once. One assignment holds the known factor of the PrimeNet
API's checksum vector (M51332417, 2^68..2^69: 297892586972172587537), which the
stand-in and this test check with pow(); the other, M66362159 from 2^70
to 2^71, is a GIMPS-sized range of about 3.6 GHz-days; every factor
reported is checked to divide M(p). Skips (77) where
lode lists no CUDA device.

usage: test_primenet_cuda.py PATH_TO_LODE
"""
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

LODE = os.path.abspath(sys.argv[1])
KNOWN = (51332417, 68, 69, 297892586972172587537)
PLAIN = (66362159, 70, 71)
GUARD_S = 400  # a hang guard only: the two take well under a minute on an H100
check = Checks()


def cuda_listed():
    out = subprocess.run([LODE, "--list-devices"], capture_output=True, text=True, timeout=120).stdout
    return re.search(r"^cuda:0\s", out, re.M) is not None


def main():
    if not cuda_listed():
        print("no CUDA device: skipped")
        sys.exit(77)
    s = StandIn()
    keys = {s.add_assignment(*KNOWN[:3]): KNOWN, s.add_assignment(*PLAIN): PLAIN}
    d = tempfile.mkdtemp(prefix="lode-primenet-cuda-")
    env = dict(os.environ, LODE_PRIMENET_RETRY_S="1")
    log = open(os.path.join(d, "lode.log"), "w+")
    proc = subprocess.Popen([LODE, "tf", "--primenet", "--primenet-url", s.url, "-d", "cuda:0", "--user", "tester",
                             "--computer", "gpubox"], cwd=d, stdout=subprocess.DEVNULL, stderr=log, env=env)
    end = time.time() + GUARD_S
    while time.time() < end and len(s.results) < 2 and proc.poll() is None:
        time.sleep(0.2)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        rc = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = "hung"
    log.seek(0)
    text = log.read()
    check(rc == 130 and len(s.results) == 2, f"both results sent, then Ctrl-C: rc {rc}, {len(s.results)} results\n"
          f"{text[-2000:]}")
    types = [r["t"] for r in s.requests]
    check(types[:2] == ["uc", "po"] and types.count("ga") >= 2 and "ap" in types, f"uc, po, ga, ap: {types}")
    for key, job in keys.items():
        p, lo, hi = job[:3]
        got = [r for r in s.results if r["k"] == key]
        check(len(got) == 1 and s.credited(p, lo, hi) == 1, f"M{p} {lo}-{hi} credited once: {got}")
        if not got:
            continue
        j = got[0]["json"]
        factors = j.get("factors", [])
        check(all(pow(2, p, int(q)) == 1 and 2**lo <= int(q) < 2**hi for q in factors),
              f"M{p}: each factor divides M{p} and lies in 2^{lo}..2^{hi}: {factors}")
        if len(job) > 3:
            check(str(job[3]) in factors, f"M{p}: the known factor {job[3]} found: {factors}")
        check("cuda" in j["program"]["kernel"] and j["rangecomplete"] is True,
              f"M{p}: found on the CUDA device, whole range: {j['program']} {j['rangecomplete']}")
    check(not s.violations, f"no protocol violation: {s.violations}")
    rates = re.findall(r"GHz-days/day", text)
    check(rates, "progress lines with GHz-days/day")
    print(f"lode log (last lines):\n{text[-1500:]}")
    s.close()
    sys.exit(check.report())


main()
