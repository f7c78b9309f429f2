/* From a getblocktemplate to a mining job and back to a block.
 *
 * The coinbase lode builds (transaction version 1, one input, locktime 0):
 *   scriptSig = BIP34 height push (CScript() << height: OP_0 for 0, OP_1..OP_16
 *               for 1..16, else the minimal little-endian number push)
 *               || one push per coinbaseaux value
 *               || 0x08 <8-byte extranonce>   (the job's extranonce2)
 *               || push of the tag ("/lode/" by default)
 *   outputs   = coinbasevalue to the payout script
 *               || value 0 to default_witness_commitment (when the template has one,
 *                  after recomputing it from the wtxids and finding it equal; computed
 *                  when the node sent none beside witness transactions)
 * The job splits the non-witness coinbase around the extranonce: coinb1 ends
 * with the 0x08 push opcode, extranonce1 is empty, extranonce2 is 8 bytes. */
#ifndef LODE_GBT_BLOCK_H
#define LODE_GBT_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/job.h"
#include "core/gbt/template.h"

#define LODE_GBT_EXTRANONCE_LEN 8
#define LODE_GBT_TAG_MAX 32          /* bytes of the coinbase tag */
#define LODE_GBT_SCRIPT_SIG_MAX 100  /* consensus: 2..100 bytes */

/* CScript() << height: writes 1..5 bytes to out and returns the count. */
size_t lode_gbt_height_push(uint32_t height, uint8_t out[5]);

/* The merkle root (internal order) over leaves[0..n) with Bitcoin's rule of
 * duplicating the last hash of an odd level. n must be >= 1. Returns 0, or
 * -1 if n is 0 or memory ran out. */
int lode_gbt_merkle_root(const uint8_t (*leaves)[32], size_t n, uint8_t root[32]);

/* BIP 141 commitment for the template's transactions: SHA-256d(witness root
 * || 32 zero bytes), the coinbase's wtxid being zero and the HogEx's its
 * txid. Returns 0, or -1 if memory ran out. */
int lode_gbt_witness_commitment(const lode_gbt_template *t, uint8_t commitment[32]);

typedef struct lode_gbt_job_params {
    lode_algo algo;
    const uint8_t *payout_script;
    size_t payout_script_len;
    const char *tag;        /* NULL = "/lode/" */
    const char *job_id;     /* the lode_job id */
    bool clean;             /* the previous block changed */
} lode_gbt_job_params;

/* Builds the job for template t. Returns 0, or -1 with a message in err
 * (e.g. the template's witness commitment differs from the one recomputed,
 * or the scriptSig would pass 100 bytes). Free the job with lode_job_free. */
int lode_gbt_build_job(const lode_gbt_template *t, const lode_gbt_job_params *params,
                       lode_job *job, char *err, size_t err_len);

/* The block to submit: header || varint(n) || coinbase (witness form when the
 * template has a commitment) || each template transaction || (when the
 * template has an MWEB block) 0x01 || mweb. The coinbase is rebuilt from the
 * job (made by lode_gbt_build_job for t) and extranonce2, and the header's
 * merkle root is checked against it. Returns 0 with a malloc'ed *block, or -1
 * with a message in err. */
int lode_gbt_build_block(const lode_gbt_template *t, const lode_job *job,
                         const uint8_t header[80], const uint8_t *extranonce2, uint8_t **block,
                         size_t *block_len, char *err, size_t err_len);

#endif
