/* SHA-256 building blocks shared by the OpenCL kernels (FIPS 180-4).
 * OpenCL C 1.2. This file is prepended to sha256d.cl and scrypt.cl.
 *
 * The working variables live in a uint[8] that is never moved: at round t,
 * a is v[(0 - t) & 7], b is v[(1 - t) & 7], ... h is v[(7 - t) & 7], so a
 * round writes only d and h. Callers unroll their round loops, which turns
 * every index into a constant and keeps the array in registers. */

/* Size of the hit buffer after its counter (must match the host). */
#define HITS_CAP 1024u

__constant uint sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define SHA256_IV0 0x6a09e667u
#define SHA256_IV1 0xbb67ae85u
#define SHA256_IV2 0x3c6ef372u
#define SHA256_IV3 0xa54ff53au
#define SHA256_IV4 0x510e527fu
#define SHA256_IV5 0x9b05688cu
#define SHA256_IV6 0x1f83d9abu
#define SHA256_IV7 0x5be0cd19u

/* rotate() is a left rotate, one instruction where the hardware has one
 * (funnel shift on NVIDIA, alignbit on AMD). */
#define ROTR(x, n) rotate((uint)(x), (uint)(32 - (n)))

static inline uint bsig0(uint x) { return ROTR(x, 2) ^ ROTR(x, 13) ^ ROTR(x, 22); }
static inline uint bsig1(uint x) { return ROTR(x, 6) ^ ROTR(x, 11) ^ ROTR(x, 25); }
static inline uint ssig0(uint x) { return ROTR(x, 7) ^ ROTR(x, 18) ^ (x >> 3); }
static inline uint ssig1(uint x) { return ROTR(x, 17) ^ ROTR(x, 19) ^ (x >> 10); }
/* bitselect(a, b, c) takes b where c is set: one BFI/LOP3 where available. */
static inline uint ch(uint e, uint f, uint g) { return bitselect(g, f, e); }
static inline uint maj(uint a, uint b, uint c) { return bitselect(a, b, a ^ c); }

/* Endian-neutral byte swap; compilers turn the pattern into one permute. */
static inline uint bswap32(uint x)
{
    return (rotate(x, 8u) & 0x00ff00ffu) | (rotate(x, 24u) & 0xff00ff00u);
}

/* Round t (only t mod 8 matters for the naming); kw = K[t] + W[t]. */
static inline void sha_round(uint *v, int t, uint kw)
{
    const uint a = v[(0 - t) & 7], b = v[(1 - t) & 7], c = v[(2 - t) & 7];
    const uint e = v[(4 - t) & 7], f = v[(5 - t) & 7], g = v[(6 - t) & 7];
    const uint t1 = v[(7 - t) & 7] + bsig1(e) + ch(e, f, g) + kw;
    v[(3 - t) & 7] += t1;
    v[(7 - t) & 7] = t1 + bsig0(a) + maj(a, b, c);
}

/* Compresses one block of big-endian message words m into state. */
static inline void sha256_compress(uint *state, const uint *m)
{
    uint w[16], v[8];
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
        sha_round(v, t, sha256_k[t] + w[t & 15]);
    }
    /* After 64 rounds the naming is back at a = v[0]. */
#pragma unroll
    for (int i = 0; i < 8; i++)
        state[i] += v[i];
}

static inline void sha256_set_iv(uint *s)
{
    s[0] = SHA256_IV0, s[1] = SHA256_IV1, s[2] = SHA256_IV2, s[3] = SHA256_IV3;
    s[4] = SHA256_IV4, s[5] = SHA256_IV5, s[6] = SHA256_IV6, s[7] = SHA256_IV7;
}

/* Appends a nonce to the hit buffer: hits[0] counts, hits[1..] hold up to
 * HITS_CAP nonces. A count above HITS_CAP tells the host some were lost. */
static inline void report_hit(volatile __global uint *hits, uint nonce)
{
    const uint i = atomic_inc(&hits[0]);
    if (i < HITS_CAP)
        hits[1 + i] = nonce;
}
