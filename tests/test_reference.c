/* The reference implementations and the target arithmetic, against the
 * shared vectors and against OpenSSL as an independent oracle. */
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "core/base/hex.h"
#include "core/base/scrypt_ref.h"
#include "core/base/sha256_ref.h"
#include "core/base/target.h"
#include "tests/test_util.h"

static void reverse(uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        uint8_t t = b[i];
        b[i] = b[n - 1 - i];
        b[n - 1 - i] = t;
    }
}

static void test_sha256_against_openssl(void)
{
    uint8_t msg[300], ours[32], theirs[32];
    for (int trial = 0; trial < 2000; trial++) {
        size_t len = (size_t)(test_rand() % sizeof msg);
        test_rand_bytes(msg, len);
        lode_ref_sha256(msg, len, ours);
        SHA256(msg, len, theirs);
        CHECK_BYTES(ours, theirs, 32, "SHA-256 of %zu random bytes", len);
        /* Incremental updates in random pieces give the same digest. */
        lode_ref_sha256_ctx ctx;
        lode_ref_sha256_init(&ctx);
        for (size_t off = 0; off < len;) {
            size_t piece = 1 + (size_t)(test_rand() % 80);
            if (piece > len - off)
                piece = len - off;
            lode_ref_sha256_update(&ctx, msg + off, piece);
            off += piece;
        }
        lode_ref_sha256_final(&ctx, ours);
        CHECK_BYTES(ours, theirs, 32, "incremental SHA-256 of %zu bytes", len);
    }
}

static void test_sha256d_vectors(void)
{
    json_t *root = test_load_vectors("sha256d.json");
    json_t *v;
    size_t i;
    json_array_foreach(json_object_get(root, "vectors"), i, v) {
        uint8_t header[80], want[32], got[32], target_be[32];
        test_json_hex(v, "header_hex", header, 80);
        test_json_hex(v, "block_hash", want, 32);
        reverse(want, 32);
        lode_ref_sha256d(header, 80, got);
        CHECK_BYTES(got, want, 32, "block hash of '%s'", test_json_str(v, "name"));

        /* Midstate words, the nBits target, and the PoW rule. */
        json_t *words = json_object_get(v, "midstate_be_words");
        uint32_t mid[8];
        lode_ref_sha256_midstate(header, mid);
        for (size_t w = 0; w < 8 && json_array_size(words) == 8; w++) {
            uint32_t expect = (uint32_t)strtoul(json_string_value(json_array_get(words, w)), NULL, 16);
            CHECK(mid[w] == expect, "midstate word %zu of '%s'", w, test_json_str(v, "name"));
        }
        uint32_t nbits = (uint32_t)strtoul(test_json_str(v, "nbits"), NULL, 16);
        lode_u256 target, want_target;
        CHECK(lode_target_from_nbits(nbits, &target) == 0, "nBits %08x decodes", nbits);
        test_json_hex(v, "target_hex", target_be, 32);
        CHECK(lode_target_parse_hex(test_json_str(v, "target_hex"), &want_target) == 0, "target hex");
        CHECK(lode_u256_cmp(&target, &want_target) == 0, "target of nBits %08x", nbits);
        CHECK(lode_target_to_nbits(&target) == nbits, "nBits %08x round trip gives %08x", nbits,
              lode_target_to_nbits(&target));
        CHECK(lode_hash_meets_target(got, &target) == json_is_true(json_object_get(v, "pow_valid")),
              "PoW rule on '%s'", test_json_str(v, "name"));
    }
    json_decref(root);
}

static void test_scrypt_rfc7914(void)
{
    json_t *root = test_load_vectors("scrypt.json");
    json_t *v;
    size_t i;
    json_array_foreach(json_object_get(root, "rfc7914"), i, v) {
        const char *kind = test_json_str(v, "kind");
        uint8_t in[128], want[128], got[128];
        size_t want_len = test_json_hex(v, "output_hex", want, sizeof want);
        if (strncmp(kind, "salsa20/8", 9) == 0) {
            test_json_hex(v, "input_hex", in, 64);
            lode_ref_salsa20_8(in, got);
        } else if (strncmp(kind, "scryptBlockMix", 14) == 0) {
            test_json_hex(v, "input_hex", in, 128);
            lode_ref_scrypt_blockmix(in, got, 1);
        } else if (strncmp(kind, "scryptROMix", 11) == 0) {
            test_json_hex(v, "input_hex", got, 128);
            CHECK(lode_ref_scrypt_romix(got, 1, 16) == 0, "ROMix runs");
        } else if (strncmp(kind, "PBKDF2", 6) == 0) {
            const char *p = test_json_str(v, "password"), *s = test_json_str(v, "salt");
            uint64_t c = test_json_uint(v, "c");
            lode_ref_pbkdf2_sha256(p, strlen(p), s, strlen(s), c, got, want_len);
        } else {
            const char *p = test_json_str(v, "password"), *s = test_json_str(v, "salt");
            uint64_t n = test_json_uint(v, "N");
            unsigned r = (unsigned)test_json_uint(v, "r");
            unsigned pp = (unsigned)test_json_uint(v, "p");
            CHECK(lode_ref_scrypt(p, strlen(p), s, strlen(s), n, r, pp, got, want_len) == 0,
                  "scrypt N=%llu runs", (unsigned long long)n);
        }
        CHECK_BYTES(got, want, want_len, "RFC 7914 vector '%s'", kind);
    }
    json_decref(root);
}

