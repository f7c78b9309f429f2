#!/usr/bin/env python3
"""The `lode` command line, checked against Python's hashlib (an oracle that
shares no code with lode): scan and hash outputs, errors and exit codes,
--selftest, --list-devices, and a benchmark stopped by Ctrl-C.

usage: test_cli.py PATH_TO_LODE [--part threads|rest] [TEST_NAME ...]
       (LODE_TEST_SEED replays a random run)
"""
import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

LODE = sys.argv[1]
SEED = int(os.environ.get("LODE_TEST_SEED", time.time_ns() % 2**32))
rng = random.Random(SEED)
print(f"random seed {SEED} (replay with LODE_TEST_SEED={SEED})")
check = Checks()


def run(*args, timeout=600):
    return subprocess.run([LODE, *args], capture_output=True, text=True, timeout=timeout)


def pow_hash(algo, header):
    if algo == "sha256d":
        return hashlib.sha256(hashlib.sha256(header).digest()).digest()
    return hashlib.scrypt(header, salt=header, n=1024, r=1, p=1, dklen=32)


def with_nonce(header, nonce):
    return header[:76] + nonce.to_bytes(4, "little")


def display(digest):
    return digest[::-1].hex()


def hashed_range(algo, header, start, count, versions=None):
    """(hash as a number, line lode scan prints) for each nonce of the range,
    under each version if given (in place of header bytes 0..3), in lode
    scan's order: by nonce, then version."""
    out = []
    for nonce in range(start, start + count):
        for v in sorted(versions) if versions else [None]:
            h = pow_hash(algo, with_nonce(header if v is None else v.to_bytes(4, "little") + header[4:], nonce))
            out.append((int.from_bytes(h, "little"), f"{nonce} {display(h)}" if v is None
                        else f"{nonce} {v:08x} {display(h)}"))
    return out


def test_hash():
    genesis = bytes.fromhex(
        "0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd"
        "7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c")
    for algo in ("sha256d", "scrypt"):
        for header in (genesis, rng.randbytes(80)):
            r = run("hash", "--algo", algo, header.hex())
            want = display(pow_hash(algo, header))
            check(r.returncode == 0 and r.stdout == want + "\n",
                  f"hash {algo}: got {r.stdout!r} rc {r.returncode}, want {want}")


def test_scan(algo, count, devices_args, nversions=0):
    """scan over a random range and one ending at 2^32-1. With nversions,
    --versions of that many random versions (SHA-256d's version-rolled job;
    8 take the GPUs' one-pass search): '<nonce> <version> <hash>'."""
    header = rng.randbytes(80)
    versions = rng.sample(range(2**32), nversions) if nversions else None
    extra = ["--versions", ",".join(f"{v:08x}" for v in versions)] if versions else []
    for start in (rng.randrange(0, 2**32 - count), 2**32 - count):
        hashed = hashed_range(algo, header, start, count, versions)
        # A target exactly on one hash, so about a quarter of them hit.
        target = sorted(value for value, _ in hashed)[len(hashed) // 4]
        want = [line for value, line in hashed if value <= target]
        r = run("scan", "--algo", algo, "--header", header.hex(), "--target", f"{target:064x}",
                "--start", str(start), "--count", str(count), *extra, *devices_args)
        got = r.stdout.splitlines()
        check(r.returncode == 0 and got == want,
              f"scan {algo} {extra} {devices_args} from {start}: rc {r.returncode}, {len(got)} lines, "
              f"want {len(want)}; stderr {r.stderr[-300:]}")


def test_errors():
    header = "00" * 80
    target = "ff" * 32
    cases = [
        (["scan", "--algo", "sha256d", "--header", "zz" * 80, "--target", target,
          "--start", "0", "--count", "1"], "bad hex"),
        (["scan", "--algo", "sha256d", "--header", "00" * 79, "--target", target,
          "--start", "0", "--count", "1"], "short header"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", "ff" * 31,
          "--start", "0", "--count", "1"], "short target"),
        (["scan", "--algo", "md5", "--header", header, "--target", target,
          "--start", "0", "--count", "1"], "unknown algorithm"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "4294967295", "--count", "2"], "range past 2^32"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "0", "--count", "0"], "empty range"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "-1", "--count", "5"], "negative start"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "12abc", "--count", "5"], "garbage number"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target], "no range"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "0", "--count", "1", "--devices", "gpu:7"], "unknown device"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "0", "--count", "1", "--devices", "cpu:9"], "missing device"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "0", "--count", "1", "--versions", ",".join(f"{k:08x}" for k in range(1, 10))], "nine versions"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "0", "--count", "1", "--versions", "20000000,20000000"], "a version twice"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "0", "--count", "1", "--versions", "00000001,,00000002"], "an empty version"),
        (["scan", "--algo", "sha256d", "--header", header, "--target", target,
          "--start", "0", "--count", "1", "--versions", "2000000"], "a version of 7 digits"),
        (["scan", "--algo", "scrypt", "--header", header, "--target", target,
          "--start", "0", "--count", "1", "--versions", "20000000"], "versions on scrypt"),
        (["hash", "--algo", "sha256d", "abc"], "odd hex"),
        (["hash", "--algo", "sha256d"], "no header"),
        (["hash", header], "no algorithm"),
        (["frobnicate"], "unknown command"),
        (["--algo", "sha256d", "--benchmark", "--threads", "0"], "zero threads"),
        (["--algo", "sha256d", "--benchmark", "--time-limit", "-3"], "negative time"),
        (["--no-such-option"], "unknown option"),
        (["-o", "stratum+tcp://127.0.0.1:3333"], "mining without an algorithm"),
        (["-a", "scrypt", "-o", "ftp://x:1"], "unknown URL scheme"),
        (["-a", "scrypt", "-o", "stratum+tcp://nohostport"], "URL without a port"),
        (["-a", "scrypt", "-o", "http://127.0.0.1:1", "-u", "a", "-p", "b"], "solo without address"),
        (["-a", "scrypt", "-o", "http://127.0.0.1:1", "--coinbase-addr", "rltc1qqqqq"],
         "solo without credentials"),
        (["-a", "scrypt", "-o", "http://127.0.0.1:1", "-u", "a", "-p", "b",
          "--coinbase-addr", "notanaddress"], "bad payout address"),
        (["-a", "scrypt", "-o", "stratum+tcp://127.0.0.1:1", "--coinbase-addr", "x"],
         "payout address with a pool"),
        (["-a", "scrypt", "-o", "stratum+tcp://127.0.0.1:1", "--benchmark"], "two modes"),
        (["-a", "scrypt", "-o", "stratum+tcp://127.0.0.1:1", "--suggest-diff", "-1"], "bad difficulty"),
        (["-c", "/nonexistent/lode.json"], "missing config file"),
        (["-a", "momentum", "-o", "stratum+tcp://127.0.0.1:1"], "momentum on a pool"),
        (["hash", "-a", "tf", rng.randbytes(80).hex()], "hash of a tf header (was a segfault)"),
        (["scan", "-a", "tf", "--header", header, "--target", target, "--start", "0", "--count", "1"],
         "scan with tf"),
        (["-a", "tf", "--benchmark", "--time-limit", "1"], "benchmark of tf"),
    ]
    for args, what in cases:
        r = run(*args, timeout=60)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("lode: error: ")
              and r.stdout == "",
              f"{what}: rc {r.returncode}, stderr {r.stderr!r}")


