/* Reference SHA-256 (FIPS 180-4), HMAC (RFC 2104) and PBKDF2 (RFC 8018),
 * written straight from the standards for clarity, not speed. */
#include "core/base/sha256_ref.h"

#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t IV[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

static uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t state[8], const uint8_t block[64])
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
               (uint32_t)block[4 * t + 2] << 8 | (uint32_t)block[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; t++) {
        uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + S1 + ch + K[t] + w[t];
        uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

void lode_ref_sha256_init(lode_ref_sha256_ctx *ctx)
{
    memcpy(ctx->state, IV, sizeof IV);
    ctx->length = 0;
    ctx->fill = 0;
}

void lode_ref_sha256_update(lode_ref_sha256_ctx *ctx, const void *data, size_t len)
{
    const uint8_t *p = data;
    ctx->length += len;
    while (len > 0) {
        size_t take = 64 - ctx->fill < len ? 64 - ctx->fill : len;
        memcpy(ctx->block + ctx->fill, p, take);
        ctx->fill += take;
        p += take;
        len -= take;
        if (ctx->fill == 64) {
            compress(ctx->state, ctx->block);
            ctx->fill = 0;
        }
    }
}

void lode_ref_sha256_final(lode_ref_sha256_ctx *ctx, uint8_t digest[32])
{
    uint64_t bits = ctx->length * 8;
    uint8_t pad = 0x80;
    lode_ref_sha256_update(ctx, &pad, 1);
    uint8_t zero = 0;
    while (ctx->fill != 56)
        lode_ref_sha256_update(ctx, &zero, 1);
    uint8_t len_be[8];
    for (int i = 0; i < 8; i++)
        len_be[i] = (uint8_t)(bits >> (56 - 8 * i));
    lode_ref_sha256_update(ctx, len_be, 8);
    for (int i = 0; i < 8; i++)
        for (int b = 0; b < 4; b++)
            digest[4 * i + b] = (uint8_t)(ctx->state[i] >> (24 - 8 * b));
}

void lode_ref_sha256(const void *data, size_t len, uint8_t digest[32])
{
    lode_ref_sha256_ctx ctx;
    lode_ref_sha256_init(&ctx);
    lode_ref_sha256_update(&ctx, data, len);
    lode_ref_sha256_final(&ctx, digest);
}

void lode_ref_sha256d(const void *data, size_t len, uint8_t digest[32])
{
    uint8_t first[32];
    lode_ref_sha256(data, len, first);
    lode_ref_sha256(first, sizeof first, digest);
}

void lode_ref_sha256d_pow(const uint8_t header[80], uint8_t hash[32]) { lode_ref_sha256d(header, 80, hash); }

void lode_ref_sha256_midstate(const uint8_t first64[64], uint32_t state[8])
{
    memcpy(state, IV, sizeof IV);
    compress(state, first64);
}

/* HMAC over the concatenation msg1 || msg2 (PBKDF2 appends the block index). */
static void hmac_sha256_two(const void *key, size_t key_len, const void *msg1, size_t len1,
                            const void *msg2, size_t len2, uint8_t mac[32])
{
    uint8_t k[64] = {0};
    if (key_len > 64)
        lode_ref_sha256(key, key_len, k);
    else if (key_len > 0)
        memcpy(k, key, key_len);

    uint8_t pad[64];
    uint8_t inner[32];
    lode_ref_sha256_ctx ctx;
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    lode_ref_sha256_init(&ctx);
    lode_ref_sha256_update(&ctx, pad, 64);
    lode_ref_sha256_update(&ctx, msg1, len1);
    lode_ref_sha256_update(&ctx, msg2, len2);
    lode_ref_sha256_final(&ctx, inner);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    lode_ref_sha256_init(&ctx);
    lode_ref_sha256_update(&ctx, pad, 64);
    lode_ref_sha256_update(&ctx, inner, 32);
    lode_ref_sha256_final(&ctx, mac);
}

void lode_ref_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                          uint8_t mac[32])
{
    hmac_sha256_two(key, key_len, msg, msg_len, NULL, 0, mac);
}

/* PBKDF2 block i: U1 = HMAC(P, S || be32(i)), Uj = HMAC(P, Uj-1), T = xor of all U. */
void lode_ref_pbkdf2_sha256(const void *password, size_t password_len, const void *salt,
                            size_t salt_len, uint64_t iterations, uint8_t *out, size_t out_len)
{
    for (uint32_t block = 1; out_len > 0; block++) {
        uint8_t index_be[4] = {(uint8_t)(block >> 24), (uint8_t)(block >> 16),
                               (uint8_t)(block >> 8), (uint8_t)block};
        uint8_t u[32], t[32];
        hmac_sha256_two(password, password_len, salt, salt_len, index_be, 4, u);
        memcpy(t, u, 32);
        for (uint64_t j = 1; j < iterations; j++) {
            hmac_sha256_two(password, password_len, u, 32, NULL, 0, u);
            for (int b = 0; b < 32; b++)
                t[b] ^= u[b];
        }
        size_t take = out_len < 32 ? out_len : 32;
        memcpy(out, t, take);
        out += take;
        out_len -= take;
    }
}
