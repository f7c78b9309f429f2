/* getblocktemplate pieces: addresses, template parsing (real regtest
 * templates and hostile ones), BIP34 height pushes, coinbase/job/block
 * assembly, the witness commitment and merkle trees. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/hex.h"
#include "core/base/log.h"
#include "core/base/sha256_ref.h"
#include "core/base/target.h"
#include "core/base/vectors.h"
#include "core/gbt/address.h"
#include "core/gbt/block.h"
#include "core/gbt/node_check.h"
#include "core/gbt/template.h"
#include "test_util.h"

static size_t hex_to_bytes(const char *hex, uint8_t *out, size_t max)
{
    size_t n = strlen(hex) / 2;
    if (n > max || lode_hex_decode(hex, out, n) != 0) {
        fprintf(stderr, "bad test hex %s\n", hex);
        exit(2);
    }
    return n;
}

/* ---- addresses ---- */

typedef struct address_case {
    const char *address;
    const char *script_hex;
} address_case;

static void test_valid_addresses(void)
{
    static const address_case valid[] = {
        /* BIP 350 test vectors (bech32 for v0, bech32m for v1+). */
        {"BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "0014751e76e8199196d454941c45d1b3a323f1433bd6"},
        {"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
         "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262"},
        {"bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y",
         "5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6"},
        {"BC1SW50QGDZ25J", "6002751e"},
        {"bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", "5210751e76e8199196d454941c45d1b3a323"},
        {"tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy",
         "0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433"},
        {"tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c",
         "5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433"},
        {"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
         "512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"},
        /* Litecoin regtest addresses and the scriptPubKey litecoind 0.21.2.1
         * reported for them (validateaddress). */
        {"rltc1qz5cg6pyrv0kz4xa4ddrmq3umajyk53atf3fc53", "001415308d048363ec2a9bb56b47b0479bec896a47ab"},
        {"rltc1q9zh8yyuk2qgyz2wf4rnvv9mty3zyscaphu57pe", "001428ae72139650104129c9a8e6c6176b24444863a1"},
        {"n41CPEriK2ttEdbWKkt3sHRaepEHFmUwmq", "76a914f6aa2ce8490ffd3e60a202eb419743a1338df6c188ac"},
        {"n3xtdG4FTLfphXRCo8ViSgNfg5x89qkvre", "76a914f63a850757fdd68460c51b43a448a30fad53f65888ac"},
        {"QU5asxjmFpECUeRa1PzepacKB7EVBKSCZ5", "a914520122d2eeacdfbd60c62a809a907fd8f0af6a9387"},
        /* Bitcoin's genesis address, and the same hash160 under every other
         * version byte (encoded with Python, which reproduces 1A1zP1...). */
        {"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac"},
        {"LUEweDxDA4WhvWiNXXSxjM9CYzHPJv4QQF", "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac"},
        {"mpXwg4jMtRhuSpVq4xS3HFHmCmWp9NyGKt", "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac"},
        {"MGv9cSYnaRSTZNzYaN7bhbgmozoGkKBvCn", "a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1887"},
        {"3Ai1JZ8pdJb2ksieUV8FsxSNVJCpoPi8W6", "a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1887"},
        {"QVcyVJw6Fs9U6r7Emin9abs4r2rpPhBE1A", "a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1887"},
        {"2N2GDNJ4rEm6NxfMC9ck8VuRdheQzXWaNZv", "a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1887"},
    };
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        lode_address a;
        char err[160] = "";
        int rc = lode_address_parse(valid[i].address, &a, err, sizeof err);
        CHECK(rc == 0, "%s: %s", valid[i].address, err);
        uint8_t want[64];
        size_t want_len = hex_to_bytes(valid[i].script_hex, want, sizeof want);
        CHECK(rc != 0 || a.script_len == want_len, "%s: script length %zu", valid[i].address,
              a.script_len);
        if (rc == 0 && a.script_len == want_len)
            CHECK_BYTES(a.script, want, want_len, "%s", valid[i].address);
    }
}

/* BIP 350's invalid list, damaged checksums, unknown versions and junk:
 * each refused with a message. */
