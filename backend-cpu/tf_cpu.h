/* The CPU backend's Mersenne trial factoring (core/base/tf_ref.h has the math).
 *
 * Per scan, blocks of TF_CPU_BLOCK_BITS consecutive indices n of one class
 * are sieved with the first `sieve_primes` odd primes above 11 (a bit per
 * n, cleared where some small prime divides q); each surviving q is tested
 * with a 2-limb (128-bit) Montgomery exponentiation, 2^p mod q == 1. */
#ifndef LODE_BACKEND_CPU_TF_CPU_H
#define LODE_BACKEND_CPU_TF_CPU_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/base/work.h"

#define TF_CPU_BLOCK_BITS (1u << 15)
#define TF_CPU_DEFAULT_SIEVE_PRIMES 4000u
#define TF_CPU_MAX_SIEVE_PRIMES 100000u

typedef struct cpu_tf cpu_tf;

/* sieve_primes 0 = the default; LODE_TF_SIEVE_PRIMES in the environment
 * overrides it (a tuning knob; clamped to 0 .. TF_CPU_MAX_SIEVE_PRIMES). */
cpu_tf *cpu_tf_new(unsigned sieve_primes);
void cpu_tf_free(cpu_tf *tf);
/* Per class: the residues of every sieve prime. The job is valid
 * (lode_tf_job_valid: the wrapper lode_handle_set_work checked it). */
int cpu_tf_set_work(cpu_tf *tf, const lode_tf_job *job);
/* Scans n in [start, start + count); appends each n whose q divides M(p). */
int cpu_tf_scan(cpu_tf *tf, uint64_t start, uint64_t count, lode_hits *hits, uint64_t *done,
                const atomic_int *abort);
/* 2^p mod q == 1 by Montgomery arithmetic (odd q < 2^96): for tests. */
int cpu_tf_montgomery_divides(uint32_t p, unsigned __int128 q);

#endif
