/* Decisions about what a node says, kept apart from the network code so the
 * unit tests can drive them: is the chain's proof of work the algorithm lode
 * mines with, and what does a submitblock answer mean for lode's counts. */
#ifndef LODE_GBT_NODE_CHECK_H
#define LODE_GBT_NODE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/algo.h"

/* The algorithm check: headers are fed from the node's tip backwards. A
 * header the node accepted always meets its own target under the chain's
 * algorithm; under another algorithm it does so only by chance, with
 * probability (target + 1) / 2^256: about 1/2 on regtest (powLimit 7fff..),
 * 2^-32 and less on a real chain. The check confirms once the chance that a
 * wrong algorithm passes every header fed is below 2^-LODE_GBT_POW_CHECK_BITS
 * (one header of a mainnet chain, about 30 of a regtest chain), and fails at
 * the first header that misses its target. The genesis block (previous hash
 * zero) is not evidence: no node checks its proof of work. */
#define LODE_GBT_POW_CHECK_BITS 30
#define LODE_GBT_POW_CHECK_MAX_HEADERS 64

typedef enum lode_gbt_pow_state {
    LODE_GBT_POW_MORE,      /* feed the previous header (if there is one) */
    LODE_GBT_POW_CONFIRMED, /* the chain's proof of work is the algorithm */
    LODE_GBT_POW_WRONG,     /* a header misses its target under the algorithm */
    LODE_GBT_POW_GENESIS,   /* the genesis header: nothing older to check */
    LODE_GBT_POW_MALFORMED, /* the header's nBits do not encode a target */
} lode_gbt_pow_state;

typedef struct lode_gbt_pow_check {
    lode_algo algo;
    unsigned headers;       /* headers checked (genesis not counted) */
    double log2_pass;       /* log2 of the chance a wrong algorithm passes them all */
} lode_gbt_pow_check;

void lode_gbt_pow_check_init(lode_gbt_pow_check *c, lode_algo algo);
lode_gbt_pow_state lode_gbt_pow_check_header(lode_gbt_pow_check *c, const uint8_t header[80]);

/* What a submitblock answer (BIP 22) means. result is the result string,
 * NULL for JSON null (accepted); retried says an earlier try of the same
 * block may have reached the node (its reply was lost). */
typedef enum lode_gbt_verdict {
    LODE_GBT_ACCEPTED,      /* null */
    LODE_GBT_KEPT,          /* "duplicate" to a retry: the node kept our earlier try.
                               Accepted if the block is on the node's best chain; a
                               block stored on a side branch answers "duplicate" too */
    LODE_GBT_INCONCLUSIVE,  /* "inconclusive", "duplicate-inconclusive": the node stored
                               the block without fully validating it (not on its best
                               chain now); it may still become part of the chain */
    LODE_GBT_KNOWN,         /* "duplicate" to a first try: the node had it already
                               (counted once before, or found twice) */
    LODE_GBT_REJECTED,      /* anything else, "duplicate-invalid" included */
} lode_gbt_verdict;

lode_gbt_verdict lode_gbt_submit_verdict(const char *result, bool retried);

#endif