static void test_invalid_addresses(void)
{
    static const char *invalid[] = {
        /* BIP 350's invalid list */
        "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut",
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd",
        "tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf",
        "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL",
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh",
        "tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47",
        "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4",
        "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R",
        "bc1pw5dgrnzv",
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav",
        "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P",
        "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq",
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf",
        "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j",
        "bc1gmk9yu",
        /* one character changed, a checksum that fails */
        "rltc1qz5cg6pyrv0kz4xa4ddrmq3umajyk53atf3fc54",
        "n41CPEriK2ttEdbWKkt3sHRaepEHFmUwmr",
        /* a valid checksum under an unknown version byte (0x01) */
        "Q1111111111111111111111111111111111",
        "", "1", "ltc1", "rltc1", "notanaddress", "0OIl", "bc1 qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
        "111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        lode_address a;
        char err[160] = "";
        CHECK(lode_address_parse(invalid[i], &a, err, sizeof err) != 0, "accepted \"%s\"",
              invalid[i]);
        CHECK(err[0] != '\0', "no message for \"%s\"", invalid[i]);
    }
    lode_address a;
    char err[160];
    CHECK(lode_address_parse(NULL, &a, err, sizeof err) != 0, "NULL address accepted");
}

/* ---- BIP34 ---- */

static void test_height_push(void)
{
    static const struct {
        uint32_t height;
        const char *hex;
    } cases[] = {
        {0, "00"},           {1, "51"},           {2, "52"},         {16, "60"},
        {17, "0111"},        {127, "017f"},       {128, "028000"},   {255, "02ff00"},
        {256, "020001"},     {32767, "02ff7f"},   {32768, "03008000"}, {8388607, "03ffff7f"},
        {8388608, "0400008000"}, {540107, "03cb3d08"}, {2383209, "03695d24"},
        {0x7fffffff, "04ffffff7f"}, {0x80000000u, "050000008000"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t got[8], want[8];
        size_t want_len = hex_to_bytes(cases[i].hex, want, sizeof want);
        size_t len = lode_gbt_height_push(cases[i].height, got);
        CHECK(len == want_len, "height %u: %zu bytes", cases[i].height, len);
        if (len == want_len)
            CHECK_BYTES(got, want, len, "height %u", cases[i].height);
    }
    for (uint32_t h = 1; h <= 16; h++) {
        uint8_t got[8];
        CHECK(lode_gbt_height_push(h, got) == 1 && got[0] == 0x50 + h, "height %u is OP_%u", h, h);
    }
}

/* The real blocks of the vectors: the coinbase starts its scriptSig with
 * the BIP34 push of the block's height. */
static void test_vector_heights(void)
{
    static const struct {
        const char *file;
        size_t index;
        uint32_t height;
    } blocks[] = {{"sha256d.json", 2, 540107}, {"sha256d.json", 3, 766393}, {"scrypt.json", 0, 2383209}};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        json_t *root = test_load_vectors(blocks[i].file);
        json_t *v = json_array_get(json_object_get(root, "stratum_vectors"), blocks[i].index);
        const char *coinb1 = json_string_value(json_array_get(json_object_get(v, "notify_params"), 2));
        CHECK(coinb1 != NULL, "%s vector %zu has no coinb1", blocks[i].file, blocks[i].index);
        if (coinb1) {
            uint8_t cb[512];
            size_t len = hex_to_bytes(coinb1, cb, sizeof cb);
            uint8_t push[8];
            size_t push_len = lode_gbt_height_push(blocks[i].height, push);
            /* version 4, input count 1, prevout 36, scriptSig length 1 */
            CHECK(len >= 42 + push_len, "coinb1 too short");
            if (len >= 42 + push_len)
                CHECK_BYTES(cb + 42, push, push_len, "height %u push in the real coinbase",
                            blocks[i].height);
        }
        json_decref(root);
    }
}

/* ---- merkle trees ---- */

static void test_merkle(void)
{
    for (size_t n = 1; n <= 40; n++) {
        uint8_t leaves[40][32];
        test_rand_bytes(&leaves[0][0], sizeof leaves);
        uint8_t root[32], branch[LODE_MERKLE_BRANCH_MAX][32];
        CHECK(lode_gbt_merkle_root((const uint8_t(*)[32])leaves, n, root) == 0, "n %zu", n);
        int branch_len = lode_merkle_branch((const uint8_t(*)[32])leaves, n, branch);
        CHECK(branch_len >= 0, "branch of %zu leaves", n);
        uint8_t folded[32];
        memcpy(folded, leaves[0], 32);
        for (int i = 0; i < branch_len; i++) {
            uint8_t pair[64];
            memcpy(pair, folded, 32);
            memcpy(pair + 32, branch[i], 32);
            lode_ref_sha256d(pair, 64, folded);
        }
        CHECK_BYTES(folded, root, 32, "branch fold vs full tree, %zu leaves", n);
    }
    uint8_t one[1][32] = {{0}}, root[32];
    CHECK(lode_gbt_merkle_root((const uint8_t(*)[32])one, 0, root) != 0, "0 leaves accepted");
}

/* ---- templates ---- */