def test_nothing_to_do():
    """Bare `lode` and `lode -a scrypt` (no pool, no command) are bad input:
    the exit-status table's `lode: error:` line and one line pointing at
    --help, not the whole usage (#39: 98 lines and no error line)."""
    for args in ([], ["-a", "scrypt"], ["-a", "sha256d", "-d", "cpu", "-q"]):
        r = run(*args, timeout=60)
        lines = r.stderr.splitlines()
        check(r.returncode == 2 and r.stdout == "" and len(lines) == 2 and lines[0].startswith("lode: error: ")
              and "lode --help" in lines[1],
              f"lode {' '.join(args)}: rc {r.returncode}, {len(lines)} lines, stderr {r.stderr[:300]!r}")


def test_empty_device_list():
    """-d '' (a script's empty variable) is a usage error for every command,
    never "every device" (#39)."""
    import tempfile
    header, target = "00" * 80, "ff" * 32
    cases = [
        ["scan", "-a", "sha256d", "--header", header, "--target", target, "--start", "0", "--count", "1", "-d", ""],
        ["-a", "sha256d", "--benchmark", "--time-limit", "1", "-d", ""],
        ["--selftest", "-a", "sha256d", "--devices", " "],
        ["check", "-a", "sha256d", "--jobs", "1", "-d", ""],
        ["tf", "100003", "60", "61", "-d", ""],
    ]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "empty-devices.json")
        with open(path, "w") as f:
            json.dump({"algo": "sha256d", "benchmark": True, "time-limit": 1, "devices": ""}, f)
        cases.append(["-c", path])
        for args in cases:
            r = run(*args, timeout=120)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("lode: error: ")
                  and "--devices" in lines[0],
                  f"{args}: an empty device list is a usage error, not rc {r.returncode}: {r.stderr[-300:]!r}")


def test_scan_hardware_errors():
    """A device whose hits fail the CPU re-check (the fault backend's extra
    hits, LODE_TEST_FAULT) makes lode scan exit 1 and say so, after the
    confirmed hits, which are hashlib's (#39: it printed them and exited 0)."""
    header = rng.randbytes(80)
    target = "0000" + "f" * 60
    count = 60000
    want = [line for h, line in hashed_range("sha256d", header, 0, count) if h <= int(target, 16)]
    args = [LODE, "scan", "-a", "sha256d", "--header", header.hex(), "--target", target, "--start", "0",
            "--count", str(count)]
    for dev, fault, rc in (("fault:0", "extra:0:20000", 1), ("fault:1", "extra:0:20000", 0)):
        r = subprocess.run([*args, "-d", dev], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, LODE_TEST_FAULT=fault))
        said = re.search(rf"^lode: error: {dev}: \d+ hits? failed the CPU re-check", r.stderr, re.M)
        check(r.returncode == rc and r.stdout.splitlines() == want and (said is not None) == (rc == 1),
              f"scan on {dev} ({fault}): exit {rc} and hashlib's hits, not {r.returncode}:\n"
              f"{r.stdout[:300]}\n{r.stderr[-500:]}")


