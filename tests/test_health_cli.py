#!/usr/bin/env python3
"""Device health at the `lode` level, with the fault-injecting test devices
fault:0 .. fault:3 (LODE_TEST_FAULT, core/dispatch/fault_backend.h: the CPU
backend's sha256d, misbehaving as told):

- a lode whose every device is quarantined (hung, erroring, or reporting
  hits that fail the CPU re-check) exits 1 and says nothing is left;
- a quarantined device leaves the other mining until Ctrl-C (exit 130),
  and a failing device beside a good one exits 0 at --time-limit;
- with --log-format json each state change is one "device" event;
- --max-temp (command line, per device, and a config file's per-device
  object) pauses a device above its limit and resumes it below the limit
  less 5 C, with one log line each; a device without a sensor is warned
  about once and never paused;
- bad --max-temp, --max-restarts, --hang-timeout values and a malformed
  LODE_TEST_FAULT are usage errors (exit 2), never a crash.

usage: test_health_cli.py PATH_TO_LODE
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE = sys.argv[1]
check = Checks()


def run(args, fault=None, timeout=300):
    env = dict(os.environ)
    env.pop("LODE_TEST_FAULT", None)
    if fault is not None:
        env["LODE_TEST_FAULT"] = fault
    return subprocess.run([LODE, *args], capture_output=True, text=True, timeout=timeout, env=env)


BENCH = ["--benchmark", "-a", "sha256d", "--no-color"]


def test_all_quarantined():
    for fault, why in (("hang:0:3", "stuck in a scan"), ("error:0:2", "restart(s) within the hour"),
                       ("badhits:0:2", "failed the CPU re-check")):
        r = run([*BENCH, "-d", "fault:0", "--hang-timeout", "1", "--max-restarts", "1", "--time-limit", "120"],
                fault)
        check(r.returncode == 1 and "nothing is hashing" in r.stderr
              and re.search(r"fault:0: \S+ -> quarantined: .*" + re.escape(why), r.stderr),
              f"{fault}: every device quarantined: rc {r.returncode}, want 1; {r.stderr[-600:]!r}")
        check("summary: total" in r.stderr, f"{fault}: the summary is printed")


def test_one_left():
    # Stopped by Ctrl-C once fault:0 is quarantined, not at a time limit: the
    # way there (two scans, the 1-s backoff, a reopen with its self-test, a
    # scan) can outlast any fixed limit under TSan on a loaded machine. A rate
    # report every 0.5 s keeps wait_for's guard checked.
    lode = Running([*BENCH, "-d", "fault:0,fault:1", "--max-restarts", "1", "--time-limit", "300",
                    "--log-interval", "0.5"], "error:0:2")
    quarantined = lode.wait_for(r"fault:0: \S+ -> quarantined", timeout=240)
    # Two rate reports after it: lode's loop saw one device left and went
    # on (with none left it ends with status 1, "nothing is hashing").
    mining_on = quarantined and lode.wait_for(r"\] total: ") and lode.wait_for(r"\] total: ")
    rc = lode.stop()
    text = "".join(lode.lines)
    m = re.search(r"summary: fault:1: .*?, (\d+) hashes", text)
    check(rc == 130 and mining_on and "fault:0: mining -> quarantined" in text and m and int(m[1]) > 0,
          f"fault:0 quarantined, fault:1 mines on: rc {rc}, want 130; {text[-600:]!r}")
    check(text.count("-> restarting") == 1 and text.count("-> quarantined") == 1,
          "one line per state change: restarting once, quarantined once")
    check(re.search(r"summary: fault:0: .*; quarantined: .*restart", text) and
          not re.search(r"summary: fault:1: .*quarantined", text),
          f"the summary names the device that stopped, and only it: {text[-600:]!r}")
    # At a time limit the status is 0 while a device is left, whether or not
    # the failing one got as far as its quarantine by then.
    r = run([*BENCH, "-d", "fault:0,fault:1", "--max-restarts", "1", "--time-limit", "4"], "error:0:2")
    check(r.returncode == 0,
          f"a failing device beside a good one: exit 0 at --time-limit: rc {r.returncode}; {r.stderr[-600:]!r}")


def test_json_events():
    """With --log-format json each state change is one "device" event,
    read back with Python's json."""
    r = run([*BENCH, "-d", "fault:0", "--max-restarts", "1", "--time-limit", "120", "--log-format", "json"],
            "error:0:2")
    events = []
    for line in r.stderr.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if obj.get("event") == "device":
            events.append((obj.get("device"), obj.get("from"), obj.get("state"), obj.get("reason")))
    check(r.returncode == 1 and [e[:3] for e in events] == [
        ("fault:0", "starting", "mining"), ("fault:0", "mining", "restarting"), ("fault:0", "restarting", "mining"),
        ("fault:0", "mining", "quarantined")] and "device error" in (events[-1][3] or ""),
        f"device events: {events}, rc {r.returncode}")