static char *read_text(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", LODE_GBT_CORPUS_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    if (!text || fread(text, 1, (size_t)size, f) != (size_t)size)
        exit(2);
    text[size] = '\0';
    fclose(f);
    *len = (size_t)size;
    return text;
}

/* Reads a varint at *pos. */
static uint64_t read_varint(const uint8_t *p, size_t *pos)
{
    uint8_t first = p[(*pos)++];
    if (first < 0xfd)
        return first;
    size_t n = first == 0xfd ? 2 : first == 0xfe ? 4 : 8;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[*pos + i] << (8 * i);
    *pos += n;
    return v;
}

static const char *regtest_templates[] = {"regtest_hogex_only.json", "regtest_mweb_pegin.json",
                                          "regtest_txs_hogex.json"};

/* A real template's job: the coinbase around the extranonce, the job's
 * fields, prevhash in the header's order. */
static void check_job_fields(const char *name, const char *text, const lode_gbt_template *t, const lode_job *job)
{
    uint8_t push[8];
    size_t push_len = lode_gbt_height_push(t->height, push);
    CHECK(job->coinb1_len > 42 + push_len && job->coinb1[41] >= 2 + 9 &&
              job->coinb1[41] <= 100,
          "%s: scriptSig length %u", name, job->coinb1[41]);
    CHECK_BYTES(job->coinb1 + 42, push, push_len, "%s: BIP34 push", name);
    CHECK(job->coinb1[job->coinb1_len - 1] == 8, "%s: extranonce push", name);
    CHECK(job->extranonce1_len == 0 && job->extranonce2_len == 8 && job->version_mask == 0,
          "%s: extranonce layout", name);
    CHECK(job->nbits == t->bits && job->ntime == t->curtime && job->version == t->version &&
              job->clean && strcmp(job->id, "t1") == 0,
          "%s: job fields", name);
    CHECK(memcmp(job->prevhash, t->prevhash, 32) == 0, "%s: prevhash", name);
    /* previousblockhash is display order: the header holds it reversed */
    uint8_t display[32];
    json_t *root = json_loads(text, 0, NULL);
    lode_hex_decode(json_string_value(json_object_get(root, "previousblockhash")), display, 32);
    json_decref(root);
    CHECK(display[0] == t->prevhash[31] && display[31] == t->prevhash[0], "%s: reversed", name);

}

/* A real template's block: header, count, the coinbase with its witness,
 * the transactions, the MWEB tail; the coinbase pays the payout script. */
static void check_block_layout(const char *name, const lode_gbt_template *t, const lode_job *job, const uint8_t header[80],
                               const uint8_t *block, size_t block_len, const uint8_t *payout, size_t payout_len)
{
    /* header || varint || coinbase (witness) || txs || 01 mweb */
    size_t pos = 80;
    CHECK_BYTES(block, header, 80, "%s: header", name);
    CHECK(read_varint(block, &pos) == t->tx_count + 1, "%s: count", name);
    size_t cb_start = pos;
    CHECK(block[pos + 4] == 0x00 && block[pos + 5] == 0x01, "%s: segwit marker", name);
    size_t nonwitness_len = job->coinb1_len + 8 + job->coinb2_len;
    size_t cb_witness_len = nonwitness_len + 2 + 34;
    /* witness: one item of 32 zero bytes, just before the locktime */
    const uint8_t *w = block + cb_start + cb_witness_len - 4 - 34;
    static const uint8_t zeros[32];
    CHECK(w[0] == 1 && w[1] == 32 && memcmp(w + 2, zeros, 32) == 0,
          "%s: reserved value", name);
    pos = cb_start + cb_witness_len;
    for (size_t i = 0; i < t->tx_count; i++) {
        CHECK(pos + t->txs[i].data_len <= block_len &&
                  memcmp(block + pos, t->txs[i].data, t->txs[i].data_len) == 0,
              "%s: tx %zu", name, i);
        pos += t->txs[i].data_len;
    }
    CHECK(pos + 1 + t->mweb_len == block_len && block[pos] == 0x01 &&
              memcmp(block + pos + 1, t->mweb, t->mweb_len) == 0,
          "%s: mweb tail", name);
    /* the coinbase pays coinbasevalue to the payout script */
    uint8_t value[8];
    for (int i = 0; i < 8; i++)
        value[i] = (uint8_t)(t->coinbasevalue >> (8 * i));
    CHECK(memmem(job->coinb2, job->coinb2_len, value, 8) != NULL, "%s: value", name);
    CHECK(memmem(job->coinb2, job->coinb2_len, payout, payout_len) != NULL,
          "%s: payout", name);
    CHECK(memmem(job->coinb2, job->coinb2_len, t->witness_commitment_script, 38) != NULL,
          "%s: commitment output", name);
}

