/* Where the OpenCL trial-factoring sieve's segment kernel spends its time
 * on NVIDIA (a measurement for docs/PERFORMANCE.md, not a test). It builds
 * the shipped tf.cl, prepares real sub-launches of M66362159's class 0 with
 * its own tf_tables and tf_prepare kernels, and times tf_segments alone
 * with profiling events:
 *   - the shipped kernel at several launch sizes (a step where a wave ends
 *     tells the work-groups resident per compute unit);
 *   - variants made by editing the source text (the loops rolled and the
 *     local bitmap volatile as before, other ideas), with the L2 warm and
 *     cold; every variant must find the same survivors;
 *   - a traced build (NVIDIA only: inline PTX) in which the first item of
 *     each work-group records its SM (%smid) and %globaltimer at the
 *     kernel's start and after each of its four phases: the work-groups
 *     resident at once per SM, and each phase's share of the time.
 *
 *   tf_segments_probe [sieve primes (1000000)] [launches per case (20)] [segments]
 *
 * SEGMENTS (default 506, a sub-launch of 2^27) sets the variants' launch
 * and replaces the size sweep: the ctest tf_segments_probe runs a small
 * case on PoCL, so a change to tf.cl that breaks the variants' text edits
 * (or their survivors) fails there. Exits 77 without an OpenCL device. */
#include "backend-opencl/ocl_api.h"
#include "backend-opencl/ocl_program.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/tf_tables.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P 66362159u
#define SEG LODE_TF_OCL_SEG_BITS
#define LOCAL LODE_TF_OCL_SIEVE_LOCAL
#define AREA_WORDS (2u + LODE_TF_FOUND_CAP)
#define TRACE_WORDS 8u /* per work-group: smid, 5 times, spare */
#define PHASES 4
#define MAX_SEGMENTS 1024u
#define SCRATCH_BYTES (256u << 20)

static cl_context ctx;
static cl_command_queue queue;
static cl_device_id dev;
static const char *options;

/* p, or exit: a measuring tool has nothing to fall back to. */
static void *must(void *p)
{
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* A copy of src with the first `anchor` replaced by `with`; exits when the
 * anchor is missing (tf.cl changed: the probe must follow it). */
static char *edit(char *src, const char *anchor, const char *with)
{
    char *at = strstr(src, anchor);
    if (at == NULL) {
        fprintf(stderr, "anchor not found in tf.cl: %.60s\n", anchor);
        exit(1);
    }
    const size_t head = (size_t)(at - src), alen = strlen(anchor), wlen = strlen(with);
    char *out = must(malloc(strlen(src) - alen + wlen + 1));
    memcpy(out, src, head);
    memcpy(out + head, with, wlen);
    strcpy(out + head + wlen, at + alen);
    free(src);
    return out;
}

static cl_program build(const char *src)
{
    cl_int err;
    cl_program prog = ocl.clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (prog == NULL || ocl.clBuildProgram(prog, 1, &dev, options, NULL, NULL) != CL_SUCCESS) {
        static char log[1 << 16];
        if (prog != NULL)
            ocl.clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(1);
    }
    return prog;
}

static cl_kernel kernel(cl_program prog, const char *name)
{
    cl_int err;
    cl_kernel k = ocl.clCreateKernel(prog, name, &err);
    if (k == NULL) {
        fprintf(stderr, "no kernel %s (%d)\n", name, (int)err);
        exit(1);
    }
    return k;
}

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        cl_int e_ = (call);                                                                                            \
        if (e_ != CL_SUCCESS) {                                                                                        \
            fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, (int)e_);                            \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)
#define ARG(k, i, v) CHECK(ocl.clSetKernelArg((k), (i), sizeof(v), &(v)))

static double event_ms(cl_event ev)
{
    cl_ulong a = 0, b = 0;
    CHECK(ocl.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL));
    CHECK(ocl.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL));
    return (double)(b - a) * 1e-6;
}

/* The shared state of every case: tables, a lane buffer sized for the
 * largest launch, the results area and the trace. */
static struct {
    cl_mem tables, lane, results, trace, scratch;
    cl_kernel fill_scratch; /* tf_fill over scratch: evicts the L2 */
    cl_uint stride, n_small, n_all, bits_at, cand_at;
} g;

/* Mean milliseconds of tf_segments over `launches` launches of `segments`
 * segments, each after a tf_prepare of its own start (prep from the
 * shipped program: the variants differ only in tf_segments); cold: the L2
 * evicted between the two. */
