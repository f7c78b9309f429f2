/* What a multiply costs on each pipe, in time and energy: the limit on
 * moving trial factoring's products from the integer multiply (IMAD.WIDE,
 * the FMA pipe) to FP64 (DFMA).
 *
 * Not part of lode: a measuring tool for docs/PERFORMANCE.md. Every SM is
 * filled with threads that each run 8 independent dependent chains of one
 * instruction, for a few seconds per mode, and the tool prints the
 * instructions per second, the board power and energy per instruction
 * (NVML's energy counter), in all and above the sleeping board, and the
 * average SM clock:
 *
 *   spin        every SM resident, sleeping: the board at load clocks (run
 *               first: the other rows subtract its power)
 *   imad-wide   x = lo32(x) * m + x, 64-bit: one IMAD.WIDE.U32 (a 32x32
 *               product and its 64-bit addend, the exponentiation's step)
 *   dfma        d = d * m + c in FP64: one DFMA (53-bit products)
 *   ffma        the same in FP32: one FFMA
 *   imad+dfma   4 chains of each, interleaved: whether the two pipes issue
 *               side by side, and what the pair draws
 *
 * Each result is checked against the same chains run on the host for a few
 * threads, so the compiler cannot have dropped or merged the work.
 *
 * Built as backend-cuda/mul_energy_probe with the CUDA backend.
 * Run:   mul_energy_probe [seconds per mode [mode...]]
 */
#include "probe_nvml.h" /* beside this file */

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kSteps = 1u << 16; /* per chain a launch */
constexpr int kChains = 8;
constexpr uint32_t kMul = 0x9E3779B1u;
constexpr double kMulD = 0.99999988, kAddD = 1e-3;

enum kind { IMAD_WIDE, DFMA, FFMA, MIXED, SPIN };

/* x = lo32(x) * kMul + x; on the device one mad.wide.u32 (the compiler's
 * own choice for the C expression is a 64-bit multiply). */
__host__ __device__ inline uint64_t imad_step(uint64_t x)
{
#ifdef __CUDA_ARCH__
    uint64_t r;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"((uint32_t)x), "r"(kMul), "l"(x));
    return r;
#else
    return (uint64_t)(uint32_t)x * kMul + x;
#endif
}

/* One launch: kSteps steps of kChains chains a thread; the chains' final
 * values (xor-folded) into out[thread]. */
template <kind K>
__global__ void __launch_bounds__(kThreads) probe(uint64_t *out)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t fold = 0;
    if (K == IMAD_WIDE || K == MIXED) {
        constexpr int n = K == MIXED ? kChains / 2 : kChains;
        uint64_t x[n];
        for (int i = 0; i < n; i++)
            x[i] = t * 8u + i + 1;
        double d[kChains / 2];
        for (int i = 0; i < kChains / 2; i++)
            d[i] = 1.0 + (double)((t * 8u + i) & 1023u) * 0x1p-20;
#pragma unroll 16
        for (unsigned s = 0; s < kSteps; s++) {
#pragma unroll
            for (int i = 0; i < n; i++)
                x[i] = imad_step(x[i]);
            if (K == MIXED) {
#pragma unroll
                for (int i = 0; i < kChains / 2; i++)
                    d[i] = fma(d[i], kMulD, kAddD);
            }
        }
        for (int i = 0; i < n; i++)
            fold ^= x[i];
        if (K == MIXED)
            for (int i = 0; i < kChains / 2; i++)
                fold ^= (uint64_t)__double_as_longlong(d[i]);
    } else if (K == DFMA) {
        double d[kChains];
        for (int i = 0; i < kChains; i++)
            d[i] = 1.0 + (double)((t * 8u + i) & 1023u) * 0x1p-20;
#pragma unroll 16
        for (unsigned s = 0; s < kSteps; s++)
#pragma unroll
            for (int i = 0; i < kChains; i++)
                d[i] = fma(d[i], kMulD, kAddD);
        for (int i = 0; i < kChains; i++)
            fold ^= (uint64_t)__double_as_longlong(d[i]);
    } else if (K == FFMA) {
        float f[kChains];
        for (int i = 0; i < kChains; i++)
            f[i] = 1.0f + (float)((t * 8u + i) & 1023u) * 0x1p-12f; /* exact: no contraction changes it */
#pragma unroll 16
        for (unsigned s = 0; s < kSteps; s++)
#pragma unroll
            for (int i = 0; i < kChains; i++)
                f[i] = fmaf(f[i], (float)kMulD, (float)kAddD);
        for (int i = 0; i < kChains; i++)
            fold ^= __float_as_uint(f[i]);
    } else {
        for (unsigned s = 0; s < kSteps / 256; s++)
            __nanosleep(1000);
    }
    out[t] = fold;
}