class Running:
    """A lode whose stderr is read line by line as it runs."""

    def __init__(self, args, fault):
        env = dict(os.environ, LODE_TEST_FAULT=fault)
        self.proc = subprocess.Popen([LODE, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env=env)
        self.lines = []

    def wait_for(self, pattern, timeout=120):
        """The first line from now on matching pattern, or None (hang guard)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if line == "":
                return None
            self.lines.append(line)
            if re.search(pattern, line):
                return line
        return None

    def stop(self, timeout=120):
        """Ctrl-C; the exit status. timeout is a hang guard: a lode still
        running then is killed (status -9, a failed check, not an exception)."""
        self.proc.send_signal(signal.SIGINT)
        try:
            _, rest = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, rest = self.proc.communicate()
            rest += f"\n(still running {timeout} s after SIGINT: killed)\n"
        self.lines += rest.splitlines(keepends=True)
        return self.proc.returncode


def thermal_run(tmp, args, what):
    temp = os.path.join(tmp, "temp")
    with open(temp, "w") as f:
        f.write("90\n")
    # Rate lines every 0.5 s carry the monitor's last reading ("fault:0: 0 H/s 77C").
    lode = Running([*BENCH, "-d", "fault:0,fault:1", "--time-limit", "300", "--log-interval", "0.5", *args],
                   f"temp:0:{temp}")
    paused = lode.wait_for(r"fault:0: \S+ -> paused-thermal")
    check(paused and "90 C, above its limit of 80 C" in paused, f"{what}: 90 C pauses fault:0: {paused!r}")
    with open(temp, "w") as f:
        f.write("77\n")  # above 80 - 5: stays paused
    # Two rate lines showing 77 C: the monitor applies the limit as it stores a
    # reading, so a resume at 77 C would have been logged before them.
    for _ in range(2):
        seen = lode.wait_for(r"fault:0: .* 77C$|fault:0: paused-thermal -> ", timeout=60)
        if not check(seen and seen.rstrip().endswith(" 77C"), f"{what}: the monitor reads 77 C and keeps "
                     f"fault:0 paused: {seen!r}"):
            lode.stop()
            return
    with open(temp, "w") as f:
        f.write("70\n")
    resumed = lode.wait_for(r"fault:0: paused-thermal -> ")
    check(resumed and "-> mining: 70 C, below 75 C" in resumed, f"{what}: 70 C resumes it: {resumed!r}")
    rc = lode.stop()
    text = "".join(lode.lines)
    check(rc == 130, f"{what}: Ctrl-C stops it (rc {rc})")
    check(text.count("-> paused-thermal") == 1 and text.count("paused-thermal -> mining") == 1,
          f"{what}: one pause and one resume")
    check(text.count("fault:1: no temperature sensor") == 1 and "fault:1: mining -> paused" not in text,
          f"{what}: fault:1 has no sensor: said once, never paused")


def test_thermal():
    with tempfile.TemporaryDirectory() as tmp:
        thermal_run(tmp, ["--max-temp", "80"], "--max-temp 80")
        thermal_run(tmp, ["--max-temp", "100,fault:0=80", "--max-temp", "fault=80"], "per device")
        config = os.path.join(tmp, "lode.json")
        with open(config, "w") as f:
            json.dump({"max-temp": {"fault:0": 80, "fault:1": 85}}, f)
        thermal_run(tmp, ["-c", config], "config file")


def test_bad_values():
    with tempfile.TemporaryDirectory() as tmp:
        for args in (["--max-temp", "hot"], ["--max-temp", "0"], ["--max-temp", "cuda:0="], ["--max-temp", "=80"],
                     ["--max-temp", "200"], ["--max-restarts", "-1"], ["--max-restarts", "x"],
                     ["--hang-timeout", "-5"]):
            r = run([*BENCH, "-d", "cpu", "--time-limit", "1", *args])
            check(r.returncode == 2 and "lode: error:" in r.stderr and r.stderr.count("\n") == 1,
                  f"{args}: one-line usage error, rc {r.returncode}: {r.stderr!r}")
        for value in ({"fault:0": "hot"}, {"fault:0": 80, "x" * 60: 70}, [80]):
            config = os.path.join(tmp, "bad.json")
            with open(config, "w") as f:
                json.dump({"max-temp": value}, f)
            r = run([*BENCH, "-d", "cpu", "--time-limit", "1", "-c", config])
            check(r.returncode == 2 and "max-temp" in r.stderr, f"config max-temp {value}: rc {r.returncode}, "
                  f"{r.stderr!r}")
    r = run([*BENCH, "-d", "fault:0", "--time-limit", "1"], "melt:0")
    check(r.returncode == 2 and "LODE_TEST_FAULT" in r.stderr, f"malformed LODE_TEST_FAULT: {r.stderr!r}")


test_bad_values()
test_all_quarantined()
test_one_left()
test_json_events()
test_thermal()
sys.exit(check.report())
