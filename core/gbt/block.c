/* Coinbase, job and block assembly for getblocktemplate mining. */
#include "core/gbt/block.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/errmsg.h"
#include "core/base/sha256_ref.h"

#define DEFAULT_TAG "/lode/"
#define OP_0 0x00
#define OP_1 0x51
#define OP_PUSHDATA1 0x4c

/* ---- a growable byte buffer; `failed` latches an allocation failure ---- */

typedef struct bytes {
    uint8_t *data;
    size_t len, cap;
    bool failed;
} bytes;

static void put(bytes *b, const void *src, size_t n)
{
    if (b->failed)
        return;
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        uint8_t *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, src, n);
    b->len += n;
}

static void put_byte(bytes *b, uint8_t v) { put(b, &v, 1); }

static void put_le32(bytes *b, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, le, 4);
}

static void put_le64(bytes *b, uint64_t v)
{
    put_le32(b, (uint32_t)v);
    put_le32(b, (uint32_t)(v >> 32));
}

/* Bitcoin's CompactSize. */
static void put_varint(bytes *b, uint64_t v)
{
    if (v < 0xfd) {
        put_byte(b, (uint8_t)v);
    } else if (v <= 0xffff) {
        put_byte(b, 0xfd);
        put_byte(b, (uint8_t)v);
        put_byte(b, (uint8_t)(v >> 8));
    } else if (v <= 0xffffffffu) {
        put_byte(b, 0xfe);
        put_le32(b, (uint32_t)v);
    } else {
        put_byte(b, 0xff);
        put_le64(b, v);
    }
}

/* A data push as CScript writes it (short pushes only: n <= 255). */
static void put_push(bytes *b, const uint8_t *data, size_t n)
{
    if (n >= OP_PUSHDATA1)
        put_byte(b, OP_PUSHDATA1);
    put_byte(b, (uint8_t)n);
    put(b, data, n);
}

size_t lode_gbt_height_push(uint32_t height, uint8_t out[5])
{
    if (height == 0) {
        out[0] = OP_0;
        return 1;
    }
    if (height <= 16) {
        out[0] = (uint8_t)(OP_1 + height - 1);
        return 1;
    }
    /* CScriptNum: minimal little-endian, plus a zero byte when the top bit
     * of the last byte is set (it would read as the sign). */
    size_t n = 0;
    uint32_t v = height;
    while (v) {
        out[1 + n++] = (uint8_t)v;
        v >>= 8;
    }
    if (out[n] & 0x80)
        out[1 + n++] = 0x00;
    out[0] = (uint8_t)n;
    return n + 1;
}

int lode_gbt_merkle_root(const uint8_t (*leaves)[32], size_t n, uint8_t root[32])
{
    if (n == 0)
        return -1;
    uint8_t(*level)[32] = malloc(n * sizeof *level);
    if (!level)
        return -1;
    memcpy(level, leaves, n * sizeof *level);
    while (n > 1) {
        size_t next = 0;
        for (size_t i = 0; i < n; i += 2) {
            uint8_t pair[64];
            memcpy(pair, level[i], 32);
            memcpy(pair + 32, level[i + 1 < n ? i + 1 : i], 32);
            lode_ref_sha256d(pair, 64, level[next++]);
        }
        n = next;
    }
    memcpy(root, level[0], 32);
    free(level);
    return 0;
}

int lode_gbt_witness_commitment(const lode_gbt_template *t, uint8_t commitment[32])
{
    size_t n = t->tx_count + 1;
    uint8_t(*leaves)[32] = calloc(n, sizeof *leaves);
    if (!leaves)
        return -1;
    /* leaves[0] stays zero: the coinbase's wtxid by definition. The parser
     * already set the HogEx's wtxid to its txid. */
    for (size_t i = 0; i < t->tx_count; i++)
        memcpy(leaves[i + 1], t->txs[i].wtxid, 32);
    uint8_t buf[64] = {0};
    int rc = lode_gbt_merkle_root((const uint8_t(*)[32])leaves, n, buf);
    free(leaves);
    if (rc != 0)
        return -1;
    lode_ref_sha256d(buf, 64, commitment); /* root || 32-byte zero reserved value */
    return 0;
}

/* The job's inputs as lode_gbt_build_job takes them: a tag that fits, a
 * payout script, a job id, and a witness commitment that matches the
 * template's transactions. */
