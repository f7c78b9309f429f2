/* Host SHA-256 of the OpenCL backend (ocl_sha256.h). */
#include "backend-opencl/ocl_sha256.h"

#include <string.h>

const uint32_t ocl_sha256_iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

const uint32_t ocl_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

void ocl_sha256_rounds(uint32_t v[8], const uint32_t m[16], int rounds)
{
    uint32_t w[16];
    memcpy(w, m, sizeof w);
    uint32_t a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];
    for (int t = 0; t < rounds; t++) {
        /* A 16-word window of the schedule, extended in place. */
        if (t >= 16)
            w[t & 15] += ocl_ssig1(w[(t - 2) & 15]) + w[(t - 7) & 15] + ocl_ssig0(w[(t - 15) & 15]);
        uint32_t t1 = h + ocl_bsig1(e) + ocl_ch(e, f, g) + ocl_sha256_k[t] + w[t & 15];
        uint32_t t2 = ocl_bsig0(a) + ocl_maj(a, b, c);
        h = g, g = f, f = e, e = d + t1;
        d = c, c = b, b = a, a = t1 + t2;
    }
    v[0] = a, v[1] = b, v[2] = c, v[3] = d, v[4] = e, v[5] = f, v[6] = g, v[7] = h;
}

void ocl_sha256_block(uint32_t state[8], const uint32_t m[16])
{
    uint32_t v[8];
    memcpy(v, state, sizeof v);
    ocl_sha256_rounds(v, m, 64);
    for (int i = 0; i < 8; i++)
        state[i] += v[i];
}

static void load_block(uint32_t m[16], const uint8_t *p)
{
    for (int i = 0; i < 16; i++)
        m[i] = ocl_be32(p + 4 * i);
}

static void store_state(uint8_t *out, const uint32_t st[8])
{
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 4; k++)
            out[4 * i + k] = (uint8_t)(st[i] >> (24 - 8 * k));
}

void ocl_sha256(const void *data, uint64_t len, uint8_t digest[32])
{
    const uint8_t *p = data;
    uint32_t st[8], m[16];
    memcpy(st, ocl_sha256_iv, sizeof st);
    uint64_t left = len;
    for (; left >= 64; left -= 64, p += 64) {
        load_block(m, p);
        ocl_sha256_block(st, m);
    }
    /* Padding: 0x80, zeros, the bit length big-endian in the last 8 bytes. */
    uint8_t tail[128] = {0};
    memcpy(tail, p, (size_t)left);
    tail[left] = 0x80;
    size_t blocks = left + 9 <= 64 ? 1 : 2;
    uint64_t bits = len * 8;
    for (int i = 0; i < 8; i++)
        tail[64 * blocks - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t b = 0; b < blocks; b++) {
        load_block(m, tail + 64 * b);
        ocl_sha256_block(st, m);
    }
    store_state(digest, st);
}

void ocl_sha256d_header(const uint8_t header[80], uint32_t nonce, uint8_t digest[32])
{
    uint8_t h[80], first[32];
    memcpy(h, header, 76);
    for (int i = 0; i < 4; i++) /* the nonce field is little-endian */
        h[76 + i] = (uint8_t)(nonce >> (8 * i));
    ocl_sha256(h, sizeof h, first);
    ocl_sha256(first, sizeof first, digest);
}
