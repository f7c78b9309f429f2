#!/usr/bin/env python3
"""Compiles every OpenCL program lode builds for AMD GPUs, as AMD's runtime
would, and holds each kernel's resources against a committed baseline.

    scripts/amd-isa.py --programs BUILD/backend-opencl/ocl_programs [--out DIR]
                       [--baseline tests/amd/kernel-resources.json] [--update] [--jobs 2]

The programs come from the backend itself: `ocl_programs --vendor amd` lists
each program (source, build options, kernels) the OpenCL backend may build
on a ROCm device (backend-opencl/ocl_programs.h). Each is compiled with
Debian's clang-19 for the targets below, linked with AMD's device libraries
(rocm-device-libs: opencl.bc, ocml.bc, ockl.bc and the oclc_* controls, as
ROCm's compiler links them; without them every builtin is a call and the
figures mean nothing). Debian's 5.2 libraries lack the ISA-version controls
of gfx942, gfx1100 and gfx1201; they are made here, one constant each.
clang-19 picks wave64 on GCN/CDNA and wave32 on RDNA, as ROCm's OpenCL does.

Any error or warning fails (-Werror). Per kernel and target the record
(DIR/kernel-resources.json, and a table in DIR/kernel-resources.md) holds
VGPRs, SGPRs, scratch bytes a lane (spills and private arrays), LDS bytes,
the wave size, the waves a SIMD can hold (clang's occupancy) and the vector
instructions of the kernel's code. The check fails when a kernel's scratch
grows above the baseline's, or a kernel appears or goes away; other changes
are listed. `--update` writes the record as the new baseline.

Cost: the whole scrypt matrix (every exchange, lookup gap and interleave)
is compiled for gfx1100 only; the other targets get every program at its
run-time defaults (lookup gap 1, the variant's default interleave). About
three minutes on two cores. The .s files stay in DIR/<target>/<id>.s.
Exit 77 when clang-19 or the device libraries are missing.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

TARGETS = ["gfx906", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1201"]
FULL_MATRIX_TARGET = "gfx1100"
DEVICE_LIBS = os.environ.get("AMD_ISA_DEVICE_LIBS", "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")
CLANG = os.environ.get("AMD_ISA_CLANG", "clang-19")
LLVM_AS = os.environ.get("AMD_ISA_LLVM_AS", "llvm-as-19")
# ISA versions of the targets Debian's device libraries predate.
MADE_ISA_VERSIONS = {"gfx942": 9402, "gfx1100": 11000, "gfx1201": 12001}
SCRYPT_DEFAULT_HASHES = {"local": 1, "single": 1, "thread": 1, "shuffle": 2}


def fail(msg, code=1):
    print(f"amd-isa: {msg}", file=sys.stderr)
    sys.exit(code)


def tools_or_skip():
    for tool in (CLANG, LLVM_AS):
        if shutil.which(tool) is None:
            fail(f"{tool} not found (apt-get install clang-19 llvm-19): the AMD compile is not checked", 77)
    if not os.path.isfile(os.path.join(DEVICE_LIBS, "opencl.bc")):
        fail(f"AMD's device libraries not in {DEVICE_LIBS} (apt-get install rocm-device-libs)", 77)


def device_lib_folder(out):
    """Debian's device libraries, plus the ISA-version controls they lack."""
    folder = os.path.join(out, "bitcode")
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(DEVICE_LIBS):
        link = os.path.join(folder, name)
        if name.endswith(".bc") and not os.path.lexists(link):
            os.symlink(os.path.join(DEVICE_LIBS, name), link)
    for target, version in MADE_ISA_VERSIONS.items():
        bc = os.path.join(folder, f"oclc_isa_version_{target[3:]}.bc")
        if os.path.lexists(bc):
            continue
        src = os.path.join(folder, f"isa_{target}.cl")
        with open(src, "w") as f:
            f.write(f"__constant const int __oclc_ISA_version = {version};\n")
        ll = subprocess.run([CLANG, "-x", "cl", "-cl-std=CL1.2", "-target", "amdgcn-amd-amdhsa", "-nogpulib",
                             f"-mcpu={target}", "-emit-llvm", "-S", "-o", "-", src],
                            check=True, capture_output=True, text=True).stdout
        # As in AMD's own controls: one definition wherever it is linked.
        ll = re.sub(r"^@__oclc_ISA_version = [^@]*?addrspace\(4\)",
                    "@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4)", ll,
                    flags=re.M)
        subprocess.run([LLVM_AS, "-o", bc], input=ll, check=True, text=True)
    return folder


