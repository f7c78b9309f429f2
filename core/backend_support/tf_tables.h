/* Sieve primes and per-exponent tables for trial factoring (the CPU sieve
 * uses the primes and inverses; CUDA and OpenCL upload the tables;
 * core/base/tf_ref.h has the math).
 *
 * Per exponent p the usable sieve primes are the odd primes from 13 below
 * 2p + 1 (a larger one could equal a candidate q = 2kp + 1) other than p
 * (which never divides q); for each, the kernels need the inverse of
 * q_step = 2p 4620 mod r (root of class c: -(2pc + 1) / q_step mod r), p mod
 * r, seg mod r for the segment size seg, and floor((2^32 - 1) / r) for a
 * quick remainder. The first 13 (13 .. 61) are always usable (p >= 100000)
 * and are the kernels' per-word pattern primes. */
#ifndef LODE_BACKEND_SUPPORT_TF_TABLES_H
#define LODE_BACKEND_SUPPORT_TF_TABLES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_sieve_tables {
    uint32_t *prime, *inv, *pmod, *smod, *minv; /* count entries each (one allocation) */
    unsigned count;
    unsigned n_small; /* primes below seg: the first n_small */
} tf_sieve_tables;

/* The first `count` odd primes from 13, built once per process and
 * shared (every engine, the self-test's and the workers', takes them at
 * its start: a million primes are 0.1 s of host CPU): valid until the
 * process ends; NULL when memory ran out. */
const uint32_t *tf_sieve_primes(unsigned count);
/* x^-1 mod r for gcd(x, r) = 1 (extended Euclid). */
uint32_t tf_inverse_mod(uint32_t x, uint32_t r);
/* Fills t from the first nprimes of primes for exponent p. Returns 0, or
 * -1 when memory ran out. */
int tf_sieve_tables_build(const uint32_t *primes, unsigned nprimes, uint32_t p, uint32_t seg,
                          tf_sieve_tables *t);
void tf_sieve_tables_free(tf_sieve_tables *t);

/* Which of the first nprimes of primes are usable for exponent p, for a
 * GPU that builds the tables itself (one thread per entry, the same
 * formulas as tf_sieve_tables_build; its 5 x 4 MiB per exponent are then
 * never built or copied on the host): entry i of the tables is
 * primes[i < skip ? i : i + 1]. */
typedef struct tf_sieve_plan {
    unsigned count;   /* usable primes: tf_sieve_tables.count */
    unsigned skip;    /* index of p in primes (it never divides q), or count when p is not there */
    unsigned n_small; /* tf_sieve_tables.n_small */
} tf_sieve_plan;

/* Binary searches over the sorted primes: O(log nprimes). */
tf_sieve_plan tf_sieve_plan_of(const uint32_t *primes, unsigned nprimes, uint32_t p, uint32_t seg);

/* The tables a GPU built from plan (LODE_TF_CHECK_TABLES=1), against
 * tf_sieve_tables_build: read(ctx, i, out, count) copies device table i
 * (0 prime, 1 inv, 2 pmod, 3 smod, 4 minv) into out and returns a lode
 * status. Returns LODE_OK when every entry matches, LODE_ERR_DEVICE when
 * one differs (the first difference written to why), LODE_ERR_NO_MEMORY,
 * or read's error. */
int tf_sieve_tables_verify(const uint32_t *primes, unsigned nprimes, uint32_t p, uint32_t seg,
                           const tf_sieve_plan *plan, int (*read)(void *ctx, int table, uint32_t *out, unsigned count),
                           void *ctx, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif
