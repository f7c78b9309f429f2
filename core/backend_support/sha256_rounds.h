/* The SHA-256 round and schedule helpers (FIPS 180-4) of the host code:
 * the portable block function and the per-job SHA-256d precomputation
 * (sha256d_job.c), and the CPU backend's scalar scan. Inline, so each user
 * compiles them with its own flags. */
#ifndef LODE_BACKEND_SUPPORT_SHA256_ROUNDS_H
#define LODE_BACKEND_SUPPORT_SHA256_ROUNDS_H

#include <stdint.h>

static inline uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }
static inline uint32_t big_sigma0(uint32_t x) { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
static inline uint32_t big_sigma1(uint32_t x) { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
static inline uint32_t small_sigma0(uint32_t x) { return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3); }
static inline uint32_t small_sigma1(uint32_t x) { return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10); }
static inline uint32_t choose(uint32_t e, uint32_t f, uint32_t g) { return ((f ^ g) & e) ^ g; }
/* b ^ c equals the previous round's a ^ b, which the compiler reuses. */
static inline uint32_t majority(uint32_t a, uint32_t b, uint32_t c)
{
    return ((a ^ b) & (b ^ c)) ^ b;
}

static inline uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void store_be32(uint8_t *p, uint32_t x)
{
    p[0] = (uint8_t)(x >> 24);
    p[1] = (uint8_t)(x >> 16);
    p[2] = (uint8_t)(x >> 8);
    p[3] = (uint8_t)x;
}

static inline uint32_t byteswap32(uint32_t x)
{
    return x >> 24 | (x >> 8 & 0xff00) | (x << 8 & 0xff0000) | x << 24;
}

static inline uint32_t schedule_word(const uint32_t w[], unsigned t)
{
    return small_sigma1(w[t - 2]) + w[t - 7] + small_sigma0(w[t - 15]) + w[t - 16];
}

/* Working variables named as in FIPS 180-4. */
typedef struct sha256_vars {
    uint32_t a, b, c, d, e, f, g, h;
} sha256_vars;

/* One round; kw is K[t] + W[t]. The renaming costs nothing once inlined. */
static inline void sha256_round(sha256_vars *v, uint32_t kw)
{
    uint32_t t1 = v->h + big_sigma1(v->e) + choose(v->e, v->f, v->g) + kw;
    uint32_t t2 = big_sigma0(v->a) + majority(v->a, v->b, v->c);
    v->h = v->g;
    v->g = v->f;
    v->f = v->e;
    v->e = v->d + t1;
    v->d = v->c;
    v->c = v->b;
    v->b = v->a;
    v->a = t1 + t2;
}

static inline sha256_vars vars_from_state(const uint32_t s[8])
{
    return (sha256_vars){s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]};
}

#endif
