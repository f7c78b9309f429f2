/* SHA-256d over rolled versions that share the second block's schedule.
 *
 * Not part of lode: a measuring tool for docs/PERFORMANCE.md (issue #17).
 * Headers that differ only in their version bits (BIP 310) have different
 * midstates but the same second block (merkle tail, time, bits, nonce), so
 * the first hash's message schedule W16..W63 is the same for all of them.
 * Computed once per nonce, it serves NV versions whose states advance in
 * lockstep (the GPU form of AsicBoost); the outer hash stays per version.
 *
 * The probe runs the shipped kernel (sha256d_kernel.cu, additions on the
 * FMA pipe) and the NV = 2, 4, 8 kernels on one random header:
 * - check: over 2^28 nonces at a loose target, every candidate of version
 *   k must be the shipped kernel's candidate on header k (the same set)
 *   and meet the target by the host's exact digest;
 * - rate: hashes (nonce-version pairs) per second over whole 2^32 ranges.
 *
 * Built as backend-cuda/sha256d_vroll_probe with the CUDA backend.
 * Run: sha256d_vroll_probe [seconds per kernel]   (0: one launch each, for ncu)
 */
#include "backend-cuda/sha256d_kernel.cu"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sha256d_vroll_host.c */
extern "C" void vroll_host_params(const uint8_t header[80], uint32_t target_top,
                                  uint32_t params[LODE_SHA256D_PARAM_WORDS]);
extern "C" uint32_t vroll_host_top(const uint8_t header[80], uint32_t nonce);

#define MAX_NV 8
#define CAP 4096u
#define TPB 256u
#define NONCES_PER_THREAD 64u