def test_config_files():
    """-c FILE: errors name the file, the line and the key; values go through
    the same checks as the command line; later options override."""
    import tempfile
    cases = [
        ('{\n  "algo": "scrypt",\n  "threads": 0\n}', ":3: key 'threads'"),
        ('{\n  "algo": "scrypt",\n  "pools": [\n    {"url": "stratum+tcp://h:1",\n     "usr": "me"}]}',
         ":5: key 'usr'"),
        ('{"algo": "md5"}', ":1: key 'algo'"),
        ('{\n "algo": "scrypt",\n "frobnicate": 1}', ":3: key 'frobnicate'"),
        ('{"algo": "scrypt", "quiet": "yes"}', "key 'quiet'"),
        ('{"algo": "scrypt", "config": "other.json"}', "key 'config'"),
        ('{"algo": "scrypt", "algo": "sha256d"}', "duplicate"),
        ('{"algo": "scrypt",\n "pools": []}', ":2: key 'pools'"),
        ('[1, 2]', "JSON object"),
        ('{"algo": "scr', "not valid JSON"),
        ('{"algo": "scrypt", "url": ["stratum+tcp://h:1", 5]}', "key 'url'"),
    ]
    with tempfile.TemporaryDirectory() as d:
        for i, (text, want) in enumerate(cases):
            path = os.path.join(d, f"c{i}.json")
            with open(path, "w") as f:
                f.write(text)
            r = run("-c", path, timeout=60)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and len(lines) == 1 and path in lines[0] and want in lines[0],
                  f"config {text!r}: want {want!r}, rc {r.returncode}, stderr {r.stderr!r}")
        # A good file: the config's own settings are used (here, a benchmark).
        path = os.path.join(d, "good.json")
        with open(path, "w") as f:
            json.dump({"algo": "sha256d", "benchmark": True, "time-limit": 1, "threads": 1,
                       "devices": "cpu"}, f)
        r = run("-c", path, timeout=120)
        check(r.returncode == 0 and "sha256d total" in r.stdout, f"config benchmark: {r.stderr[-300:]!r}")
        # Later command-line options override the file: --threads 0 after -c fails.
        r = run("-c", path, "--threads", "0", timeout=60)
        check(r.returncode == 2 and "--threads" in r.stderr, f"override after -c: {r.stderr!r}")


def test_devices_and_selftest():
    r = run("--list-devices", timeout=60)
    check(r.returncode == 0 and "cpu:0" in r.stdout, f"--list-devices lists cpu:0: {r.stdout!r}")
    r = run("--selftest", timeout=600)
    check(r.returncode == 0 and " 0 failed" in r.stdout and "FAILED" not in r.stdout,
          f"--selftest passes: {r.stdout!r} {r.stderr[-300:]!r}")


def test_momentum(devices_args, with_target):
    """Momentum on the genesis header: every colliding pair (the vectors'
    complete list), and the job-source answer with a target; the block
    hashes come from hashlib."""
    vectors = json.load(open(os.path.join(os.path.dirname(__file__), "vectors", "momentum.json")))
    v = vectors["vectors"][0]
    h80 = v["header80_hex"]
    items = sorted(v["all_collisions_in_nonce_space"]["items"], key=lambda i: i["nBirthdayA"])
    want = [f'{i["nBirthdayA"]} {i["nBirthdayB"]} {i["birthday_hex"]}' for i in items]
    r = run("scan", "--algo", "momentum", "--header", h80, *devices_args)
    got = r.stdout.splitlines()
    check(r.returncode == 0 and got == want,
          f"scan momentum {devices_args}: rc {r.returncode}, got {got}, want {want} {r.stderr[-300:]!r}")
    if not with_target:
        return
    nonce = int.from_bytes(bytes.fromhex(h80)[76:80], "little")
    best = None
    for i in items:
        h88 = bytes.fromhex(h80) + i["nBirthdayA"].to_bytes(4, "little") + i["nBirthdayB"].to_bytes(4, "little")
        digest = hashlib.sha256(hashlib.sha256(h88).digest()).digest()
        if best is None or digest[::-1] < best[2][::-1]:
            best = (i["nBirthdayA"], i["nBirthdayB"], digest)
    r = run("scan", "--algo", "momentum", "--header", h80, "--target", v["target_hex"], *devices_args)
    want = [f"{nonce} {best[0]} {best[1]} {display(best[2])}"]
    check(r.returncode == 0 and r.stdout.splitlines() == want and want[0].endswith(v["block_hash"]),
          f"scan momentum with a target: got {r.stdout!r}, want {want}")
    # hash: the 88-byte header, a colliding pair and a broken one.
    r = run("hash", "--algo", "momentum", v["header88_hex"])
    check(r.returncode == 0 and r.stdout.splitlines() ==
          [f'collision {v["nBirthdayA"]} {v["nBirthdayB"]} birthday {v["birthday_value_hex"]}', v["block_hash"]],
          f"hash momentum: {r.stdout!r}")
    bad = v["header88_hex"][:-8] + (v["nBirthdayB"] + 1).to_bytes(4, "little").hex()
    r = run("hash", "--algo", "momentum", bad)
    check(r.returncode == 0 and r.stdout.splitlines()[1] == "f" * 64 and "no collision" in r.stdout,
          f"hash momentum of a broken pair: {r.stdout!r}")
    r = run("hash", "--algo", "momentum", h80)
    check(r.returncode == 2 and "88-byte" in r.stderr, f"hash momentum wants 88 bytes: {r.stderr!r}")


