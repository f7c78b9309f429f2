#!/usr/bin/env python3
"""lode's OpenCL kernels on Oclgrind with every check on; any report fails.

    test_oclgrind.py TEST_OCLGRIND ALGO [VARIANT...]   (the variants named, else SMALL_JOBS' own)

Oclgrind (Debian's OpenCL simulator) is registered alone through
OCL_ICD_VENDORS, its checks are switched on (memory errors always; data
races, uninitialised values, API misuse by OCLGRIND_DATA_RACES,
OCLGRIND_UNINITIALIZED, OCLGRIND_CHECK_API) and its reports go to the file
OCLGRIND_LOG names. First a kernel that writes past its buffer runs under
the same settings and must be reported (so this test cannot pass blind);
then TEST_OCLGRIND (tests/test_oclgrind.c) runs ALGO's kernels on small jobs
against the CPU reference: it must pass and the log must stay empty.
Exit 77 only where Oclgrind is not installed.
"""
import ctypes
import os
import subprocess
import sys
import tempfile

OCLGRIND_ICD = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"
# Oclgrind's checks, and a device shaped like a small AMD GPU: 64 KiB of
# local memory (Oclgrind's 32 KiB default is below tf's sieve segment) and
# 1 GiB of memory (its 128 MiB holds no scrypt batch of 256 hashes).
OCLGRIND = {"OCLGRIND_DATA_RACES": "1", "OCLGRIND_UNINITIALIZED": "1", "OCLGRIND_CHECK_API": "1",
            "OCLGRIND_LOCAL_MEM_SIZE": "65536", "OCLGRIND_GLOBAL_MEM_SIZE": str(1 << 30)}
# Each algorithm's small jobs: lode's own settings (core/base/settings.c),
# and the variants run (all of Oclgrind's where none are named).
SMALL_JOBS = {
    "sha256d": ({}, []),
    # Work-groups of 4 items: romix_single's group is 4 hashes, romix_quad's
    # one. romix_thread ("thread", its work-groups whole 32-hash units) is
    # a test of its own, oclgrind_scrypt_thread: ~3.5 minutes.
    "scrypt": ({"LODE_OPENCL_TUNE": "scrypt:ls=4,il=1,batch=4"}, ["single", "local"]),
    # Its own program, on 4096 nonces (tests/test_oclgrind_momentum.c).
    "momentum": ({}, []),
    # The shortest launch (one 2^18 segment), 2000 sieve primes, one launch a
    # batch, the device-built tables compared with the host's. Oclgrind 21.10
    # cannot run LLVM's funnel-shift intrinsic (llvm.fshl), which its
    # optimiser makes of tf.cl's shifts: unoptimised, the kernels run.
    "tf": ({"LODE_TF_LAUNCH_BITS": "18", "LODE_TF_SIEVE_PRIMES": "2000", "LODE_TF_BATCH": "1",
            "LODE_TF_CHECK_TABLES": "1", "OCLGRIND_BUILD_OPTIONS": "-cl-opt-disable"}, []),
}
# What Oclgrind's reports start with, should one reach stderr instead of the log.
REPORT_WORDS = ("Invalid read", "Invalid write", "data race", "Uninitialized", "Oclgrind - OpenCL runtime error",
                "Oclgrind -", "Uninitialised")

OOB_SOURCE = b"__kernel void past_end(__global uint *a) { a[get_global_id(0) + 4] = 1u; }"