static void test_real_templates(void)
{
    static const uint8_t payout[] = {0x00, 0x14, 1, 2,  3,  4,  5,  6,  7,  8,  9,
                                     10,   11,   12, 13, 14, 15, 16, 17, 18, 19, 20};
    for (size_t f = 0; f < sizeof regtest_templates / sizeof regtest_templates[0]; f++) {
        const char *name = regtest_templates[f];
        size_t len;
        char *text = read_text(name, &len);
        lode_gbt_template t;
        char err[256] = "";
        int rc = lode_gbt_template_parse_text(text, len, &t, err, sizeof err);
        CHECK(rc == 0, "%s: %s", name, err);
        if (rc != 0) {
            free(text);
            continue;
        }
        CHECK(t.height >= 432 && t.bits == 0x207fffff && t.has_witness_commitment && t.mweb &&
                  t.tx_count >= 1,
              "%s: fields", name);
        /* The HogEx is last and its witness leaf is its txid. */
        const lode_gbt_tx *hogex = &t.txs[t.tx_count - 1];
        CHECK(hogex->data[4] == 0 && (hogex->data[5] & 8), "%s: HogEx last", name);
        CHECK_BYTES(hogex->wtxid, hogex->txid, 32, "%s: HogEx wtxid", name);

        /* The job: its commitment was recomputed and matched, else it fails. */
        lode_gbt_job_params params = {.algo = LODE_ALGO_SCRYPT, .payout_script = payout,
                                      .payout_script_len = sizeof payout, .job_id = "t1",
                                      .clean = true};
        lode_job job;
        rc = lode_gbt_build_job(&t, &params, &job, err, sizeof err);
        CHECK(rc == 0, "%s: build job: %s", name, err);
        if (rc == 0) {
            check_job_fields(name, text, &t, &job);
            uint8_t en2[8] = {1, 2, 3, 4, 5, 6, 7, 8};
            uint8_t header[80];
            lode_job_header(&job, en2, job.ntime, job.version, header);
            uint8_t *block;
            size_t block_len;
            rc = lode_gbt_build_block(&t, &job, header, en2, &block, &block_len, err, sizeof err);
            CHECK(rc == 0, "%s: build block: %s", name, err);
            if (rc == 0) {
                check_block_layout(name, &t, &job, header, block, block_len, payout, sizeof payout);
                free(block);
            }
            /* A header that commits to something else is refused. */
            header[40] ^= 1;
            CHECK(lode_gbt_build_block(&t, &job, header, en2, &block, &block_len, err, sizeof err) != 0,
                  "%s: wrong merkle root accepted", name);
            lode_job_free(&job);
        }

        /* A commitment that does not match the transactions is refused. */
        t.witness_commitment_script[20] ^= 1;
        CHECK(lode_gbt_build_job(&t, &params, &job, err, sizeof err) != 0,
              "%s: wrong commitment accepted", name);
        t.witness_commitment_script[20] ^= 1;
        /* So is a tag that makes the scriptSig longer than 100 bytes. */
        params.tag = "0123456789012345678901234567890123456789";
        CHECK(lode_gbt_build_job(&t, &params, &job, err, sizeof err) != 0, "%s: long tag", name);
        lode_gbt_template_free(&t);
        free(text);
    }
}

/* Replaces the first occurrence of from with to in a copy of text. */
static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at) {
        fprintf(stderr, "test bug: \"%s\" not found\n", from);
        exit(2);
    }
    size_t len = strlen(text) - strlen(from) + strlen(to);
    char *out = malloc(len + 1);
    size_t head = (size_t)(at - text);
    memcpy(out, text, head);
    strcpy(out + head, to);
    strcat(out, at + strlen(from));
    return out;
}

#define MINIMAL_HEAD "{\"version\":536870912,\"previousblockhash\":\"" \
    "523aeaccf21662e49d60d17ddc2e3965bb901c0318fe272bed28f9b686ffbd89\",\"curtime\":1795326270,"
#define MINIMAL_TAIL "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":5000000000,\"transactions\":[]}"

