#include "backend-cpu/tf_cpu.h"

#include <stdlib.h>
#include <string.h>

#include "core/backend_support/tf_tables.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/tf_ref.h"

typedef unsigned __int128 u128;

typedef struct sieve_prime {
    uint32_t r;    /* the prime */
    uint32_t root; /* r divides q exactly when n = root (mod r) */
} sieve_prime;

struct cpu_tf {
    unsigned want_primes;
    const uint32_t *primes;  /* the first want_primes odd primes above 11 (shared) */
    tf_sieve_tables tables;  /* the usable ones for `exponent`, their inverses */
    uint32_t exponent;       /* whose tables are built (0: none) */
    sieve_prime *sp;         /* the usable primes with their roots for this class */
    unsigned sp_count;
    lode_tf_job job;
    u128 q_step; /* q(n + 1) - q(n) = 2 p 4620 */
    u128 q_base; /* q(0) = 2 p c + 1 */
    uint64_t bits[TF_CPU_BLOCK_BITS / 64];
};

cpu_tf *cpu_tf_new(unsigned sieve_primes)
{
    cpu_tf *tf = calloc(1, sizeof *tf);
    if (tf == NULL)
        return NULL;
    tf->want_primes = lode_setting_unsigned_in(LODE_SETTING_TF_SIEVE_PRIMES, sieve_primes ? sieve_primes : TF_CPU_DEFAULT_SIEVE_PRIMES, 0,
                                      TF_CPU_MAX_SIEVE_PRIMES);
    tf->primes = tf_sieve_primes(tf->want_primes);
    tf->sp = malloc((tf->want_primes + 1) * sizeof *tf->sp);
    if (tf->primes == NULL || tf->sp == NULL) {
        cpu_tf_free(tf);
        return NULL;
    }
    return tf;
}

void cpu_tf_free(cpu_tf *tf)
{
    if (tf == NULL)
        return;
    tf_sieve_tables_free(&tf->tables);
    free(tf->sp);
    free(tf);
}

int cpu_tf_set_work(cpu_tf *tf, const lode_tf_job *job)
{
    const uint64_t p = job->exponent, c = job->class_index;
    /* Per exponent: the usable primes (the same rule as the GPUs': below
     * 2p + 1, never p) and their inverses of q_step (core/backend_support/tf_tables.h). */
    if (tf->exponent != job->exponent) {
        tf_sieve_tables_free(&tf->tables);
        tf->exponent = 0;
        if (tf_sieve_tables_build(tf->primes, tf->want_primes, job->exponent, TF_CPU_BLOCK_BITS, &tf->tables) != 0)
            return LODE_ERR_NO_MEMORY;
        tf->exponent = job->exponent;
    }
    tf->job = *job;
    tf->q_step = (u128)2 * p * LODE_TF_CLASSES;
    tf->q_base = (u128)2 * p * c + 1;
    /* Per class: the root -(2pc + 1) / q_step mod r of each prime. */
    const tf_sieve_tables *t = &tf->tables;
    for (unsigned i = 0; i < t->count; i++) {
        const uint64_t r = t->prime[i], base = (2 * (uint64_t)t->pmod[i] * c + 1) % r;
        tf->sp[i] = (sieve_prime){.r = (uint32_t)r, .root = (uint32_t)((r - base) % r * t->inv[i] % r)};
    }
    tf->sp_count = t->count;
    return LODE_OK;
}

/* ---- 2-limb Montgomery arithmetic, R = 2^128, odd q < 2^96 ---- */

#define LO(x) ((uint64_t)(x))
#define HI(x) ((uint64_t)((x) >> 64))

/* a * b / R mod q, for a, b < q; the result is fully reduced. */
static inline u128 mont_mul(u128 a, u128 b, u128 q, uint64_t qinv)
{
    uint64_t a0 = LO(a), a1 = HI(a), b0 = LO(b), b1 = HI(b), q0 = LO(q), q1 = HI(q);
    u128 p00 = (u128)a0 * b0, p01 = (u128)a0 * b1, p10 = (u128)a1 * b0, p11 = (u128)a1 * b1;
    uint64_t t0 = LO(p00);
    u128 s = (u128)HI(p00) + LO(p01) + LO(p10);
    uint64_t t1 = LO(s);
    s = (u128)HI(s) + HI(p01) + HI(p10) + p11; /* a, b < 2^96: fits */
    uint64_t t2 = LO(s), t3 = HI(s);

    uint64_t m = t0 * qinv; /* t0 + m q0 = 0 mod 2^64 */
    u128 mq0 = (u128)m * q0, mq1 = (u128)m * q1;
    s = (u128)t0 + LO(mq0);
    s = (u128)t1 + HI(mq0) + LO(mq1) + HI(s);
    t1 = LO(s);
    s = (u128)t2 + HI(mq1) + HI(s);
    t2 = LO(s);
    t3 += HI(s);

    m = t1 * qinv;
    mq0 = (u128)m * q0;
    mq1 = (u128)m * q1;
    s = (u128)t1 + LO(mq0);
    s = (u128)t2 + HI(mq0) + LO(mq1) + HI(s);
    t2 = LO(s);
    s = (u128)t3 + HI(mq1) + HI(s);
    t3 = LO(s); /* (ab + mq) / R < 2q < 2^97: no further carry */
    u128 r = (u128)t3 << 64 | t2;
    return r >= q ? r - q : r;
}