def test_momentum_bucket_overflow(dev):
    """GPU Momentum with buckets too small for a sweep (LODE_MOMENTUM_BUCKET_CAP,
    a test setting): every overflowing sweep is redone exactly with the
    filter method, so the complete collision list still comes out, and the
    device says it redid sweeps (else the overflow path never ran)."""
    vectors = json.load(open(os.path.join(os.path.dirname(__file__), "vectors", "momentum.json")))
    v = vectors["vectors"][0]
    items = sorted(v["all_collisions_in_nonce_space"]["items"], key=lambda i: i["nBirthdayA"])
    want = [f'{i["nBirthdayA"]} {i["nBirthdayB"]} {i["birthday_hex"]}' for i in items]
    r = subprocess.run([LODE, "scan", "--algo", "momentum", "--header", v["header80_hex"], "--devices", dev],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, LODE_MOMENTUM_BUCKET_CAP="64"))
    check(r.returncode == 0 and r.stdout.splitlines() == want,
          f"scan momentum on {dev} with overflowing buckets: rc {r.returncode}, got {r.stdout.splitlines()}, "
          f"want {want} {r.stderr[-300:]!r}")
    check(re.search(r"momentum: [1-9][0-9]* sweep\(s\) redone with the filter", r.stderr) is not None,
          f"{dev}: the overflowing sweeps were redone: {r.stderr[-500:]!r}")


def wait_for_line(p, needle, lines):
    """Reads p's stderr until a line containing needle (True) or EOF (False)."""
    for line in p.stderr:
        lines.append(line)
        if needle in line:
            return True
    return False