def list_programs(tool, out):
    folder = os.path.join(out, "programs")
    os.makedirs(folder, exist_ok=True)
    subprocess.run([tool, "--vendor", "amd", "--out", folder], check=True)
    with open(os.path.join(folder, "manifest.json")) as f:
        return folder, json.load(f)


def runtime_default(prog):
    """Lookup gap 1 and the variant's default interleave (ocl_scrypt.c)."""
    if prog["algo"] != "scrypt":
        return True
    m = re.search(r"-g(\d+)-h(\d+)$", prog["id"])
    hashes = SCRYPT_DEFAULT_HASHES.get(prog["variant"], 1)
    return m is None or (m.group(1) == "1" and int(m.group(2)) == hashes)


def compile_jobs(programs, src_dir, out):
    """(target, program, .s path, command): one compile per distinct source and options."""
    jobs = []
    for target in TARGETS:
        seen = {}
        for prog in programs:
            if target != FULL_MATRIX_TARGET and not runtime_default(prog):
                continue
            key = (prog["source"], prog["options"])
            asm = os.path.join(out, target, prog["id"] + ".s")
            if key in seen:
                jobs.append((target, prog, seen[key], None))
                continue
            seen[key] = asm
            cmd = [CLANG, "-x", "cl", "-target", "amdgcn-amd-amdhsa", f"-mcpu={target}",
                   f"--rocm-device-lib-path={os.path.join(out, 'bitcode')}", "-Xclang", "-finclude-default-header",
                   "-Werror", "-O3", "-S", *prog["options"].split(), os.path.join(src_dir, prog["source"]),
                   "-o", asm]
            jobs.append((target, prog, asm, cmd))
    return jobs


def run_compile(job):
    target, prog, asm, cmd = job
    os.makedirs(os.path.dirname(asm), exist_ok=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    return job, r.returncode, r.stderr


META_KEYS = {"vgpr_count": "vgpr", "sgpr_count": "sgpr", "private_segment_fixed_size": "scratch",
             "group_segment_fixed_size": "lds", "wavefront_size": "wave", "vgpr_spill_count": "vgpr_spills"}


def parse_asm(text):
    """{kernel: resources} from the metadata block, clang's per-function
    comments (occupancy) and the code (vector instructions)."""
    kernels, entry = {}, None
    meta = text[text.find("amdhsa.kernels:"):]
    for line in meta.splitlines():
        if line.startswith("  - "):
            entry = {}
        m = re.match(r"^ {2}(?:- | {2})\.(\w+):\s+(\S+)", line)
        if entry is None or not m:
            continue
        key, value = m.groups()
        if key == "name":
            kernels[value] = entry
        elif key in META_KEYS:
            entry[META_KEYS[key]] = int(value)
    current = None
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_][\w$]*):", line)
        if m:
            current = m.group(1)
            if current in kernels:
                kernels[current]["valu"] = 0
            continue
        if current not in kernels:
            continue
        if re.match(r"^\s+v_", line):
            kernels[current]["valu"] += 1
        m = re.match(r"^; Occupancy: (\d+)", line)
        if m:
            kernels[current]["occupancy"] = int(m.group(1))
    return kernels


def compile_all(jobs, workers):
    record, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        done = {}
        for (target, prog, asm, cmd), rc, err in pool.map(run_compile, [j for j in jobs if j[3]]):
            if rc != 0 or err.strip():
                failures.append(f"{target} {prog['id']}: {' '.join(cmd)}\n{err.strip()}")
            done[asm] = rc == 0
    for target, prog, asm, _ in jobs:
        if not done.get(asm):
            continue
        with open(asm) as f:
            found = parse_asm(f.read())
        for kernel in prog["kernels"]:
            if kernel not in found:
                failures.append(f"{target} {prog['id']}: kernel {kernel} not in the compiled code")
                continue
            record.setdefault(target, {}).setdefault(prog["id"], {})[kernel] = found[kernel]
    return record, failures


