/* The HMAC-SHA256 steps of scrypt's PBKDF2 for the CUDA and OpenCL
 * kernels: the password and salt are the 80-byte block header. */
#ifndef LODE_KERNELS_PBKDF2_H
#define LODE_KERNELS_PBKDF2_H

#include "core/backend_support/kernels/sha256.h"

/* The HMAC key is the 80-byte header, longer than a block, so the key is
 * SHA-256(header). key comes in as the state after header bytes 0..63 (the
 * per-job midstate) and leaves as the key; h16..h18 are header words 16..18
 * and nonce_be word 19 (big-endian). */
LODE_DEVICE void pbkdf2_hmac_pads(u32 *key, u32 h16, u32 h17, u32 h18, u32 nonce_be, u32 *ipad, u32 *opad)
{
    u32 m[16];
    m[0] = h16;
    m[1] = h17;
    m[2] = h18;
    m[3] = nonce_be;
    m[4] = 0x80000000u;
#pragma unroll
    for (int i = 5; i < 15; i++)
        m[i] = 0;
    m[15] = 80 * 8;
    sha256_compress(key, m);
#pragma unroll
    for (int i = 0; i < 16; i++)
        m[i] = (i < 8 ? key[i] : 0u) ^ 0x36363636u;
    sha256_set_iv(ipad);
    sha256_compress(ipad, m);
#pragma unroll
    for (int i = 0; i < 16; i++)
        m[i] = (i < 8 ? key[i] : 0u) ^ 0x5c5c5c5cu;
    sha256_set_iv(opad);
    sha256_compress(opad, m);
}

/* Outer HMAC hash: the opad state, then the 32-byte inner digest (message
 * length 64 + 32 bytes). */
LODE_DEVICE void pbkdf2_hmac_outer(const u32 *opad, u32 *digest)
{
    u32 m[16];
#pragma unroll
    for (int i = 0; i < 8; i++)
        m[i] = digest[i];
    m[8] = 0x80000000u;
#pragma unroll
    for (int i = 9; i < 15; i++)
        m[i] = 0;
    m[15] = (64 + 32) * 8;
#pragma unroll
    for (int i = 0; i < 8; i++)
        digest[i] = opad[i];
    sha256_compress(digest, m);
}

#endif
