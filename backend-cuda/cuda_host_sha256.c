/* Plain SHA-256 on the host (FIPS 180-4), see cuda_host_sha256.h. */
#include "backend-cuda/cuda_host_sha256.h"

#include <string.h>

const uint32_t cuda_sha256_iv[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

const uint32_t cuda_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, unsigned n) { return x >> n | x << (32 - n); }

uint32_t cuda_sha256_bsig0(uint32_t x) { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
uint32_t cuda_sha256_bsig1(uint32_t x) { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
uint32_t cuda_sha256_ssig0(uint32_t x) { return rotr(x, 7) ^ rotr(x, 18) ^ x >> 3; }
uint32_t cuda_sha256_ssig1(uint32_t x) { return rotr(x, 17) ^ rotr(x, 19) ^ x >> 10; }
uint32_t cuda_sha256_ch(uint32_t e, uint32_t f, uint32_t g) { return (e & f) ^ (~e & g); }
uint32_t cuda_sha256_maj(uint32_t a, uint32_t b, uint32_t c) { return (a & b) ^ (a & c) ^ (b & c); }

uint32_t cuda_load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void store_be32(uint8_t *p, uint32_t x)
{
    p[0] = (uint8_t)(x >> 24);
    p[1] = (uint8_t)(x >> 16);
    p[2] = (uint8_t)(x >> 8);
    p[3] = (uint8_t)x;
}

void cuda_sha256_rounds(uint32_t v[8], const uint32_t m[16], int rounds)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = m[t];
    for (int t = 16; t < rounds; t++)
        w[t] = cuda_sha256_ssig1(w[t - 2]) + w[t - 7] + cuda_sha256_ssig0(w[t - 15]) + w[t - 16];
    for (int t = 0; t < rounds; t++) {
        uint32_t t1 = v[7] + cuda_sha256_bsig1(v[4]) + cuda_sha256_ch(v[4], v[5], v[6]) +
                      cuda_sha256_k[t] + w[t];
        uint32_t t2 = cuda_sha256_bsig0(v[0]) + cuda_sha256_maj(v[0], v[1], v[2]);
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
}

void cuda_sha256_compress(uint32_t state[8], const uint32_t m[16])
{
    uint32_t v[8];
    memcpy(v, state, sizeof v);
    cuda_sha256_rounds(v, m, 64);
    for (int i = 0; i < 8; i++)
        state[i] += v[i];
}

void cuda_sha256d_header(const uint8_t header[80], uint32_t nonce, uint8_t digest[32])
{
    uint32_t m[16], st[8];
    memcpy(st, cuda_sha256_iv, sizeof st);
    for (int i = 0; i < 16; i++)
        m[i] = cuda_load_be32(header + 4 * i);
    cuda_sha256_compress(st, m);
    memset(m, 0, sizeof m);
    for (int i = 0; i < 3; i++)
        m[i] = cuda_load_be32(header + 64 + 4 * i);
    /* The nonce is stored little-endian in the header. */
    m[3] = (nonce & 0xff) << 24 | (nonce & 0xff00) << 8 | (nonce >> 8 & 0xff00) | nonce >> 24;
    m[4] = 0x80000000u;
    m[15] = 80 * 8;
    cuda_sha256_compress(st, m);

    memset(m, 0, sizeof m);
    memcpy(m, st, sizeof st);
    m[8] = 0x80000000u;
    m[15] = 32 * 8;
    memcpy(st, cuda_sha256_iv, sizeof st);
    cuda_sha256_compress(st, m);
    for (int i = 0; i < 8; i++)
        store_be32(digest + 4 * i, st[i]);
}