def test_benchmark_interrupt():
    """SIGINT, SIGTERM and SIGHUP all stop a benchmark the same way: the
    summary, the total on stdout, exit status 130 (interrupted by a signal).
    Before: SIGHUP killed lode with no summary; SIGINT exited 0."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        p = subprocess.Popen([LODE, "--algo", "sha256d", "--benchmark", "-d", "cpu", "-t", "1",
                              "--no-color"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        started = wait_for_line(p, "benchmarking", lines)
        p.send_signal(sig)
        try:  # a hang guard, not a speed requirement
            out, err = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        err = "".join(lines) + err
        check(started and p.returncode == 130 and "summary: total" in err and "sha256d total" in out,
              f"{sig.name} stops the benchmark with its summary and exit 130 (rc {p.returncode}): "
              f"{err[-400:]!r}")
    r = run("--algo", "scrypt", "--benchmark", "--time-limit", "2", "--threads", "1", timeout=300)
    check(r.returncode == 0 and "total" in r.stderr, f"timed scrypt benchmark: {r.stderr[-400:]!r}")


def closed_pipe():
    """The write end of a pipe whose reader is already gone."""
    rd, wr = os.pipe()
    os.close(rd)
    return wr


def test_closed_pipes():
    """A reader that went away (lode ... | head -1) must not kill lode with
    SIGPIPE. Logs to a closed stderr are lost but the run goes on and exits
    with its normal status; results that cannot be written to a closed
    stdout are an error (exit 1), never a silent success or a signal death."""
    wr = closed_pipe()
    p = subprocess.Popen([LODE, "--algo", "sha256d", "--benchmark", "-d", "cpu", "-t", "1",
                          "--time-limit", "2"], stdout=subprocess.PIPE, stderr=wr, text=True)
    os.close(wr)
    out, _ = p.communicate(timeout=300)
    check(p.returncode == 0 and re.search(r"^sha256d total [0-9.]+ H/s$", out, re.M),
          f"benchmark with stderr closed: rc {p.returncode} (a negative rc is a signal), stdout {out!r}")

    header = rng.randbytes(80).hex()
    wr = closed_pipe()
    p = subprocess.Popen([LODE, "scan", "--algo", "sha256d", "--header", header, "--target", "ff" * 32,
                          "--start", "0", "--count", "1000", "-d", "cpu"], stdout=wr,
                         stderr=subprocess.PIPE, text=True)
    os.close(wr)
    _, err = p.communicate(timeout=300)
    check(p.returncode == 1 and "cannot write" in err,
          f"scan with stdout closed: rc {p.returncode}, want 1 and an error; stderr {err!r}")

    # Both closed: nothing can be said, but the status still tells.
    out_wr, err_wr = closed_pipe(), closed_pipe()
    p = subprocess.Popen([LODE, "scan", "--algo", "sha256d", "--header", header, "--target", "ff" * 32,
                          "--start", "0", "--count", "1000", "-d", "cpu"], stdout=out_wr, stderr=err_wr)
    os.close(out_wr)
    os.close(err_wr)
    check(p.wait(timeout=300) == 1, f"scan with stdout and stderr closed: rc {p.returncode}, want 1")


def test_mining_closed_stderr():
    """Mining with stderr a closed pipe: lode keeps mining and submitting
    (before: the first log line killed it with SIGPIPE), and a SIGINT still
    ends it with status 130."""
    with FakePool(difficulty=0.00002) as pool:
        wr = closed_pipe()
        p = subprocess.Popen([LODE, "--algo", "sha256d", "-o", pool.url, "-u", "w", "-p", "x", "-d", "cpu",
                              "-t", "1"], stdout=subprocess.DEVNULL, stderr=wr)
        os.close(wr)
        for _ in range(3000):  # hang guard: 5 minutes for 3 shares
            if pool.submits >= 3 or p.poll() is not None:
                break
            time.sleep(0.1)
        submitted = pool.submits
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        try:
            rc = p.wait(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
    check(submitted >= 3 and rc == 130,
          f"mining with stderr closed: {submitted} submits, rc {rc} (want >= 3 submits and 130; "
          f"a negative rc is a signal)")


def test_help_exit_statuses():
    """--help documents every exit status of messages.h."""
    r = run("--help", timeout=60)
    text = " ".join(r.stdout.split())
    m = re.search(r"Exit status: (.*)", text)
    check(r.returncode == 0 and m and all(re.search(rf"\b{code} \w", m[1]) for code in (0, 1, 2, 3, 130))
          and "SIGHUP" in m[1], f"--help lists the exit statuses 0, 1, 2, 3, 130: {r.stdout[-600:]!r}")
    check("--help-env" in r.stdout, "--help points to --help-env")
    r = run("--help-env", timeout=60)
    check(r.returncode == 0 and "LODE_CUDA_TUNE" in r.stdout and "LODE_TF_LAUNCH_BITS" in r.stdout
          and r.stdout.find("Test hooks") > r.stdout.find("LODE_OPENCL_SHOW_ALL") > 0,
          f"--help-env lists the LODE_* variables, test hooks last: {r.stdout[:300]!r}")


def test_quiet_summary():
    """-q hides the progress lines but keeps the summary: what a quiet run is for."""
    r = run("-q", "--algo", "sha256d", "--benchmark", "-d", "cpu", "-t", "1", "--time-limit", "1",
            "--no-color", timeout=300)
    check(r.returncode == 0 and "summary: total" in r.stderr and "summary: cpu:0" in r.stderr
          and "benchmarking" not in r.stderr and "self-test" not in r.stderr,
          f"-q keeps the summary only: rc {r.returncode}, stderr {r.stderr!r}")


def test_momentum_rate():
    """A Momentum sweep takes seconds: the benchmark's total is the fraction
    (sweeps / elapsed, as the summary's own counts give it), not 0."""
    limit = 8
    while True:
        r = run("--algo", "momentum", "--benchmark", "-d", "cpu", "-t", "1", "--time-limit", str(limit),
                "--no-color", timeout=limit + 600)
        sweeps = re.search(r"summary: cpu:0: .*?, (\d+) hashes", r.stderr)
        elapsed = re.search(r"summary over ([0-9.]+) s", r.stderr)
        total = re.search(r"^momentum total (\S+) sweeps/s$", r.stdout, re.M)
        if not (r.returncode == 0 and sweeps and elapsed and total):
            check(False, f"momentum benchmark: rc {r.returncode}, stdout {r.stdout!r}, "
                  f"stderr {r.stderr[-400:]!r}")
            return
        if int(sweeps[1]) > 0 or limit >= 128:
            break
        limit *= 2  # not one sweep finished on this (busy) machine: run longer
    want = int(sweeps[1]) / float(elapsed[1])
    got = float(total[1])
    # Three significant digits, and elapsed is printed to 0.1 s.
    check(want > 0 and abs(got - want) <= 0.05 * want,
          f"momentum benchmark total {total[1]} sweeps/s, want about {want:.4f} "
          f"({sweeps[1]} sweeps in {elapsed[1]} s)")


def test_device_failure():
    """Every device failing at run time (LODE_TEST_FAIL_SCANS_AFTER, the
    dispatcher's fault injection) stops the run with an error, its summary
    and exit 1; before, lode idled at 0 H/s and exited 0 at --time-limit."""
    env = dict(os.environ, LODE_TEST_FAIL_SCANS_AFTER="2")
    r = subprocess.run([LODE, "--algo", "sha256d", "--benchmark", "-d", "cpu", "-t", "2",
                        "--time-limit", "60", "--no-color"], capture_output=True, text=True,
                       timeout=600, env=env)
    check(r.returncode == 1 and "every device has failed" in r.stderr and "summary: total" in r.stderr,
          f"benchmark, every device failed: rc {r.returncode}, want 1; stderr {r.stderr[-500:]!r}")
    with FakePool() as pool:
        r = subprocess.run([LODE, "--algo", "sha256d", "-o", pool.url, "-u", "w", "-p", "x", "-d", "cpu",
                            "-t", "2", "--time-limit", "60", "--no-color"], capture_output=True,
                           text=True, timeout=600, env=env)
    check(pool.notified and r.returncode == 1 and "every device has failed" in r.stderr
          and "summary: jobs" in r.stderr,
          f"mining, every device failed: rc {r.returncode}, want 1 (pool sent a job: {pool.notified}); "
          f"stderr {r.stderr[-500:]!r}")


def test_variant_names():
    """--variant with a name no selected device has is a usage error that
    names the valid variants (as --list-devices lists them)."""
    listed = run("--list-devices", timeout=60).stdout
    m = re.search(r"^cpu:0 .*?^    sha256d +variants:([^\n]*)$", listed, re.M | re.S)
    names = m[1].split() if m else []
    for args in (["--benchmark", "--time-limit", "1"],
                 ["scan", "--header", "00" * 80, "--target", "ff" * 32, "--start", "0", "--count", "1"],
                 ["--selftest"], ["-o", "stratum+tcp://127.0.0.1:1"]):
        r = run(*args, "--algo", "sha256d", "-d", "cpu", "--variant", "bogus", timeout=300)
        lines = r.stderr.strip().splitlines()
        check(names and r.returncode == 2 and len(lines) == 1 and "'bogus'" in lines[0]
              and all(n in lines[0] for n in names),
              f"--variant bogus {args[0]}: rc {r.returncode}, want 2 and the variants {names}: {r.stderr!r}")


def test_selftest_skips():
    """--selftest tests every device it can see, or says which it skipped and why."""
    listed = run("--list-devices", timeout=60).stdout
    devices = re.findall(r"^(\w+:\d+)  ", listed, re.M)
    r = run("--selftest", "--algo", "sha256d", timeout=600)
    for dev in devices:
        lines = [line for line in r.stdout.splitlines() if line.startswith(dev + " ")]
        check(r.returncode == 0 and lines and all(line.endswith(" ok") or "skipped: " in line
                                                  for line in lines),
              f"--selftest mentions {dev} (tested or skipped with a reason): {r.stdout!r}")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_pasted_options():
    """Other miners' options (#39: each was exit 2): applied with lode's
    meaning, or accepted with one warning saying why it is ignored."""
    import tempfile
    bench = ["--benchmark", "--time-limit", "1", "-d", "cpu", "-t", "1"]
    ignored = {"-i": ["-i", "20"], "-N": ["-N", "30"], "-D": ["-D"], "-s": ["-s", "5"],
               "--no-longpoll": ["--no-longpoll"], "--cpu-affinity": ["--cpu-affinity", "0x3"],
               "-k": ["-k"], "--api-allow": ["--api-allow", "127.0.0.1"]}
    r = run("-a", "sha256d", *bench, *[a for args in ignored.values() for a in args], timeout=120)
    warned = re.findall(r"^\[[^]]+\] (\S+)(?: \(--[a-z-]+\))?: ignored: \S", r.stderr, re.M)
    check(r.returncode == 0 and sorted(warned) == sorted(ignored) and "sha256d total" in r.stdout,
          f"ccminer's, cpuminer's and xmrig's options accepted, one warning each: rc {r.returncode}, "
          f"warned {warned}:\n{r.stderr[-1500:]}")
    r = run("-a", "sha256d", *bench, "-P", "--shares-limit", "3", timeout=120)
    check(r.returncode == 0 and "-P (--protocol-dump): ignored: it dumps a pool's" in r.stderr
          and "--shares-limit: ignored: it counts the shares a pool accepts" in r.stderr,
          f"-P and --shares-limit without a pool say they do nothing: {r.stderr[-600:]!r}")
    for algo, name in ((["-a", "sha256"], "sha256d"), (["-a", "scrypt:1024"], "scrypt"), (["--scrypt"], "scrypt")):
        r = run(*algo, *bench, timeout=120)
        check(r.returncode == 0 and f"{name} total" in r.stdout, f"{algo} is {name}: rc {r.returncode} {r.stderr[-300:]!r}")
    r = run("-a", "scrypt:2048", *bench, timeout=60)
    check(r.returncode == 2 and "N=1024" in r.stderr, f"-a scrypt:2048: a usage error naming N=1024: {r.stderr!r}")
    # --api-bind PORT and -b HOST:PORT bind where they say; --api-listen is
    # cgminer's 127.0.0.1:4028 (named whether or not that port is free here).
    # Without libmicrohttpd (the portable build) the API is refused, which
    # ctest api_unavailable checks.
    with_api = "libmicrohttpd:" in run("-V", timeout=60).stdout
    if not with_api:
        print("the API options: this lode is built without libmicrohttpd: skipped")
    for api, where in ((["--api-bind", str(port := free_port())], f"127.0.0.1:{port}"),
                       (["-b", f"127.0.0.1:{(port2 := free_port())}"], f"127.0.0.1:{port2}"),
                       (["--api-listen"], "127.0.0.1:4028")) if with_api else ():
        r = run("-a", "sha256d", *bench, *api, timeout=120)
        check(r.returncode != 2 and where in r.stderr and (r.returncode == 0) == (f"listening on http://{where}" in r.stderr),
              f"{api}: the API on {where}: rc {r.returncode} {r.stderr[-500:]!r}")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "xmrig.json")
        with open(path, "w") as f:
            json.dump({"algo": "sha256d", "benchmark": True, "time-limit": 1, "devices": "cpu", "keepalive": True}, f)
        r = run("-c", path, timeout=120)
        check(r.returncode == 0 and "-k (--keepalive): ignored" in r.stderr,
              f"xmrig's keepalive in a config file: rc {r.returncode} {r.stderr[-300:]!r}")


