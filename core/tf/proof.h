/* The proof of work of a trial-factoring run (docs/TF-PROOF.md, issue #18).
 *
 * A run of assignment (p, a, b) lists every prime q = 2kp + 1, q = +-1 mod 8,
 * in [2^a, 2^b) that passes C(p, q, t) (core/base/tf_ref.h). The list depends
 * only on (p, a, b, t): any backend, device, sieve depth or resumed run gives
 * the same list, and a run that skipped part of the range lists fewer.
 *
 * The proof file, one per assignment (M<p>_<a>_<b>.proof beside the
 * results), is text, written atomically (temporary file, fsync, rename):
 *
 *   lode-tf-proof 1
 *   exponent 66362159
 *   bits 73 74
 *   t 30
 *   expected 1299.9
 *   count 1287
 *   sha256 <64 hex digits: SHA-256 of the list as written below>
 *   <q, decimal, ascending, one per line>
 *   ...
 *   end
 *
 * The digest covers the list lines exactly as written, each ending in "\n"
 * (the concatenation of "q\n" in ascending order; the empty string for an
 * empty list). */
#ifndef LODE_TF_PROOF_H
#define LODE_TF_PROOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/base/tf_ref.h"
#include "core/tf/worktodo.h"

#define LODE_TF_PROOF_FORMAT 1
/* t is chosen so that the expected count lies in [TARGET, 2 TARGET). */
#define LODE_TF_PROOF_TARGET 1000.0

/* N(p, a, b): the expected number of prime q = 2kp + 1, q = +-1 mod 8, in
 * [2^a, 2^b): (Li(2^b) - Li(2^a)) / (2 (p - 1)). */
double lode_tf_proof_candidates(uint32_t p, unsigned a, unsigned b);
/* t = max(0, floor(log2(N / LODE_TF_PROOF_TARGET))), at most
 * LODE_TF_PROOF_MAX_T. */
unsigned lode_tf_proof_bits(uint32_t p, unsigned a, unsigned b);
/* E = N 2^-t: the expected length of the list. */
double lode_tf_proof_expected(uint32_t p, unsigned a, unsigned b, unsigned t);

/* The SHA-256 of the list (sorted ascending, as the file writes it) in
 * lower-case hex. */
void lode_tf_proof_digest(const lode_u128 *q, size_t n, char hex[65]);

/* dir/M<p>_<a>_<b>.proof (dir NULL or "": the current directory). */
void lode_tf_proof_path(const char *dir, const lode_tf_assignment *a, char *out, size_t len);

/* Writes the proof file of (p, a, b, t) with the list q[0..n) (sorted
 * ascending, no repeats), atomically. 0, or -1 with errno set. */
int lode_tf_proof_write(const char *path, uint32_t p, unsigned a, unsigned b, unsigned t, const lode_u128 *q,
                        size_t n);

/* Every prime q = 2kp + 1 (k >= 1), q = +-1 mod 8, in [2^a, 2^b) with
 * q < limit that passes C(p, q, t), ascending, into a malloc'd *out (NULL
 * when none). For the q a sieve would remove as one of its own primes
 * (q below the sieve's largest prime): the host lists those itself. 0, or
 * -1 when out of memory. */
int lode_tf_proof_enumerate(uint32_t p, unsigned a, unsigned b, unsigned t, lode_u128 limit, lode_u128 **out,
                            size_t *n);

/* `lode tf --verify PATH`: checks the proof file: its header (format,
 * exponent prime and in bounds, bits valid, t as lode_tf_proof_bits
 * chooses, expected as computed here), every q (decimal, ascending without
 * repeats, prime, of the form 2kp + 1 with k >= 1, +-1 mod 8, inside
 * [2^a, 2^b), passing C), count and digest as the header says, the "end"
 * line, and the count not below E - 5 sqrt(E). Prints what it checked to
 * out, one line per check, and for a failure the first failing q (or line)
 * and the reason. 0 when the proof holds, 1 when not (including an
 * unreadable or malformed file). */
int lode_tf_proof_verify(const char *path, FILE *out);

#endif