static double time_segments(cl_kernel prep, cl_kernel seg, cl_uint segments, int launches, int traced, int cold,
                            cl_uint *survivors)
{
    const cl_uint count = segments * SEG, class_index = 0, area = 0;
    ARG(prep, 0, g.tables);
    ARG(prep, 1, g.stride);
    ARG(prep, 2, g.n_small);
    ARG(prep, 3, g.n_all);
    ARG(prep, 4, class_index);
    ARG(prep, 6, count);
    ARG(prep, 7, g.lane);
    ARG(prep, 8, g.bits_at);
    ARG(prep, 9, g.results);
    ARG(prep, 10, area);
    ARG(seg, 0, g.tables);
    ARG(seg, 1, g.stride);
    ARG(seg, 2, g.n_small);
    ARG(seg, 3, count);
    ARG(seg, 4, g.lane);
    ARG(seg, 5, g.bits_at);
    ARG(seg, 6, g.cand_at);
    ARG(seg, 7, g.results);
    ARG(seg, 8, area);
    if (traced)
        ARG(seg, 9, g.trace);
    double total = 0;
    for (int i = 0; i <= launches; i++) { /* launch 0 warms up */
        const cl_ulong n0 = (cl_ulong)(i + 1) * 977 * SEG;
        ARG(prep, 5, n0);
        size_t pl = 128, pg = 128u * 1024u, sl = LOCAL, sg = (size_t)segments * LOCAL;
        cl_event ev;
        CHECK(ocl.clEnqueueNDRangeKernel(queue, prep, 1, NULL, &pg, &pl, 0, NULL, NULL));
        if (cold) {
            size_t fl = 256, fg = SCRATCH_BYTES / 4;
            CHECK(ocl.clEnqueueNDRangeKernel(queue, g.fill_scratch, 1, NULL, &fg, &fl, 0, NULL, NULL));
        }
        CHECK(ocl.clEnqueueNDRangeKernel(queue, seg, 1, NULL, &sg, &sl, 0, NULL, &ev));
        CHECK(ocl.clFinish(queue));
        if (i > 0)
            total += event_ms(ev);
        ocl.clReleaseEvent(ev);
    }
    CHECK(ocl.clEnqueueReadBuffer(queue, g.results, CL_TRUE, 0, sizeof *survivors, survivors, 0, NULL, NULL));
    return total / launches;
}

/* The traced build: a trace argument, and five time stamps per work-group
 * taken by item 0 (all but the first just after a barrier, so they mark the
 * whole work-group's phase end): start, pattern primes done, middle primes
 * done, survivors counted (the global bits ANDed, the prefix sum and the
 * work-group's place in the list), survivors written. */
static char *traced_source(const char *shipped)
{
    /* Stamp k of this work-group, by item 0 (inline PTX: NVIDIA only). */
    static const char stamp[] =
        "#define TRACE_STAMP(k) if (get_local_id(0) == 0) { ulong ts_;"
        " asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(ts_)); trace[get_group_id(0) * 8 + (k)] = ts_; }\n";
    char *s = must(malloc(sizeof stamp + strlen(shipped)));
    strcpy(s, stamp);
    strcat(s, shipped);
    s = edit(s, "uint bits_at, uint cand_at, __global uint *results, uint area)\n{",
             "uint bits_at, uint cand_at, __global uint *results, uint area, __global ulong *trace)\n{");
    s = edit(s, "    uint w[WORDS_PER_ITEM];",
             "    if (t == 0) { uint sm_id; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(sm_id)); trace[b * 8] = sm_id; }\n"
             "    TRACE_STAMP(1);\n    uint w[WORDS_PER_ITEM];");
    s = edit(s, "    /* Middle primes, an item per prime", "    TRACE_STAMP(2);\n    /* Middle primes, an item per prime");
    s = edit(s, "    /* Survivors: words t, t + L", "    TRACE_STAMP(3);\n    /* Survivors: words t, t + L");
    s = edit(s, "base = atomic_add(cand_count, sums[t]);\n    barrier(CLK_LOCAL_MEM_FENCE);\n",
             "base = atomic_add(cand_count, sums[t]);\n    barrier(CLK_LOCAL_MEM_FENCE);\n    TRACE_STAMP(4);\n");
    s = edit(s, "segment_write_candidates(cand, base, sums, sm, t, n, seg0);\n}",
             "segment_write_candidates(cand, base, sums, sm, t, n, seg0);\n"
             "    barrier(CLK_LOCAL_MEM_FENCE);\n    TRACE_STAMP(5);\n}");
    return s;
}