static void test_scrypt_litecoin(void)
{
    json_t *root = test_load_vectors("scrypt.json");
    json_t *v;
    size_t i;
    json_array_foreach(json_object_get(root, "litecoin_headers"), i, v) {
        uint8_t header[80], want[32], got[32];
        test_json_hex(v, "header_hex", header, 80);
        test_json_hex(v, "pow_hash_scrypt", want, 32);
        reverse(want, 32);
        lode_ref_scrypt_pow(header, got);
        CHECK_BYTES(got, want, 32, "scrypt PoW of '%s'", test_json_str(v, "name"));
    }
    json_decref(root);
}

static void test_scrypt_against_openssl(void)
{
    for (int trial = 0; trial < 40; trial++) {
        uint8_t header[80], ours[32], theirs[32];
        test_rand_bytes(header, sizeof header);
        lode_ref_scrypt_pow(header, ours);
        int ok = EVP_PBE_scrypt((const char *)header, 80, header, 80, 1024, 1, 1, 0, theirs, 32);
        CHECK(ok == 1, "OpenSSL scrypt runs");
        CHECK_BYTES(ours, theirs, 32, "scrypt PoW of a random header vs OpenSSL");
    }
}

static void test_pool_difficulty(void)
{
    json_t *root = test_load_vectors("sha256d.json");
    json_t *rows = json_object_get(json_object_get(root, "pool_difficulty_to_share_target"), "rows");
    json_t *row;
    size_t i;
    json_array_foreach(rows, i, row) {
        double diff = json_number_value(json_object_get(row, "pool_difficulty"));
        lode_u256 got, want;
        char hex[65];
        const char *keys[] = {"sha256d_share_target", "scrypt_share_target"};
        lode_algo algos[] = {LODE_ALGO_SHA256D, LODE_ALGO_SCRYPT};
        for (int a = 0; a < 2; a++) {
            CHECK(lode_target_from_difficulty(diff, algos[a], &got) == 0, "difficulty %g", diff);
            CHECK(lode_target_parse_hex(test_json_str(row, keys[a]), &want) == 0, "vector");
            lode_target_format_hex(&got, hex);
            CHECK(lode_u256_cmp(&got, &want) == 0, "%s at difficulty %g: got %s want %s", keys[a],
                  diff, hex, test_json_str(row, keys[a]));
            double back = lode_target_to_difficulty(&got, algos[a]);
            CHECK(back > diff * 0.999999 && back < diff * 1.000001,
                  "difficulty %g round trip gives %g", diff, back);
        }
    }
    json_decref(root);
    lode_u256 t;
    CHECK(lode_target_from_difficulty(0, LODE_ALGO_SHA256D, &t) != 0, "difficulty 0 is refused");
    CHECK(lode_target_from_difficulty(-1, LODE_ALGO_SHA256D, &t) != 0, "negative difficulty");
    CHECK(lode_target_from_difficulty(1e-12, LODE_ALGO_SHA256D, &t) == 0 && t.w[7] == UINT32_MAX,
          "a tiny difficulty saturates at the all-ones target");
}

static void test_compact_edges(void)
{
    lode_u256 t;
    CHECK(lode_target_from_nbits(0x01003456, &t) == 0 && lode_u256_is_zero(&t), "1-byte exponent");
    CHECK(lode_target_from_nbits(0x02123456, &t) == 0 && t.w[0] == 0x1234, "2-byte exponent");
    CHECK(lode_target_from_nbits(0x04923456, &t) != 0, "negative compact refused");
    CHECK(lode_target_from_nbits(0xff123456, &t) != 0, "overflowing compact refused");
    CHECK(lode_target_from_nbits(0x207fffff, &t) == 0 && t.w[7] == 0x7fffff00, "regtest limit");
    CHECK(lode_target_to_nbits(&t) == 0x207fffff, "regtest limit round trip");
    /* A mantissa with its top bit set moves a byte into the exponent. */
    memset(&t, 0, sizeof t);
    t.w[0] = 0x80;
    CHECK(lode_target_to_nbits(&t) == 0x02008000, "0x80 encodes as 0x02008000, got %08x",
          lode_target_to_nbits(&t));
    uint8_t bytes[32];
    test_rand_bytes(bytes, 32);
    lode_u256 a = lode_u256_from_le_bytes(bytes), b = a;
    CHECK(lode_u256_cmp(&a, &b) == 0, "equal compare");
    b.w[0] ^= 1;
    CHECK(lode_u256_cmp(&a, &b) == (a.w[0] < b.w[0] ? -1 : 1), "low word decides");
}

static void test_hex(void)
{
    uint8_t out[2];
    CHECK(lode_hex_decode("0aFf", out, 2) == 0 && out[0] == 0x0a && out[1] == 0xff, "hex digits");
    CHECK(lode_hex_decode("0aF", out, 2) != 0, "odd length refused");
    CHECK(lode_hex_decode("0aFg", out, 2) != 0, "non-hex refused");
    CHECK(lode_hex_decode("0aFf00", out, 2) != 0, "too long refused");
}

int main(void)
{
    test_seed();
    test_hex();
    test_sha256_against_openssl();
    test_sha256d_vectors();
    test_compact_edges();
    test_pool_difficulty();
    test_scrypt_rfc7914();
    test_scrypt_litecoin();
    test_scrypt_against_openssl();
    return test_summary();
}
