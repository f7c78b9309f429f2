/* The CPU backend's Momentum search: one sweep of the 2^26 nonces of a
 * header on the calling worker's core (the dispatcher runs one worker per
 * core, each on its own header).
 *
 * Cache-aware in two steps. (1) SHA-512 gives eight birthdays per hash (4 or
 * 8 hashes at once in AVX2 or AVX-512 lanes where the CPU has them:
 * momentum_sha512_avx2.c, momentum_sha512_avx512.c); each
 * (birthday, nonce) pair is packed into 64 bits (the birthday's low 38 bits
 * above the 26-bit nonce) and appended to one of 4096 buckets chosen by the
 * birthday's top 12 bits: 4096 write streams, one cache line each, stay in
 * L2. (2) Each bucket (about 16 Ki entries, 128 KiB) is radix-sorted in
 * cache on its 38 birthday bits; equal neighbours are the collisions. The
 * full birthday is bucket << 38 | stored bits, so the result is exact. A
 * bucket that outgrows its capacity (about 8 standard deviations above the
 * mean: never in practice) spills into a list that is merged back into that
 * bucket before its sort, so it stays exact then too. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend-cpu/momentum_cpu.h"
#include "backend-cpu/momentum_sha512_lanes.h"
#include "core/base/settings.h"
#include "core/base/sha512_ref.h"
#include "core/base/status.h"

#define BUCKET_BITS 12
#define NBUCKETS (1u << BUCKET_BITS)
#define LOW_BITS (50 - BUCKET_BITS) /* birthday bits stored in an entry */
#define NONCE_BITS 26
#define NONCE_MASK ((UINT64_C(1) << NONCE_BITS) - 1)
#define DEFAULT_CAPACITY (MOMENTUM_NONCES / NBUCKETS + 1024)
/* Radix digits over the 38 stored birthday bits: 13 + 13 + 12. */
#define DIGIT_BITS 13
#define DIGITS (1u << DIGIT_BITS)

typedef struct spilled {
    uint32_t bucket;
    uint64_t entry;
} spilled;

struct cpu_momentum {
    uint32_t capacity;
    uint64_t *buckets; /* NBUCKETS x capacity */
    uint32_t fill[NBUCKETS];
    spilled *spill;
    size_t spill_count, spill_capacity;
    uint64_t *sort_a, *sort_b; /* capacity + spills of one bucket */
    size_t sort_capacity;
    uint32_t hist[3][DIGITS];
    momentum_sha512_fn sha512; /* lanes x 8 birthdays a call */
    unsigned lanes;
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (64 - (n))))

