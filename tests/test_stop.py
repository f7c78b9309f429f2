#!/usr/bin/env python3
"""A stop (SIGINT, SIGTERM) ends lode within seconds, whatever a device is
doing (issue #39): the summary printed, status 130, and a device that does
not return its scan abandoned and named rather than waited for. Each run
here has work for minutes or more, or a device call that never returns,
so a run that ends with 130 ended because of the stop; every wait is a
hang guard only, never a speed limit.

- lode tf on one CPU thread, whose class takes an hour and more: the class
  in flight is left undone in the checkpoint and runs again next time;
- a benchmark on a device whose scan never returns, with the watchdog off
  (the fault-injecting test device fault:0, LODE_TEST_FAULT): the stop
  abandons it, names it, prints the summary and exits 130;
- lode scan -d opencl:0 on Oclgrind (Debian's OpenCL simulator, where a
  scan takes hours), registered through OCL_ICD_VENDORS, where installed;
- lode check on such a stuck device: the stop leaves it behind, named,
  and the report and status 130 follow;
- lode --selftest: stopped after its first result, it exits 130 without
  running the rest.
(systemd's unread socket is in test_systemd.py.)

usage: test_stop.py PATH_TO_LODE
"""
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
OCLGRIND_ICD = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"
GUARD_S = 120
check = Checks()


class StderrLines:
    """Collects a process's stderr lines on a thread of its own."""

    def __init__(self, proc):
        self.lines = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self.read, args=(proc,), daemon=True)
        self.thread.start()

    def read(self, proc):
        for line in proc.stderr:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()

    def wait_for(self, needle, timeout=GUARD_S):
        with self.cond:
            return self.cond.wait_for(lambda: any(needle in line for line in self.lines), timeout)

    def wait_for_count(self, needle, count, timeout=GUARD_S):
        with self.cond:
            return self.cond.wait_for(lambda: sum(needle in line for line in self.lines) >= count, timeout)

    def text(self):
        self.thread.join(timeout=5)
        with self.cond:
            return "".join(self.lines)


def stop_and_wait(proc, sig=signal.SIGTERM):
    """Sends sig; the status, or None if the hang guard had to kill it."""
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=GUARD_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