namespace {

template <int NV> struct vroll_params {
    cuda_sha256d_params v[NV];
};

/* Candidate list: [0] the count, then (nonce, version index) pairs. */
__device__ __forceinline__ void report(uint32_t *out, uint32_t nonce, uint32_t k)
{
    const uint32_t i = atomicAdd(&out[0], 1u);
    if (i < CAP) {
        out[1 + 2 * i] = nonce;
        out[2 + 2 * i] = k;
    }
}

template <int NV>
__global__ void __launch_bounds__(TPB) vroll_search(const vroll_params<NV> p, uint32_t start, uint32_t count,
                                                    uint32_t *out)
{
    const uint32_t stride = gridDim.x * blockDim.x;
    const uint32_t one = p.v[0].w[LODE_SHA256D_P_ONE];
#pragma unroll 1
    for (uint32_t off = blockIdx.x * blockDim.x + threadIdx.x; off < count; off += stride) {
        const uint32_t nonce = start + off;
        const uint32_t w3 = lode_bswap32(nonce);
        uint32_t v[NV][8], w[64];
#pragma unroll
        for (int k = 0; k < NV; k++)
            inner_head<true>(p.v[k], w3, v[k], one);
        inner_schedule_head<true>(p.v[0], w3, w, one); /* the same for every version */
#pragma unroll
        for (int t = 16; t < 64; t++) {
            if (t >= 33)
                w[t] = sched<true>(w[t - 2], add<true>(w[t - 7], w[t - 16], one), w[t - 15], one);
#pragma unroll
            for (int k = 0; k < NV; k++)
                round_w<true>(v[k], t, w[t], one);
        }
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (lode_bswap32(outer_h7<true>(p.v[k], v[k], one)) <= p.v[0].w[LODE_SHA256D_P_TARGET_TOP])
                report(out, nonce, (uint32_t)k);
    }
}

struct job_set {
    uint8_t header[MAX_NV][80];
    uint32_t target_top;
    cuda_sha256d_params params[MAX_NV];
};

/* Version k: BIP 320's general-purpose bits 13.. set to k. */
void make_jobs(job_set *s, const uint8_t base[80], uint32_t target_top)
{
    for (int k = 0; k < MAX_NV; k++) {
        memcpy(s->header[k], base, 80);
        const uint32_t version = 0x20000000u | (uint32_t)k << 13;
        for (int i = 0; i < 4; i++)
            s->header[k][i] = (uint8_t)(version >> (8 * i));
        vroll_host_params(s->header[k], target_top, s->params[k].w);
    }
    s->target_top = target_top;
}

cuda_hits *d_hits; /* the shipped launch's hit buffer */

/* nv 0: the shipped launch (lode's default geometry) on header 0; nv > 0:
 * the NV-version kernel into the candidate list d_out. */
int launch(int nv, const job_set *s, uint32_t start, uint32_t count, uint32_t *d_out)
{
    const uint32_t blocks = (count / NONCES_PER_THREAD + TPB - 1) / TPB;
    switch (nv) {
    case 0:
        return cuda_sha256d_launch(&s->params[0], start, count, 256, 32, 1, d_hits, 0) == cudaSuccess ? 0 : -1;
#define CASE(N)                                                                                    \
    case N: {                                                                                      \
        vroll_params<N> p;                                                                         \
        memcpy(p.v, s->params, sizeof p.v);                                                        \
        vroll_search<N><<<blocks, TPB>>>(p, start, count, d_out);                                  \
        break;                                                                                     \
    }
        CASE(2)
        CASE(4)
        CASE(8)
#undef CASE
    default:
        return -1;
    }
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

int sort_pairs(const void *a, const void *b)
{
    const uint32_t *x = (const uint32_t *)a, *y = (const uint32_t *)b;
    if (x[1] != y[1])
        return x[1] < y[1] ? -1 : 1;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Candidates of one NV-version launch, sorted by (version, nonce); -1 on
 * overflow. */
long candidates(int nv, const job_set *s, uint32_t start, uint32_t count, uint32_t *d_out, uint32_t *h_out)
{
    if (cudaMemset(d_out, 0, 4) != cudaSuccess || launch(nv, s, start, count, d_out) != 0 ||
        cudaMemcpy(h_out, d_out, (1 + 2 * CAP) * 4, cudaMemcpyDeviceToHost) != cudaSuccess || h_out[0] > CAP)
        return -1;
    qsort(h_out + 1, h_out[0], 8, sort_pairs);
    return h_out[0];
}

/* The shipped launch's candidates on header k, appended to list as (nonce,
 * k) pairs in the order they came (the caller sorts); -1 on overflow. */
long shipped_candidates(const job_set *s, int k, uint32_t start, uint32_t count, uint32_t *list)
{
    static cuda_hits h;
    if (cudaMemset(d_hits, 0, 4) != cudaSuccess ||
        cuda_sha256d_launch(&s->params[k], start, count, 256, 32, 1, d_hits, 0) != cudaSuccess ||
        cudaMemcpy(&h, d_hits, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess || h.count > LODE_HITS_CAP ||
        list[0] + h.count > CAP)
        return -1;
    for (uint32_t i = 0; i < h.count; i++) {
        list[1 + 2 * (list[0] + i)] = h.nonce[i];
        list[2 + 2 * (list[0] + i)] = (uint32_t)k;
    }
    list[0] += h.count;
    return h.count;
}

/* Every candidate of each NV kernel is the shipped kernel's on header k,
 * and meets the target by the host's exact digest. */
bool check(int nv, const job_set *s, uint32_t *d_out)
{
    static uint32_t got[1 + 2 * CAP], want[1 + 2 * CAP];
    const uint32_t start = 0xF0000000u, count = 1u << 28;
    long n = candidates(nv, s, start, count, d_out, got);
    want[0] = 0;
    for (int k = 0; k < nv && n >= 0; k++)
        if (shipped_candidates(s, k, start, count, want) < 0)
            return false;
    qsort(want + 1, want[0], 8, sort_pairs);
    if (n < 0 || (uint32_t)n != want[0] || memcmp(got + 1, want + 1, (size_t)n * 8) != 0) {
        printf("NV=%d: %ld candidates, the shipped kernel %u over the %d headers\n", nv, n, want[0], nv);
        return false;
    }
    for (long i = 0; i < n; i++) {
        const uint32_t nonce = got[1 + 2 * i], k = got[2 + 2 * i];
        if (vroll_host_top(s->header[k], nonce) > s->target_top) {
            printf("NV=%d: version %u nonce %08x misses the target on the host\n", nv, k, nonce);
            return false;
        }
    }
    printf("NV=%d: %ld candidates over 2^28 nonces x %d versions, the same as the shipped kernel's, all exact\n",
           nv, n, nv);
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    const double seconds = argc > 1 ? atof(argv[1]) : 5;
    setvbuf(stdout, NULL, _IONBF, 0); /* every line, even if the run is cut short */
    uint8_t base[80];
    srand(12345);
    for (int i = 0; i < 80; i++)
        base[i] = (uint8_t)rand();
    uint32_t *d_out;
    if (cudaMalloc(&d_out, (1 + 2 * CAP) * 4) != cudaSuccess || cudaMalloc(&d_hits, sizeof *d_hits) != cudaSuccess ||
        cudaMemset(d_hits, 0, sizeof *d_hits) != cudaSuccess) {
        fprintf(stderr, "no CUDA device: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 77;
    }
    static job_set s;
    /* A target of 2^-24 per hash: about 16 candidates per version. */
    make_jobs(&s, base, 0x000000ffu);
    bool ok = true;
    for (int nv = 2; nv <= MAX_NV; nv *= 2)
        ok = check(nv, &s, d_out) && ok;
    make_jobs(&s, base, 0); /* rates: next to no candidates */
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    printf("%-8s %12s %10s\n", "kernel", "hashes", "GH/s");
    const int kernels[] = {0, 2, 4, 8};
    for (int nv : kernels) {
        double elapsed = 0, hashes = 0;
        uint32_t start = 0;
        do {
            cudaEventRecord(a);
            /* 2^31 nonces a launch, as lode's own (SHA256D_MAX_LAUNCH): a
             * grid-stride loop's offset must not wrap past 2^32. */
            if (launch(nv, &s, start, 1u << 31, d_out) != 0) {
                fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
                return 1;
            }
            cudaEventRecord(b);
            float ms = 0;
            if (cudaEventSynchronize(b) != cudaSuccess || cudaEventElapsedTime(&ms, a, b) != cudaSuccess ||
                !(ms > 0)) {
                fprintf(stderr, "kernel %d failed: %s\n", nv, cudaGetErrorString(cudaGetLastError()));
                return 1;
            }
            elapsed += ms / 1e3;
            hashes += 2147483648.0 * (nv > 0 ? nv : 1);
            start += 1u << 31;
        } while (elapsed < seconds);
        printf("%-8s %12.4g %10.3f\n", nv > 0 ? (nv == 2 ? "NV=2" : nv == 4 ? "NV=4" : "NV=8") : "shipped", hashes,
               hashes / elapsed / 1e9);
    }
    return ok ? 0 : 1;
}
