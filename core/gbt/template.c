/* getblocktemplate result -> lode_gbt_template, with strict checks. */
#include "core/gbt/template.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/errmsg.h"
#include "core/base/hex.h"
#include "core/base/sha256_ref.h"
#include "core/base/target.h"
#include "core/gbt/block.h"

#define MAX_COINBASE_VALUE 9000000000000000ull /* above any chain's supply */

void lode_gbt_template_free(lode_gbt_template *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->tx_count; i++)
        free(t->txs[i].data);
    free(t->txs);
    free(t->mweb);
    memset(t, 0, sizeof *t);
}

/* An integer member in [min, max]; required unless optional (then *out is
 * left alone and 1 is returned when absent). */
static int get_uint(const json_t *obj, const char *key, uint64_t min, uint64_t max, bool optional,
                    uint64_t *out, char *err, size_t err_len)
{
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        if (optional)
            return 1;
        return lode_fail(err, err_len, "template has no \"%s\"", key);
    }
    if (!json_is_integer(v))
        return lode_fail(err, err_len, "template \"%s\" is not an integer", key);
    json_int_t n = json_integer_value(v);
    if (n < 0 || (uint64_t)n < min || (uint64_t)n > max)
        return lode_fail(err, err_len, "template \"%s\" = %lld is out of range", key, (long long)n);
    *out = (uint64_t)n;
    return 0;
}

/* A hex string member of exactly `len` bytes. */
static int get_hex_fixed(const json_t *obj, const char *key, uint8_t *out, size_t len,
                         char *err, size_t err_len)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return lode_fail(err, err_len, "template has no string \"%s\"", key);
    if (json_string_length(v) != 2 * len || lode_hex_decode(json_string_value(v), out, len) != 0)
        return lode_fail(err, err_len, "template \"%s\" is not %zu bytes of hex", key, len);
    return 0;
}

/* Display-order hash hex -> internal order. */
static int decode_hash(const json_t *v, uint8_t out[32])
{
    if (!json_is_string(v) || json_string_length(v) != 64)
        return -1;
    uint8_t display[32];
    if (lode_hex_decode(json_string_value(v), display, 32) != 0)
        return -1;
    for (int i = 0; i < 32; i++)
        out[i] = display[31 - i];
    return 0;
}

/* A variable-length hex string of at most max bytes, allocated. */
static int decode_hex_alloc(const json_t *v, size_t max, uint8_t **out, size_t *out_len)
{
    if (!json_is_string(v))
        return -1;
    size_t hex_len = json_string_length(v);
    if (hex_len % 2 != 0 || hex_len / 2 > max || hex_len == 0)
        return -1;
    uint8_t *bytes = malloc(hex_len / 2);
    if (!bytes)
        return -1;
    if (lode_hex_decode(json_string_value(v), bytes, hex_len / 2) != 0) {
        free(bytes);
        return -1;
    }
    *out = bytes;
    *out_len = hex_len / 2;
    return 0;
}

/* Checks the node's ids against the data: catches a node or proxy that
 * mangles transactions before we build a block the network rejects. */
static int check_tx_ids(const lode_gbt_tx *tx, size_t index, bool is_hogex, char *err,
                        size_t err_len)
{
    uint8_t digest[32];
    lode_ref_sha256d(tx->data, tx->data_len, digest);
    bool has_marker = tx->data_len > 6 && tx->data[4] == 0x00;
    if (!has_marker) {
        if (memcmp(digest, tx->txid, 32) != 0)
            return lode_fail(err, err_len, "template transaction %zu: txid does not match its data", index);
        if (memcmp(tx->wtxid, tx->txid, 32) != 0)
            return lode_fail(err, err_len, "template transaction %zu: a transaction without witness has hash != txid", index);
        return 0;
    }
    /* Litecoin's extended (MWEB) serialisation, flag bit 0x08: the HogEx's
     * witness hash is its txid, not the hash of this serialisation. */
    bool extended = (tx->data[5] & 0x08) != 0;
    if (extended && !is_hogex)
        return lode_fail(err, err_len, "template transaction %zu uses the MWEB serialisation but is not the HogEx", index);
    if (!extended && memcmp(digest, tx->wtxid, 32) != 0)
        return lode_fail(err, err_len, "template transaction %zu: hash (wtxid) does not match its data", index);
    return 0;
}

