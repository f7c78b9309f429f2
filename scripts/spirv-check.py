#!/usr/bin/env python3
"""Compiles every OpenCL program lode builds to SPIR-V and validates it (#42).

Pipeline (Debian's clang-19 has no SPIR-V target, so LLVM 14's tools):
  clang-14 -x cl -target spirv64 -O0 -Xclang -disable-O0-optnone -emit-llvm
  opt-14 -passes=sroa,early-cse,instcombine
  llvm-spirv-14 --spirv-max-version=1.0      (1.3 where subgroups need it)
  spirv-val --target-env opencl2.1           (spv1.3 for 1.3 modules)
clang -O2 IR is not used: llvm-spirv-14 then writes blocks before their
dominators and OpVariables outside the entry block, which spirv-val rejects;
simplifycfg alone already reorders blocks that way (scrypt, LOOKUP_GAP 2).
Each module must also be self-contained: a driver links a SPIR-V module as
it is, so a function it imports (called, never defined) fails the build.

Usage: spirv-check.py [--out DIR] [--root REPO]   (exit 77: a tool is missing)
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOOLS = ("clang-14", "opt-14", "llvm-spirv-14", "spirv-val", "spirv-dis")
PASSES = "sroa,early-cse,instcombine"
CLANG = ["clang-14", "-x", "cl", "-target", "spirv64", "-Xclang", "-finclude-default-header",
         "-O0", "-Xclang", "-disable-O0-optnone", "-Werror", "-emit-llvm", "-c"]
GENERIC = "-D LODE_VENDOR_ID=0"  # what ocl_common_options passes on a device of no known vendor


def programs():
    """(file, options, SPIR-V version) for each program the backend builds on
    a generic device: the options of ocl_sha256d.c, ocl_scrypt.c (scrypt_build),
    ocl_momentum.c and ocl_tf.c without the NVIDIA and AMD paths."""
    out = [("sha256d", "-cl-std=CL1.2 " + GENERIC, "1.0")]
    for xchg in (0, 1):  # one work-item per hash; four trading through local memory
        for gap in (1, 2, 4):
            for hashes in (1, 2):
                out.append(("scrypt", f"-cl-std=CL1.2 {GENERIC} -D LOOKUP_GAP={gap} -D XCHG={xchg} "
                            f"-D HASHES={hashes}", "1.0"))
    for hashes in (1, 2):  # romix_thread takes no lookup gap
        out.append(("scrypt", f"-cl-std=CL1.2 {GENERIC} -D LOOKUP_GAP=1 -D XCHG=5 -D HASHES={hashes}", "1.0"))
    # cl_khr_subgroup_shuffle: clang-14 declares sub_group_shuffle for
    # OpenCL C 2.0 only (and knows no pragma for it), and the shuffle is a
    # SPIR-V 1.3 instruction.
    out.append(("scrypt", f"-cl-std=CL2.0 -Wno-ignored-pragmas {GENERIC} -D LOOKUP_GAP=1 -D XCHG=3 -D HASHES=2", "1.3"))
    out.append(("momentum", "-cl-std=CL1.2", "1.0"))
    out.append(("tf", "-cl-std=CL1.2", "1.0"))
    return out


def run(cmd):
    """Runs cmd; returns (ok, combined output)."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode == 0, p.stdout.strip()


def imports_of(spv):
    """Functions and variables the module imports, apart from the built-in
    variables (work-item ids), which the driver supplies."""
    ok, text = run(["spirv-dis", spv])
    if not ok:
        return ["(spirv-dis failed: " + text.splitlines()[0] + ")"] if text else ["(spirv-dis failed)"]
    names = re.findall(r'LinkageAttributes "([^"]+)" Import', text)
    return [n for n in names if not n.startswith("__spirv_BuiltIn")]


def kernels_of(spv):
    ok, text = run(["spirv-dis", spv])
    return re.findall(r'OpEntryPoint Kernel %\S+ "([^"]+)"', text) if ok else []