static void test_hostile_templates(void)
{
    lode_gbt_template t;
    char err[256];
    const char *minimal = MINIMAL_HEAD MINIMAL_TAIL;
    CHECK(lode_gbt_template_parse_text(minimal, strlen(minimal), &t, err, sizeof err) == 0,
          "minimal template: %s", err);
    CHECK(t.tx_count == 0 && !t.has_witness_commitment && !t.mweb && t.height == 2, "minimal");
    lode_gbt_template_free(&t);

    static const char *bad[] = {
        "", "null", "[]", "42", "\"x\"", "{", "{}", "{\"version\":1}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":5000000000}",
        MINIMAL_HEAD "\"bits\":\"207ffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[]}",
        MINIMAL_HEAD "\"bits\":\"00000000\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[]}",
        MINIMAL_HEAD "\"bits\":\"20ffffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":0,\"coinbasevalue\":1,\"transactions\":[]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":-5,\"coinbasevalue\":1,\"transactions\":[]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2.5,\"coinbasevalue\":1,\"transactions\":[]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":\"2\",\"coinbasevalue\":1,\"transactions\":[]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":-1,\"transactions\":[]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":99999999999999999999,\"transactions\":[]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":{}}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[1]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[{}]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[{\"data\":\"0\"}]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[{\"data\":\"zz\"}]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],\"target\":\"00\"}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],"
                     "\"target\":\"7ffffe0000000000000000000000000000000000000000000000000000000000\"}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],"
                     "\"default_witness_commitment\":\"6a24aa21a9ed00\"}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],"
                     "\"default_witness_commitment\":\"6a24aa21a9ee0000000000000000000000000000000000000000000000000000000000000000\"}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],\"mweb\":\"00\"}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],\"mweb\":7}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],\"coinbaseaux\":[]}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],\"coinbaseaux\":{\"a\":\"0\"}}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],\"coinbaseaux\":{\"a\":"
                     "\"00000000000000000000000000000000000000000000000000000000000000000000000000000000"
                     "000000000000000000000000000000000000000000000000000000000000000000000000000000000000\"}}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],\"longpollid\":5}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],\"longpollid\":\"a\\u0000b\"}",
        MINIMAL_HEAD "\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[],\"height\":3}",
        MINIMAL_HEAD "\"mintime\":1795326271,\"bits\":\"207fffff\",\"height\":2,\"coinbasevalue\":1,\"transactions\":[]}",
        "{\"version\":536870912,\"previousblockhash\":\"523aeacc\",\"curtime\":1," MINIMAL_TAIL,
        "{\"version\":4294967296,\"previousblockhash\":\"523aeaccf21662e49d60d17ddc2e3965bb901c0318fe272bed28f9b686ffbd89\",\"curtime\":1," MINIMAL_TAIL,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(lode_gbt_template_parse_text(bad[i], strlen(bad[i]), &t, err, sizeof err) != 0,
              "hostile template %zu accepted", i);
        CHECK(err[0] != '\0', "hostile template %zu: no message", i);
        CHECK(t.txs == NULL && t.mweb == NULL, "hostile template %zu: left allocations", i);
    }
}

/* Real templates with one thing broken. */
static void test_broken_real_templates(void)
{
    lode_gbt_template t;
    char err[256];
    size_t len;
    char *text = read_text("regtest_txs_hogex.json", &len);
    json_t *root = json_loads(text, 0, NULL);
    json_t *txs = json_object_get(root, "transactions");
    const char *data0 = json_string_value(json_object_get(json_array_get(txs, 0), "data"));
    const char *txid0 = json_string_value(json_object_get(json_array_get(txs, 0), "txid"));
    const char *hash0 = json_string_value(json_object_get(json_array_get(txs, 0), "hash"));
    char flipped_data[64], flipped_hash[65];
    snprintf(flipped_data, sizeof flipped_data, "%.40s", data0 + 20);
    char *broken_data_src = strdup(flipped_data);
    flipped_data[0] = flipped_data[0] == '0' ? '1' : '0';
    snprintf(flipped_hash, sizeof flipped_hash, "%s", hash0);
    flipped_hash[10] = flipped_hash[10] == '0' ? '1' : '0';
    char *cases[5];
    cases[0] = replaced(text, broken_data_src, flipped_data); /* data no longer hashes to wtxid */
    cases[1] = replaced(text, hash0, flipped_hash);           /* wrong wtxid */
    cases[2] = replaced(text, "\"mweb\": ", "\"mweb_gone\": ");   /* HogEx without the MWEB flag */
    cases[3] = replaced(text, txid0, "00");                   /* short txid */
    cases[4] = replaced(text, "\"transactions\"", "\"transactions_gone\"");
    for (size_t i = 0; i < 5; i++) {
        err[0] = '\0';
        CHECK(lode_gbt_template_parse_text(cases[i], strlen(cases[i]), &t, err, sizeof err) != 0,
              "broken real template %zu accepted", i);
        CHECK(err[0] != '\0', "broken real template %zu: no message", i);
        free(cases[i]);
    }
    free(broken_data_src);
    json_decref(root);
    free(text);
}