static int parse_transactions(const json_t *result, lode_gbt_template *t, bool has_mweb,
                              char *err, size_t err_len)
{
    const json_t *txs = json_object_get(result, "transactions");
    if (!json_is_array(txs))
        return lode_fail(err, err_len, "template has no \"transactions\" array");
    size_t n = json_array_size(txs);
    if (n > LODE_GBT_MAX_TXS)
        return lode_fail(err, err_len, "template has %zu transactions (limit %d)", n, LODE_GBT_MAX_TXS);
    if (has_mweb && n == 0)
        return lode_fail(err, err_len, "template has \"mweb\" but no HogEx transaction");
    if (n == 0)
        return 0;
    t->txs = calloc(n, sizeof *t->txs);
    if (!t->txs)
        return lode_fail(err, err_len, "out of memory for %zu transactions", n);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *tx = json_array_get(txs, i);
        lode_gbt_tx *out = &t->txs[i];
        if (!json_is_object(tx))
            return lode_fail(err, err_len, "template transaction %zu is not an object", i);
        const json_t *data = json_object_get(tx, "data");
        size_t remaining = LODE_GBT_MAX_TOTAL_TX_BYTES - total;
        size_t limit = remaining < LODE_GBT_MAX_TX_BYTES ? remaining : LODE_GBT_MAX_TX_BYTES;
        if (decode_hex_alloc(data, limit, &out->data, &out->data_len) != 0)
            return lode_fail(err, err_len,
                        "template transaction %zu: \"data\" is not hex of 1..%zu bytes", i, limit);
        t->tx_count = i + 1; /* so the free releases it */
        total += out->data_len;
        if (out->data_len < 10)
            return lode_fail(err, err_len, "template transaction %zu is too short (%zu bytes)", i,
                        out->data_len);
        if (decode_hash(json_object_get(tx, "txid"), out->txid) != 0)
            return lode_fail(err, err_len, "template transaction %zu: \"txid\" is not a 64-digit hash", i);
        const json_t *hash = json_object_get(tx, "hash");
        if (!hash)
            memcpy(out->wtxid, out->txid, 32);
        else if (decode_hash(hash, out->wtxid) != 0)
            return lode_fail(err, err_len, "template transaction %zu: \"hash\" is not a 64-digit hash", i);
        bool is_hogex = has_mweb && i == n - 1;
        if (check_tx_ids(out, i, is_hogex, err, err_len) != 0)
            return -1;
        if (is_hogex)
            memcpy(out->wtxid, out->txid, 32);
    }
    return 0;
}

/* BIP 141 lets a block without witness data leave the commitment out; with
 * a witness transaction a block needs it. A node that sends such a template
 * without default_witness_commitment gets the commitment computed here
 * (from the wtxids), or every block mined on it would be invalid. */
static int add_witness_commitment(lode_gbt_template *t, char *err, size_t err_len)
{
    bool has_witness = false;
    for (size_t i = 0; i < t->tx_count; i++) /* marker 0x00, flag bit 0x01: witness data */
        has_witness = has_witness || (t->txs[i].data[4] == 0x00 && (t->txs[i].data[5] & 0x01));
    if (!has_witness)
        return 0;
    static const uint8_t header[6] = {0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed};
    memcpy(t->witness_commitment_script, header, 6);
    if (lode_gbt_witness_commitment(t, t->witness_commitment_script + 6) != 0)
        return lode_fail(err, err_len, "out of memory for the witness commitment");
    t->has_witness_commitment = true;
    t->computed_witness_commitment = true;
    return 0;
}