def compile_one(source, options, version, stem, root):
    """Source -> validated SPIR-V; returns a result dict (error: first failure)."""
    bc, opt_bc, spv = stem + ".bc", stem + ".opt.bc", stem + ".spv"
    env = "opencl2.1" if version == "1.0" else "spv" + version
    steps = [CLANG + ["-I", root] + options.split() + [source, "-o", bc],
             ["opt-14", "-passes=" + PASSES, bc, "-o", opt_bc],
             ["llvm-spirv-14", "--spirv-max-version=" + version, opt_bc, "-o", spv],
             ["spirv-val", "--target-env", env, spv]]
    result = {"bytes": 0, "valid": False, "imports": [], "kernels": [], "error": ""}
    for cmd in steps:
        ok, text = run(cmd)
        if not ok:
            result["error"] = f"{cmd[0]}: " + (text.splitlines()[0] if text else "failed")
            if cmd[0] == "spirv-val":
                result["bytes"] = os.path.getsize(spv)
            return result
    result["bytes"] = os.path.getsize(spv)
    result["valid"] = True
    result["imports"] = imports_of(spv)
    result["kernels"] = kernels_of(spv)
    if result["imports"]:
        result["error"] = "undefined: " + ", ".join(result["imports"])
    return result


def controls_fail_as_they_should(work):
    """The check must catch what it claims to: a module with an undefined
    function, and a damaged SPIR-V binary."""
    src = os.path.join(work, "control.cl")
    with open(src, "w") as f:
        f.write("uint helper(uint x);\n__kernel void k(__global uint *o) { o[0] = helper(o[0]); }\n")
    r = compile_one(src, "-cl-std=CL1.2", "1.0", os.path.join(work, "control"), work)
    caught_import = r["valid"] and r["imports"] == ["helper"]
    damaged = os.path.join(work, "damaged.spv")
    with open(os.path.join(work, "control.spv"), "rb") as f:
        words = f.read()
    with open(damaged, "wb") as f:
        f.write(words[: len(words) // 2])
    caught_damage = not run(["spirv-val", "--target-env", "opencl2.1", damaged])[0]
    if not caught_import:
        print("control: a module with an undefined function was not reported", file=sys.stderr)
    if not caught_damage:
        print("control: spirv-val accepted a truncated module", file=sys.stderr)
    return caught_import and caught_damage


def print_table(rows):
    width = max(len(options) for _, options, _, _ in rows)
    print(f"{'file':9} {'options':{width}} {'spv':4} {'bytes':>6} {'kernels':>7}  valid")
    for name, options, version, r in rows:
        verdict = "yes" if r["valid"] and not r["imports"] else "NO  " + r["error"]
        print(f"{name:9} {options:{width}} {version:4} {r['bytes']:6} {len(r['kernels']):7}  {verdict}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="repository root")
    ap.add_argument("--out", default=None, help="folder for the .spv files (default: a temporary one)")
    args = ap.parse_args()
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        print("spirv-check: skipped, missing " + ", ".join(missing)
              + " (Debian: clang-14 llvm-14 llvm-spirv-14 spirv-tools)", file=sys.stderr)
        return 77
    kernels_dir = os.path.join(args.root, "backend-opencl", "kernels")
    if not os.path.isdir(kernels_dir):
        print(f"spirv-check: no {kernels_dir}: --root must be lode's repository root", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or tmp
        os.makedirs(out, exist_ok=True)
        if not controls_fail_as_they_should(tmp):
            return 1
        rows = []
        for i, (name, options, version) in enumerate(programs()):
            stem = os.path.join(out, f"{name}-{i:02d}")
            r = compile_one(os.path.join(kernels_dir, name + ".cl"), options, version, stem, args.root)
            rows.append((name, options, version, r))
        print_table(rows)
    bad = [r for r in rows if not r[3]["valid"] or r[3]["imports"]]
    print(f"spirv-check: {len(rows) - len(bad)} of {len(rows)} programs valid and self-contained")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
