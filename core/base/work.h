/* The unit of work a backend receives and the results it returns.
 *
 * One shape serves every workload (docs/ARCHITECTURE.md has the mapping):
 * a job (lode_work) is installed once with set_work, then ranges of an index
 * space (lode_range) are scanned, each returning hits (lode_hit). What an
 * index and a hit mean depends on the algorithm's lode_work_kind. */
#ifndef LODE_CORE_WORK_H
#define LODE_CORE_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/algo.h"
#include "core/base/u256.h"

/* The most versions one SHA-256d job carries (version rolling, BIP 310 and
 * BIP 320): the CUDA and OpenCL kernels hash exactly this many per nonce. */
#define LODE_VERSIONS_MAX 8

/* A block header to search (nonce scans and collision searches). */
typedef struct lode_header_job {
    uint8_t header[80]; /* the nonce field (bytes 76..79) is replaced per index */
    lode_u256 target;   /* a hit's PoW hash is at or below this */
    /* SHA-256d only: with version_count >= 1, each index (nonce) is hashed
     * once per version, versions[i] in place of the header's bytes 0..3, and
     * a hit names its version. Headers that differ only in the version share
     * the second block, so the GPUs compute its schedule once for all of
     * them. 0 = the header as it is. */
    uint32_t version_count;
    uint32_t versions[LODE_VERSIONS_MAX];
} lode_header_job;

/* One class of a trial-factoring assignment: factors of 2^exponent - 1 in
 * [2^bit_min, 2^bit_max), split into classes of k mod num_classes; one job
 * covers one class (core/base/tf_ref.h). */
typedef struct lode_tf_job {
    uint32_t exponent;
    uint32_t bit_min, bit_max;
    uint32_t num_classes;
    uint32_t class_index; /* the class of k this job covers: k = class_index + num_classes * index */
    /* With proof set, a scan also reports every index whose q passes
     * C(p, q, proof_bits) (core/base/tf_ref.h), prime or not: the class
     * driver keeps the primes as the run's proof. */
    bool proof;
    uint32_t proof_bits;
} lode_tf_job;

typedef struct lode_work {
    lode_algo algo;
    uint64_t seq; /* the core's job sequence number, echoed in results */
    /* The job source's own marks, carried untouched with the job and its
     * hits, so a hit names what it was found for however late it is
     * re-checked (the mining session: the job's epoch and the header's
     * extranonce2 counter). */
    uint64_t source_tag[2];
    union {
        lode_header_job header; /* LODE_WORK_NONCE_SCAN, LODE_WORK_COLLISION_SEARCH */
        lode_tf_job factor; /* LODE_WORK_TF */
    };
} lode_work;

/* Indices [start, start + count) of the job's index space. */
typedef struct lode_range {
    uint64_t start;
    uint64_t count;
} lode_range;

typedef struct lode_hit {
    uint64_t index;     /* nonce; header nonce (collision); k (trial factoring) */
    uint32_t pair[2];   /* LODE_WORK_COLLISION_SEARCH: colliding nonces, a < b */
    uint32_t version;   /* a version-rolled job's hit: the version it met the target with; else 0 */
} lode_hit;

/* A growable list of hits owned by the caller of scan. */
typedef struct lode_hits {
    lode_hit *items;
    size_t count, capacity;
} lode_hits;

/* Appends a hit. Returns 0, or -1 if memory ran out (the hit is lost, and
 * the caller must treat the whole range as failed rather than incomplete). */
int lode_hits_push(lode_hits *hits, lode_hit hit);
/* Appends the nonces a device reported for its launch over nonces
 * [start, start + count). keep, if given, filters them (a GPU's top-word
 * prefilter re-hashed exactly, say). Returns LODE_OK, LODE_ERR_DEVICE if a
 * nonce lies outside the launch (the device is faulty: nothing it said can
 * be trusted), or LODE_ERR_NO_MEMORY. */
int lode_hits_push_nonces(lode_hits *hits, const uint32_t *nonces, uint32_t n, uint64_t start,
                          uint64_t count, bool (*keep)(const void *ctx, uint32_t nonce),
                          const void *ctx);
/* Appends base + offsets[i] for the offsets a device reported for its launch
 * over indices [base, base + count) (trial factoring). Returns LODE_OK,
 * LODE_ERR_DEVICE if an offset lies outside the launch, or
 * LODE_ERR_NO_MEMORY. */
int lode_hits_push_offsets(lode_hits *hits, uint64_t base, uint32_t count, const uint32_t *offsets, uint32_t n);
/* The one order of hits (a qsort comparator of lode_hit): by index, then
 * version, then pair; equal hits are the same hit reported twice. */
int lode_hit_compare(const void *a, const void *b);
/* The number of hashes a scan of count indices of work does: count, times
 * the versions of a version-rolled job. */
uint64_t lode_work_hashes(const lode_work *work, uint64_t count);
void lode_hits_clear(lode_hits *hits);
void lode_hits_free(lode_hits *hits);

#endif