void momentum_birthdays8(const momentum_consts *c, uint32_t base, uint64_t out[8])
{
    const uint64_t *K = lode_ref_sha512_k;
    uint64_t w[80];
    w[0] = (uint64_t)__builtin_bswap32(base) << 32 | c->w0_low;
    w[1] = c->w1;
    w[2] = c->w2;
    w[3] = c->w3;
    w[4] = c->w4;
    for (int t = 5; t < 15; t++)
        w[t] = 0;
    w[15] = 288;
    for (int t = 16; t < 80; t++) {
        uint64_t x = w[t - 15], y = w[t - 2];
        uint64_t s0 = ROTR(x, 1) ^ ROTR(x, 8) ^ (x >> 7);
        uint64_t s1 = ROTR(y, 19) ^ ROTR(y, 61) ^ (y >> 6);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    const uint64_t *iv = lode_ref_sha512_iv;
    uint64_t a = iv[0], b = iv[1], cc = iv[2], d = iv[3], e = iv[4], f = iv[5], g = iv[6], h = iv[7];
    for (int t = 0; t < 80; t++) {
        uint64_t t1 = h + (ROTR(e, 14) ^ ROTR(e, 18) ^ ROTR(e, 41)) + (g ^ (e & (f ^ g))) + K[t] + w[t];
        uint64_t t2 = (ROTR(a, 28) ^ ROTR(a, 34) ^ ROTR(a, 39)) + ((a & b) | (cc & (a | b)));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = cc;
        cc = b;
        b = a;
        a = t1 + t2;
    }
    const uint64_t s[8] = {a, b, cc, d, e, f, g, h};
    for (int i = 0; i < 8; i++)
        out[i] = __builtin_bswap64(s[i] + iv[i]) >> 14;
}

momentum_sha512_fn momentum_sha512_pick(const char *want, unsigned *lanes, const char **name)
{
    /* want: NULL or "" = the best this CPU runs, else "avx512", "avx2" or
     * "portable" (falls back to the best below it that runs). */
    const int given = lode_setting_choice(LODE_SETTING_MOMENTUM_CPU_SHA);
    const char *env = want != NULL && want[0] != '\0' ? want
                      : given >= 0 ? lode_setting_info(LODE_SETTING_MOMENTUM_CPU_SHA)->words[given] : NULL;
#if defined(__x86_64__)
    bool any = env == NULL || env[0] == '\0';
    __builtin_cpu_init();
    if ((any || strcmp(env, "avx512") == 0) && __builtin_cpu_supports("avx512f")) {
        *lanes = 8;
        *name = "avx512";
        return momentum_birthdays_avx512;
    }
    if ((any || strcmp(env, "avx512") == 0 || strcmp(env, "avx2") == 0) && __builtin_cpu_supports("avx2")) {
        *lanes = 4;
        *name = "avx2";
        return momentum_birthdays_avx2;
    }
#else
    (void)env;
#endif
    *lanes = 1;
    *name = "portable";
    return momentum_birthdays8;
}

cpu_momentum *cpu_momentum_new(uint32_t bucket_capacity, const char *sha512)
{
    cpu_momentum *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->capacity = bucket_capacity ? bucket_capacity : DEFAULT_CAPACITY;
    const char *name;
    m->sha512 = momentum_sha512_pick(sha512, &m->lanes, &name);
    m->buckets = malloc((size_t)NBUCKETS * m->capacity * sizeof *m->buckets);
    m->sort_capacity = m->capacity;
    m->sort_a = malloc(m->sort_capacity * sizeof *m->sort_a);
    m->sort_b = malloc(m->sort_capacity * sizeof *m->sort_b);
    if (m->buckets == NULL || m->sort_a == NULL || m->sort_b == NULL) {
        cpu_momentum_free(m);
        return NULL;
    }
    return m;
}

void cpu_momentum_free(cpu_momentum *m)
{
    if (m == NULL)
        return;
    free(m->buckets);
    free(m->spill);
    free(m->sort_a);
    free(m->sort_b);
    free(m);
}

static int spill(cpu_momentum *m, uint32_t bucket, uint64_t entry)
{
    if (m->spill_count == m->spill_capacity) {
        size_t cap = m->spill_capacity ? 2 * m->spill_capacity : 1024;
        spilled *grown = realloc(m->spill, cap * sizeof *grown);
        if (grown == NULL)
            return LODE_ERR_NO_MEMORY;
        m->spill = grown;
        m->spill_capacity = cap;
    }
    m->spill[m->spill_count++] = (spilled){bucket, entry};
    return LODE_OK;
}

static int by_bucket(const void *x, const void *y)
{
    const spilled *a = x, *b = y;
    if (a->bucket != b->bucket)
        return a->bucket < b->bucket ? -1 : 1;
    return a->entry < b->entry ? -1 : a->entry > b->entry;
}

/* LSD radix sort of n entries on their stored birthday bits; returns the
 * sorted array (sort_a or sort_b). */
static uint64_t *sort_bucket(cpu_momentum *m, size_t n)
{
    memset(m->hist, 0, sizeof m->hist);
    uint64_t *src = m->sort_a, *dst = m->sort_b;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = src[i] >> NONCE_BITS;
        m->hist[0][k & (DIGITS - 1)]++;
        m->hist[1][(k >> DIGIT_BITS) & (DIGITS - 1)]++;
        m->hist[2][k >> (2 * DIGIT_BITS)]++;
    }
    for (int pass = 0; pass < 3; pass++) {
        uint32_t *h = m->hist[pass], sum = 0;
        for (uint32_t d = 0; d < DIGITS; d++) {
            uint32_t c = h[d];
            h[d] = sum;
            sum += c;
        }
        unsigned shift = NONCE_BITS + DIGIT_BITS * (unsigned)pass;
        for (size_t i = 0; i < n; i++)
            dst[h[(src[i] >> shift) & (DIGITS - 1)]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

int cpu_momentum_sweep(cpu_momentum *m, const uint8_t mid[32], momentum_pairs *pairs,
                       const atomic_int *abort)
{
    momentum_consts c;
    momentum_consts_init(&c, mid);
    memset(m->fill, 0, sizeof m->fill);
    m->spill_count = 0;
    const uint32_t cap = m->capacity;

    /* (1) Hash and partition. */
    const uint32_t step = 8 * m->lanes;
    for (uint32_t base = 0; base < MOMENTUM_NONCES; base += step) {
        if ((base & 0xffff) == 0 && atomic_load_explicit(abort, memory_order_relaxed))
            return 1;
        uint64_t bd[64];
        m->sha512(&c, base, bd);
        for (uint32_t j = 0; j < step; j++) {
            uint32_t bucket = (uint32_t)(bd[j] >> LOW_BITS);
            uint64_t entry = (bd[j] & ((UINT64_C(1) << LOW_BITS) - 1)) << NONCE_BITS | (base + j);
            uint32_t f = m->fill[bucket];
            if (f < cap) {
                m->buckets[(size_t)bucket * cap + f] = entry;
                m->fill[bucket] = f + 1;
            } else if (spill(m, bucket, entry) != LODE_OK) {
                return LODE_ERR_NO_MEMORY;
            }
        }
    }
    if (m->spill_count > 1)
        qsort(m->spill, m->spill_count, sizeof *m->spill, by_bucket);

    /* (2) Sort each bucket in cache; equal neighbours collide. */
    size_t s = 0;
    for (uint32_t bucket = 0; bucket < NBUCKETS; bucket++) {
        if ((bucket & 255) == 0 && atomic_load_explicit(abort, memory_order_relaxed))
            return 1;
        size_t extra = 0;
        while (s + extra < m->spill_count && m->spill[s + extra].bucket == bucket)
            extra++;
        size_t n = m->fill[bucket] + extra;
        if (n > m->sort_capacity) {
            uint64_t *a = realloc(m->sort_a, n * sizeof *a);
            if (a != NULL)
                m->sort_a = a;
            uint64_t *b = realloc(m->sort_b, n * sizeof *b);
            if (b != NULL)
                m->sort_b = b;
            if (a == NULL || b == NULL)
                return LODE_ERR_NO_MEMORY;
            m->sort_capacity = n;
        }
        memcpy(m->sort_a, m->buckets + (size_t)bucket * cap, m->fill[bucket] * sizeof *m->sort_a);
        for (size_t k = 0; k < extra; k++)
            m->sort_a[m->fill[bucket] + k] = m->spill[s + k].entry;
        s += extra;
        const uint64_t *sorted = sort_bucket(m, n);
        for (size_t i = 0; i + 1 < n;) {
            uint64_t key = sorted[i] >> NONCE_BITS;
            size_t j = i + 1;
            while (j < n && sorted[j] >> NONCE_BITS == key)
                j++;
            uint64_t birthday = (uint64_t)bucket << LOW_BITS | key;
            for (size_t x = i; x < j; x++)
                for (size_t y = x + 1; y < j; y++)
                    if (momentum_pairs_push(pairs, (uint32_t)(sorted[x] & NONCE_MASK),
                                            (uint32_t)(sorted[y] & NONCE_MASK), birthday) != 0)
                        return LODE_ERR_NO_MEMORY;
            i = j;
        }
    }
    return LODE_OK;
}