def test_interrupt_long_class(tmp):
    """A stop does not wait for a class that takes a CPU thread an hour and
    more (2^76..2^77): one SIGTERM, or two SIGINTs at once, and lode stops
    by itself (rc 130) with class 0 left undone in the checkpoint, to run
    again next time (before: "finishing class 0", and it ran on until a
    second signal). The guard only catches a hang: the class would take far
    longer."""
    # "taken": a library (tests/signal_taker.c, as LLVM in PoCL does) has
    # put SA_RESETHAND handlers of its own on SIGINT and SIGTERM; before,
    # the second SIGINT met the default action and killed lode (rc -2).
    taker = os.environ.get("SIGNAL_TAKER")
    check(taker is not None and os.path.exists(taker), f"SIGNAL_TAKER names the preload library: {taker!r}")
    taken = dict(os.environ, LD_PRELOAD=taker or "",
                 ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    for name, signals, env in (("term", [signal.SIGTERM], None), ("int2", [signal.SIGINT, signal.SIGINT], None),
                               ("taken", [signal.SIGINT, signal.SIGINT], taken)):
        d = os.path.join(tmp, name)
        os.makedirs(d)
        proc = subprocess.Popen([LODE, "tf", "66362159", "76", "77", "-d", "cpu", "-t", "1", "--checkpoint-dir", d,
                                 "--results", os.path.join(d, "r.json")], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        first = ""
        wanted = ["trial factoring M66362159"] + (["taken over"] if env else [])
        while not all(w in first for w in wanted):  # class 0 is being scanned
            line = proc.stderr.readline()
            if not line:
                break
            first += line
        for i, sig in enumerate(signals):
            if env and i:
                time.sleep(0.3)  # the first is taken, not merged with this one
            proc.send_signal(sig)
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        err = first + err
        check(proc.returncode == 130 and "stopped in class 0" in err and "runs again next time" in err,
              f"{name}: the stop leaves the class: rc {proc.returncode} {err[-500:]!r}")
        ckp = ""
        if os.path.exists(os.path.join(d, "M66362159_76_77.ckp")):
            with open(os.path.join(d, "M66362159_76_77.ckp")) as f:
                ckp = f.read()
        check("next_class 0\n" in ckp and "classes_done 0\n" in ckp,
              f"{name}: class 0 not done in the checkpoint: {ckp!r}")
        check(not os.path.exists(os.path.join(d, "r.json")), f"{name}: no result for an unfinished assignment")


def test_stuck_device():
    """Before: the stop waited for the scan (here for ever: no watchdog)."""
    # Its first scan once tuned hangs, deaf to its abort flag: two rate
    # lines (a second apart) into the benchmark, the tuning is long over.
    env = dict(os.environ, LODE_TEST_FAULT="hang:0:0")
    proc = subprocess.Popen([LODE, "--benchmark", "-a", "sha256d", "-d", "fault:0", "--hang-timeout", "0",
                             "--log-interval", "1", "--time-limit", "3600", "--no-color"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    err = StderrLines(proc)
    started = err.wait_for_count("total:", 2)
    rc = stop_and_wait(proc)
    text = err.text()
    check(started and rc == 130, f"a stop with fault:0 stuck in its scan exits 130: rc {rc}, {text[-600:]!r}")
    check("fault:0: worker 0 did not return from its scan" in text and "abandoned" in text,
          f"the stuck device is named and abandoned: {text[-600:]!r}")
    check("summary" in text, f"the summary is printed: {text[-400:]!r}")


def test_stuck_check():
    """lode check runs its devices on threads of its own: before, the stop
    joined them, and so waited for a scan that never returns (the fault
    device's hang, here for ever)."""
    env = dict(os.environ, LODE_TEST_FAULT="hang:0:0", NO_COLOR="1")
    proc = subprocess.Popen([LODE, "check", "-d", "fault:0", "-a", "sha256d", "--jobs", "100"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    err = StderrLines(proc)
    started = err.wait_for("check: seed")
    # The fault device's open and self-test take milliseconds; a stop
    # before its scan hangs would not test the hang (it checks the flag).
    time.sleep(3)
    rc = stop_and_wait(proc)
    out = proc.stdout.read()
    text = err.text()
    check(started and rc == 130, f"a stop of lode check with fault:0 stuck exits 130: rc {rc}, {text[-600:]!r}")
    check("fault:0: still in a device call" in text and "abandoned" in text and "check interrupted" in text,
          f"the stuck device is named and abandoned: {text[-600:]!r}")
    check("fault:0" in out and "compared" in out, f"the report is printed: {out[-400:]!r}")


def oclgrind_vendors(tmp):
    """A vendors folder that registers Oclgrind alone, or None if it is not installed."""
    if not os.path.exists(OCLGRIND_ICD):
        return None
    with open(os.path.join(tmp, "oclgrind.icd"), "w") as f:
        f.write(OCLGRIND_ICD + "\n")
    return tmp


def test_oclgrind_scan():
    """Before: "lode: interrupted", then the process ran on (20 minutes and
    more) waiting for the simulator."""
    with tempfile.TemporaryDirectory() as tmp:
        vendors = oclgrind_vendors(tmp)
        if vendors is None:
            print(f"{OCLGRIND_ICD} not found (apt-get install oclgrind): the Oclgrind case is not run")
            return
        # Oclgrind's LLVM leaks as PoCL's does (tests/CMakeLists.txt): no leak check under ASan.
        env = dict(os.environ, OCL_ICD_VENDORS=vendors,
                   ASAN_OPTIONS=":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"])))
        listed = subprocess.run([LODE, "--list-devices"], capture_output=True, text=True, timeout=GUARD_S, env=env)
        if "opencl:0  Oclgrind" not in listed.stdout:
            print(f"no Oclgrind device in this lode (built without OpenCL?): {listed.stdout[-300:]!r}")
            return
        proc = subprocess.Popen([LODE, "scan", "-a", "sha256d", "-d", "opencl:0", "--header", "00" * 80,
                                 "--target", "0000" + "ff" * 30, "--start", "0", "--count", str(1 << 32)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        err = StderrLines(proc)
        started = err.wait_for("opencl:0: starting -> mining")
        rc = stop_and_wait(proc)
        text = err.text()
        check(started and rc == 130, f"scan on Oclgrind stops: rc {rc}, {text[-600:]!r}")
        check("opencl:0: worker 0 did not return" in text and "abandoned" in text,
              f"the simulator is named and abandoned: {text[-600:]!r}")


def read_pty(master, wait_s, enough=lambda out: False):
    """What the terminal's master side gives until enough(out), an end, or
    wait_s seconds without a byte."""
    out = b""
    while not enough(out):
        ready, _, _ = select.select([master], [], [], wait_s)
        try:
            chunk = os.read(master, 4096) if ready else b""
        except OSError:
            chunk = b""
        if not chunk:
            break
        out += chunk
    return out


def test_selftest():
    """Before: SIGINT was ignored until every self-test had run (9-19 s),
    and lode exited 0. stdout on a terminal, so each result line comes as it
    is printed."""
    master, slave = os.openpty()
    proc = subprocess.Popen([LODE, "--selftest", "-d", "cpu"], stdout=slave, stderr=subprocess.PIPE, text=True)
    os.close(slave)
    out = read_pty(master, GUARD_S, lambda o: b" ok" in o or b"FAILED" in o)
    first = out.decode(errors="replace")
    rc = stop_and_wait(proc, signal.SIGINT)
    out += read_pty(master, 1)  # what it printed after the stop
    os.close(master)
    text = out.decode(errors="replace")
    err = proc.stderr.read()
    check(" ok" in first and rc == 130, f"--selftest stops at SIGINT with 130: rc {rc}, {text[-400:]!r} {err!r}")
    check("then interrupted" in text and " 0 failed, 0 skipped\r\n" not in text,
          f"it says it was interrupted, and ran not every test: {text[-300:]!r}")


with tempfile.TemporaryDirectory() as scratch:
    test_interrupt_long_class(scratch)
test_stuck_device()
test_stuck_check()
test_oclgrind_scan()
test_selftest()
sys.exit(check.report())