/* x^e mod m (m < 2^32). */
static uint64_t pow_mod(uint64_t x, uint64_t e, uint64_t m)
{
    uint64_t r = 1;
    for (x %= m; e != 0; e >>= 1, x = x * x % m)
        if (e & 1)
            r = r * x % m;
    return r;
}

/* The survivors of class 0 over [n0, n0 + count), counted on the CPU from
 * the definition, independent of the tables and kernels: q(n) = 2 p 4620 n
 * + 1, and sieve prime r divides it exactly when n = -(2 p 4620)^-1 mod r
 * (the inverse by Fermat). */
static uint64_t cpu_survivors(const uint32_t *primes, const tf_sieve_plan *plan, uint64_t n0, uint32_t count)
{
    uint8_t *hit = calloc(count, 1);
    if (hit == NULL)
        return UINT64_MAX;
    for (unsigned i = 0; i < plan->count; i++) {
        const uint64_t r = primes[i < plan->skip ? i : i + 1];
        const uint64_t root = (r - pow_mod(2ull * P % r * 4620 % r, r - 2, r)) % r;
        for (uint64_t o = (root + r - n0 % r) % r; o < count; o += r)
            hit[o] = 1;
    }
    uint64_t n = 0;
    for (uint32_t o = 0; o < count; o++)
        n += !hit[o];
    free(hit);
    return n;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Work-groups resident per SM (the most whose [start, end) overlap), and
 * each phase's mean share. */
static void analyse_trace(cl_uint segments)
{
    uint64_t *t = must(malloc((size_t)segments * TRACE_WORDS * sizeof *t));
    CHECK(ocl.clEnqueueReadBuffer(queue, g.trace, CL_TRUE, 0, (size_t)segments * TRACE_WORDS * sizeof *t, t, 0, NULL,
                                  NULL));
    uint64_t t0 = UINT64_MAX, t1 = 0;
    double phase[PHASES] = {0}, dur_min = 1e30, dur_max = 0, dur_sum = 0;
    unsigned sms = 0, max_groups = 0, max_resident = 0;
    for (cl_uint b = 0; b < segments; b++) {
        const uint64_t *r = t + (size_t)b * TRACE_WORDS;
        t0 = r[1] < t0 ? r[1] : t0;
        t1 = r[PHASES + 1] > t1 ? r[PHASES + 1] : t1;
        for (int k = 0; k < PHASES; k++)
            phase[k] += (double)(r[k + 2] - r[k + 1]);
        const double d = (double)(r[PHASES + 1] - r[1]);
        dur_sum += d;
        dur_min = d < dur_min ? d : dur_min;
        dur_max = d > dur_max ? d : dur_max;
    }
    /* Per SM: the groups on it, and the most running at once (a sweep over
     * starts, +1, and ends, -1; an end sorts before a start at the same time). */
    uint64_t *ev = must(malloc((size_t)segments * 2 * sizeof *ev));
    double resident_sum = 0;
    for (unsigned sm = 0; sm < 1024; sm++) {
        unsigned n = 0;
        for (cl_uint b = 0; b < segments; b++)
            if (t[(size_t)b * TRACE_WORDS] == sm) {
                ev[n++] = t[(size_t)b * TRACE_WORDS + 1] << 1 | 1;
                ev[n++] = t[(size_t)b * TRACE_WORDS + PHASES + 1] << 1;
            }
        if (n == 0)
            continue;
        sms++;
        max_groups = n / 2 > max_groups ? n / 2 : max_groups;
        qsort(ev, n, sizeof *ev, cmp_u64);
        unsigned now = 0, most = 0;
        for (unsigned i = 0; i < n; i++) {
            now = (ev[i] & 1) ? now + 1 : now - 1;
            most = now > most ? now : most;
        }
        max_resident = most > max_resident ? most : max_resident;
        resident_sum += most;
    }
    const double all = phase[0] + phase[1] + phase[2] + phase[3];
    printf("  trace, %u work-groups: %u SMs, at most %u work-groups on one SM, "
           "at most %u resident at once "
           "(mean over SMs %.2f)\n",
           segments, sms, max_groups, max_resident, resident_sum / (sms ? sms : 1));
    printf("  kernel span %.1f us; work-group time min %.1f mean %.1f max %.1f "
           "us; phases: pattern primes %.1f%%, "
           "middle primes %.1f%%, survivors counted %.1f%%, written %.1f%%\n",
           (double)(t1 - t0) * 1e-3, dur_min * 1e-3, dur_sum / segments * 1e-3, dur_max * 1e-3, 100 * phase[0] / all,
           100 * phase[1] / all, 100 * phase[2] / all, 100 * phase[3] / all);
    free(ev);
    free(t);
}

int main(int argc, char **argv)
{
    const unsigned want = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000000u;
    const int launches = argc > 2 ? atoi(argv[2]) : 20;
    const cl_uint probe_segments = argc > 3 ? (cl_uint)strtoul(argv[3], NULL, 10) : 506;
    if (want < 100 || launches < 1 || probe_segments < 1 || probe_segments > MAX_SEGMENTS) {
        fprintf(stderr, "usage: tf_segments_probe [sieve primes >= 100] [launches >= 1] [segments 1..%u]\n",
                MAX_SEGMENTS);
        return 2;
    }
    char why[256];
    if (ocl_api_load(why, sizeof why) != 0) {
        fprintf(stderr, "no OpenCL: %s\n", why);
        return 77;
    }
    cl_platform_id plat;
    if (ocl.clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
        ocl.clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        fprintf(stderr, "no OpenCL device\n");
        return 77;
    }
    char dname[256] = "", ext[8192] = "";
    cl_uint cus = 0;
    ocl.clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
    ocl.clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
    ocl.clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
    const int nv = strstr(ext, "cl_nv_compiler_options") != NULL;
    /* The shipped options (ocl_tf.c). */
    options = nv ? "-cl-std=CL1.2 -D LODE_NV_PTX=1 -cl-nv-maxrregcount=48" : "-cl-std=CL1.2";
    printf("device: %s, %u compute units; options %s\n", dname, cus, options);
    cl_int err;
    ctx = ocl.clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    queue = ctx ? ocl.clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err) : NULL;
    if (queue == NULL) {
        fprintf(stderr, "no queue (%d)\n", (int)err);
        return 1;
    }
    cl_program shipped = build(lode_ocl_src_tf);

    /* Tables and the lane buffer, laid out as ocl_tf.c lays them. */
    const uint32_t *primes = tf_sieve_primes(want);
    const tf_sieve_plan plan = tf_sieve_plan_of(primes, want, P, SEG);
    g.stride = want;
    g.n_small = plan.n_small;
    g.n_all = plan.count;
    g.bits_at = want;
    g.cand_at = g.bits_at + MAX_SEGMENTS * SEG / 32;
    g.tables = ocl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, LODE_TF_TABLES * (size_t)want * 4, NULL, &err);
    g.lane =
        ocl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, ((size_t)g.cand_at + (size_t)MAX_SEGMENTS * SEG) * 4, NULL, &err);
    g.results = ocl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, AREA_WORDS * 4, NULL, &err);
    g.trace = ocl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)MAX_SEGMENTS * TRACE_WORDS * 8, NULL, &err);
    cl_mem primes_dev =
        ocl.clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)want * 4, (void *)primes, &err);
    if (g.tables == NULL || g.lane == NULL || g.results == NULL || g.trace == NULL || primes_dev == NULL) {
        fprintf(stderr, "out of device memory\n");
        return 1;
    }
    cl_kernel tables = kernel(shipped, "tf_tables"), fill = kernel(shipped, "tf_fill");
    g.scratch = ocl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, SCRATCH_BYTES, NULL, &err);
    g.fill_scratch = kernel(shipped, "tf_fill");
    if (g.scratch == NULL) {
        fprintf(stderr, "out of device memory\n");
        return 1;
    }
    CHECK(ocl.clSetKernelArg(g.fill_scratch, 0, sizeof(cl_mem), &g.scratch));
    const cl_uint scratch_value = 1;
    ARG(g.fill_scratch, 1, scratch_value);
    const cl_uint count = plan.count, skip = plan.skip, p = P, seg = SEG, ones = 0xFFFFFFFFu;
    ARG(tables, 0, primes_dev);
    ARG(tables, 1, count);
    ARG(tables, 2, skip);
    ARG(tables, 3, p);
    ARG(tables, 4, seg);
    ARG(tables, 5, g.tables);
    ARG(tables, 6, g.stride);
    size_t tl = 256, tg = ((size_t)count + 255) / 256 * 256, fg = MAX_SEGMENTS * SEG / 32, fl = 256;
    CHECK(ocl.clEnqueueNDRangeKernel(queue, tables, 1, NULL, &tg, &tl, 0, NULL, NULL));
    /* The sieve bits start all ones (tf_segments leaves them so). */
    CHECK(ocl.clSetKernelArg(fill, 0, sizeof(cl_mem), &g.lane));
    ARG(fill, 1, ones);
    CHECK(ocl.clEnqueueNDRangeKernel(queue, fill, 1, NULL, &fg, &fl, 0, NULL, NULL));
    size_t off = g.bits_at;
    CHECK(ocl.clEnqueueNDRangeKernel(queue, fill, 1, &off, &fg, &fl, 0, NULL, NULL));
    CHECK(ocl.clFinish(queue));
    printf("sieve primes %u (usable %u), middle primes below 2^%u: %u; %d "
           "launches a case\n",
           want, g.n_all, (unsigned)__builtin_ctz(SEG), g.n_small, launches);

    cl_kernel prep = kernel(shipped, "tf_prepare"), seg_shipped = kernel(shipped, "tf_segments");
    cl_uint survivors = 0;
    printf("\n%-34s %9s %10s %12s %11s\n", "case", "segments", "ms/launch", "ms per 2^28", "survivors");
    const cl_uint sweep[] = {cus, 2 * cus, 4 * cus, 506, 1024};
    const cl_uint *sizes = argc > 3 ? &probe_segments : sweep;
    for (size_t i = 0; i < (argc > 3 ? 1 : sizeof sweep / sizeof *sweep); i++) {
        if (sizes[i] > MAX_SEGMENTS)
            continue;
        const double ms = time_segments(prep, seg_shipped, sizes[i], launches, 0, 0, &survivors);
        printf("%-34s %9u %10.4f %12.4f %11u\n", "shipped", sizes[i], ms, ms * (1u << 28) / ((double)sizes[i] * SEG),
               survivors);
    }

    /* Variants of the source, each a set of edits of tf_segments (the rest
     * as shipped), timed with L2 warm (the prepare just before) and cold (a
     * 256 MiB write between, as in lode, where the exponentiation runs
     * between a sub-launch's preparation and its segments). */
    enum { VOLATILE, PATTERN_ROLLED, AND_ROLLED, PER_ITEM, NC, MOD, EDITS };
    static const struct {
        const char *anchor, *with;
    } edits[EDITS] = {
        [VOLATILE] = {"    __local uint sm[SEG_WORDS];", "    __local volatile uint sm[SEG_WORDS];"},
        /* As before commit (this probe's): the pattern primes read from the
         * table in a rolled loop, the survivors' AND loop rolled, and the
         * local bitmap volatile. */
        [PATTERN_ROLLED] = {"#pragma unroll\n    for (uint i = 0; i < "
                            "TF_PATTERN_PRIMES; i++) {\n"
                            "        const uint r = tf_pattern_prime(i);",
                            "    for (uint i = 0; i < TF_PATTERN_PRIMES; i++) "
                            "{\n        const uint r = prime[i];"},
        [AND_ROLLED] = {"    uint n = 0;\n#pragma unroll\n    for (uint j = 0; j < "
                        "WORDS_PER_ITEM; j++) {",
                        "    uint n = 0;\n    for (uint j = 0; j < WORDS_PER_ITEM; j++) {"},
        [PER_ITEM] = {"_NV_PTX\n    /* A warp's survivors", "_NV_PTX_NOT_DEFINED\n    /* A warp's survivors"},
        /* The middle primes' tables through the read-only path (CUDA's
         * LDG.E.CONSTANT), by inline PTX. */
        [NC] = {"        sp.r = prime[i];\n        sp.smod = smod[i];\n        "
                "sp.minv = minv[i];\n"
                "        sp.start = start[i];",
                "        asm(\"ld.global.nc.u32 %0, [%1];\" : \"=r\"(sp.r) : "
                "\"l\"(prime + i));\n"
                "        asm(\"ld.global.nc.u32 %0, [%1];\" : \"=r\"(sp.smod) : "
                "\"l\"(smod + i));\n"
                "        asm(\"ld.global.nc.u32 %0, [%1];\" : \"=r\"(sp.minv) : "
                "\"l\"(minv + i));\n"
                "        asm(\"ld.global.nc.u32 %0, [%1];\" : \"=r\"(sp.start) : "
                "\"l\"(start + i));"},
        /* Half the bytes a prime: the segment's offset mod r by the hardware
         * remainder instead of the smod and minv tables. */
        [MOD] = {"        sp.smod = smod[i];\n        sp.minv = minv[i];\n", ""},
    };
    /* (x, from the smod table, is left unused.) */
    static const char *const mod_rem[2] = {"        uint rem = x - mul_hi(x, cur.minv) * r;\n"
                                           "        rem = rem >= r ? rem - r : rem;",
                                           "        const uint rem = seg0 % r;"};
    static const struct {
        const char *name;
        unsigned edits; /* bits of the enum above */
        int nv_only;
    } variants[] = {
        {"shipped", 0, 0},
        {"rolled, volatile (before)", 1u << PATTERN_ROLLED | 1u << AND_ROLLED | 1u << VOLATILE, 0},
        {"unrolled, volatile", 1u << VOLATILE, 0},
        {"pattern primes rolled", 1u << PATTERN_ROLLED, 0},
        {"survivors' AND rolled", 1u << AND_ROLLED, 0},
        {"survivors written per item", 1u << PER_ITEM, 0},
        {"tables read-only path", 1u << NC, 1},
        {"offset mod r by remainder", 1u << MOD, 0},
    };
    printf("\n%-34s %10s %10s %11s   (%u segments, ms per launch)\n", "variant", "L2 warm", "L2 cold", "survivors",
           probe_segments);
    cl_uint shipped_survivors = 0;
    int differences = 0;
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        if (variants[v].nv_only && !nv)
            continue;
        char *src = must(strdup(lode_ocl_src_tf));
        for (int e = 0; e < EDITS; e++)
            if (variants[v].edits & 1u << e) {
                if (e == MOD && (variants[v].edits & 1u << NC))
                    continue; /* not combined */
                src = edit(src, edits[e].anchor, edits[e].with);
                if (e == MOD)
                    src = edit(src, mod_rem[0], mod_rem[1]);
            }
        cl_program prog = build(src);
        cl_kernel k = kernel(prog, "tf_segments");
        cl_uint warm_survivors = 0;
        const double warm = time_segments(prep, k, probe_segments, launches, 0, 0, &warm_survivors);
        const double cold = time_segments(prep, k, probe_segments, launches, 0, 1, &survivors);
        if (v == 0)
            shipped_survivors = survivors;
        const bool same = warm_survivors == survivors && survivors == shipped_survivors;
        printf("%-34s %10.4f %10.4f %11u%s\n", variants[v].name, warm, cold, survivors,
               same ? "" : " (survivors differ: a broken variant)");
        differences += !same;
        ocl.clReleaseKernel(k);
        ocl.clReleaseProgram(prog);
        free(src);
    }

    /* The last launch of each case starts at (launches + 1) * 977 segments. */
    const uint64_t expect = cpu_survivors(primes, &plan, (uint64_t)(launches + 1) * 977 * SEG, probe_segments * SEG);
    printf("CPU reference: %llu survivors%s\n", (unsigned long long)expect,
           expect == shipped_survivors ? ", the same" : ": the shipped kernel DIFFERS");
    differences += expect != shipped_survivors;
    /* The traced source is made everywhere (its edits must still apply to
     * tf.cl) and built only where inline PTX compiles. */
    char *src = traced_source(lode_ocl_src_tf);
    if (!nv) {
        printf("\n(no trace: the traced build needs NVIDIA's inline PTX)\n");
        free(src);
        return differences != 0;
    }
    cl_program traced = build(src);
    cl_kernel k = kernel(traced, "tf_segments");
    const cl_uint traced_sizes[] = {cus, 506, 1024};
    for (size_t i = 0; i < sizeof traced_sizes / sizeof *traced_sizes; i++) {
        const double ms = time_segments(prep, k, traced_sizes[i], launches, 1, 0, &survivors);
        printf("\n%-34s %9u %10.4f %12.4f %11u\n", "traced", traced_sizes[i], ms,
               ms * (1u << 28) / ((double)traced_sizes[i] * SEG), survivors);
        analyse_trace(traced_sizes[i]);
    }
    free(src);
    return differences != 0;
}
