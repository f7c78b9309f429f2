/* SHA-256d nonce search: one nonce at a time per thread, several per thread
 * in a grid-stride loop, the whole message schedule in registers. Two
 * instances: additions as IMADs (variant "imad", the faster on sm_90: the
 * integer pipe is left the SHF and LOP3 work) or as IADD3s ("iadd3").
 *
 * First hash, second block: W0..W2 come from the header, W3 is the nonce,
 * W4..W15 are padding. The host runs rounds 0..2 and the nonce-free part of
 * round 3 once per job (cuda_backend.c), so a thread starts at round 4 with
 * two additions, and the padding words are literals that the compiler folds
 * into the round constants.
 *
 * Outer hash: its IV and padding are literals, so the compiler folds round 0
 * and the constant schedule terms itself. Only H7 is needed for the early
 * reject, and H7 = IV7 + (e after round 60): rounds 61..63 are never run and
 * the a-side of rounds 57..60 is dead code the compiler drops. Candidates
 * are checked exactly on the host (a 2^-32 event per nonce at difficulty 1). */
#include "backend-cuda/cuda_kernels.h"
#include "core/backend_support/kernels/hits.h"
#include "core/backend_support/kernels/sha256.h"

namespace {

/* Additions. With Fma, x + y is written x * one + y where one == 1 is only
 * known at run time: the compiler cannot see through it, so the addition
 * becomes an IMAD on the FMA pipe instead of an IADD3 on the integer pipe,
 * which the rotates (SHF) and LOP3s already fill. Without Fma, plain
 * additions let the compiler fuse three terms per IADD3. */
template <bool Fma> __device__ __forceinline__ uint32_t add(uint32_t x, uint32_t y, uint32_t one)
{
    return Fma ? x * one + y : x + y;
}

/* sha256_round() (core/backend_support/kernels/sha256.h) with kw split
 * into the round constant k and the message word w, and the additions
 * routed by Fma. */
template <bool Fma>
__device__ __forceinline__ void round_w(uint32_t (&v)[8], int t, uint32_t w, uint32_t one)
{
    uint32_t &a = v[(0 - t) & 7], &b = v[(1 - t) & 7], &c = v[(2 - t) & 7], &d = v[(3 - t) & 7];
    uint32_t &e = v[(4 - t) & 7], &f = v[(5 - t) & 7], &g = v[(6 - t) & 7], &h = v[(7 - t) & 7];
    uint32_t t1 = add<Fma>(add<Fma>(add<Fma>(h, w + sha256_k[t], one), sha256_ch(e, f, g), one), sha256_bsig1(e), one);
    d = add<Fma>(d, t1, one);
    h = add<Fma>(add<Fma>(t1, sha256_maj(a, b, c), one), sha256_bsig0(a), one);
}

/* A round whose message word is a literal: K[t] + W[t] folds into one
 * constant. */
template <bool Fma> __device__ __forceinline__ void round_c(uint32_t (&v)[8], int t, uint32_t w_lit, uint32_t one)
{
    uint32_t &a = v[(0 - t) & 7], &b = v[(1 - t) & 7], &c = v[(2 - t) & 7], &d = v[(3 - t) & 7];
    uint32_t &e = v[(4 - t) & 7], &f = v[(5 - t) & 7], &g = v[(6 - t) & 7], &h = v[(7 - t) & 7];
    uint32_t t1 = add<Fma>(add<Fma>(h, sha256_ch(e, f, g), one), sha256_bsig1(e), one) + (sha256_k[t] + w_lit);
    d = add<Fma>(d, t1, one);
    h = add<Fma>(add<Fma>(t1, sha256_maj(a, b, c), one), sha256_bsig0(a), one);
}

/* sigma1(x2) + sum + sigma0(x15): a schedule word whose two plain terms the
 * caller has already summed (or found to be literals). */
template <bool Fma> __device__ __forceinline__ uint32_t sched(uint32_t x2, uint32_t sum, uint32_t x15, uint32_t one)
{
    return add<Fma>(add<Fma>(sum, sha256_ssig0(x15), one), sha256_ssig1(x2), one);
}
template <bool Fma> __device__ __forceinline__ uint32_t sched2(uint32_t x2, uint32_t sum, uint32_t one)
{
    return add<Fma>(sum, sha256_ssig1(x2), one);
}

/* First hash, rounds 4..15 from the job's precomputed state (the rounds
 * whose message words are the nonce's W3 and the padding literals). */
template <bool Fma>
__device__ __forceinline__ void inner_head(const cuda_sha256d_params &p, uint32_t w3, uint32_t (&v)[8], uint32_t one)
{
    /* Round 4's naming: a = v[4], b = v[5], ... e = v[0], ... h = v[3]. */
    v[4] = add<Fma>(p.w[LODE_SHA256D_P(PRE_A4_LESS_W3)], w3, one);
    v[5] = p.w[LODE_SHA256D_P(PRE_A3)];
    v[6] = p.w[LODE_SHA256D_P(PRE_B3)];
    v[7] = p.w[LODE_SHA256D_P(PRE_C3)];
    v[0] = add<Fma>(p.w[LODE_SHA256D_P(PRE_E4_LESS_W3)], w3, one);
    v[1] = p.w[LODE_SHA256D_P(PRE_E3)];
    v[2] = p.w[LODE_SHA256D_P(PRE_F3)];
    v[3] = p.w[LODE_SHA256D_P(PRE_G3)];
    /* W4 = 0x80000000, W5..W14 = 0, W15 = 640 (80 bytes in bits). */
    round_c<Fma>(v, 4, 0x80000000u, one);
#pragma unroll
    for (int t = 5; t < 15; t++)
        round_c<Fma>(v, t, 0, one);
    round_c<Fma>(v, 15, 640, one);
}

/* First hash, schedule words W16..W32 (those with literal or precomputed
 * terms; the rest follow the plain recurrence). They depend on the second
 * block alone, not on the midstate. */
template <bool Fma>
__device__ __forceinline__ void inner_schedule_head(const cuda_sha256d_params &p, uint32_t w3, uint32_t (&w)[64],
                                                    uint32_t one)
{
    w[16] = p.w[LODE_SHA256D_P(PRE_W16)];
    w[17] = p.w[LODE_SHA256D_P(PRE_W17)];
    w[18] = add<Fma>(p.w[LODE_SHA256D_P(PRE_W18_LESS_NONCE)], sha256_ssig0(w3), one);
    w[19] = add<Fma>(p.w[LODE_SHA256D_P(PRE_W19_LESS_NONCE)], w3, one);
    /* Terms from W4..W15 are literals up to W30. */
    w[20] = sched2<Fma>(w[18], 0x80000000u, one);
    w[21] = sha256_ssig1(w[19]);
    w[22] = sched2<Fma>(w[20], 640u, one);
    w[23] = sched2<Fma>(w[21], w[16], one);
    w[24] = sched2<Fma>(w[22], w[17], one);
#pragma unroll
    for (int t = 25; t < 30; t++)
        w[t] = sched2<Fma>(w[t - 2], w[t - 7], one);
    w[30] = sched2<Fma>(w[28], w[23] + LODE_SHA256_SSIG0_LIT(640u), one);
    w[31] = sched2<Fma>(w[29], add<Fma>(w[24], p.w[LODE_SHA256D_P(PRE_W31_PART)], one), one);
    w[32] = sched2<Fma>(w[30], add<Fma>(w[25], p.w[LODE_SHA256D_P(PRE_W32_PART)], one), one);
}

/* Outer hash of the first hash's state v (after its 64 rounds): H7 of the
 * SHA-256d digest. */
template <bool Fma>
__device__ __forceinline__ uint32_t outer_h7(const cuda_sha256d_params &p, const uint32_t (&v)[8], uint32_t one)
{
    /* W0..W7 the digest, W8 = 0x80000000, W9..W14 = 0, W15 = 256. */
    uint32_t w[64];
#pragma unroll
    for (int i = 0; i < 8; i++)
        w[i] = add<Fma>(p.w[LODE_SHA256D_P_MID + i], v[i], one);
    uint32_t u[8];
    sha256_set_iv(u);
#pragma unroll
    for (int t = 0; t < 8; t++)
        round_w<Fma>(u, t, w[t], one);
    round_c<Fma>(u, 8, 0x80000000u, one);
#pragma unroll
    for (int t = 9; t < 15; t++)
        round_c<Fma>(u, t, 0, one);
    round_c<Fma>(u, 15, 256, one);
    w[16] = add<Fma>(sha256_ssig0(w[1]), w[0], one);
    w[17] = add<Fma>(add<Fma>(w[1], sha256_ssig0(w[2]), one), LODE_SHA256_SSIG1_LIT(256u), one);
    w[18] = sched<Fma>(w[16], w[2], w[3], one);
    w[19] = sched<Fma>(w[17], w[3], w[4], one);
    w[20] = sched<Fma>(w[18], w[4], w[5], one);
    w[21] = sched<Fma>(w[19], w[5], w[6], one);
    w[22] = sched<Fma>(w[20], add<Fma>(w[6], 256u, one), w[7], one);
    w[23] = sched2<Fma>(w[21], add<Fma>(w[16], w[7], one) + LODE_SHA256_SSIG0_LIT(0x80000000u), one);
    w[24] = sched2<Fma>(w[22], add<Fma>(w[17], 0x80000000u, one), one);
#pragma unroll
    for (int t = 25; t < 30; t++)
        w[t] = sched2<Fma>(w[t - 2], w[t - 7], one);
    w[30] = sched2<Fma>(w[28], add<Fma>(w[23], LODE_SHA256_SSIG0_LIT(256u), one), one);
    w[31] = sched<Fma>(w[29], add<Fma>(w[24], 256u, one), w[16], one);
#pragma unroll
    for (int t = 16; t < 61; t++) {
        if (t >= 32)
            w[t] = sched<Fma>(w[t - 2], add<Fma>(w[t - 7], w[t - 16], one), w[t - 15], one);
        round_w<Fma>(u, t, w[t], one);
    }
    /* e after 61 rounds is h after 64: u[(4 - 61) & 7]. */
    return LODE_SHA256_IV7 + u[7];
}

template <bool Fma>
__device__ __forceinline__ uint32_t sha256d_h7(const cuda_sha256d_params &p, uint32_t nonce, uint32_t one)
{
    const uint32_t w3 = lode_bswap32(nonce); /* the header stores the nonce little-endian */
    uint32_t v[8], w[64];
    inner_head<Fma>(p, w3, v, one);
    inner_schedule_head<Fma>(p, w3, w, one);
#pragma unroll
    for (int t = 16; t < 64; t++) {
        if (t >= 33)
            w[t] = sched<Fma>(w[t - 2], add<Fma>(w[t - 7], w[t - 16], one), w[t - 15], one);
        round_w<Fma>(v, t, w[t], one);
    }
    return outer_h7<Fma>(p, v, one);
}

template <bool Fma>
__global__ void __launch_bounds__(1024)
sha256d_search(const cuda_sha256d_params p, uint32_t start, uint32_t count, cuda_hits *hits)
{
    const uint32_t stride = gridDim.x * blockDim.x;
    const uint32_t one = p.w[LODE_SHA256D_P_ONE];
#pragma unroll 1
    for (uint32_t off = blockIdx.x * blockDim.x + threadIdx.x; off < count; off += stride) {
        const uint32_t nonce = start + off;
        if (lode_bswap32(sha256d_h7<Fma>(p, nonce, one)) <= p.w[LODE_SHA256D_P_TARGET_TOP])
            lode_report_hit(reinterpret_cast<u32 *>(hits), nonce);
    }
}

} // namespace

extern "C" cudaError_t cuda_sha256d_launch(const cuda_sha256d_params *p, uint32_t start,
                                           uint32_t count, unsigned threads_per_block,
                                           unsigned nonces_per_thread, int fma_adds, cuda_hits *hits,
                                           cudaStream_t stream)
{
    /* The grid-stride offset must not wrap past 2^32 (it would never end):
     * count plus the stride stays below it for launches of 2^31 at most
     * (the backends' SHA256D_MAX_LAUNCH). */
    if (count > (1u << 31))
        return cudaErrorInvalidValue;
    uint64_t threads = ((uint64_t)count + nonces_per_thread - 1) / nonces_per_thread;
    uint64_t blocks = (threads + threads_per_block - 1) / threads_per_block;
    if (blocks == 0)
        blocks = 1;
    if (blocks > 0x7fffffffu)
        blocks = 0x7fffffffu;
    if (fma_adds)
        sha256d_search<true><<<(unsigned)blocks, threads_per_block, 0, stream>>>(*p, start, count, hits);
    else
        sha256d_search<false><<<(unsigned)blocks, threads_per_block, 0, stream>>>(*p, start, count, hits);
    return cudaGetLastError();
}
