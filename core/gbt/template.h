/* A getblocktemplate result (BIP 22/23, Bitcoin Core / Litecoin Core), parsed
 * and validated. Every hash is kept in internal byte order (the reverse of
 * the RPC's display hex); sizes are bounded so a hostile or broken node
 * cannot make lode allocate without limit. */
#ifndef LODE_GBT_TEMPLATE_H
#define LODE_GBT_TEMPLATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/u256.h"

#define LODE_GBT_MAX_TXS 200000                   /* a 4 MWU block holds far fewer */
#define LODE_GBT_MAX_TX_BYTES 4000000             /* one transaction, witness included */
#define LODE_GBT_MAX_TOTAL_TX_BYTES 8000000       /* all transactions together */
#define LODE_GBT_MAX_MWEB_BYTES 16000000          /* Litecoin's MWEB block */
#define LODE_GBT_MAX_AUX_BYTES 64                 /* coinbaseaux values together */
#define LODE_GBT_LONGPOLLID_MAX 256               /* bytes, NUL included */
#define LODE_GBT_WORKID_MAX 128

typedef struct lode_gbt_tx {
    uint8_t *data;          /* as the node serialises it (witness form) */
    size_t data_len;
    uint8_t txid[32];       /* internal order: the merkle leaf */
    uint8_t wtxid[32];      /* internal order: the witness merkle leaf */
} lode_gbt_tx;

typedef struct lode_gbt_template {
    uint32_t version;
    uint8_t prevhash[32];   /* internal order, ready for the header */
    uint32_t curtime, mintime;
    uint32_t bits;
    lode_u256 target;       /* from bits (and checked against "target" when given) */
    uint32_t height;
    uint64_t coinbasevalue; /* satoshis */
    uint8_t coinbaseaux[LODE_GBT_MAX_AUX_BYTES]; /* the values, concatenated */
    size_t coinbaseaux_len;
    lode_gbt_tx *txs;
    size_t tx_count;
    bool has_witness_commitment;
    bool computed_witness_commitment;            /* the node sent none: lode's (BIP 141) */
    uint8_t witness_commitment_script[38];       /* 6a24aa21a9ed || commitment */
    char longpollid[LODE_GBT_LONGPOLLID_MAX];    /* "" if none */
    char workid[LODE_GBT_WORKID_MAX];            /* "" if none */
    uint8_t *mweb;          /* Litecoin's serialised MWEB block; NULL if none */
    size_t mweb_len;
} lode_gbt_template;

/* How far a block's time may be ahead of the node's clock (the block rules:
 * 2 hours). */
#define LODE_GBT_MAX_FUTURE_S 7200

/* Parses a getblocktemplate "result" object. Returns 0, or -1 with a message
 * in err (out is then empty). Free with lode_gbt_template_free. A template
 * with a witness transaction but no default_witness_commitment gets the
 * commitment computed (computed_witness_commitment). */
int lode_gbt_template_parse(const json_t *result, lode_gbt_template *out, char *err,
                            size_t err_len);
/* Same from JSON text (the result object itself, not the RPC envelope). */
int lode_gbt_template_parse_text(const char *text, size_t len, lode_gbt_template *out,
                                 char *err, size_t err_len);
void lode_gbt_template_free(lode_gbt_template *t);
/* A curtime more than LODE_GBT_MAX_FUTURE_S ahead of now (this machine's
 * clock, unix seconds; 2^32-1 from a broken node) would make every block
 * time-too-new: it becomes max(now, mintime). Returns 0 (unchanged), 1
 * (changed; err says how), or -1 when mintime itself is that far ahead (err
 * says why: not to be mined). */
int lode_gbt_template_check_time(lode_gbt_template *t, uint64_t now, char *err, size_t err_len);

#endif
