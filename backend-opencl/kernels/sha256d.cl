/* SHA-256d nonce search (after sha256.cl), one nonce at a time per
 * work-item in a grid-stride loop, the whole message schedule in registers.
 *
 * First hash, second block: W0..W2 come from the header, W3 is the nonce,
 * W4..W15 are padding. The host runs rounds 0..2 and the nonce-free part of
 * round 3 once per job, so a work-item starts at round 4 with two
 * additions, and the padding words are literals the compiler folds into the
 * round constants.
 *
 * Outer hash: its IV and padding are literals too. Only H7 is needed for
 * the early reject, and H7 = IV7 + (e after round 60): rounds 61..63 are
 * never run. Candidates (top word <= the target's) are re-hashed exactly on
 * the host.
 *
 * Parameters (__constant uint p[], filled by the host per job): */
#define P_MID 0       /* 8 words: state after header bytes 0..63 */
#define P_A3 8        /* a, b, c after rounds 0..2 of the second block */
#define P_B3 9
#define P_C3 10
#define P_E3 11       /* e, f, g after rounds 0..2 */
#define P_F3 12
#define P_G3 13
#define P_A4_BASE 14  /* a after round 3, less W3 */
#define P_E4_BASE 15  /* e after round 3, less W3 */
#define P_W16 16
#define P_W17 17
#define P_W18_BASE 18 /* W18 less sigma0(W3) */
#define P_W19_BASE 19 /* W19 less W3 */
#define P_W31_PART 20 /* sigma0(W16) + W15 */
#define P_W32_PART 21 /* sigma0(W17) + W16 */
#define P_TARGET_TOP 22

/* A round whose message word is a compile-time literal. */
#define ROUND_C(v, t, lit) sha_round(v, t, sha256_k[t] + (lit))

static inline uint sha256d_h7(__constant uint *p, uint nonce)
{
    const uint w3 = bswap32(nonce); /* the header stores the nonce little-endian */
    uint v[8];
    /* Round 4's naming: a = v[4], b = v[5], ... e = v[0], ... h = v[3]. */
    v[4] = p[P_A4_BASE] + w3;
    v[5] = p[P_A3];
    v[6] = p[P_B3];
    v[7] = p[P_C3];
    v[0] = p[P_E4_BASE] + w3;
    v[1] = p[P_E3];
    v[2] = p[P_F3];
    v[3] = p[P_G3];
    ROUND_C(v, 4, 0x80000000u);
#pragma unroll
    for (int t = 5; t < 15; t++)
        ROUND_C(v, t, 0u);
    ROUND_C(v, 15, 640u);

    uint w[64];
    w[16] = p[P_W16];
    w[17] = p[P_W17];
    w[18] = p[P_W18_BASE] + ssig0(w3);
    w[19] = p[P_W19_BASE] + w3;
    /* The W4..W15 terms are literals up to W30. */
    w[20] = ssig1(w[18]) + 0x80000000u;
    w[21] = ssig1(w[19]);
    w[22] = ssig1(w[20]) + 640u;
    w[23] = ssig1(w[21]) + w[16];
    w[24] = ssig1(w[22]) + w[17];
#pragma unroll
    for (int t = 25; t < 30; t++)
        w[t] = ssig1(w[t - 2]) + w[t - 7];
    w[30] = ssig1(w[28]) + w[23] + (ROTR(640u, 7) ^ ROTR(640u, 18) ^ (640u >> 3));
    w[31] = ssig1(w[29]) + w[24] + p[P_W31_PART];
    w[32] = ssig1(w[30]) + w[25] + p[P_W32_PART];
#pragma unroll
    for (int t = 16; t < 64; t++) {
        if (t >= 33)
            w[t] = ssig1(w[t - 2]) + w[t - 7] + ssig0(w[t - 15]) + w[t - 16];
        sha_round(v, t, sha256_k[t] + w[t]);
    }

    /* Outer hash of the 32-byte digest: W0..W7 the digest, W8 = 0x80000000,
     * W9..W14 = 0, W15 = 256. */
#pragma unroll
    for (int i = 0; i < 8; i++)
        w[i] = p[P_MID + i] + v[i];
    uint u[8];
    sha256_set_iv(u);
#pragma unroll
    for (int t = 0; t < 8; t++)
        sha_round(u, t, sha256_k[t] + w[t]);
    ROUND_C(u, 8, 0x80000000u);
#pragma unroll
    for (int t = 9; t < 15; t++)
        ROUND_C(u, t, 0u);
    ROUND_C(u, 15, 256u);
    w[8] = 0x80000000u;
#pragma unroll
    for (int t = 9; t < 15; t++)
        w[t] = 0;
    w[15] = 256u;
#pragma unroll
    for (int t = 16; t < 61; t++) {
        /* Literal terms fold away once the loop is unrolled. */
        w[t] = ssig1(w[t - 2]) + w[t - 7] + ssig0(w[t - 15]) + w[t - 16];
        sha_round(u, t, sha256_k[t] + w[t]);
    }
    /* e after round 60 is h after round 63: u[(4 - 61) & 7]. */
    return SHA256_IV7 + u[7];
}

__kernel void sha256d_search(__constant uint *p, uint start, uint count,
                             volatile __global uint *hits)
{
    const uint stride = (uint)get_global_size(0);
    const uint top = p[P_TARGET_TOP];
    /* count <= 2^31 per launch, so off + stride cannot wrap. */
    for (uint off = (uint)get_global_id(0); off < count; off += stride) {
        const uint nonce = start + off;
        if (bswap32(sha256d_h7(p, nonce)) <= top)
            report_hit(hits, nonce);
    }
}