def run_oob_kernel():
    """Runs OOB_SOURCE on the first OpenCL device, a buffer of 4 words, 4 items: 4 writes past its end."""
    cl = ctypes.CDLL("libOpenCL.so.1")
    vp, u32 = ctypes.c_void_p, ctypes.c_uint32
    err = ctypes.c_int32(0)
    platform, device = vp(), vp()
    assert cl.clGetPlatformIDs(1, ctypes.byref(platform), None) == 0, "no OpenCL platform"
    assert cl.clGetDeviceIDs(platform, ctypes.c_uint64(0xFFFFFFFF), 1, ctypes.byref(device), None) == 0
    for f, res in (("clCreateContext", vp), ("clCreateCommandQueue", vp), ("clCreateProgramWithSource", vp),
                   ("clCreateKernel", vp), ("clCreateBuffer", vp)):
        getattr(cl, f).restype = res
    ctx = cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err))
    queue = cl.clCreateCommandQueue(vp(ctx), device, ctypes.c_uint64(0), ctypes.byref(err))
    src = ctypes.c_char_p(OOB_SOURCE)
    prog = cl.clCreateProgramWithSource(vp(ctx), 1, ctypes.byref(src), None, ctypes.byref(err))
    assert cl.clBuildProgram(vp(prog), 1, ctypes.byref(device), None, None, None) == 0, "build"
    kernel = cl.clCreateKernel(vp(prog), b"past_end", ctypes.byref(err))
    buf = vp(cl.clCreateBuffer(vp(ctx), ctypes.c_uint64(1), ctypes.c_size_t(16), None, ctypes.byref(err)))
    assert cl.clSetKernelArg(vp(kernel), u32(0), ctypes.c_size_t(ctypes.sizeof(vp)), ctypes.byref(buf)) == 0
    items = ctypes.c_size_t(4)
    assert cl.clEnqueueNDRangeKernel(vp(queue), vp(kernel), u32(1), None, ctypes.byref(items), None, u32(0),
                                     None, None) == 0, "launch"
    cl.clFinish(vp(queue))
    for f, h in (("clReleaseMemObject", buf), ("clReleaseKernel", kernel), ("clReleaseProgram", prog),
                 ("clReleaseCommandQueue", queue), ("clReleaseContext", ctx)):
        getattr(cl, f)(vp(h) if not isinstance(h, vp) else h)


def reports(log_path, stderr):
    """Oclgrind's reports: the log's text, and any report line on stderr."""
    text = open(log_path).read() if os.path.exists(log_path) else ""
    lines = [l for l in stderr.splitlines() if any(w in l for w in REPORT_WORDS)]
    return (text + "\n".join(lines)).strip()


def run_checked(argv, env, log_path, timeout):
    if os.path.exists(log_path):
        os.remove(log_path)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    return proc, reports(log_path, proc.stderr)


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--oob-kernel":
        run_oob_kernel()
        return 0
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    program, algo = sys.argv[1], sys.argv[2]
    if algo not in SMALL_JOBS:
        print(f"unknown algorithm {algo!r}: one of {', '.join(SMALL_JOBS)}")
        return 2
    if not os.path.exists(OCLGRIND_ICD):
        print(f"{OCLGRIND_ICD} not found (apt-get install oclgrind): the Oclgrind tests are not run")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "oclgrind.icd"), "w") as f:
            f.write(OCLGRIND_ICD + "\n")
        log_path = os.path.join(tmp, "oclgrind.log")
        # No tuning cache from elsewhere; Oclgrind's LLVM leaks as PoCL's does
        # (tests/CMakeLists.txt): no leak check under AddressSanitizer.
        env = dict(os.environ, OCL_ICD_VENDORS=tmp, OCLGRIND_LOG=log_path, XDG_CACHE_HOME=tmp, HOME=tmp,
                   ASAN_OPTIONS="detect_leaks=0", **OCLGRIND)
        proc, found = run_checked([sys.executable, __file__, "--oob-kernel"], env, log_path, 120)
        if proc.returncode != 0 or "Invalid write" not in found:
            print(f"FAIL: a kernel writing past its buffer is not reported: rc {proc.returncode}, "
                  f"log {found[-400:]!r}, stderr {proc.stderr[-800:]!r}")
            return 1
        print("ok: a kernel writing past its buffer is reported:", found.splitlines()[0])
        settings, variants = SMALL_JOBS[algo]
        variants = sys.argv[3:] or variants
        proc, found = run_checked([program, algo] + variants, dict(env, **settings), log_path, 590)
        sys.stdout.write(proc.stdout[-6000:])
        sys.stderr.write(proc.stderr[-6000:])
        if proc.returncode == 77:
            print("FAIL: Oclgrind is installed but lode found no Oclgrind device")
            return 1
        if found:
            print(f"FAIL: Oclgrind reported on {algo}'s kernels:\n{found[:6000]}")
            return 1
        if proc.returncode != 0:
            print(f"FAIL: {algo} on Oclgrind: rc {proc.returncode}")
            return 1
        print(f"ok: {algo} on Oclgrind matches the reference, no report")
        return 0


if __name__ == "__main__":
    sys.exit(main())