int lode_gbt_template_check_time(lode_gbt_template *t, uint64_t now, char *err, size_t err_len)
{
    if (t->curtime <= now + LODE_GBT_MAX_FUTURE_S)
        return 0;
    if (t->mintime > now + LODE_GBT_MAX_FUTURE_S)
        return lode_fail(err, err_len, "the template's mintime %" PRIu32 " is more than %d s ahead of this machine's "
                    "clock (%" PRIu64 "): the node's chain or a clock is wrong; not mining it",
                    t->mintime, LODE_GBT_MAX_FUTURE_S, now);
    uint32_t was = t->curtime;
    t->curtime = now > t->mintime ? (uint32_t)now : t->mintime;
    lode_fail(err, err_len, "the template's curtime %" PRIu32 " is more than %d s ahead of this machine's clock; "
         "blocks get %" PRIu32 " instead (the node would refuse them as time-too-new)", was,
         LODE_GBT_MAX_FUTURE_S, t->curtime);
    return 1;
}

/* The header fields: version, previousblockhash, the times, height,
 * coinbasevalue, bits and the target they give. */
static int parse_header_fields(const json_t *result, lode_gbt_template *t, char *err, size_t err_len)
{
    uint64_t v = 0;
    if (get_uint(result, "version", 0, UINT32_MAX, false, &v, err, err_len) != 0)
        return -1;
    t->version = (uint32_t)v;
    if (decode_hash(json_object_get(result, "previousblockhash"), t->prevhash) != 0)
        return lode_fail(err, err_len, "template \"previousblockhash\" is not a 64-digit hash");
    if (get_uint(result, "curtime", 1, UINT32_MAX, false, &v, err, err_len) != 0)
        return -1;
    t->curtime = (uint32_t)v;
    v = 0;
    if (get_uint(result, "mintime", 0, UINT32_MAX, true, &v, err, err_len) < 0)
        return -1;
    t->mintime = (uint32_t)v;
    if (t->mintime > t->curtime)
        return lode_fail(err, err_len, "template \"curtime\" %u is before \"mintime\" %u", t->curtime,
                    t->mintime);
    if (get_uint(result, "height", 1, 0x7fffffff, false, &v, err, err_len) != 0)
        return -1;
    t->height = (uint32_t)v;
    if (get_uint(result, "coinbasevalue", 0, MAX_COINBASE_VALUE, false, &v, err, err_len) != 0)
        return -1;
    t->coinbasevalue = v;

    uint8_t bits[4];
    if (get_hex_fixed(result, "bits", bits, 4, err, err_len) != 0)
        return -1;
    t->bits = (uint32_t)bits[0] << 24 | (uint32_t)bits[1] << 16 | (uint32_t)bits[2] << 8 | bits[3];
    if (lode_target_from_nbits(t->bits, &t->target) != 0 || lode_u256_is_zero(&t->target))
        return lode_fail(err, err_len, "template \"bits\" %08x is not a valid target", t->bits);
    const json_t *target = json_object_get(result, "target");
    if (target) {
        lode_u256 given;
        if (!json_is_string(target) || json_string_length(target) != 64 ||
            lode_target_parse_hex(json_string_value(target), &given) != 0)
            return lode_fail(err, err_len, "template \"target\" is not 64 hex digits");
        if (lode_u256_cmp(&given, &t->target) != 0)
            return lode_fail(err, err_len, "template \"target\" does not match \"bits\" %08x", t->bits);
    }
    return 0;
}

/* coinbaseaux: its values, hex, joined for the coinbase's scriptSig. */
static int parse_coinbaseaux(const json_t *result, lode_gbt_template *t, char *err, size_t err_len)
{
    const json_t *aux = json_object_get(result, "coinbaseaux");
    if (aux) {
        if (!json_is_object(aux))
            return lode_fail(err, err_len, "template \"coinbaseaux\" is not an object");
        const char *key;
        const json_t *value;
        json_object_foreach((json_t *)aux, key, value) {
            if (!json_is_string(value) || json_string_length(value) % 2 != 0)
                return lode_fail(err, err_len, "template coinbaseaux \"%s\" is not hex", key);
            size_t bytes = json_string_length(value) / 2;
            if (bytes > LODE_GBT_MAX_AUX_BYTES - t->coinbaseaux_len)
                return lode_fail(err, err_len, "template coinbaseaux is longer than %d bytes",
                            LODE_GBT_MAX_AUX_BYTES);
            if (lode_hex_decode(json_string_value(value), t->coinbaseaux + t->coinbaseaux_len,
                                bytes) != 0)
                return lode_fail(err, err_len, "template coinbaseaux \"%s\" is not hex", key);
            t->coinbaseaux_len += bytes;
        }
    }
    return 0;
}

