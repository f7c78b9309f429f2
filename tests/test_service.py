#!/usr/bin/env python3
"""lode's service habits, checked from outside: --log-file (whole lines,
SIGUSR1 reopen, copytruncate, a full disk), --log-format json (Python's json
module reads every line), --syslog (a real datagram socket at /dev/log in a
mount namespace), --background (the parent exits, the child logs on),
--cpu-priority (nice and policy of every thread in /proc), and the URL and
option errors. No pool, no node: the benchmark is what logs.

usage: test_service.py PATH_TO_LODE
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="lode-service-test-")
check = Checks()
TEXT_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] ")
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
BENCH = ["-a", "sha256d", "--benchmark", "-d", "cpu", "-t", "1", "--no-color"]


def run(*args, timeout=120, **kw):
    return subprocess.run([LODE, *args], capture_output=True, text=True, timeout=timeout, **kw)


def path(name):
    return os.path.join(TMP, name)


def read(p):
    with open(p, "rb") as f:
        return f.read()


def wait_until(cond, timeout):
    """A hang guard: True as soon as cond() holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def json_lines(data, what):
    """Every line is one JSON object with ts, level and msg."""
    lines = data.decode("utf-8").splitlines()
    objs = []
    for line in lines:
        try:
            o = json.loads(line)
        except ValueError:
            check(False, f"{what}: not JSON: {line!r}")
            continue
        ok = (isinstance(o, dict) and TS.match(o.get("ts", "")) is not None
              and o.get("level") in ("error", "warning", "notice", "info", "debug")
              and isinstance(o.get("msg"), str))
        check(ok, f"{what}: missing ts/level/msg: {line!r}")
        objs.append(o)
    return objs


def test_log_file_text():
    log = path("text.log")
    r = run(*BENCH, "--time-limit", "2", "--log-interval", "0.5", "--log-file", log)
    check(r.returncode == 0, f"benchmark with --log-file: status {r.returncode}: {r.stderr[-500:]}")
    data = read(log).decode()
    lines = data.splitlines()
    check(data.endswith("\n") and len(lines) >= 3, f"log file has {len(lines)} lines")
    check(all(TEXT_LINE.match(line) for line in lines), f"text log lines: {lines[:3]}")
    check("summary: total:" in data, "the summary is in the log file")
    # The same lines went to stderr (the file is in addition).
    check("summary: total:" in r.stderr, "stderr still has the summary")
    check("\033[" not in data, "no colour codes in the file")
    # Append, never truncate: a second run adds to the same file.
    run(*BENCH, "--time-limit", "1", "--log-file", log)
    check(read(log).decode().startswith(data) and len(read(log)) > len(data), "a second run appends")


def test_log_file_errors():
    r = run(*BENCH, "--time-limit", "1", "--log-file", path("no/such/dir/x.log"))
    check(r.returncode == 2 and "cannot open the log file" in r.stderr,
          f"unopenable log file: status {r.returncode}, {r.stderr.strip()!r}")
    check("summary" not in r.stderr and "benchmark" not in r.stderr.lower().replace("--benchmark", ""),
          f"nothing ran before the log file error: {r.stderr!r}")
    r = run(*BENCH, "--time-limit", "1", "--log-format", "xml")
    check(r.returncode == 2 and "text or json" in r.stderr, f"--log-format xml: {r.stderr.strip()!r}")
    r = run(*BENCH, "--time-limit", "1", "--background")
    check(r.returncode == 2 and "--log-file" in r.stderr, f"-B without a log: {r.stderr.strip()!r}")
    for bad in ("6", "-1", "x"):
        r = run(*BENCH, "--time-limit", "1", "--cpu-priority", bad)
        check(r.returncode == 2 and "cpu-priority" in r.stderr, f"--cpu-priority {bad}: {r.stderr.strip()!r}")