/* A template without transactions: a plain coinbase (no witness) when the
 * template has no commitment. */
static void test_no_witness_block(void)
{
    const char *minimal = MINIMAL_HEAD MINIMAL_TAIL;
    lode_gbt_template t;
    char err[256];
    if (lode_gbt_template_parse_text(minimal, strlen(minimal), &t, err, sizeof err) != 0) {
        CHECK(0, "%s", err);
        return;
    }
    static const uint8_t payout[] = {0x51, 0x02, 0xab, 0xcd};
    lode_gbt_job_params params = {.algo = LODE_ALGO_SHA256D, .payout_script = payout,
                                  .payout_script_len = sizeof payout, .job_id = "t7"};
    lode_job job;
    CHECK(lode_gbt_build_job(&t, &params, &job, err, sizeof err) == 0, "%s", err);
    CHECK(job.branch_len == 0, "one leaf, no branch");
    uint8_t en2[8] = {0};
    uint8_t header[80];
    lode_job_header(&job, en2, job.ntime, job.version, header);
    uint8_t coinbase[512];
    size_t cb_len = lode_job_coinbase(&job, en2, coinbase, sizeof coinbase);
    uint8_t txid[32];
    lode_ref_sha256d(coinbase, cb_len, txid);
    CHECK_BYTES(header + 36, txid, 32, "one-transaction root = coinbase txid");
    /* scriptSig: OP_2, 08 <8 bytes>, 06 "/lode/" */
    static const uint8_t script_sig[] = {0x11, 0x52, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0x06, '/', 'l', 'o', 'd', 'e', '/'};
    CHECK_BYTES(coinbase + 41, script_sig, sizeof script_sig, "scriptSig");
    uint8_t *block;
    size_t block_len;
    CHECK(lode_gbt_build_block(&t, &job, header, en2, &block, &block_len, err, sizeof err) == 0, "%s", err);
    CHECK(block_len == 81 + cb_len && block[80] == 1 && memcmp(block + 81, coinbase, cb_len) == 0,
          "no-witness block");
    free(block);
    lode_job_free(&job);
    lode_gbt_template_free(&t);
}

/* ---- the node checks (core/gbt/node_check.h) ---- */

static uint32_t header_bits(const uint8_t header[80])
{
    return (uint32_t)header[72] | (uint32_t)header[73] << 8 | (uint32_t)header[74] << 16 |
           (uint32_t)header[75] << 24;
}

/* log2(target) from the compact form, computed apart from node_check.c. */
static double bits_log2(uint32_t bits)
{
    return log2((double)(bits & 0x007fffff)) + 8.0 * ((double)(bits >> 24) - 3.0);
}

/* Real chains' headers (tests/vectors) under their own algorithm and the
 * other one: the chain's own nBits is the oracle. */
static void test_pow_check_real_headers(void)
{
    const lode_algo algos[2] = {LODE_ALGO_SHA256D, LODE_ALGO_SCRYPT};
    size_t seen = 0, wrong = 0;
    for (int a = 0; a < 2; a++) {
        size_t n;
        const lode_pow_vector *v = lode_pow_vectors(algos[a], &n);
        for (size_t i = 0; i < n; i++) {
            uint8_t header[80];
            if (strlen(v[i].header_hex) != 160)
                continue;
            hex_to_bytes(v[i].header_hex, header, 80);
            static const uint8_t zero[32];
            bool genesis = memcmp(header + 4, zero, 32) == 0;
            double log2_target = bits_log2(header_bits(header));
            for (int b = 0; b < 2; b++) {
                lode_gbt_pow_check c;
                lode_gbt_pow_check_init(&c, algos[b]);
                lode_gbt_pow_state st = lode_gbt_pow_check_header(&c, header);
                if (genesis) {
                    CHECK(st == LODE_GBT_POW_GENESIS, "%s: genesis gives %d", v[i].name, st);
                } else if (b == a) {
                    /* One header of a real chain is proof enough when a
                     * random hash meets its target with chance < 2^-30. */
                    lode_gbt_pow_state want = log2_target - 256 <= -LODE_GBT_POW_CHECK_BITS
                                                  ? LODE_GBT_POW_CONFIRMED
                                                  : LODE_GBT_POW_MORE;
                    CHECK(st == want, "%s under its own algorithm: state %d, want %d", v[i].name, st,
                          want);
                    CHECK(fabs(c.log2_pass - (log2_target - 256)) < 1e-6,
                          "%s: log2 chance %f, want %f", v[i].name, c.log2_pass, log2_target - 256);
                    seen++;
                } else if (log2_target < 226) {
                    CHECK(st == LODE_GBT_POW_WRONG, "%s under the other algorithm: state %d",
                          v[i].name, st);
                    wrong++;
                }
            }
        }
    }
    CHECK(seen >= 10 && wrong >= 10, "only %zu/%zu real headers checked", seen, wrong);
}

