#!/usr/bin/env python3
"""`cmake --install` (#39: the systemd unit expected /usr/local/bin/lode and
nothing installed it): into a DESTDIR with a packaging prefix, and into a
plain prefix. The installed program runs and is the one built; the
installed unit is contrib/systemd/lode.service (the oracle) with ExecStart
at the installed program, and every other line as in the source; the
documents the README names are there; the install manifest lists it all.

usage: test_install.py CMAKE BUILD_DIR SOURCE_DIR
"""
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

CMAKE, BUILD, SOURCE = sys.argv[1:4]
TMP = tempfile.mkdtemp(prefix="lode-install-test-")
check = Checks()
UNIT = os.path.join(SOURCE, "contrib", "systemd", "lode.service")


def exec_start(unit_text):
    lines = [line for line in unit_text.splitlines() if line.startswith("ExecStart=")]
    return lines[0][len("ExecStart="):].split()[0] if len(lines) == 1 else None


def install(prefix, destdir):
    env = dict(os.environ)
    env.pop("DESTDIR", None)
    if destdir:
        env["DESTDIR"] = destdir
    r = subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix], capture_output=True, text=True,
                       env=env, timeout=120)
    check(r.returncode == 0, f"cmake --install --prefix {prefix} (DESTDIR={destdir!r}): {r.stdout[-500:]}"
                             f"{r.stderr[-500:]}")
    return r.returncode == 0


def check_tree(prefix, destdir):
    what = f"prefix {prefix}, DESTDIR {destdir!r}"
    root = (destdir or "") + prefix
    unit_path = os.path.join(root, "lib", "systemd", "system", "lode.service")
    if not check(os.path.isfile(unit_path), f"{what}: lode.service in lib/systemd/system"):
        return
    with open(unit_path) as f:
        installed = f.read()
    with open(UNIT) as f:
        source = f.read()
    program = exec_start(installed)
    check(program == os.path.join(prefix, "bin", "lode"),
          f"{what}: the unit's ExecStart runs {program}, want {prefix}/bin/lode")
    # Every other line as in contrib/systemd/lode.service.
    rest = [line for line in installed.splitlines() if not line.startswith("ExecStart=")]
    want = [line for line in source.splitlines() if not line.startswith("ExecStart=")]
    check(rest == want and exec_start(source) == "/usr/local/bin/lode",
          f"{what}: the unit differs from the source beyond ExecStart")
    on_disk = (destdir or "") + program if program else ""
    check(os.path.isfile(on_disk) and os.access(on_disk, os.X_OK),
          f"{what}: ExecStart's program {on_disk} is installed and executable")
    built = os.path.join(BUILD, "core", "cli", "lode")
    if os.path.isfile(on_disk):
        ran = subprocess.run([on_disk, "--version"], capture_output=True, text=True, timeout=60)
        want_v = subprocess.run([built, "--version"], capture_output=True, text=True, timeout=60)
        check(ran.returncode == 0 and ran.stdout.splitlines()[:2] == want_v.stdout.splitlines()[:2],
              f"{what}: the installed lode runs and is the built one: {ran.stdout[:200]!r}")
    analyze = shutil.which("systemd-analyze")
    if analyze and not destdir:  # systemd's own reading of the unit: ExecStart's program must exist
        r = subprocess.run([analyze, "verify", unit_path], capture_output=True, text=True, timeout=120)
        problems = [line for line in (r.stdout + r.stderr).splitlines() if "lode.service" in line]
        check(r.returncode == 0 and not problems, f"{what}: systemd-analyze verify: rc {r.returncode}, {problems}")
    doc = os.path.join(root, "share", "doc", "lode")
    for name in ("README.md", "docs/OPERATIONS.md", "docs/ARCHITECTURE.md", "docs/TF-PROOF.md"):
        check(os.path.isfile(os.path.join(doc, name))
              and filecmp.cmp(os.path.join(doc, name), os.path.join(SOURCE, name), shallow=False),
              f"{what}: share/doc/lode/{name} installed")
    with open(os.path.join(BUILD, "install_manifest.txt")) as f:
        manifest = set(f.read().split())
    for path in (program, os.path.join(prefix, "lib", "systemd", "system", "lode.service"),
                 os.path.join(prefix, "share", "doc", "lode", "README.md")):
        # cmake writes the paths without DESTDIR.
        check(path in manifest, f"{what}: {path} in install_manifest.txt (uninstall)")


def main():
    cases = [("/opt/lode-package", os.path.join(TMP, "dest")), (os.path.join(TMP, "prefix"), None)]
    for prefix, destdir in cases:
        print(f"== cmake --install --prefix {prefix}, DESTDIR={destdir!r}", flush=True)
        if install(prefix, destdir):
            check_tree(prefix, destdir)
    # A prefix systemd could not read in ExecStart is refused, not written wrong.
    r = subprocess.run([CMAKE, "--install", BUILD, "--prefix", os.path.join(TMP, "with space")],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode != 0 and "ExecStart" in r.stdout + r.stderr,
          f"a prefix with a space: status {r.returncode}, {r.stderr[-300:]!r}")
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(check.report())


main()
