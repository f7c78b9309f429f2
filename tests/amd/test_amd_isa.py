#!/usr/bin/env python3
"""scripts/amd-isa.py's parts that decide pass or fail, on inputs made
here: the resource parser on a hand-written code object listing, and the
comparator on records whose scratch grows, whose kernels come and go, and
whose other resources move (which must not fail)."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("amd_isa", os.path.join(HERE, "..", "..", "scripts", "amd-isa.py"))
amd_isa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(amd_isa)

ASM = """\
\t.text
\t.globl\tk_one
\t.type\tk_one,@function
k_one:
\ts_load_b64 s[0:1], s[0:1], 0x0
\tv_add_nc_u32_e32 v0, s0, v0
\tv_alignbit_b32 v1, v0, v0, 7
.LBB0_1:
\tv_xor_b32_e32 v1, v1, v0
\ts_cbranch_scc1 .LBB0_1
\ts_endpgm
; Kernel info:
; NumVgprs: 2
; ScratchSize: 16
; Occupancy: 16
\t.type\tk_two,@function
k_two:
\tv_mov_b32_e32 v0, 0
\ts_endpgm
; Occupancy: 8
\t.amdgpu_metadata
amdhsa.kernels:
  - .args:
      - .name:           p
        .size:           8
    .group_segment_fixed_size: 0
    .name:           k_one
    .private_segment_fixed_size: 16
    .sgpr_count:     10
    .vgpr_count:     2
    .wavefront_size: 32
  - .args:           []
    .group_segment_fixed_size: 4096
    .name:           k_two
    .private_segment_fixed_size: 0
    .sgpr_count:     4
    .vgpr_count:     1
    .wavefront_size: 64
\t.end_amdgpu_metadata
"""

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


parsed = amd_isa.parse_asm(ASM)
check("kernels", sorted(parsed), ["k_one", "k_two"])
check("k_one", parsed.get("k_one"),
      {"vgpr": 2, "sgpr": 10, "scratch": 16, "lds": 0, "wave": 32, "valu": 3, "occupancy": 16})
check("k_two", parsed.get("k_two"),
      {"vgpr": 1, "sgpr": 4, "scratch": 0, "lds": 4096, "wave": 64, "valu": 1, "occupancy": 8})

base = {"gfx1100": {"prog": {"k_one": {"vgpr": 40, "scratch": 0, "occupancy": 16},
                             "k_two": {"vgpr": 20, "scratch": 64, "occupancy": 16}}}}


def variant(**changes):
    rec = {"gfx1100": {"prog": {k: dict(v) for k, v in base["gfx1100"]["prog"].items()}}}
    for kernel, fields in changes.items():
        if fields is None:
            del rec["gfx1100"]["prog"][kernel]
        else:
            rec["gfx1100"]["prog"].setdefault(kernel, {}).update(fields)
    return rec


f, c = amd_isa.compare(variant(), base)
check("same record: failures", f, [])
check("same record: changes", c, [])
f, c = amd_isa.compare(variant(k_one={"scratch": 8}), base)
check("scratch grows: fails", len(f), 1)
f, c = amd_isa.compare(variant(k_two={"scratch": 32}), base)
check("scratch shrinks: passes", f, [])
check("scratch shrinks: listed", len(c), 1)
f, c = amd_isa.compare(variant(k_one={"vgpr": 90, "occupancy": 10}), base)
check("more VGPRs: passes", f, [])
check("more VGPRs: listed", len(c), 1)
f, c = amd_isa.compare(variant(k_three={"vgpr": 1, "scratch": 0}), base)
check("new kernel: fails", len(f), 1)
f, c = amd_isa.compare(variant(k_two=None), base)
check("kernel gone: fails", len(f), 1)

for line in failures:
    print("FAIL", line)
print(f"{'FAIL' if failures else 'ok'}: amd-isa parser and comparator")
sys.exit(1 if failures else 0)