def compare(record, baseline):
    """(failures, changes): scratch above the baseline's, or kernels that
    appeared or went away, fail; other resource changes are listed."""
    failures, changes = [], []
    flat = lambda r: {(t, p, k): v for t, ps in r.items() for p, ks in ps.items() for k, v in ks.items()}
    now, then = flat(record), flat(baseline)
    for key in sorted(now.keys() - then.keys()):
        failures.append(f"{' '.join(key)}: not in the baseline (new kernel? run with --update)")
    for key in sorted(then.keys() - now.keys()):
        failures.append(f"{' '.join(key)}: in the baseline but not built (run with --update)")
    for key in sorted(now.keys() & then.keys()):
        a, b = then[key], now[key]
        if b.get("scratch", 0) > a.get("scratch", 0):
            failures.append(f"{' '.join(key)}: scratch {a.get('scratch', 0)} -> {b['scratch']} bytes a lane")
        moved = [f"{f} {a.get(f)} -> {b.get(f)}" for f in ("vgpr", "occupancy", "scratch", "lds")
                 if a.get(f) != b.get(f)]
        if moved:
            changes.append(f"{' '.join(key)}: {', '.join(moved)}")
    return failures, changes


def table(record):
    rows = ["| target | program | kernel | VGPRs | SGPRs | scratch B | LDS B | wave | waves/SIMD | VALU |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for target in TARGETS:
        for prog, ks in sorted(record.get(target, {}).items()):
            for kernel, r in sorted(ks.items()):
                rows.append(f"| {target} | {prog} | {kernel} | {r.get('vgpr')} | {r.get('sgpr')} | "
                            f"{r.get('scratch')} | {r.get('lds')} | {r.get('wave')} | {r.get('occupancy')} | "
                            f"{r.get('valu')} |")
    return "\n".join(rows) + "\n"


def summary(record):
    lines = []
    for target in TARGETS:
        ks = [(p, k, r) for p, kk in record.get(target, {}).items() for k, r in kk.items()]
        if not ks:
            continue
        spilling = sorted({k for _, k, r in ks if r.get("scratch", 0) > 0})
        worst = max(ks, key=lambda x: x[2].get("vgpr", 0))
        lines.append(f"{target:8} {len(ks):3} kernels, most VGPRs {worst[2].get('vgpr')} ({worst[1]}), "
                     f"scratch in: {', '.join(spilling) if spilling else 'none'}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", required=True, help="the ocl_programs tool of a build")
    ap.add_argument("--out", default="amd-isa")
    ap.add_argument("--baseline", default=os.path.join(os.path.dirname(__file__), "..", "tests", "amd",
                                                       "kernel-resources.json"))
    ap.add_argument("--update", action="store_true", help="write the record as the baseline")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    tools_or_skip()
    os.makedirs(args.out, exist_ok=True)
    device_lib_folder(args.out)
    src_dir, programs = list_programs(args.programs, args.out)
    jobs = compile_jobs(programs, src_dir, args.out)
    record, failures = compile_all(jobs, args.jobs)
    with open(os.path.join(args.out, "kernel-resources.json"), "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    with open(os.path.join(args.out, "kernel-resources.md"), "w") as f:
        f.write(table(record))
    print(summary(record))
    if failures:
        fail("compile failed:\n" + "\n".join(failures))
    if args.update:
        with open(args.baseline, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"amd-isa: baseline written: {args.baseline}")
        return
    with open(args.baseline) as f:
        failures, changes = compare(record, json.load(f))
    for line in changes:
        print(f"changed: {line}")
    if failures:
        fail("against the baseline:\n" + "\n".join(failures))
    print(f"amd-isa: {sum(1 for j in jobs if j[3])} compiles, every kernel within its baseline")


if __name__ == "__main__":
    main()