def test_full_disk():
    """Writing to /dev/full fails with ENOSPC: lode mines on and ends as usual."""
    if not os.path.exists("/dev/full"):
        print("SKIP: no /dev/full")
        return
    r = run(*BENCH, "--time-limit", "2", "--log-interval", "0.2", "--log-file", "/dev/full", timeout=60)
    check(r.returncode == 0, f"--log-file /dev/full: status {r.returncode}: {r.stderr[-400:]}")
    check("summary: total:" in r.stderr, "--log-file /dev/full: the run finished with its summary")


def test_json():
    log = path("json.log")
    r = run(*BENCH, "--time-limit", "2", "--log-interval", "0.5", "--log-format", "json", "--log-file", log)
    check(r.returncode == 0, f"json benchmark: status {r.returncode}")
    for name, data in (("stderr", r.stderr.encode()), ("file", read(log))):
        objs = json_lines(data, f"json {name}")
        check(len(objs) >= 3, f"json {name}: {len(objs)} lines")
        check(any(o["msg"].startswith("summary: total:") and o["level"] == "notice" for o in objs),
              f"json {name}: the summary line with level notice")


def test_json_errors():
    """--log-format json: every line of stderr is one JSON object, usage
    errors included, wherever the option stands (#39: `lode: error: ...`
    stayed plain text). The text each error has without --log-format is its
    msg."""
    conf = path("json-errors.json")
    with open(conf, "w") as f:
        f.write('{"log-format": "json",\n "frobnicate": 1}\n')
    cases = [
        ["--no-such-option", "--log-format", "json"],
        ["--log-format=json", "--no-such-option"],
        ["--log-format", "json"],
        ["-a", "scrypt", "--log-format", "json"],
        ["frobnicate", "--log-format", "json"],
        ["tf", "1000003", "60", "99", "--log-format", "json"],
        [*BENCH, "--threads", "0", "--log-format", "json"],
        [*BENCH, "-d", "cpu:9", "--log-format", "json"],
        ["-c", conf],
    ]
    for args in cases:
        r = run(*args, timeout=60)
        objs = json_lines(r.stderr.encode(), f"{args}")
        plain = run(*[a for a in args if a not in ("--log-format", "json", "--log-format=json")],
                    timeout=60) if "-c" not in args else None
        errors = [o["msg"] for o in objs if o["level"] == "error"]
        check(r.returncode == 2 and len(errors) == 1, f"{args}: rc {r.returncode}, stderr {r.stderr!r}")
        if plain is not None:
            want = plain.stderr.splitlines()[0].removeprefix("lode: error: ") if plain.stderr else None
            check(errors == [want], f"{args}: JSON error {errors}, the text run's {want!r}")
        else:
            check(errors and "frobnicate" in errors[0], f"{args}: the config file's error: {errors}")