/* default_witness_commitment, longpollid and workid, where given. */
static int parse_optional_fields(const json_t *result, lode_gbt_template *t, char *err, size_t err_len)
{
    const json_t *commitment = json_object_get(result, "default_witness_commitment");
    if (commitment) {
        static const uint8_t header[6] = {0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed};
        if (get_hex_fixed(result, "default_witness_commitment", t->witness_commitment_script, 38,
                          err, err_len) != 0 ||
            memcmp(t->witness_commitment_script, header, 6) != 0)
            return lode_fail(err, err_len,
                        "template \"default_witness_commitment\" is not a 38-byte 6a24aa21a9ed script");
        t->has_witness_commitment = true;
    }

    const json_t *longpollid = json_object_get(result, "longpollid");
    if (longpollid) {
        if (!json_is_string(longpollid) || json_string_length(longpollid) >= LODE_GBT_LONGPOLLID_MAX)
            return lode_fail(err, err_len, "template \"longpollid\" is not a string of < %d bytes",
                        LODE_GBT_LONGPOLLID_MAX);
        memcpy(t->longpollid, json_string_value(longpollid), json_string_length(longpollid) + 1);
        if (strlen(t->longpollid) != json_string_length(longpollid))
            return lode_fail(err, err_len, "template \"longpollid\" has a NUL character");
    }
    const json_t *workid = json_object_get(result, "workid");
    if (workid) {
        if (!json_is_string(workid) || json_string_length(workid) >= LODE_GBT_WORKID_MAX ||
            strlen(json_string_value(workid)) != json_string_length(workid))
            return lode_fail(err, err_len, "template \"workid\" is not a string of < %d bytes",
                        LODE_GBT_WORKID_MAX);
        memcpy(t->workid, json_string_value(workid), json_string_length(workid) + 1);
    }
    return 0;
}

static int parse_fields(const json_t *result, lode_gbt_template *t, char *err, size_t err_len)
{
    if (!json_is_object(result))
        return lode_fail(err, err_len, "template is not a JSON object");
    if (parse_header_fields(result, t, err, err_len) != 0 || parse_coinbaseaux(result, t, err, err_len) != 0 ||
        parse_optional_fields(result, t, err, err_len) != 0)
        return -1;
    const json_t *mweb = json_object_get(result, "mweb");
    if (mweb && decode_hex_alloc(mweb, LODE_GBT_MAX_MWEB_BYTES, &t->mweb, &t->mweb_len) != 0)
        return lode_fail(err, err_len, "template \"mweb\" is not hex of 1..%d bytes",
                    LODE_GBT_MAX_MWEB_BYTES);
    if (parse_transactions(result, t, t->mweb != NULL, err, err_len) != 0)
        return -1;
    return t->has_witness_commitment ? 0 : add_witness_commitment(t, err, err_len);
}

int lode_gbt_template_parse(const json_t *result, lode_gbt_template *out, char *err,
                            size_t err_len)
{
    memset(out, 0, sizeof *out);
    if (parse_fields(result, out, err, err_len) != 0) {
        lode_gbt_template_free(out);
        return -1;
    }
    return 0;
}

int lode_gbt_template_parse_text(const char *text, size_t len, lode_gbt_template *out,
                                 char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return lode_fail(err, err_len, "template is not JSON: %s (line %d)", jerr.text, jerr.line);
    int rc = lode_gbt_template_parse(root, out, err, err_len);
    json_decref(root);
    return rc;
}