def test_protocol_dump_and_shares_limit():
    """-P logs the stratum lines with the password masked; --shares-limit N
    stops once the pool accepted N shares (before --time-limit); a pool
    entry's keepalive (xmrig) is accepted with its warning."""
    import tempfile
    secret = "s3cret-" + rng.randbytes(4).hex()
    screen = b'{"id":null,"method":"client.show_message","params":["\x1b[2J"]}\n'
    with FakePool(difficulty=0.00002, extra=screen) as pool, tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "pools.json")
        with open(path, "w") as f:
            json.dump({"pools": [{"url": pool.url, "user": "me.rig", "pass": secret, "keepalive": True}]}, f)
        r = run("-a", "sha256d", "-c", path, "-d", "cpu", "-t", "1", "-P", "--shares-limit", "2",
                "--time-limit", "300", timeout=400)
        port = pool.url.rsplit(":", 1)[1]
        sent = re.findall(rf"stratum 127\.0\.0\.1:{port} > (.*)$", r.stderr, re.M)
        got = re.findall(rf"stratum 127\.0\.0\.1:{port} < (.*)$", r.stderr, re.M)
        auth = [json.loads(line) for line in sent if "mining.authorize" in line]
        check(auth and auth[0]["params"] == ["me.rig", "***"] and secret not in r.stderr,
              f"-P: mining.authorize shown with its password masked: {auth} (secret shown: {secret in r.stderr})")
        check(any("mining.subscribe" in line for line in sent) and any("mining.notify" in line for line in got)
              and any("mining.submit" in line for line in sent),
              f"-P: both directions dumped: sent {sent[:4]}, got {got[:4]}")
        check(r.returncode == 0 and "--shares-limit 2): stopping" in r.stderr and pool.submits >= 2,
              f"--shares-limit 2 stops after 2 accepted shares: rc {r.returncode}, {pool.submits} submits:\n"
              f"{r.stderr[-800:]}")
        check("-k (--keepalive): ignored" in r.stderr, "a pool entry's keepalive is warned about")
        check(any('"params":["\\x1b[2J"]}' in line for line in got) and "\x1b[2J" not in r.stderr,
              f"-P shows a pool's terminal escape as \\x1b: {[g for g in got if 'show_message' in g]}")