def test_json_interrupted_scan():
    """--log-format json: `lode scan` stopped by SIGINT says so in JSON too
    (it printed `lode: interrupted` as plain text)."""
    p = subprocess.Popen([LODE, "scan", "-a", "scrypt", "-d", "cpu", "-t", "1", "--header", "00" * 80,
                          "--target", "00" * 32, "--start", "0", "--count", "4000000000", "--log-format", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    objs = json_lines(err, "interrupted scan")
    check(p.returncode == 130 and any(o["msg"] == "interrupted" for o in objs),
          f"interrupted JSON scan: rc {p.returncode}, stderr {err[-300:]!r}")


def run_on_terminal(args, env, timeout=60):
    """lode with stderr on a pseudo-terminal (colour is for terminals only):
    what it wrote there."""
    import pty
    import select
    master, slave = pty.openpty()
    p = subprocess.Popen([LODE, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if not ready:
            if p.poll() is not None:
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer of the terminal is gone
            break
        if not data:
            break
        out += data
    os.close(master)
    if p.poll() is None:
        p.kill()
    p.wait()
    return out.decode(errors="replace")


def test_no_color():
    """NO_COLOR set to anything but "" turns colour off (https://no-color.org);
    unset or empty, a warning on a terminal is yellow as before (#39: ignored)."""
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    url = f"stratum+tcp://127.0.0.1:{free.getsockname()[1]}"
    free.close()  # nothing listens there: "cannot connect" is a warning
    args = ["-a", "sha256d", "-d", "cpu", "-t", "1", "-o", url, "--retry-pause", "0.2", "--time-limit", "2"]
    for value in (None, "", "1", "0", "true"):
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        if value is not None:
            env["NO_COLOR"] = value
        out = run_on_terminal(args, env)
        warned = "cannot connect" in out
        coloured = "\033[" in out
        want = value in (None, "")
        check(warned and coloured == want,
              f"NO_COLOR={value!r}: colour {coloured}, want {want} (warned: {warned}): {out[-300:]!r}")


def test_quiet_api_address():
    """-q keeps the line that says where the API listens: with port 0 it is
    the only way to learn the port (#39: -q hid it). The port it names
    answers /api/summary, the oracle that it is the bound one."""
    import urllib.request
    r = run(*BENCH, "--api-bind", "127.0.0.1:0", "--api-token", "x", "--time-limit", "0.1", timeout=60)
    if "without libmicrohttpd" in r.stderr:
        print("SKIP: this lode was built without the API")
        return
    p = subprocess.Popen([LODE, *BENCH, "-q", "--api-bind", "127.0.0.1:0", "--time-limit", "30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in p.stderr:  # a hang guard: the time limit ends the run
            m = re.search(r"API listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        if not check(port, "-q: the API's address is logged"):
            return
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/summary", timeout=30) as r:
            summary = json.load(r)
        check("total" in summary, f"-q: the logged port {port} serves the API: {str(summary)[:200]}")
    finally:
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=60)


def test_kill_mid_write():
    """SIGKILL at any instant: every line in the file is whole (one write a line)."""
    log = path("kill.log")
    for i in range(5):
        p = subprocess.Popen([LODE, *BENCH, "--log-interval", "0.01", "--log-format", "json",
                              "--log-file", log], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: os.path.exists(log) and os.path.getsize(log) > 2000 * (i + 1), 60)
        time.sleep(0.05 * i)
        p.kill()
        p.wait()
    data = read(log)
    check(data.endswith(b"\n"), "killed runs: the file ends with a whole line")
    objs = json_lines(data, "killed runs")
    check(len(objs) > 50, f"killed runs: {len(objs)} lines")


def test_reopen():
    """logrotate: rename (lode opens the name anew), and copytruncate (O_APPEND: no hole)."""
    log = path("rotate.log")
    p = subprocess.Popen([LODE, *BENCH, "--log-interval", "0.1", "--log-file", log],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        check(wait_until(lambda: os.path.exists(log) and os.path.getsize(log) > 300, 120), "log grows")
        os.rename(log, log + ".1")
        check(wait_until(lambda: os.path.exists(log) and os.path.getsize(log) > 200, 120),
              "lode opened the log file anew by its name")
        size_old = os.path.getsize(log + ".1")
        time.sleep(0.5)
        check(os.path.getsize(log + ".1") == size_old, "the rotated file gets no more lines")
        # copytruncate: lines go on at the new end, no NUL-filled hole.
        with open(log, "r+") as f:
            f.truncate(0)
        check(wait_until(lambda: os.path.getsize(log) > 100, 120), "lines after truncation")
        data = read(log)
        check(b"\0" not in data, "no NUL bytes after a truncation (O_APPEND)")
        check(all(TEXT_LINE.match(line) for line in data.decode().splitlines()),
              "whole lines after a truncation")
    finally:
        rc, _ = stop_by_sigint(p, 300)
    check(rc == 130, f"stopped by SIGINT: status {rc}")


def proc_threads(pid):
    """(nice, policy) of every thread of pid, from /proc/PID/task/TID/stat."""
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out.append((int(fields[16]), int(fields[38])))  # fields 19 and 41 of proc(5)
    return out


def stop_by_sigint(p, timeout):
    """SIGINT, then (status, stderr). timeout is a hang guard: a lode still
    running then is killed, and the status is None (a failed check)."""
    p.send_signal(signal.SIGINT)
    try:
        err = p.communicate(timeout=timeout)[1]
        return p.returncode, err
    except subprocess.TimeoutExpired:
        p.kill()
        err = p.communicate()[1]
        return None, f"{err}\n(still running {timeout} s after SIGINT: killed)"


def test_cpu_priority():
    want = {0: (19, 5), 1: (10, 3), 2: (0, 0)}  # SCHED_IDLE 5, SCHED_BATCH 3, SCHED_OTHER 0
    # Hang guards, not speed limits: at SCHED_IDLE lode runs only when no
    # other thread wants the CPU, and ctest runs other tests beside this one.
    guard = 300
    for level, (nice, policy) in want.items():
        p = subprocess.Popen([LODE, "-a", "sha256d", "--benchmark", "-d", "cpu", "-t", "2",
                              "--cpu-priority", str(level)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            # Wait for the workers: more than the main thread (or for an early exit).
            wait_until(lambda: p.poll() is not None or len(proc_threads(p.pid)) >= 3, guard)
            threads = proc_threads(p.pid) if p.poll() is None else []
            check(len(threads) >= 3, f"--cpu-priority {level}: {len(threads)} threads")
            check(all(t == (nice, policy) for t in threads),
                  f"--cpu-priority {level}: threads (nice, policy) {sorted(set(threads))}, want {(nice, policy)}")
        finally:
            rc, err = stop_by_sigint(p, guard)
        check(rc == 130, f"--cpu-priority {level}: status {rc}: {err[-300:]}")


def test_background():
    log = path("bg.log")
    t0 = time.monotonic()
    r = run(*BENCH, "--log-interval", "0.5", "-B", "--log-file", log, timeout=60)
    took = time.monotonic() - t0
    # The parent returns once the child runs: its self-test has passed and
    # the benchmark started, as the last line of the parent's stderr (the
    # child's start-up lines, copied) and of the log file say.
    lines = r.stderr.splitlines()
    m = re.search(r"running in the background, pid (\d+)", lines[-1]) if lines else None
    check(r.returncode == 0 and r.stdout == "" and m is not None and "self-test" in r.stderr,
          f"-B: parent status {r.returncode}, output {r.stdout!r} {r.stderr!r}")
    print(f"-B: the parent returned after {took:.2f} s")
    if m is None:  # stop the child the log file names, if any
        m = wait_until(lambda: os.path.exists(log) and re.search(r"background, pid (\d+)", read(log).decode()), 10)
        m = re.search(r"background, pid (\d+)", read(log).decode()) if m else None
        if m:
            os.kill(int(m.group(1)), signal.SIGINT)
        return
    pid = int(m.group(1))
    check("running in the background, pid" in read(log).decode(), "-B: the log file says it runs")
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        fields = stat[stat.rindex(")") + 2:].split()
        session, tty = int(fields[3]), int(fields[4])
        check(session == pid and tty == 0, f"-B: child session {session} (want {pid}), tty {tty} (want 0)")
        fds = {os.readlink(f"/proc/{pid}/fd/{n}") for n in ("0", "1", "2")}
        check(fds == {"/dev/null"}, f"-B: child's stdin/stdout/stderr are {fds}")
        size = os.path.getsize(log)
        check(wait_until(lambda: os.path.getsize(log) > size + 100, 30), "-B: the child keeps logging")
    finally:
        os.kill(pid, signal.SIGINT)
        gone = wait_until(lambda: not os.path.exists(f"/proc/{pid}")
                          or open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z", 60)
        check(gone, "-B: the child stops on SIGINT")
        if not gone:
            os.kill(pid, signal.SIGKILL)
    check("summary: total:" in read(log).decode(), "-B: the child's summary is in the log file")


def test_background_errors():
    """-B: an error of the child before it runs reaches the parent's stderr
    and exit status (#39: each of these was parent status 0, stderr '', the
    error in the log file alone). The messages are those of the same
    command in the foreground, the oracle here."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen(1)
    port = held.getsockname()[1]
    bench = ["-a", "sha256d", "--benchmark", "-d", "cpu", "-t", "1", "--time-limit", "30", "--no-color"]
    tf_dir = path("bg-tf")
    os.mkdir(tf_dir)
    cases = [
        ("a bad tf assignment", ["tf", "1000003", "60", "99", "-d", "cpu"], 2),
        ("a missing worktodo", ["tf", "-w", os.path.join(tf_dir, "missing.txt"), "-d", "cpu"], 2),
        ("a bad -d", [*bench, "-d", "bogus"], 2),
        ("no -a", ["--benchmark", "-d", "cpu", "--no-color"], 2),
        ("--api-bind beyond loopback without a token", [*bench, "--api-bind", "0.0.0.0:0"], 2),
        ("a missing device", [*bench, "-d", "cpu:9"], 2),
        ("a bad --variant", [*bench, "--variant", "nope"], 2),
        # 1 (cannot listen), or 2 where lode was built without the API.
        ("an API port in use", [*bench, "--api-bind", f"127.0.0.1:{port}"], None),
    ]
    # Commands that print and end: their output would go to /dev/null.
    for args in (["--list-devices"], ["--selftest", "-a", "sha256d", "-d", "cpu"], ["tf", "--selftest"],
                 ["hash", "-a", "sha256d", "00" * 80]):
        r = run(*args, "-B", "--log-file", path("bg-refused.log"), timeout=60)
        check(r.returncode == 2 and "--background is for" in r.stderr and r.stdout == "",
              f"-B {args}: status {r.returncode}, stderr {r.stderr!r}")
    try:
        for what, args, want in cases:
            fg = subprocess.run([LODE, *args], capture_output=True, text=True, timeout=60, cwd=tf_dir)
            log = path("bg-errors.log")
            bg = subprocess.run([LODE, *args, "-B", "--log-file", log], capture_output=True, text=True,
                                timeout=60, cwd=tf_dir)
            # The foreground's last line, without its time stamp: the error.
            last = fg.stderr.splitlines()[-1] if fg.stderr else ""
            error = TEXT_LINE.sub("", last)
            check(fg.returncode == (want or fg.returncode) != 0 and error,
                  f"-B, {what}: the foreground run: {fg.returncode} {fg.stderr!r}")
            want = fg.returncode
            check(bg.returncode == want and error and error in bg.stderr,
                  f"-B, {what}: parent status {bg.returncode} (want {want}), stderr {bg.stderr!r}, "
                  f"want the foreground's error {error!r}")
            m = re.search(r"starting in the background, pid (\d+)", bg.stderr)
            check(m is not None and not os.path.exists(f"/proc/{m.group(1)}"),
                  f"-B, {what}: the child has ended (and was reaped): {bg.stderr!r}")
    finally:
        held.close()


def test_syslog():
    """glibc's syslog(3) writes to /dev/log, which only a mount namespace can
    point elsewhere: unshare -rm (an unprivileged user namespace) binds a
    directory holding a datagram socket of this test over /dev."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        print("SKIP: syslog: no unshare -rm here (user namespaces off)")
        return
    dev = path("dev")
    os.mkdir(dev)
    sock_path = path("log.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    sock.settimeout(0.2)
    binds = " ".join(f"touch {dev}/{n} && mount --bind /dev/{n} {dev}/{n} &&"
                     for n in ("null", "zero", "urandom", "random", "full"))
    script = (f"{binds} ln -s {sock_path} {dev}/log && mount --bind {dev} /dev && "
              f"exec \"$0\" \"$@\"")
    # Read while lode runs: a datagram socket queues only
    # net.unix.max_dgram_qlen (often 10) messages, and syslog(3) blocks on a full one.
    msgs = []
    proc = subprocess.Popen(["unshare", "-rm", "sh", "-c", script, LODE, *BENCH, "--time-limit", "2",
                             "--log-interval", "0.5", "--syslog"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out = {}
    reader = threading.Thread(target=lambda: out.update(zip(("stdout", "stderr"), proc.communicate(timeout=120))))
    reader.start()
    while True:
        try:
            msgs.append(sock.recv(65536).decode())
        except OSError:
            if not reader.is_alive():
                break
    reader.join()
    sock.close()
    r = subprocess.CompletedProcess(proc.args, proc.returncode, out.get("stdout", ""), out.get("stderr", ""))
    check(r.returncode == 0, f"--syslog: status {r.returncode}: {r.stderr[-400:]}")
    pat = re.compile(r"^<(\d+)>.*? lode\[(\d+)\]: (.*)$", re.S)
    parsed = [pat.match(m) for m in msgs]
    check(msgs and all(parsed), f"--syslog: {len(msgs)} datagrams, e.g. {msgs[:2]}")
    prios = {(int(p.group(1)) >> 3, int(p.group(1)) & 7, p.group(3)) for p in parsed if p}
    check(any(fac == 3 and lvl == 5 and msg.startswith("summary: total:") for fac, lvl, msg in prios),
          f"--syslog: the summary as daemon.notice: {sorted(prios)[:5]}")
    check(any(fac == 3 and lvl == 6 for fac, lvl, _ in prios), "--syslog: hashrate lines as daemon.info")


def test_urls_and_options():
    r = run("--help")
    for opt in ("-O, --userpass", "-x, --proxy", "-r, --retries", "-R, --retry-pause", "-T, --timeout",
                "-B, --background", "--log-file", "--syslog", "--log-format", "--cpu-priority"):
        check(opt in r.stdout, f"--help lists {opt}")
    base = ["-a", "sha256d", "-d", "cpu", "--time-limit", "1"]
    cases = [
        (["-o", "ftp://pool:3333"], "scheme"),
        (["-o", "pool.example"], "no :port"),
        (["-o", "stratum+tcp://pool.example:99999"], "port"),
        (["-o", "stratum+tcp://[::1:3333"], "IPv6"),
        (["-o", "stratum+tcp://" + "a" * 3000 + ":1"], "longer than"),
        (["-o", "stratum+tcp://:pw@pool:1"], "no user name"),
        (["-o", "http://user:hunter2@127.0.0.1:1", "--coinbase-addr", "x"], "-u/-p or --cookie"),
        (["-o", "stratum+tcp://pool:1", "-x", "ftp://127.0.0.1:1"], "socks5://"),
        (["-o", "stratum+tcp://pool:1", "-O", "nocolon"], "USER:PASS"),
        (["-o", "stratum+tcp://pool:1", "-r", "0"], "failover-after"),
        (["-o", "stratum+tcp://pool:1", "--failover-return", "0"], "failover-return"),
    ]
    for args, want in cases:
        r = run(*base, *args)
        check(r.returncode == 2 and want in r.stderr, f"{args[:4]}: status {r.returncode}, {r.stderr.strip()[:200]!r}")
        check("hunter2" not in r.stderr, f"{args[:2]}: the password is not in the error")


def main():
    tests = [test_urls_and_options, test_log_file_errors, test_log_file_text, test_json, test_json_errors,
             test_json_interrupted_scan, test_no_color, test_quiet_api_address, test_full_disk,
             test_kill_mid_write, test_reopen, test_cpu_priority, test_background, test_background_errors,
             test_syslog]
    only = sys.argv[2:]
    for t in tests:
        if only and t.__name__ not in only:
            continue
        print(f"== {t.__name__}", flush=True)
        t()
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(check.report())


if __name__ == "__main__":
    main()
