/* SHA-256d over rolled versions that share the second block's schedule.
 *
 * Not part of lode: a measuring tool for docs/PERFORMANCE.md (issue #17).
 * Headers that differ only in their version bits (BIP 310) have different
 * midstates but the same second block (merkle tail, time, bits, nonce), so
 * the first hash's message schedule W16..W63 is the same for all of them.
 * Computed once per nonce, it serves NV versions (the GPU form of
 * AsicBoost); the outer hash stays per version. Two shapes:
 * - lockstep (NV = 2, 4, 8): the NV states advance together, every round
 *   unrolled NV times;
 * - rolled (NV = 4, 8, 16): the schedule once into registers, then a
 *   rolled loop over the versions, the code of one; ROT 1 and 2 also move
 *   one or two rotations a round onto the FMA pipe (IMAD.HI + IMAD).
 *
 * The probe runs the shipped kernel (sha256d.cu, additions on the
 * FMA pipe) and each of those on one random header:
 * - check: over 2^28 nonces at a loose target, every candidate of version
 *   k must be the shipped kernel's candidate on header k (the same set)
 *   and meet the target by the host's exact digest;
 * - rate: hashes (nonce-version pairs) per second, 2^31 a launch, with the
 *   blocks an SM may hold capped at 1, 2, 4 or not (an occupancy sweep).
 * docs/PERFORMANCE.md has the results (2026-11-28).
 *
 * Built as backend-cuda/sha256d_vroll_probe with the CUDA backend.
 * Run: sha256d_vroll_probe [seconds per kernel]   (0: one launch each, for ncu)
 */
#include "backend-cuda/sha256d.cu"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sha256d_vroll_host.c */
extern "C" void vroll_host_params(const uint8_t header[80], uint32_t target_top,
                                  uint32_t params[LODE_SHA256D_PARAM_WORDS]);
extern "C" uint32_t vroll_host_top(const uint8_t header[80], uint32_t nonce);

#define MAX_NV 16
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
__global__ void __launch_bounds__(TPB)
vroll_search(const __grid_constant__ vroll_params<NV> p, uint32_t start, uint32_t count, uint32_t *out)
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
            sha256d_inner_head(p.v[k].w, w3, v[k], one, true);
        sha256d_inner_schedule_head(p.v[0].w, w3, w, one, true); /* the same for every version */
#pragma unroll
        for (int t = 16; t < 64; t++) {
            if (t >= 33)
                w[t] = sha256d_sched(w[t - 2], sha256d_add(w[t - 7], w[t - 16], one, true), w[t - 15], one, true);
#pragma unroll
            for (int k = 0; k < NV; k++)
                sha256d_round_w(v[k], t, w[t], one, true);
        }
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (lode_bswap32(sha256d_outer_h7(p.v[k].w, v[k], one, true)) <= p.v[0].w[LODE_SHA256D_P_TARGET_TOP])
                report(out, nonce, (uint32_t)k);
    }
}

/* The same NV-version search with the versions in a rolled loop: the
 * nonce's whole schedule W16..W63 is computed once into registers (48 of
 * them), then each version runs its rounds and outer hash from it. The
 * lockstep kernels above unroll NV copies of every round; their code
 * outgrows the instruction cache (ncu: stalls on "no instruction"). This
 * one's code is one version's. ROT moves rotations onto the FMA pipe in the
 * per-version rounds (the integer pipe's SHF work): 1 = Sigma1's rotr 6,
 * 2 = also Sigma0's rotr 2; rotr(x, n) = x * 2^(32-n) + hi(x * 2^(32-n)),
 * an IMAD.HI and an IMAD, with the power of two a run-time value the
 * compiler cannot turn back into shifts. */
__constant__ cuda_sha256d_params c_versions[MAX_NV];

__device__ __forceinline__ uint32_t rotr_fma(uint32_t x, uint32_t pow2) { return x * pow2 + __umulhi(x, pow2); }

template <int ROT>
__device__ __forceinline__ void round_rot(uint32_t (&v)[8], int t, uint32_t kw, uint32_t one, uint32_t c6, uint32_t c2)
{
    uint32_t &a = v[(0 - t) & 7], &b = v[(1 - t) & 7], &c = v[(2 - t) & 7], &d = v[(3 - t) & 7];
    uint32_t &e = v[(4 - t) & 7], &f = v[(5 - t) & 7], &g = v[(6 - t) & 7], &h = v[(7 - t) & 7];
    const uint32_t s1 = ROT >= 1 ? rotr_fma(e, c6) ^ lode_rotr32(e, 11) ^ lode_rotr32(e, 25) : sha256_bsig1(e);
    const uint32_t s0 = ROT >= 2 ? rotr_fma(a, c2) ^ lode_rotr32(a, 13) ^ lode_rotr32(a, 22) : sha256_bsig0(a);
    uint32_t t1 = sha256d_add(sha256d_add(sha256d_add(h, kw, one, true), sha256_ch(e, f, g), one, true), s1, one, true);
    d = sha256d_add(d, t1, one, true);
    h = sha256d_add(sha256d_add(t1, sha256_maj(a, b, c), one, true), s0, one, true);
}