/* A regtest-like chain (nBits 207fffff: about one hash in two meets it):
 * confirmed only after enough headers, refused at the first that misses. */
static void test_pow_check_easy_target(void)
{
    const uint32_t bits = 0x207fffff;
    lode_u256 target;
    CHECK(lode_target_from_nbits(bits, &target) == 0, "regtest bits");
    double per_header = bits_log2(bits) - 256; /* about -1 */
    unsigned need = (unsigned)ceil(LODE_GBT_POW_CHECK_BITS / -per_header - 1e-9);
    for (int a = 0; a < 2; a++) {
        lode_algo algo = a ? LODE_ALGO_SCRYPT : LODE_ALGO_SHA256D;
        lode_algo other = a ? LODE_ALGO_SHA256D : LODE_ALGO_SCRYPT;
        lode_gbt_pow_check c;
        lode_gbt_pow_check_init(&c, algo);
        uint8_t header[80] = {0x20};
        header[4] = 1; /* not genesis */
        memcpy(header + 72, (const uint8_t[]){0xff, 0xff, 0x7f, 0x20}, 4);
        unsigned fed = 0, missed_other = 0;
        lode_gbt_pow_state st = LODE_GBT_POW_MORE;
        for (uint32_t nonce = 0; st == LODE_GBT_POW_MORE && nonce < 10000; nonce++) {
            memcpy(header + 76, &nonce, 4);
            uint8_t hash[32];
            lode_algo_get(algo)->pow_hash_ref(header, hash);
            if (!lode_hash_meets_target(hash, &target))
                continue; /* a header its chain would not have */
            lode_algo_get(other)->pow_hash_ref(header, hash);
            if (!lode_hash_meets_target(hash, &target) && missed_other == 0) {
                missed_other = nonce + 1;
                lode_gbt_pow_check w;
                lode_gbt_pow_check_init(&w, other);
                CHECK(lode_gbt_pow_check_header(&w, header) == LODE_GBT_POW_WRONG,
                      "a header missing its target under the other algorithm is not refused");
            }
            st = lode_gbt_pow_check_header(&c, header);
            fed++;
            if (st == LODE_GBT_POW_MORE)
                CHECK(fed < need, "%s: still unsure after %u headers (need %u)",
                      lode_algo_get(algo)->name, fed, need);
        }
        CHECK(st == LODE_GBT_POW_CONFIRMED && fed == need, "%s: state %d after %u headers, want "
              "confirmed after %u", lode_algo_get(algo)->name, st, fed, need);
        CHECK(missed_other > 0, "no header missed under the other algorithm");
    }
    /* nBits that encode no usable target. */
    uint8_t header[80] = {0};
    header[4] = 1;
    lode_gbt_pow_check c;
    lode_gbt_pow_check_init(&c, LODE_ALGO_SHA256D);
    CHECK(lode_gbt_pow_check_header(&c, header) == LODE_GBT_POW_MALFORMED, "zero nBits");
    memcpy(header + 72, (const uint8_t[]){0x00, 0x00, 0x80, 0x04}, 4); /* negative */
    CHECK(lode_gbt_pow_check_header(&c, header) == LODE_GBT_POW_MALFORMED, "negative nBits");
}

