/* Reference scrypt, following RFC 7914 sections 3-6 line by line. */
#include "core/base/scrypt_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/sha256_ref.h"

static uint32_t rotl(uint32_t x, unsigned n) { return (x << n) | (x >> (32 - n)); }

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

void lode_ref_salsa20_8(const uint8_t in[64], uint8_t out[64])
{
    uint32_t b[16], x[16];
    for (int i = 0; i < 16; i++)
        x[i] = b[i] = load_le32(in + 4 * i);
    for (int i = 8; i > 0; i -= 2) {
        /* column round */
        x[4] ^= rotl(x[0] + x[12], 7);   x[8] ^= rotl(x[4] + x[0], 9);
        x[12] ^= rotl(x[8] + x[4], 13);  x[0] ^= rotl(x[12] + x[8], 18);
        x[9] ^= rotl(x[5] + x[1], 7);    x[13] ^= rotl(x[9] + x[5], 9);
        x[1] ^= rotl(x[13] + x[9], 13);  x[5] ^= rotl(x[1] + x[13], 18);
        x[14] ^= rotl(x[10] + x[6], 7);  x[2] ^= rotl(x[14] + x[10], 9);
        x[6] ^= rotl(x[2] + x[14], 13);  x[10] ^= rotl(x[6] + x[2], 18);
        x[3] ^= rotl(x[15] + x[11], 7);  x[7] ^= rotl(x[3] + x[15], 9);
        x[11] ^= rotl(x[7] + x[3], 13);  x[15] ^= rotl(x[11] + x[7], 18);
        /* row round */
        x[1] ^= rotl(x[0] + x[3], 7);    x[2] ^= rotl(x[1] + x[0], 9);
        x[3] ^= rotl(x[2] + x[1], 13);   x[0] ^= rotl(x[3] + x[2], 18);
        x[6] ^= rotl(x[5] + x[4], 7);    x[7] ^= rotl(x[6] + x[5], 9);
        x[4] ^= rotl(x[7] + x[6], 13);   x[5] ^= rotl(x[4] + x[7], 18);
        x[11] ^= rotl(x[10] + x[9], 7);  x[8] ^= rotl(x[11] + x[10], 9);
        x[9] ^= rotl(x[8] + x[11], 13);  x[10] ^= rotl(x[9] + x[8], 18);
        x[12] ^= rotl(x[15] + x[14], 7); x[13] ^= rotl(x[12] + x[15], 9);
        x[14] ^= rotl(x[13] + x[12], 13); x[15] ^= rotl(x[14] + x[13], 18);
    }
    for (int i = 0; i < 16; i++)
        store_le32(out + 4 * i, x[i] + b[i]);
}

void lode_ref_scrypt_blockmix(const uint8_t *in, uint8_t *out, unsigned r)
{
    uint8_t x[64], t[64];
    memcpy(x, in + (2 * r - 1) * 64, 64);
    for (unsigned i = 0; i < 2 * r; i++) {
        for (int k = 0; k < 64; k++)
            t[k] = x[k] ^ in[i * 64 + k];
        lode_ref_salsa20_8(t, x);
        /* Y_i goes to the even half for even i, the odd half for odd i. */
        unsigned dest = (i % 2 == 0) ? i / 2 : r + i / 2;
        memcpy(out + dest * 64, x, 64);
    }
}

int lode_ref_scrypt_romix(uint8_t *b, unsigned r, uint64_t n)
{
    size_t block = 128 * (size_t)r;
    uint8_t *v = malloc(block * n);
    uint8_t *x = malloc(block), *t = malloc(block);
    if (v == NULL || x == NULL || t == NULL) {
        free(v);
        free(x);
        free(t);
        return -1;
    }
    memcpy(x, b, block);
    for (uint64_t i = 0; i < n; i++) {
        memcpy(v + i * block, x, block);
        lode_ref_scrypt_blockmix(x, t, r);
        memcpy(x, t, block);
    }
    for (uint64_t i = 0; i < n; i++) {
        /* Integerify: the first little-endian word of the last 64-byte
         * sub-block; for N <= 2^32 its low 32 bits suffice. */
        uint64_t j = load_le32(x + (2 * r - 1) * 64) % n;
        for (size_t k = 0; k < block; k++)
            t[k] = x[k] ^ v[j * block + k];
        lode_ref_scrypt_blockmix(t, x, r);
    }
    memcpy(b, x, block);
    free(v);
    free(x);
    free(t);
    return 0;
}

int lode_ref_scrypt(const void *password, size_t password_len, const void *salt,
                    size_t salt_len, uint64_t n, unsigned r, unsigned p, uint8_t *out,
                    size_t out_len)
{
    if (n < 2 || (n & (n - 1)) != 0 || n > (1ull << 32) || r == 0 || p == 0)
        return -1;
    size_t block = 128 * (size_t)r;
    uint8_t *b = malloc(block * p);
    if (b == NULL)
        return -1;
    lode_ref_pbkdf2_sha256(password, password_len, salt, salt_len, 1, b, block * p);
    for (unsigned i = 0; i < p; i++)
        if (lode_ref_scrypt_romix(b + i * block, r, n) != 0) {
            free(b);
            return -1;
        }
    lode_ref_pbkdf2_sha256(password, password_len, b, block * p, 1, out, out_len);
    free(b);
    return 0;
}

void lode_ref_scrypt_pow(const uint8_t header[80], uint8_t hash[32])
{
    if (lode_ref_scrypt(header, 80, header, 80, 1024, 1, 1, hash, 32) != 0) {
        fputs("lode: out of memory in the reference scrypt\n", stderr);
        abort();
    }
}