class Socks4Proxy:
    """A SOCKS4/4a proxy (RFC-less but simple: VN 4, CD 1, port, IPv4,
    user id, NUL[, host, NUL]) that relays one connection to where asked."""

    def __init__(self):
        import socket
        import threading
        self.requests = []
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(4)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        import socket
        import threading
        try:
            conn, _ = self.server.accept()
            head = conn.recv(8)
            rest = b""
            while rest.count(b"\0") < (2 if head[4:7] == b"\0\0\0" and head[7] else 1):
                rest += conn.recv(256)
            host = rest.split(b"\0")[1].decode() if head[4:7] == b"\0\0\0" else socket.inet_ntoa(head[4:8])
            self.requests.append((head[0], head[1], host, int.from_bytes(head[2:4], "big")))
            up = socket.create_connection((host, int.from_bytes(head[2:4], "big")))
            conn.sendall(b"\0\x5a" + head[2:8])

            def pump(a, b):
                try:
                    while (data := a.recv(65536)):
                        b.sendall(data)
                except OSError:
                    pass
                for s in (a, b):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
            threading.Thread(target=pump, args=(up, conn), daemon=True).start()
            pump(conn, up)
        except (OSError, IndexError):
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.close()


def test_socks4_proxy():
    """-x socks4:// and socks4a:// reach the pool through the proxy (#39:
    a usage error); socks4a hands the proxy the pool's name."""
    for scheme, host in (("socks4", "127.0.0.1"), ("socks4a", "localhost")):
        with FakePool(difficulty=0.00002) as pool, Socks4Proxy() as proxy:
            url = pool.url.replace("127.0.0.1", host)
            r = run("-a", "sha256d", "-o", url, "-u", "me", "-p", "x", "-x", f"{scheme}://127.0.0.1:{proxy.port}",
                    "-d", "cpu", "-t", "1", "--shares-limit", "1", "--time-limit", "300", timeout=400)
            port = int(pool.url.rsplit(":", 1)[1])
            want = (4, 1, "127.0.0.1" if scheme == "socks4" else "localhost", port)
            check(r.returncode == 0 and proxy.requests == [want] and pool.submits >= 1,
                  f"{scheme}: mined through the proxy: rc {r.returncode}, requests {proxy.requests} (want {[want]}), "
                  f"{pool.submits} submits:\n{r.stderr[-600:]}")


