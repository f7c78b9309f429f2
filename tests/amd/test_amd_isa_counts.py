#!/usr/bin/env python3
"""scripts/amd_isa_counts.py on hand-written kernels whose counts are
worked out below, then on a real clang-19 compile of sha256d.cl for gfx1030
(exit 77 without clang-19 or AMD's device libraries).

usage: test_amd_isa_counts.py REPO_ROOT   (cost: ~5 s, one clang-19 compile)"""
import os
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import amd_isa_counts as counts  # noqa: E402

DEVICE_LIBS = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"
failures = []


def expect(what, got, want):
    if got != want:
        failures.append(f"{what}: {got}, expected {want}")


def toy():
    with open(os.path.join(ROOT, "tests", "amd", "toy_loops.s"), encoding="utf-8") as f:
        text = f.read()
    rows = counts.loop_report(text, "toy_kernel")
    expect("loops (number, header, depth)", [r[:3] for r in rows], [(0, ".LBB0_1", 1), (1, ".LBB0_2", 2)])
    params = {"depth_trips": {1: 4, 2: 10}}
    got = counts.per_unit(text, None, ["toy_kernel"], params)["toy_kernel"]
    # Outside the loops: v_mov (1). Outer body, 4 times: v_add, v_lshlrev_b64 and the helper's v_rcp and
    # v_add_f64 (4 VALU: 2 wide, 1 transcendental). Inner body, 4 x 10 times: 3 VALU, one v_mul_lo_u32.
    want = {"valu": 1 + 4 * 4 + 40 * 3, "quarter": 40, "wide": 4 * 2, "f64": 4, "trans": 4, "mov": 1, "vmem": 1,
            "smem": 1, "salu": 1 + 4 * 6 + 40 * 2}
    for cls, value in want.items():
        expect(f"toy {cls}", got[cls], value)
    expect("toy meta", got["meta"], {"vgprs": 6, "scratch": 0, "occupancy": 16})
    # A grid-stride kernel's set-up is amortised: outside 0 drops the v_mov, the store, one s_mov, one s_load.
    params["outside"] = 0
    got = counts.per_unit(text, None, ["toy_kernel"], params)["toy_kernel"]
    expect("toy valu, outside 0", got["valu"], 4 * 4 + 40 * 3)
    expect("toy vmem, outside 0", got["vmem"], 0)
    try:
        counts.per_unit(text, None, ["no_such_kernel"], params)
        failures.append("a missing kernel raised nothing")
    except counts.AsmError:
        pass
    # Trip counts read from the induction variables: s2 from 4 and s3 from 10, down by 1 to 0.
    expect("toy trips from the asm", [r[5] for r in counts.loop_report(text, "toy_kernel")], [4, 10])
    got = counts.per_unit(text, None, ["toy_kernel"], {"depth_trips": {1: "asm", 2: "asm"}})["toy_kernel"]
    expect("toy valu, trips from the asm", got["valu"], 1 + 4 * 4 + 40 * 3)
    unknown = text.replace("s_mov_b32 s2, 4", "s_mov_b32 s2, s9")
    try:
        counts.per_unit(unknown, None, ["toy_kernel"], {"depth_trips": {1: "asm"}})
        failures.append("a loop with no constant trip count raised nothing")
    except counts.AsmError:
        pass


def toy_gfx12():
    """gfx12 spellings and an unrolled loop: 8 iterations as 4 trips of 2."""
    with open(os.path.join(ROOT, "tests", "amd", "toy_unrolled.s"), encoding="utf-8") as f:
        text = f.read()
    expect("unrolled trip", [r[5] for r in counts.loop_report(text, "toy_unrolled")], [4])
    got = counts.per_unit(text, None, ["toy_unrolled"], {"depth_trips": {1: "asm"}})["toy_unrolled"]
    # v_mov once; 4 trips of 2 v_mad_co_u64_u32 (quarter rate, so not in wide) and 2 v_add; the helper's
    # v_mul_lo once, reached through s_add_co_u32.
    want = {"valu": 1 + 4 * 4 + 1, "quarter": 4 * 2 + 1, "wide": 0, "mov": 1}
    for cls, value in want.items():
        expect(f"unrolled {cls}", got[cls], value)


def real():
    """SHA-256d per nonce from a real compile. Bounds from SHA-256's shape:
    the kernel runs ~120 rounds a nonce (the first hash's first 3 are the
    host's, the second hash stops early at the top word) and ~90 schedule
    steps; a round is at least 12 ALU operations with funnel shifts and
    bit-field selects (Sigma0, Sigma1: 3 each + 2 xors; Ch, Maj: 1-2; 5
    additions) and at most ~30 with nothing fused, a schedule step 6-25.
    So 120 x 12 + 90 x 6 > 2 000 and 120 x 30 + 90 x 25 < 6 000."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sha256d.s")
        cmd = ["clang-19", "-x", "cl", "-cl-std=CL1.2", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1030",
               f"--rocm-device-lib-path={DEVICE_LIBS}", "-Xclang", "-finclude-default-header",
               "-D", "LODE_VENDOR_ID=0x1002", "-I", ROOT, "-O3", "-S",
               os.path.join(ROOT, "backend-opencl", "kernels", "sha256d.cl"), "-o", out]
        subprocess.run(cmd, check=True)
        with open(out, encoding="utf-8") as f:
            text = f.read()
    result = counts.per_unit(text, "sha256d")
    # The version-rolled kernels share a nonce's schedule among its 8 versions; a version's rounds and outer
    # hash keep each hash within the same bounds (a loop misread, e.g. an unrolled one, doubles it).
    result.update(counts.per_unit(text, "sha256d-versions"))
    for kernel in ("sha256d_search_iadd3", "sha256d_search_imad", "sha256d_search_versions_iadd3",
                   "sha256d_search_versions_imad"):
        valu = result[kernel]["valu"]
        if not 2000 <= valu <= 6000:
            failures.append(f"{kernel}: {valu} VALU a unit, outside 2 000-6 000")
    # iadd3 has no multiplication in its source; imad's additions are multiply-adds.
    expect("iadd3 quarter-rate", result["sha256d_search_iadd3"]["quarter"], 0)
    if result["sha256d_search_imad"]["quarter"] <= 0:
        failures.append("imad: no multiply found")


def main():
    toy()
    toy_gfx12()
    tools = subprocess.run(["sh", "-c", "command -v clang-19"], capture_output=True).returncode == 0
    if not tools or not os.path.exists(os.path.join(DEVICE_LIBS, "ocml.bc")):
        for line in failures:
            print("FAIL", line)
        print("skip: clang-19 or rocm-device-libs missing; the real compile was not checked")
        return 1 if failures else 77
    real()
    for line in failures:
        print("FAIL", line)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