/* x / 2^32 mod q for x < q (one Montgomery step by 32 bits; qinv = -1/q
 * mod 2^64, whose low half is -1/q mod 2^32). The low 32 bits of
 * x + m q are zero, so the sum's carry out of them is 1 exactly when x's
 * low half is not zero; the result is below 2q < 2^97 before reduction. */
static inline u128 div_2_32(u128 x, u128 q, uint64_t qinv)
{
    const uint32_t m = (uint32_t)x * (uint32_t)qinv;
    const u128 mq = (u128)m * LO(q) + (((u128)m * HI(q)) << 64); /* < 2^128: q < 2^96 */
    u128 r = (x >> 32) + (mq >> 32) + ((uint32_t)x != 0);
    return r >= q ? r - q : r;
}

/* Whether 2^p mod q == 1 (returns 1) or, with a proof (mask: the low t
 * bits, lode_tf_report_mask_lo), whether q passes C(p, q, t) (returns 2);
 * 0 for neither. C is defined on R = 2^96 residues, here R = 2^128, so
 * both sides are divided by 2^32 first. */
static inline int mont_pow2_test(uint32_t p, u128 q, bool proof, uint64_t mask)
{
    uint64_t q0 = LO(q);
    uint64_t x = q0 * 3 ^ 2; /* q^-1 mod 2^5, then Newton: 10, 20, 40, 80 bits */
    for (int i = 0; i < 4; i++)
        x *= 2 - q0 * x;
    uint64_t qinv = (uint64_t)0 - x;
    u128 one = ((u128)0 - q) % q; /* R mod q: 1 in Montgomery form */
    u128 v = one;
    for (int i = 31 - __builtin_clz(p); i >= 0; i--) {
        v = mont_mul(v, v, q, qinv);
        if ((p >> i) & 1) {
            v <<= 1;
            if (v >= q)
                v -= q;
        }
    }
    if (v == one)
        return 1;
    return proof && ((LO(div_2_32(v, q, qinv)) ^ LO(div_2_32(one, q, qinv))) & mask) == 0 ? 2 : 0;
}

int cpu_tf_montgomery_divides(uint32_t p, u128 q)
{
    return (q & 1) && q > 1 && (q >> 96) == 0 && mont_pow2_test(p, q, false, 0) == 1;
}

/* Clears the bits of n in [n0, n0 + nbits) whose q has a sieve prime. */
static void sieve_block(cpu_tf *tf, uint64_t n0, unsigned nbits)
{
    unsigned words = (nbits + 63) / 64;
    memset(tf->bits, 0xff, words * sizeof tf->bits[0]);
    if (nbits % 64)
        tf->bits[words - 1] = (UINT64_C(1) << (nbits % 64)) - 1;
    for (unsigned i = 0; i < tf->sp_count; i++) {
        uint32_t r = tf->sp[i].r;
        uint32_t at = (uint32_t)((tf->sp[i].root + r - n0 % r) % r);
        for (; at < nbits; at += r)
            tf->bits[at / 64] &= ~(UINT64_C(1) << (at % 64));
    }
}

int cpu_tf_scan(cpu_tf *tf, uint64_t start, uint64_t count, lode_hits *hits, uint64_t *done,
                const atomic_int *abort)
{
    *done = 0;
    const uint32_t p = tf->job.exponent;
    const bool proof = tf->job.proof;
    const uint64_t mask = lode_tf_report_mask_lo(&tf->job);
    for (uint64_t off = 0; off < count;) {
        uint64_t n0 = start + off;
        unsigned nbits = count - off < TF_CPU_BLOCK_BITS ? (unsigned)(count - off) : TF_CPU_BLOCK_BITS;
        sieve_block(tf, n0, nbits);
        if (n0 == 0 && tf->job.class_index == 0)
            tf->bits[0] &= ~UINT64_C(1); /* k = 0: q = 1 is no factor */
        u128 q0 = tf->q_base + tf->q_step * n0;
        for (unsigned w = 0; w < (nbits + 63) / 64; w++) {
            uint64_t bits = tf->bits[w];
            while (bits != 0) {
                unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
                bits &= bits - 1;
                if (mont_pow2_test(p, q0 + tf->q_step * i, proof, mask) != 0 &&
                    lode_hits_push(hits, (lode_hit){.index = n0 + i}) != 0)
                    return LODE_ERR_NO_MEMORY;
            }
        }
        off += nbits;
        *done = off;
        if (atomic_load_explicit(abort, memory_order_relaxed))
            break;
    }
    return LODE_OK;
}
