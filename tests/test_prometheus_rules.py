#!/usr/bin/env python3
"""The Prometheus rules in contrib/prometheus/ through Debian's promtool:

- `promtool check rules` accepts lode-rules.yml;
- `promtool test rules` passes lode-rules.test.yml (every alert firing where
  it should and silent where it should not, the recording rules' values);
- the test can fail: copies of the rules, each with one rule broken in a way
  promtool check still accepts (LodeDeviceFailed on `== 2`, the paused
  device no longer left out of LodeHashrateDrop, LodeTemperatureHigh at
  85 C itself, LodeSharesRejected without its 20 answers, joules per hash
  without ignoring the DCGM labels), each make `promtool test rules` fail,
  naming the broken rule.

promtool comes with the Debian package prometheus (scripts/install-deps.sh);
without it the test fails. No lode binary is needed.

usage: test_prometheus_rules.py SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
RULES = os.path.join(ROOT, "contrib", "prometheus", "lode-rules.yml")
TESTS = os.path.join(ROOT, "contrib", "prometheus", "lode-rules.test.yml")
check = Checks()

# (what is broken, the text in lode-rules.yml, what replaces it, what
# promtool's failure must name)
BREAKS = [
    ("LodeDeviceFailed fires on == 2",
     'expr: lode_device_state{state=~"failed|quarantined"} == 1',
     'expr: lode_device_state{state=~"failed|quarantined"} == 2',
     "LodeDeviceFailed"),
    ("LodeHashrateDrop counts a paused device",
     '\n            unless ignoring(state) lode_device_state{state="paused"} == 1', "",
     "LodeHashrateDrop"),
    ("LodeTemperatureHigh fires at 85 C itself",
     "expr: lode_device_temperature_celsius > 85",
     "expr: lode_device_temperature_celsius >= 85",
     "LodeTemperatureHigh"),
    ("LodeSharesRejected without its 20 answers",
     "\n            and pool:lode_shares_answered:increase15m >= 20", "",
     "LodeSharesRejected"),
    ("joules per hash matching on every label",
     " ignoring(gpu, UUID, pci_bus_id, modelName) group_left()", "",
     "device:lode_joules_per_hash:rate5m"),
]


def promtool(*args, cwd=None):
    try:
        r = subprocess.run(["promtool", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as e:
        return 124, f"promtool {' '.join(args)}: timed out after {e.timeout} s"
    return r.returncode, r.stdout + r.stderr


def broken_copy(tmp, name, old, new):
    """A new folder in tmp holding the test file and the rules with `old` replaced by
    `new`; None if `old` is not in the rules exactly once."""
    with open(RULES) as f:
        text = f.read()
    if not check(text.count(old) == 1, f"{name}: {old.strip()!r} is in lode-rules.yml "
                                       f"{text.count(old)} times, not once"):
        return None
    d = tempfile.mkdtemp(dir=tmp)
    with open(os.path.join(d, "lode-rules.yml"), "w") as f:
        f.write(text.replace(old, new))
    shutil.copy(TESTS, os.path.join(d, "lode-rules.test.yml"))
    return d


def main():
    if shutil.which("promtool") is None:
        check(False, "promtool is not installed (Debian package prometheus; scripts/install-deps.sh)")
        return check.report()
    rc, out = promtool("--version")
    print(out.splitlines()[0] if out else "promtool --version: no output", flush=True)

    rc, out = promtool("check", "rules", RULES)
    check(rc == 0, f"promtool check rules {RULES} exited {rc}:\n{out}")
    print(out.strip(), flush=True)
    # From another folder: rule_files is found next to the test file.
    rc, out = promtool("test", "rules", TESTS, cwd=tempfile.gettempdir())
    check(rc == 0, f"promtool test rules {TESTS} exited {rc}:\n{out}")
    print(out.strip(), flush=True)

    with tempfile.TemporaryDirectory(prefix="lode-rules-") as tmp:
        for name, old, new, named in BREAKS:
            d = broken_copy(tmp, name, old, new)
            if d is None:
                continue
            rc, out = promtool("check", "rules", os.path.join(d, "lode-rules.yml"))
            check(rc == 0, f"{name}: the broken copy should still be valid rules; promtool check exited {rc}:\n{out}")
            rc, out = promtool("test", "rules", os.path.join(d, "lode-rules.test.yml"))
            failed = rc != 0 and "FAILED" in out
            check(failed, f"{name}: promtool test rules should fail, exited {rc}:\n{out}")
            check(not failed or named in out, f"{name}: promtool's failure does not name {named}:\n{out}")
            print(f"broken ({name}): promtool test rules exited {rc}", flush=True)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
