/* Mersenne trial factoring: the plain reference and the assignment rules.
 *
 * A factor q of M(p) = 2^p - 1 (p prime) has the form q = 2kp + 1 with
 * q = +-1 (mod 8); q divides M(p) iff 2^p mod q == 1. The k of one
 * assignment are split into LODE_TF_CLASSES classes (k mod 4620); a class
 * whose every q is 3 or 5 mod 8, or divisible by 3, 5, 7 or 11, holds no
 * factor and is skipped: 960 classes of 4620 remain.
 *
 * Within class c the index n stands for k = c + 4620 n; a backend scans a
 * range of n (lode_range) and reports each n whose q divides M(p).
 *
 * Bounds (checked by lode_tf_validate, as mfaktc's parse.c):
 *   exponent p: prime, 100 000 <= p < 2^32
 *   1 <= bit_min < bit_max <= 95, so every q < 2^95
 *   (bit_max - 1) - log2(p) <= 63.9, so k < 2^63.9 and n < 2^52
 * Exactly the q in [2^bit_min, 2^bit_max) are tested.
 *
 * This file is deliberately slow and simple (shift-and-add modular
 * multiplication on unsigned __int128): it shares no code with the
 * backends' Montgomery/Barrett kernels and re-checks every factor they
 * report. */
#ifndef LODE_CORE_TF_REF_H
#define LODE_CORE_TF_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/work.h"

#define LODE_TF_CLASSES 4620u
#define LODE_TF_NEEDED_CLASSES 960u
#define LODE_TF_MIN_EXPONENT 100000u
#define LODE_TF_MAX_BITS 95u

typedef unsigned __int128 lode_u128;

/* Is p prime (trial division; p < 2^32)? */
bool lode_tf_is_prime(uint32_t p);
/* Checks an assignment against the bounds above. Returns 0, or -1 with one
 * line saying why in err. */
int lode_tf_validate(uint32_t p, unsigned bit_min, unsigned bit_max, char *err, size_t err_len);
/* The same without the 2^63.9 rule: what a device accepts as a job. The k
 * of such a job are clamped below 2^64 (lode_tf_calculate_k saturates), so
 * a range past that is tested only up to k = 2^64 - 1; the self-test has
 * such entries (narrowed around their k, as mfaktc's). */
int lode_tf_validate_job(uint32_t p, unsigned bit_min, unsigned bit_max, char *err, size_t err_len);
/* A class a device may install: 4620 classes, class_index below that, proof_bits
 * at most LODE_TF_PROOF_MAX_T with a proof, and
 * lode_tf_validate_job's bounds. */
bool lode_tf_job_valid(const lode_tf_job *job);
/* The largest k with 2kp + 1 < 2^bits (mfaktc's calculate_k), at most
 * 2^64 - 1. */
uint64_t lode_tf_calculate_k(uint32_t p, unsigned bits);
/* q = 2kp + 1. */
lode_u128 lode_tf_q(uint32_t p, uint64_t k);
/* Can class c (k = c mod 4620) hold a factor of M(p)? */
bool lode_tf_class_needed(uint32_t p, uint32_t c);
/* The index range [*n_begin, *n_end) of class c: the n with k = c + 4620 n
 * and 2^bit_min <= q < 2^bit_max (empty if none). */
void lode_tf_class_range(uint32_t p, unsigned bit_min, unsigned bit_max, uint32_t c,
                         uint64_t *n_begin, uint64_t *n_end);
/* The candidates of an assignment: the indices of its needed classes, what
 * the devices' counters count when they run it all. */
uint64_t lode_tf_candidates(uint32_t p, unsigned bit_min, unsigned bit_max);
/* k of index n in class c. */
static inline uint64_t lode_tf_k(uint32_t c, uint64_t n) { return c + (uint64_t)LODE_TF_CLASSES * n; }
/* 2^p mod q == 1, for odd q < 2^95 (the reference test). */
bool lode_tf_divides(uint32_t p, lode_u128 q);
/* Decimal digits of q (buf of at least 40 bytes). */
void lode_tf_u128_str(lode_u128 q, char *buf);
/* Verifiable trial factoring (docs/TF-PROOF.md): besides its factors, a run
 * lists every prime q of its range that passes
 *   C(p, q, t):  (2^(p+96) mod q) mod 2^t == (2^96 mod q) mod 2^t,
 * a test on the R = 2^96 Montgomery residue the GPU kernels already hold
 * (every factor passes it). t <= LODE_TF_PROOF_MAX_T. */
#define LODE_TF_PROOF_MAX_T 64u
/* Below this, a q may be one of a device's own sieve primes (at most 2^25
 * for 2 million sieve primes) and be sieved out: the class driver lists
 * the q below it on the host and ignores devices' reports of them. */
#define LODE_TF_PROOF_HOST_LIMIT ((lode_u128)1 << 25)
/* What a trial-factoring hit is (hash[0] of lode_algo_info.check_hit): a
 * factor, and/or a prime passing C at or above LODE_TF_PROOF_HOST_LIMIT (a
 * proof entry). A genuine hit with neither flag is a composite q passing
 * C: reported by design, listed nowhere. */
#define LODE_TF_HIT_FACTOR 1u
#define LODE_TF_HIT_PROOF 2u
/* The kernels' report test for job j (every backend): a candidate is
 * reported when its residue v and one = R mod q (R = 2^96) agree on the
 * bits of the low 64-bit mask and of the high 32-bit mask: all bits
 * without a proof (v == one: a factor), the low t bits with one (C). */
static inline uint64_t lode_tf_report_mask_lo(const lode_tf_job *j)
{
    return !j->proof || j->proof_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << j->proof_bits) - 1;
}
static inline uint32_t lode_tf_report_mask_hi(const lode_tf_job *j) { return j->proof ? 0 : UINT32_MAX; }
/* C(p, q, t) for odd q < 2^95, by the plain reference arithmetic. */
bool lode_tf_proof_condition(uint32_t p, lode_u128 q, unsigned t);
/* Is q prime? Deterministic Miller-Rabin to the prime bases 2..41 below
 * 3.3e24, Baillie-PSW (base-2 strong test and a strong Lucas test) above;
 * any q < 2^127. */
bool lode_tf_is_prime_u128(lode_u128 q);
/* Credit of TF of M(p) from 2^bit_min to 2^bit_max in GHz-days: the
 * PrimeNet formula (as documented in mfaktc's output.c), summed per bit
 * level b = bit_min+1 .. bit_max: C(b) * 2^(b-48) * 1680 / p with C =
 * 0.011160 for b <= 62, 0.017832 for b = 63, 64 and 0.016968 above. */
double lode_tf_ghz_days(uint32_t p, unsigned bit_min, unsigned bit_max);

#endif
