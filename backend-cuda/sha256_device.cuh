/* SHA-256 building blocks for the kernels (FIPS 180-4).
 *
 * Working variables live in a uint32_t[8] that is never shuffled: at round
 * t, a is v[(0 - t) & 7], b is v[(1 - t) & 7], ... h is v[(7 - t) & 7], so
 * a round writes only d and h. Every caller unrolls its round loops, which
 * turns each index into a constant and keeps the array in registers. */
#ifndef LODE_CUDA_SHA256_DEVICE_CUH
#define LODE_CUDA_SHA256_DEVICE_CUH

#include <stdint.h>

namespace lode_cuda {

__device__ __constant__ static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define LODE_SHA256_IV0 0x6a09e667u
#define LODE_SHA256_IV1 0xbb67ae85u
#define LODE_SHA256_IV2 0x3c6ef372u
#define LODE_SHA256_IV3 0xa54ff53au
#define LODE_SHA256_IV4 0x510e527fu
#define LODE_SHA256_IV5 0x9b05688cu
#define LODE_SHA256_IV6 0x1f83d9abu
#define LODE_SHA256_IV7 0x5be0cd19u

/* One SHF.R.W each: the funnel shift of a word with itself is a rotate. */
__device__ __forceinline__ uint32_t rotr(uint32_t x, unsigned n) { return __funnelshift_r(x, x, n); }
__device__ __forceinline__ uint32_t rotl(uint32_t x, unsigned n) { return __funnelshift_l(x, x, n); }

__device__ __forceinline__ uint32_t bsig0(uint32_t x) { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
__device__ __forceinline__ uint32_t bsig1(uint32_t x) { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
__device__ __forceinline__ uint32_t ssig0(uint32_t x) { return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3); }
__device__ __forceinline__ uint32_t ssig1(uint32_t x) { return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10); }
/* The small sigmas of literals, folded at compile time. */
__host__ __device__ constexpr uint32_t rotr_const(uint32_t x, unsigned n) { return x >> n | x << (32 - n); }
__host__ __device__ constexpr uint32_t ssig0_const(uint32_t x) { return rotr_const(x, 7) ^ rotr_const(x, 18) ^ (x >> 3); }
__host__ __device__ constexpr uint32_t ssig1_const(uint32_t x) { return rotr_const(x, 17) ^ rotr_const(x, 19) ^ (x >> 10); }

/* Each is one LOP3. */
__device__ __forceinline__ uint32_t ch(uint32_t e, uint32_t f, uint32_t g) { return ((f ^ g) & e) ^ g; }
__device__ __forceinline__ uint32_t maj(uint32_t a, uint32_t b, uint32_t c) { return (a & b) | (c & (a | b)); }

__device__ __forceinline__ uint32_t bswap32(uint32_t x) { return __byte_perm(x, 0, 0x0123); }

/* Round t (only t mod 8 matters for the register naming); kw = K[t] + W[t]. */
__device__ __forceinline__ void round(uint32_t (&v)[8], int t, uint32_t kw)
{
    uint32_t &a = v[(0 - t) & 7], &b = v[(1 - t) & 7], &c = v[(2 - t) & 7], &d = v[(3 - t) & 7];
    uint32_t &e = v[(4 - t) & 7], &f = v[(5 - t) & 7], &g = v[(6 - t) & 7], &h = v[(7 - t) & 7];
    uint32_t t1 = h + bsig1(e) + ch(e, f, g) + kw;
    d += t1;
    h = t1 + bsig0(a) + maj(a, b, c);
}

/* Compresses one block of big-endian message words into state. */
__device__ __forceinline__ void compress(uint32_t (&state)[8], const uint32_t (&m)[16])
{
    uint32_t w[16], v[8];
#pragma unroll
    for (int i = 0; i < 16; i++)
        w[i] = m[i];
#pragma unroll
    for (int i = 0; i < 8; i++)
        v[i] = state[i];
#pragma unroll
    for (int t = 0; t < 64; t++) {
        if (t >= 16)
            w[t & 15] += ssig1(w[(t - 2) & 15]) + w[(t - 7) & 15] + ssig0(w[(t - 15) & 15]);
        round(v, t, sha256_k[t] + w[t & 15]);
    }
    /* After 64 rounds the naming is back at a = v[0]. */
#pragma unroll
    for (int i = 0; i < 8; i++)
        state[i] += v[i];
}

__device__ __forceinline__ void set_iv(uint32_t (&s)[8])
{
    s[0] = LODE_SHA256_IV0; s[1] = LODE_SHA256_IV1; s[2] = LODE_SHA256_IV2; s[3] = LODE_SHA256_IV3;
    s[4] = LODE_SHA256_IV4; s[5] = LODE_SHA256_IV5; s[6] = LODE_SHA256_IV6; s[7] = LODE_SHA256_IV7;
}

} // namespace lode_cuda

#endif