template <int NV, int ROT>
__global__ void __launch_bounds__(TPB)
vroll_rolled(uint32_t start, uint32_t count, uint32_t one, uint32_t c6, uint32_t c2, uint32_t *out)
{
    const uint32_t stride = gridDim.x * blockDim.x;
#pragma unroll 1
    for (uint32_t off = blockIdx.x * blockDim.x + threadIdx.x; off < count; off += stride) {
        const uint32_t nonce = start + off;
        const uint32_t w3 = lode_bswap32(nonce);
        uint32_t w[64];
        sha256d_inner_schedule_head(c_versions[0].w, w3, w, one, true);
#pragma unroll
        for (int t = 33; t < 64; t++)
            w[t] = sha256d_sched(w[t - 2], sha256d_add(w[t - 7], w[t - 16], one, true), w[t - 15], one, true);
#pragma unroll
        for (int t = 16; t < 64; t++)
            w[t] += sha256_k[t]; /* K + W once for every version */
#pragma unroll 1
        for (int k = 0; k < NV; k++) {
            uint32_t v[8];
            sha256d_inner_head(c_versions[k].w, w3, v, one, true);
#pragma unroll
            for (int t = 16; t < 64; t++)
                round_rot<ROT>(v, t, w[t], one, c6, c2);
            if (lode_bswap32(sha256d_outer_h7(c_versions[k].w, v, one, true)) <=
                c_versions[0].w[LODE_SHA256D_P_TARGET_TOP])
                report(out, nonce, (uint32_t)k);
        }
    }
}

/* The shipped kernel held to 40 registers (six blocks of 256 an SM, 48
 * warps), as NVIDIA's OpenCL compiler builds the same source: does the
 * higher occupancy cost the rate? */
__global__ void __launch_bounds__(256, 6)
sha256d_search_40regs(const __grid_constant__ cuda_sha256d_params p, uint32_t start, uint32_t count, cuda_hits *hits)
{
    sha256d_scan(p.w, start, count, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x,
                 reinterpret_cast<u32 *>(hits), true);
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
    cudaMemcpyToSymbol(c_versions, s->params, sizeof s->params);
}

cuda_hits *d_hits; /* the shipped launch's hit buffer */

/* Kernel id (see versions_of) 0: the shipped launch (lode's default geometry)
 * on header 0; else the NV-version kernel into the candidate list d_out. smem >
 * 0 (dynamic shared memory the kernel never touches) caps the blocks an SM
 * holds: the occupancy sweep of the rate table. */
int launch(int id, const job_set *s, uint32_t start, uint32_t count, uint32_t *d_out, size_t smem = 0)
{
    const uint32_t blocks = (count / NONCES_PER_THREAD + TPB - 1) / TPB;
    switch (id) {
    case 0:
        if (smem == 0)
            return cuda_sha256d_launch(&s->params[0], start, count, 256, 32, 1, d_hits, 0) == cudaSuccess ? 0 : -1;
        sha256d_search<true><<<(count / 32 + 255) / 256, 256, smem>>>(s->params[0], start, count, d_hits);
        break;
    case 1:
        sha256d_search_40regs<<<(count / 32 + 255) / 256, 256, smem>>>(s->params[0], start, count, d_hits);
        break;
#define CASE(N)                                                                                                        \
    case N: {                                                                                                          \
        vroll_params<N> p;                                                                                             \
        memcpy(p.v, s->params, sizeof p.v);                                                                            \
        vroll_search<N><<<blocks, TPB, smem>>>(p, start, count, d_out);                                                \
        break;                                                                                                         \
    }
        CASE(2)
        CASE(4)
        CASE(8)
#undef CASE
#define RCASE(N, R)                                                                                                    \
    case 100 * (R + 1) + N:                                                                                            \
        vroll_rolled<N, R><<<blocks, TPB, smem>>>(start, count, 1, 1u << 26, 1u << 30, d_out);                         \
        break;
        RCASE(4, 0)
        RCASE(8, 0)
        RCASE(16, 0)
        RCASE(8, 1)
        RCASE(8, 2)
        RCASE(16, 2)
#undef RCASE
    default:
        return -1;
    }
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* Dynamic shared memory that lets at most cap blocks share an SM (0: no cap).
 */
size_t smem_for_cap(int cap)
{
    if (cap == 0)
        return 0;
    int per_sm = 0;
    cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0);
    /* Each block also costs 1 KiB the runtime reserves. */
    return (size_t)per_sm / (size_t)(cap + 1) + 1024;
}