class FakePool:
    """A stratum pool reduced to what starts a miner: it answers subscribe,
    authorize and whatever else with success, then sends one job."""

    def __init__(self, difficulty=1.0, extra=b""):
        import socket
        import threading
        self.difficulty = difficulty
        self.extra = extra  # raw bytes sent after the job
        self.submits = 0
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(4)
        self.url = f"stratum+tcp://127.0.0.1:{self.server.getsockname()[1]}"
        self.notified = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        try:
            conn, _ = self.server.accept()
        except OSError:
            return
        try:
            self.talk(conn)
        except (OSError, ValueError):
            pass  # lode hung up: the test looks at lode, not at the pool

    def talk(self, conn):
        with conn, conn.makefile("rwb") as f:
            def send(obj):
                f.write((json.dumps(obj) + "\n").encode())
                f.flush()
            for line in f:
                msg = json.loads(line)
                method = msg.get("method")
                if method == "mining.subscribe":
                    send({"id": msg["id"], "result": [[["mining.notify", "1"]], "0badcafe", 4],
                          "error": None})
                elif method == "mining.configure":
                    send({"id": msg["id"], "result": {}, "error": None})
                else:
                    send({"id": msg["id"], "result": True, "error": None})
                if method == "mining.submit":
                    self.submits += 1
                if method == "mining.authorize":
                    send({"id": None, "method": "mining.set_difficulty", "params": [self.difficulty]})
                    send({"id": None, "method": "mining.notify", "params": [
                        "j1", rng.randbytes(32).hex(), "01000000010000", "ffffffff", [], "20000000",
                        "1d00ffff", f"{int(time.time()):08x}", True]})
                    f.write(self.extra)
                    f.flush()
                    self.notified = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.close()


def part_threads():
    """What runs several threads in one lode: the tsan preset runs this part."""
    test_scan("sha256d", 777, ["--devices", "cpu", "--threads", "2"])
    test_benchmark_interrupt()
    test_closed_pipes()
    test_mining_closed_stderr()
    test_quiet_summary()
    test_device_failure()


def part_rest():
    test_hash()
    test_momentum(["--devices", "cpu"], True)
    test_scan("sha256d", 4000, [])
    test_scan("sha256d", 400, ["--devices", "cpu:0"], 8)
    test_scan("sha256d", 400, ["--devices", "cpu:0"], 3)
    test_scan("scrypt", 150, ["--devices", "cpu:0"])
    # Every GPU/OpenCL device listed here (PoCL in CI) through the same interface.
    listed = run("--list-devices", timeout=60).stdout.splitlines()
    for dev in (m.group(0) for m in map(re.compile(r"^(opencl|cuda):\d+").match, listed) if m):
        test_scan("sha256d", 3000, ["--devices", dev])
        test_scan("sha256d", 1000, ["--devices", dev], 8)
        test_scan("sha256d", 1000, ["--devices", dev], 3)
        test_scan("scrypt", 300, ["--devices", dev])
        test_momentum(["--devices", dev], False)
        test_momentum_bucket_overflow(dev)
    test_errors()
    test_nothing_to_do()
    test_empty_device_list()
    test_scan_hardware_errors()
    test_pasted_options()
    test_protocol_dump_and_shares_limit()
    test_socks4_proxy()
    test_config_files()
    test_devices_and_selftest()
    test_help_exit_statuses()
    test_momentum_rate()
    test_variant_names()
    test_selftest_skips()


def main():
    # test_cli.py LODE [--part threads|rest] [TEST_NAME ...]: both parts, one
    # part, or just the named (no-argument) tests.
    args = sys.argv[2:]
    if args[:1] == ["--part"]:
        {"threads": part_threads, "rest": part_rest}[args[1]]()
    elif args:
        tests = {name: fn for name, fn in globals().items() if name.startswith("test_") and callable(fn)}
        for name in args:
            tests[name]()
    else:
        part_threads()
        part_rest()
    sys.exit(check.report())


main()