static int check_job_inputs(const lode_gbt_template *t, const lode_gbt_job_params *params, size_t tag_len,
                            char *err, size_t err_len)
{
    if (tag_len > LODE_GBT_TAG_MAX)
        return lode_fail(err, err_len, "coinbase tag is longer than %d bytes", LODE_GBT_TAG_MAX);
    if (!params->payout_script || params->payout_script_len == 0 ||
        params->payout_script_len > 10000)
        return lode_fail(err, err_len, "no payout script");
    if (!params->job_id || strlen(params->job_id) >= LODE_JOB_ID_MAX)
        return lode_fail(err, err_len, "job id missing or too long");

    if (t->has_witness_commitment) {
        uint8_t commitment[32];
        if (lode_gbt_witness_commitment(t, commitment) != 0)
            return lode_fail(err, err_len, "out of memory for the witness commitment");
        if (memcmp(commitment, t->witness_commitment_script + 6, 32) != 0)
            return lode_fail(err, err_len, "the template's default_witness_commitment does not match "
                                      "the commitment recomputed from its transactions");
    }
    return 0;
}

/* The coinbase around the extranonce: b1 up to the extranonce's push,
 * b2 from the tag to the locktime. */
static int coinbase_halves(const lode_gbt_template *t, const lode_gbt_job_params *params, const char *tag,
                           size_t tag_len, bytes *b1, bytes *b2, char *err, size_t err_len)
{
    /* scriptSig around the extranonce. */
    uint8_t height_push[5];
    size_t height_len = lode_gbt_height_push(t->height, height_push);
    size_t aux_len = t->coinbaseaux_len ? 1 + (t->coinbaseaux_len >= OP_PUSHDATA1) + t->coinbaseaux_len : 0;
    size_t tag_push_len = tag_len ? 1 + (tag_len >= OP_PUSHDATA1) + tag_len : 0;
    size_t script_sig_len = height_len + aux_len + 1 + LODE_GBT_EXTRANONCE_LEN + tag_push_len;
    if (script_sig_len > LODE_GBT_SCRIPT_SIG_MAX)
        return lode_fail(err, err_len, "coinbase scriptSig would be %zu bytes (limit %d): shorten the tag",
                    script_sig_len, LODE_GBT_SCRIPT_SIG_MAX);

    static const uint8_t null_prevout[32] = {0};
    put_le32(b1, 1);          /* transaction version */
    put_byte(b1, 1);          /* one input */
    put(b1, null_prevout, 32);
    put_le32(b1, 0xffffffffu);
    put_varint(b1, script_sig_len);
    put(b1, height_push, height_len);
    if (t->coinbaseaux_len)
        put_push(b1, t->coinbaseaux, t->coinbaseaux_len);
    put_byte(b1, LODE_GBT_EXTRANONCE_LEN); /* the extranonce's push opcode */

    if (tag_len)
        put_push(b2, (const uint8_t *)tag, tag_len);
    put_le32(b2, 0xffffffffu); /* sequence */
    put_varint(b2, t->has_witness_commitment ? 2 : 1);
    put_le64(b2, t->coinbasevalue);
    put_varint(b2, params->payout_script_len);
    put(b2, params->payout_script, params->payout_script_len);
    if (t->has_witness_commitment) {
        put_le64(b2, 0);
        put_varint(b2, sizeof t->witness_commitment_script);
        put(b2, t->witness_commitment_script, sizeof t->witness_commitment_script);
    }
    put_le32(b2, 0); /* locktime */
    if (b1->failed || b2->failed)
        return lode_fail(err, err_len, "out of memory building the coinbase");
    return 0;
}

/* The job's merkle branch: leaf 0 is the coinbase placeholder, then every
 * txid. */
static int set_branch(const lode_gbt_template *t, lode_job *job, char *err, size_t err_len)
{
    size_t leaves_n = t->tx_count + 1;
    uint8_t(*leaves)[32] = calloc(leaves_n, sizeof *leaves);
    if (!leaves)
        return lode_fail(err, err_len, "out of memory for the merkle branch");
    for (size_t i = 0; i < t->tx_count; i++)
        memcpy(leaves[i + 1], t->txs[i].txid, 32);
    int branch_len = lode_merkle_branch((const uint8_t(*)[32])leaves, leaves_n, job->branch);
    free(leaves);
    if (branch_len < 0)
        return lode_fail(err, err_len, "merkle branch of %zu leaves is too long", leaves_n);
    job->branch_len = (size_t)branch_len;
    return 0;
}