/* The host's value of out[t] (spin has none to check). */
uint64_t expect(kind k, uint32_t t)
{
    uint64_t fold = 0;
    const int n = k == MIXED ? kChains / 2 : kChains;
    if (k == IMAD_WIDE || k == MIXED)
        for (int i = 0; i < n; i++) {
            uint64_t x = t * 8u + i + 1;
            for (unsigned s = 0; s < kSteps; s++)
                x = imad_step(x);
            fold ^= x;
        }
    if (k == DFMA || k == MIXED)
        for (int i = 0; i < (k == MIXED ? kChains / 2 : kChains); i++) {
            double d = 1.0 + (double)((t * 8u + i) & 1023u) * 0x1p-20;
            for (unsigned s = 0; s < kSteps; s++)
                d = __builtin_fma(d, kMulD, kAddD);
            uint64_t bits;
            memcpy(&bits, &d, sizeof bits);
            fold ^= bits;
        }
    if (k == FFMA)
        for (int i = 0; i < kChains; i++) {
            float f = 1.0f + (float)((t * 8u + i) & 1023u) * 0x1p-12f;
            for (unsigned s = 0; s < kSteps; s++)
                f = __builtin_fmaf(f, (float)kMulD, (float)kAddD);
            uint32_t bits;
            memcpy(&bits, &f, sizeof bits);
            fold ^= bits;
        }
    return fold;
}

using lode_probe::now_s;
using lode_probe::nvml;

struct mode {
    const char *name;
    kind k;
    void (*kernel)(uint64_t *);
};

/* Runs m for warm + seconds; prints its row, with the energy an
 * instruction above the sleeping board (*spin_watts, the spin mode's, set
 * when that mode runs: it runs first). Returns false when a checked result
 * differs from the host's. */
bool run_mode(const mode &m, nvml &nv, uint64_t *out, uint32_t grid, double seconds, double *spin_watts)
{
    const double warm = 3.0; /* let the power controller settle first */
    const double threads = (double)grid * kThreads, per_launch = threads * kSteps * kChains;
    const double t0 = now_s();
    double tw = 0, clock_sum = 0;
    unsigned long long e0 = 0, e1 = 0, timed = 0;
    unsigned clock_n = 0;
    for (bool timing = false;;) {
        m.kernel<<<grid, kThreads>>>(out);
        PROBE_CHECK(cudaGetLastError());
        PROBE_CHECK(cudaDeviceSynchronize());
        const double t = now_s();
        unsigned mhz;
        if (timing && nv.clock(nv.dev, 1 /* NVML_CLOCK_SM */, &mhz) == 0)
            clock_sum += mhz, clock_n++;
        if (timing)
            timed++;
        if (!timing && t - t0 >= warm) {
            timing = true, tw = t;
            nv.energy(nv.dev, &e0);
        } else if (timing && t - tw >= seconds) {
            nv.energy(nv.dev, &e1);
            const double dt = t - tw, rate = m.k == SPIN ? 0 : timed * per_launch / dt;
            const double watts = (e1 - e0) / 1e3 / dt;
            if (m.k == SPIN)
                *spin_watts = watts;
            const double pj = rate > 0 ? watts / rate * 1e12 : 0.0;
            const double above = rate > 0 && *spin_watts > 0 ? (watts - *spin_watts) / rate * 1e12 : 0.0;
            printf("%-10s %12.4g %8.1f %10.2f %10.2f %8.0f\n", m.name, rate, watts, pj, above,
                   clock_n ? clock_sum / clock_n : 0.0);
            break;
        }
    }
    if (m.k == SPIN)
        return true;
    uint64_t got[4];
    const uint32_t ts[4] = {0, 1, 777, (uint32_t)threads - 1};
    for (int i = 0; i < 4; i++) {
        PROBE_CHECK(cudaMemcpy(&got[i], out + ts[i], sizeof got[i], cudaMemcpyDeviceToHost));
        if (got[i] != expect(m.k, ts[i])) {
            printf("%-10s thread %u: %016llx, the host's %016llx\n", m.name, ts[i], (unsigned long long)got[i],
                   (unsigned long long)expect(m.k, ts[i]));
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    const double seconds = argc > 1 ? atof(argv[1]) : 8.0;
    nvml nv;
    if (!nv.open()) {
        fprintf(stderr, "NVML not available\n");
        return 1;
    }
    const mode modes[] = {
        {"spin", SPIN, probe<SPIN>}, {"imad-wide", IMAD_WIDE, probe<IMAD_WIDE>}, {"dfma", DFMA, probe<DFMA>},
        {"ffma", FFMA, probe<FFMA>}, {"imad+dfma", MIXED, probe<MIXED>},
    };
    int sms = 0, blocks = 0;
    PROBE_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    PROBE_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, probe<MIXED>, kThreads, 0));
    const uint32_t grid = (uint32_t)(blocks * sms);
    uint64_t *out;
    PROBE_CHECK(cudaMalloc(&out, (size_t)grid * kThreads * sizeof *out));
    printf("%u blocks of %u (%d per SM), %d chains a thread\n", grid, kThreads, blocks, kChains);
    printf("%-10s %12s %8s %10s %10s %8s\n", "mode", "instr/s", "W", "pJ/instr", "above spin", "SM MHz");
    int rc = 0;
    double spin_watts = 0;
    for (const mode &m : modes) {
        bool wanted = argc <= 2;
        for (int a = 2; a < argc; a++)
            wanted |= strcmp(argv[a], m.name) == 0;
        if (wanted && !run_mode(m, nv, out, grid, seconds, &spin_watts))
            rc = 1;
        sleep(1);
    }
    return rc;
}
