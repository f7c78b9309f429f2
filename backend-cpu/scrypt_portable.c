/* scrypt path in plain C for any architecture: one hash per call, the
 * Salsa20/8 core on 16 scalar words (enough independent work for a
 * superscalar core, and what a compiler can keep in registers). */
#include <string.h>

#include "backend-cpu/scrypt_internal.h"

#define ROTL32(v, n) (((v) << (n)) | ((v) >> (32 - (n))))

/* b = Salsa20/8(b xor x), with the feed-forward of RFC 7914 section 3. */
static void xor_salsa8(uint32_t b[16], const uint32_t x[16])
{
    uint32_t in[16];
    for (unsigned i = 0; i < 16; i++)
        in[i] = b[i] ^ x[i];

    uint32_t x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3];
    uint32_t x4 = in[4], x5 = in[5], x6 = in[6], x7 = in[7];
    uint32_t x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11];
    uint32_t x12 = in[12], x13 = in[13], x14 = in[14], x15 = in[15];
    for (unsigned round = 0; round < 8; round += 2) {
        /* columns */
        x4 ^= ROTL32(x0 + x12, 7);   x9 ^= ROTL32(x5 + x1, 7);
        x14 ^= ROTL32(x10 + x6, 7);  x3 ^= ROTL32(x15 + x11, 7);
        x8 ^= ROTL32(x4 + x0, 9);    x13 ^= ROTL32(x9 + x5, 9);
        x2 ^= ROTL32(x14 + x10, 9);  x7 ^= ROTL32(x3 + x15, 9);
        x12 ^= ROTL32(x8 + x4, 13);  x1 ^= ROTL32(x13 + x9, 13);
        x6 ^= ROTL32(x2 + x14, 13);  x11 ^= ROTL32(x7 + x3, 13);
        x0 ^= ROTL32(x12 + x8, 18);  x5 ^= ROTL32(x1 + x13, 18);
        x10 ^= ROTL32(x6 + x2, 18);  x15 ^= ROTL32(x11 + x7, 18);
        /* rows */
        x1 ^= ROTL32(x0 + x3, 7);    x6 ^= ROTL32(x5 + x4, 7);
        x11 ^= ROTL32(x10 + x9, 7);  x12 ^= ROTL32(x15 + x14, 7);
        x2 ^= ROTL32(x1 + x0, 9);    x7 ^= ROTL32(x6 + x5, 9);
        x8 ^= ROTL32(x11 + x10, 9);  x13 ^= ROTL32(x12 + x15, 9);
        x3 ^= ROTL32(x2 + x1, 13);   x4 ^= ROTL32(x7 + x6, 13);
        x9 ^= ROTL32(x8 + x11, 13);  x14 ^= ROTL32(x13 + x12, 13);
        x0 ^= ROTL32(x3 + x2, 18);   x5 ^= ROTL32(x4 + x7, 18);
        x10 ^= ROTL32(x9 + x8, 18);  x15 ^= ROTL32(x14 + x13, 18);
    }
    b[0] = x0 + in[0];    b[1] = x1 + in[1];    b[2] = x2 + in[2];    b[3] = x3 + in[3];
    b[4] = x4 + in[4];    b[5] = x5 + in[5];    b[6] = x6 + in[6];    b[7] = x7 + in[7];
    b[8] = x8 + in[8];    b[9] = x9 + in[9];    b[10] = x10 + in[10]; b[11] = x11 + in[11];
    b[12] = x12 + in[12]; b[13] = x13 + in[13]; b[14] = x14 + in[14]; b[15] = x15 + in[15];
}

/* scryptBlockMix with r = 1, in place: (B0, B1) -> (Y0, Y1) with
 * Y0 = Salsa(B0 ^ B1), Y1 = Salsa(B1 ^ Y0). */
static void block_mix(uint32_t x[CPU_SCRYPT_BLOCK_WORDS])
{
    xor_salsa8(x, x + 16);
    xor_salsa8(x + 16, x);
}

static void romix(uint32_t x[CPU_SCRYPT_BLOCK_WORDS], uint32_t (*pad)[CPU_SCRYPT_BLOCK_WORDS])
{
    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        memcpy(pad[i], x, sizeof pad[i]);
        block_mix(x);
    }
    for (unsigned i = 0; i < CPU_SCRYPT_N; i++) {
        const uint32_t *v = pad[x[16] & (CPU_SCRYPT_N - 1)];
        for (unsigned w = 0; w < CPU_SCRYPT_BLOCK_WORDS; w++)
            x[w] ^= v[w];
        block_mix(x);
    }
}

static void hash_portable(const cpu_scrypt_job *job, uint32_t nonce0, uint8_t (*out)[32],
                          void *scratch)
{
    cpu_scrypt_hmac hmac;
    uint32_t x[CPU_SCRYPT_BLOCK_WORDS];
    cpu_scrypt_pbkdf2_start(job, nonce0, &hmac, x);
    romix(x, scratch);
    cpu_scrypt_pbkdf2_finish(job, &hmac, x, out[0]);
}

const cpu_scrypt_path cpu_scrypt_portable = {
    .name = "portable",
    .features = 0,
    .lanes = 1,
    .scratch_bytes = CPU_SCRYPT_PAD_BYTES,
    .hash = hash_portable,
};