int lode_gbt_build_job(const lode_gbt_template *t, const lode_gbt_job_params *params,
                       lode_job *job, char *err, size_t err_len)
{
    memset(job, 0, sizeof *job);
    const char *tag = params->tag ? params->tag : DEFAULT_TAG;
    size_t tag_len = strlen(tag);
    if (check_job_inputs(t, params, tag_len, err, err_len) != 0)
        return -1;
    bytes b1 = {0}, b2 = {0};
    int rc = -1;
    if (coinbase_halves(t, params, tag, tag_len, &b1, &b2, err, err_len) != 0 ||
        set_branch(t, job, err, err_len) != 0)
        goto done;

    snprintf(job->id, sizeof job->id, "%s", params->job_id);
    job->algo = params->algo;
    job->version = t->version;
    job->version_mask = 0; /* the node's version is used as is (no BIP 320 rolling) */
    memcpy(job->prevhash, t->prevhash, 32);
    job->nbits = t->bits;
    job->ntime = t->curtime;
    job->ntime_roll_max = 0;
    job->extranonce1_len = 0;
    job->extranonce2_len = LODE_GBT_EXTRANONCE_LEN;
    job->share_target = t->target;
    job->clean = params->clean;
    job->generation = 0;
    if (lode_job_set_coinbase(job, b1.data, b1.len, b2.data, b2.len) != 0) {
        lode_job_free(job);
        lode_fail(err, err_len, "out of memory for the job");
        goto done;
    }
    rc = 0;
done:
    free(b1.data);
    free(b2.data);
    return rc;
}

int lode_gbt_build_block(const lode_gbt_template *t, const lode_job *job,
                         const uint8_t header[80], const uint8_t *extranonce2, uint8_t **block,
                         size_t *block_len, char *err, size_t err_len)
{
    *block = NULL;
    *block_len = 0;
    if (job->coinb1_len < 5 + 32 + 4 || job->coinb2_len < 4 ||
        job->extranonce1_len > LODE_EXTRANONCE_MAX || job->extranonce2_len > LODE_EXTRANONCE_MAX)
        return lode_fail(err, err_len, "job is not a getblocktemplate job");

    bytes coinbase = {0};
    put(&coinbase, job->coinb1, job->coinb1_len);
    put(&coinbase, job->extranonce1, job->extranonce1_len);
    put(&coinbase, extranonce2, job->extranonce2_len);
    put(&coinbase, job->coinb2, job->coinb2_len);
    if (coinbase.failed)
        return lode_fail(err, err_len, "out of memory building the coinbase");

    /* The header must commit to exactly this coinbase and these transactions. */
    uint8_t(*leaves)[32] = malloc((t->tx_count + 1) * sizeof *leaves);
    if (!leaves) {
        free(coinbase.data);
        return lode_fail(err, err_len, "out of memory for the merkle tree");
    }
    lode_ref_sha256d(coinbase.data, coinbase.len, leaves[0]);
    for (size_t i = 0; i < t->tx_count; i++)
        memcpy(leaves[i + 1], t->txs[i].txid, 32);
    uint8_t root[32];
    int rc = lode_gbt_merkle_root((const uint8_t(*)[32])leaves, t->tx_count + 1, root);
    free(leaves);
    if (rc != 0 || memcmp(root, header + 36, 32) != 0) {
        free(coinbase.data);
        return lode_fail(err, err_len, "the header's merkle root does not match the template and coinbase");
    }

    bytes out = {0};
    put(&out, header, 80);
    put_varint(&out, t->tx_count + 1);
    if (t->has_witness_commitment) {
        /* version || marker 00 flag 01 || inputs, outputs || witness || locktime */
        static const uint8_t reserved_witness[34] = {1, 32};
        put(&out, coinbase.data, 4);
        put_byte(&out, 0x00);
        put_byte(&out, 0x01);
        put(&out, coinbase.data + 4, coinbase.len - 8);
        put(&out, reserved_witness, sizeof reserved_witness);
        put(&out, coinbase.data + coinbase.len - 4, 4);
    } else {
        put(&out, coinbase.data, coinbase.len);
    }
    free(coinbase.data);
    for (size_t i = 0; i < t->tx_count; i++)
        put(&out, t->txs[i].data, t->txs[i].data_len);
    if (t->mweb) {
        put_byte(&out, 0x01); /* the MWEB block is present */
        put(&out, t->mweb, t->mweb_len);
    }
    if (out.failed) {
        free(out.data);
        return lode_fail(err, err_len, "out of memory building the block");
    }
    *block = out.data;
    *block_len = out.len;
    return 0;
}