static void test_submit_verdict(void)
{
    static const struct {
        const char *result;
        bool retried;
        lode_gbt_verdict want;
    } cases[] = {
        {NULL, false, LODE_GBT_ACCEPTED},
        {NULL, true, LODE_GBT_ACCEPTED},
        {"duplicate", true, LODE_GBT_KEPT},
        {"duplicate", false, LODE_GBT_KNOWN},
        {"inconclusive", false, LODE_GBT_INCONCLUSIVE},
        {"inconclusive", true, LODE_GBT_INCONCLUSIVE},
        {"duplicate-inconclusive", true, LODE_GBT_INCONCLUSIVE},
        {"duplicate-invalid", true, LODE_GBT_REJECTED},
        {"high-hash", false, LODE_GBT_REJECTED},
        {"rejected", true, LODE_GBT_REJECTED},
        {"", false, LODE_GBT_REJECTED},
        {"Duplicate", true, LODE_GBT_REJECTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lode_gbt_verdict got = lode_gbt_submit_verdict(cases[i].result, cases[i].retried);
        CHECK(got == cases[i].want, "verdict for \"%s\" (retried %d): %d, want %d",
              cases[i].result ? cases[i].result : "null", cases[i].retried, got, cases[i].want);
    }
}

/* A template with witness transactions whose node left out
 * default_witness_commitment: lode's commitment equals the one litecoind
 * sent for the same template (the oracle), and the block gets the witness
 * coinbase. Without witness data none is added. */
static void test_missing_witness_commitment(void)
{
    size_t len;
    char *text = read_text("regtest_txs_hogex.json", &len);
    json_t *root = json_loadb(text, len, 0, NULL);
    free(text);
    uint8_t node_script[38];
    hex_to_bytes(json_string_value(json_object_get(root, "default_witness_commitment")), node_script, 38);
    json_object_del(root, "default_witness_commitment");
    lode_gbt_template t;
    char err[256] = "";
    CHECK(lode_gbt_template_parse(root, &t, err, sizeof err) == 0, "no commitment: %s", err);
    json_decref(root);
    size_t witness_txs = 0;
    for (size_t i = 0; i < t.tx_count; i++)
        witness_txs += memcmp(t.txs[i].txid, t.txs[i].wtxid, 32) != 0;
    CHECK(witness_txs > 0, "the template has witness transactions");
    CHECK(t.has_witness_commitment && t.computed_witness_commitment, "a commitment computed");
    CHECK_BYTES(t.witness_commitment_script, node_script, 38, "lode's commitment is litecoind's");
    lode_gbt_template_free(&t);

    const char *minimal = MINIMAL_HEAD MINIMAL_TAIL;
    CHECK(lode_gbt_template_parse_text(minimal, strlen(minimal), &t, err, sizeof err) == 0, "%s", err);
    CHECK(!t.has_witness_commitment, "no witness data: no commitment added");
    lode_gbt_template_free(&t);
}

/* curtime far in the future (2^32-1 from a broken node) is pulled back to
 * this machine's clock, never below mintime; a mintime that far is refused. */
static void test_curtime_clamp(void)
{
    const uint64_t now = 1795326270;
    lode_gbt_template t;
    char err[256];
    memset(&t, 0, sizeof t);
    t.curtime = (uint32_t)now + 30;
    t.mintime = (uint32_t)now - 600;
    CHECK(lode_gbt_template_check_time(&t, now, err, sizeof err) == 0 && t.curtime == now + 30, "sane curtime kept");
    t.curtime = (uint32_t)now + LODE_GBT_MAX_FUTURE_S;
    CHECK(lode_gbt_template_check_time(&t, now, err, sizeof err) == 0, "2 h ahead is still allowed");
    t.curtime = UINT32_MAX;
    CHECK(lode_gbt_template_check_time(&t, now, err, sizeof err) == 1 && t.curtime == now, "2^32-1 -> now");
    CHECK(strstr(err, "4294967295") != NULL, "the message names the node's curtime: %s", err);
    t.curtime = UINT32_MAX;
    t.mintime = (uint32_t)now + 100;
    CHECK(lode_gbt_template_check_time(&t, now, err, sizeof err) == 1 && t.curtime == now + 100,
          "never below mintime");
    t.curtime = UINT32_MAX;
    t.mintime = (uint32_t)now + LODE_GBT_MAX_FUTURE_S + 1;
    CHECK(lode_gbt_template_check_time(&t, now, err, sizeof err) == -1 && strstr(err, "mintime"),
          "a mintime too far ahead is refused: %s", err);
}

/* Node text goes through lode_log_printable before the log (in place too). */
static void test_printable(void)
{
    char text[64] = "busy \x1b[2J\x1b]0;x\x07\r\nfake \xc3\xa9";
    lode_log_printable(text, sizeof text, text);
    CHECK(strcmp(text, "busy ?[2J?]0;x???fake ??") == 0, "in place: \"%s\"", text);
    char small[6];
    lode_log_printable(small, sizeof small, "abc\x1b" "defgh");
    CHECK(strcmp(small, "abc?d") == 0, "truncated: \"%s\"", small);
    lode_log_printable(small, sizeof small, NULL);
    CHECK(small[0] == '\0', "NULL gives \"\"");
}

int main(void)
{
    test_seed();
    test_valid_addresses();
    test_invalid_addresses();
    test_height_push();
    test_vector_heights();
    test_merkle();
    test_real_templates();
    test_hostile_templates();
    test_broken_real_templates();
    test_no_witness_block();
    test_pow_check_real_headers();
    test_pow_check_easy_target();
    test_submit_verdict();
    test_missing_witness_commitment();
    test_curtime_clamp();
    test_printable();
    return test_summary();
}
