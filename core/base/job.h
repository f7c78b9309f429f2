/* A mining job as a job source hands it over (stratum v1 or
 * getblocktemplate), and the shares found on it.
 *
 * Both sources describe a block the same way: a coinbase split around an
 * extranonce (coinb1 || extranonce1 || extranonce2 || coinb2, the non-witness
 * serialisation, so its SHA-256d is the txid), the merkle branch that joins
 * the coinbase txid to the root, and the other header fields. The mining
 * session (core/mining/mining.h) rolls extranonce2, the version bits and ntime to
 * turn one job into as many 2^32-nonce headers as the devices need. */
#ifndef LODE_CORE_JOB_H
#define LODE_CORE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/algo.h"
#include "core/base/u256.h"

#define LODE_JOB_ID_MAX 64         /* bytes of a job id, NUL included */
#define LODE_EXTRANONCE_MAX 32     /* bytes of extranonce1, and of extranonce2 */
#define LODE_MERKLE_BRANCH_MAX 32  /* a branch of 32 hashes covers 2^32 transactions */

typedef struct lode_job {
    char id[LODE_JOB_ID_MAX];  /* the source's job id (stratum job_id), for submits */
    lode_algo algo;
    uint32_t version;          /* nVersion as the job gives it */
    uint32_t version_mask;     /* version bits lode may roll (BIP 310/320); 0 = none */
    uint8_t prevhash[32];      /* header bytes 4..35, internal byte order */
    uint32_t nbits;            /* the block's compact target */
    uint32_t ntime;            /* header time as the job gives it */
    uint32_t ntime_roll_max;   /* seconds ntime may run ahead of the job's; 0 = fixed */
    uint8_t *coinb1, *coinb2;  /* owned by the job (lode_job_free) */
    size_t coinb1_len, coinb2_len;
    uint8_t extranonce1[LODE_EXTRANONCE_MAX];
    size_t extranonce1_len;    /* 0..LODE_EXTRANONCE_MAX */
    size_t extranonce2_len;    /* 1..LODE_EXTRANONCE_MAX */
    uint8_t branch[LODE_MERKLE_BRANCH_MAX][32]; /* raw hashes, internal order */
    size_t branch_len;
    lode_u256 share_target;    /* shares at or below it are submitted */
    /* Older jobs are dead: a share found on one is stale and never sent. */
    bool clean;
    /* Which source connection the job belongs to (the source's own count);
     * a share of another generation is stale. */
    uint64_t generation;
} lode_job;

/* Deep copy (coinb1/coinb2 duplicated). Returns 0, or -1 if memory ran out
 * (dst is then empty and may be freed). */
int lode_job_copy(lode_job *dst, const lode_job *src);
/* Frees coinb1/coinb2 and zeroes the job. */
void lode_job_free(lode_job *job);
/* Copies the coinbase parts in (setter used by the sources). Returns 0 or -1. */
int lode_job_set_coinbase(lode_job *job, const uint8_t *coinb1, size_t coinb1_len,
                          const uint8_t *coinb2, size_t coinb2_len);

/* The merkle root (internal order) for one extranonce2 of extranonce2_len bytes. */
void lode_job_merkle_root(const lode_job *job, const uint8_t *extranonce2, uint8_t root[32]);
/* The ntime field of an 80-byte header. */
uint32_t lode_header_ntime(const uint8_t header[80]);
/* The 80-byte header for extranonce2, ntime and version (nonce field zero). */
void lode_job_header(const lode_job *job, const uint8_t *extranonce2, uint32_t ntime,
                     uint32_t version, uint8_t header[80]);
/* Writes the whole coinbase (non-witness) into out (capacity out_cap) and
 * returns its length, or 0 if it does not fit. */
size_t lode_job_coinbase(const lode_job *job, const uint8_t *extranonce2, uint8_t *out,
                         size_t out_cap);

/* The merkle branch of leaf 0 over leaves[0..n) (leaf 0 being a placeholder
 * for the coinbase txid): what getblocktemplate users need to fill
 * lode_job.branch. Bitcoin's rule: an odd level duplicates its last hash.
 * Returns the branch length, or -1 if n is 0 or the branch is too long. */
int lode_merkle_branch(const uint8_t (*leaves)[32], size_t n, uint8_t branch[][32]);

/* A share: a header of a job whose PoW hash met the share target, as the
 * mining session reports it to the job's source. */
typedef struct lode_share {
    const lode_job *job;       /* valid during the submit call only */
    uint8_t extranonce2[LODE_EXTRANONCE_MAX];
    uint32_t ntime;
    uint32_t version;          /* the full nVersion used (rolled bits included) */
    uint32_t nonce;
    uint8_t header[80];        /* complete, nonce included */
    uint8_t hash[32];          /* PoW hash (internal order), re-checked by the reference */
    bool block_candidate;      /* the hash also meets the block target (nbits) */
    double difficulty;         /* the hash's difficulty in the algorithm's pool convention */
    /* The session's job_events (lode_mining_stats) when it decided whether
     * the share is stale: a share decided at or after event k knows of the
     * job that event k installed, refused or cleared. */
    uint64_t decided_at;
} lode_share;

#endif