void allow_smem(size_t bytes)
{
    cudaFuncSetAttribute(sha256d_search<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(sha256d_search_40regs, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(vroll_search<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(vroll_search<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(vroll_search<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(vroll_rolled<4, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(vroll_rolled<8, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(vroll_rolled<16, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(vroll_rolled<8, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(vroll_rolled<8, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    cudaFuncSetAttribute(vroll_rolled<16, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
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
long candidates(int id, const job_set *s, uint32_t start, uint32_t count, uint32_t *d_out, uint32_t *h_out)
{
    if (cudaMemset(d_out, 0, 4) != cudaSuccess || launch(id, s, start, count, d_out) != 0 ||
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

/* Kernel ids: 0 the shipped kernel (1 at 40 registers), NV the lockstep kernels, 100 (ROT + 1)
 * + NV the rolled ones. */
int versions_of(int id) { return id <= 1 ? 1 : id % 100; }
const char *name_of(int id)
{
    static char name[32];
    if (id == 0)
        return "shipped";
    if (id == 1)
        return "shipped, 40 regs";
    if (id < 100)
        snprintf(name, sizeof name, "lockstep NV=%d", id);
    else
        snprintf(name, sizeof name, "rolled NV=%d rot%d", id % 100, id / 100 - 1);
    return name;
}

/* Every candidate of each NV kernel is the shipped kernel's on header k,
 * and meets the target by the host's exact digest. */
bool check(int id, const job_set *s, uint32_t *d_out)
{
    const int nv = versions_of(id);
    static uint32_t got[1 + 2 * CAP], want[1 + 2 * CAP];
    const uint32_t start = 0xF0000000u, count = 1u << 28;
    long n = candidates(id, s, start, count, d_out, got);
    want[0] = 0;
    for (int k = 0; k < nv && n >= 0; k++)
        if (shipped_candidates(s, k, start, count, want) < 0)
            return false;
    qsort(want + 1, want[0], 8, sort_pairs);
    if (n < 0 || (uint32_t)n != want[0] || memcmp(got + 1, want + 1, (size_t)n * 8) != 0) {
        printf("%s: %ld candidates, the shipped kernel %u over the %d headers\n", name_of(id), n, want[0], nv);
        return false;
    }
    for (long i = 0; i < n; i++) {
        const uint32_t nonce = got[1 + 2 * i], k = got[2 + 2 * i];
        if (vroll_host_top(s->header[k], nonce) > s->target_top) {
            printf("%s: version %u nonce %08x misses the target on the host\n", name_of(id), k, nonce);
            return false;
        }
    }
    printf("%s: %ld candidates over 2^28 nonces x %d versions, the same as the "
           "shipped kernel's, all exact\n",
           name_of(id), n, nv);
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
    const int kernels[] = {0, 1, 2, 4, 8, 104, 108, 116, 208, 308, 316};
    bool ok = true;
    for (int id : kernels)
        if (id > 1)
            ok = check(id, &s, d_out) && ok;
    make_jobs(&s, base, 0); /* rates: next to no candidates */
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    /* Rates by kernel and by the blocks one SM may hold (0: as many as the
     * registers allow); 2^31 hashes a launch. */
    const int caps[] = {0, 1, 2, 4, 6};
    allow_smem(smem_for_cap(1));
    printf("GH/s by blocks of %u threads per SM (0: no cap)\n%-20s", TPB, "kernel");
    for (int cap : caps)
        printf(" %7d", cap);
    printf("\n");
    for (int id : kernels) {
        const int nv = versions_of(id);
        printf("%-20s", name_of(id));
        for (int cap : caps) {
            double elapsed = 0, hashes = 0;
            uint32_t start = 0;
            const uint32_t count = (1u << 31) / nv;
            do {
                cudaEventRecord(a);
                if (launch(id, &s, start, count, d_out, smem_for_cap(cap)) != 0) {
                    fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
                    return 1;
                }
                cudaEventRecord(b);
                float ms = 0;
                if (cudaEventSynchronize(b) != cudaSuccess || cudaEventElapsedTime(&ms, a, b) != cudaSuccess ||
                    !(ms > 0)) {
                    fprintf(stderr, "%s failed: %s\n", name_of(id), cudaGetErrorString(cudaGetLastError()));
                    return 1;
                }
                elapsed += ms / 1e3;
                hashes += (double)count * nv;
                start += count;
            } while (elapsed < seconds);
            printf(" %7.3f", hashes / elapsed / 1e9);
        }
        printf("\n");
    }
    return ok ? 0 : 1;
}
