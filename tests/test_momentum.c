/* Momentum: the reference (SHA-512 against OpenSSL, the genesis vectors of
 * tests/vectors/momentum.json: midHash, SHA-512 words, birthdays, both
 * collision lists, block hashes, momentum_verify's rules), the CPU search
 * against the vectors' complete collision lists (also with tiny buckets, so
 * the overflow path runs), and against the independent OpenSSL oracle on a
 * random header; the reference's complete search against the oracle and
 * the vector. Every backend is checked through the vtable by
 * test_backends. */
#include <openssl/evp.h>

#include "backend-cpu/momentum_cpu.h"
#include "core/base/hex.h"
#include "core/base/momentum_ref.h"
#include "core/base/sha512_ref.h"
#include "core/base/status.h"
#include "tests/momentum_oracle.h"
#include "tests/test_util.h"

static const atomic_int never_abort = 0;

static void test_sha512_against_openssl(void)
{
    uint8_t msg[300], ours[64], theirs[64];
    for (int trial = 0; trial < 1000; trial++) {
        size_t len = (size_t)(test_rand() % sizeof msg);
        if (trial < 4)
            len = (size_t[]){0, 111, 112, 128}[trial]; /* padding edges */
        test_rand_bytes(msg, len);
        lode_ref_sha512(msg, len, ours);
        unsigned n;
        EVP_Digest(msg, len, theirs, &n, EVP_sha512(), NULL);
        CHECK_BYTES(ours, theirs, 64, "SHA-512 of %zu random bytes", len);
    }
}

/* The vector's complete collision list as sorted pairs. */
static size_t vector_pairs(json_t *v, momentum_pair *out, size_t max)
{
    json_t *items = json_object_get(json_object_get(v, "all_collisions_in_nonce_space"), "items");
    size_t i, n = 0;
    json_t *it;
    json_array_foreach(items, i, it) {
        if (n == max)
            break;
        uint32_t a = (uint32_t)test_json_uint(it, "nBirthdayA"), b = (uint32_t)test_json_uint(it, "nBirthdayB");
        const char *hex = test_json_str(it, "birthday_hex");
        uint64_t birthday = strtoull(hex, NULL, 16);
        out[n++] = (momentum_pair){a < b ? a : b, a < b ? b : a, birthday};
    }
    return n;
}

static int by_pair(const void *x, const void *y)
{
    const momentum_pair *a = x, *b = y;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

static void test_vectors(void)
{
    json_t *root = test_load_vectors("momentum.json");
    json_t *list = json_object_get(root, "vectors"), *v;
    size_t i;
    json_array_foreach(list, i, v) {
        const char *name = test_json_str(v, "name");
        uint8_t h80[80], h88[88], mid[32], want_mid[32], input[36], digest[64], hash[32], want[32];
        test_json_hex(v, "header80_hex", h80, 80);
        test_json_hex(v, "header88_hex", h88, 88);
        test_json_hex(v, "midHash_internal_hex", want_mid, 32);
        lode_ref_momentum_midhash(h80, mid);
        CHECK_BYTES(mid, want_mid, 32, "%s: midHash", name);
        test_json_hex(v, "sha512_input_for_nonce_0_hex", input, 36);
        CHECK(memcmp(input + 4, mid, 32) == 0 && input[0] == 0, "%s: SHA-512 input", name);
        lode_ref_sha512(input, 36, digest);
        json_t *words = json_object_get(v, "sha512_words_for_nonce_base_0");
        for (int w = 0; w < 8; w++) {
            uint64_t got = 0, expect = strtoull(json_string_value(json_array_get(words, (size_t)w)), NULL, 16);
            for (int b = 7; b >= 0; b--) /* the words are read little-endian */
                got = got << 8 | digest[8 * w + b];
            CHECK(got == expect, "%s: SHA-512 word %d %016llx", name, w, (unsigned long long)got);
        }
        json_t *samples = json_object_get(v, "birthday_samples"), *s;
        size_t k;
        json_array_foreach(samples, k, s) {
            uint32_t n = (uint32_t)test_json_uint(s, "nonce");
            uint64_t expect = strtoull(test_json_str(s, "birthday_hex"), NULL, 16);
            CHECK(lode_ref_momentum_birthday(mid, n) == expect, "%s: birthday of %u", name, n);
        }
        /* The genesis pair, its block hash, and every listed collision. */
        uint32_t a = (uint32_t)test_json_uint(v, "nBirthdayA"), b = (uint32_t)test_json_uint(v, "nBirthdayB");
        CHECK(lode_ref_momentum_verify(mid, a, b), "%s: the genesis pair verifies", name);
        CHECK(lode_ref_momentum_block_hash(h88, hash), "%s: block hash verifies", name);
        test_json_hex(v, "block_hash", want, 32);
        for (int x = 0; x < 16; x++) {
            uint8_t t = want[x];
            want[x] = want[31 - x];
            want[31 - x] = t;
        }
        CHECK_BYTES(hash, want, 32, "%s: block hash", name);
        momentum_pair pairs[16];
        size_t np = vector_pairs(v, pairs, 16);
        for (size_t p = 0; p < np; p++)
            CHECK(lode_ref_momentum_verify(mid, pairs[p].a, pairs[p].b) &&
                      lode_ref_momentum_birthday(mid, pairs[p].a) == pairs[p].birthday,
                  "%s: listed pair %u %u collides", name, pairs[p].a, pairs[p].b);
        /* momentum_verify's rules: a == b, past 2^26, a wrong pair. */
        CHECK(!lode_ref_momentum_verify(mid, a, a), "%s: a == b is rejected", name);
        CHECK(!lode_ref_momentum_verify(mid, a, LODE_MOMENTUM_NONCES + 1),
              "%s: a nonce past 2^26 is rejected", name);
        CHECK(!lode_ref_momentum_verify(mid, a, b + 1), "%s: a non-colliding pair is rejected", name);
        uint8_t bad[88];
        memcpy(bad, h88, 88);
        bad[84] ^= 1;
        uint8_t ones[32];
        memset(ones, 0xff, 32);
        CHECK(!lode_ref_momentum_block_hash(bad, hash) && memcmp(hash, ones, 32) == 0,
              "%s: a broken pair hashes to all ones", name);
    }
    json_decref(root);
}

/* The CPU search on a genesis midHash equals the vector's complete list;
 * capacity 0 is the default, a small one forces bucket spills. */
static void test_cpu_search_vector(int which, uint32_t capacity)
{
    json_t *root = test_load_vectors("momentum.json");
    json_t *v = json_array_get(json_object_get(root, "vectors"), (size_t)which);
    uint8_t mid[32];
    test_json_hex(v, "midHash_internal_hex", mid, 32);
    momentum_pair want[16];
    size_t nw = vector_pairs(v, want, 16);
    qsort(want, nw, sizeof *want, by_pair);
    cpu_momentum *m = cpu_momentum_new(capacity, NULL);
    momentum_pairs got = {0};
    int rc = m ? cpu_momentum_sweep(m, mid, &got, &never_abort) : LODE_ERR_NO_MEMORY;
    if (got.count > 1)
        qsort(got.items, got.count, sizeof *got.items, by_pair);
    bool same = rc == LODE_OK && got.count == nw;
    for (size_t i = 0; same && i < nw; i++)
        same = got.items[i].a == want[i].a && got.items[i].b == want[i].b &&
               got.items[i].birthday == want[i].birthday;
    CHECK(same, "%s: CPU search (bucket capacity %u) finds exactly the %zu listed pairs (got %zu, rc %d)",
          test_json_str(v, "name"), capacity, nw, got.count, rc);
    momentum_pairs_free(&got);
    cpu_momentum_free(m);
    json_decref(root);
}

static void test_cpu_search_random(void)
{
    uint8_t header[80], mid[32];
    test_rand_bytes(header, 80);
    lode_ref_momentum_midhash(header, mid);
    oracle_pair *want = NULL;
    size_t nw = oracle_momentum_pairs(mid, &want);
    CHECK(nw != (size_t)-1, "the oracle ran");
    cpu_momentum *m = cpu_momentum_new(0, NULL);
    momentum_pairs got = {0};
    int rc = m ? cpu_momentum_sweep(m, mid, &got, &never_abort) : LODE_ERR_NO_MEMORY;
    if (got.count > 1)
        qsort(got.items, got.count, sizeof *got.items, by_pair);
    bool same = rc == LODE_OK && got.count == nw;
    for (size_t i = 0; same && i < nw; i++)
        same = got.items[i].a == want[i].a && got.items[i].b == want[i].b &&
               got.items[i].birthday == want[i].birthday;
    CHECK(same, "random header: CPU search equals the OpenSSL oracle (%zu vs %zu pairs)", got.count, nw);
    for (size_t i = 0; i < nw; i++)
        CHECK(lode_ref_momentum_verify(mid, want[i].a, want[i].b), "oracle pair %u %u verifies",
              want[i].a, want[i].b);
    /* An abort raised before the sweep stops it at once. */
    atomic_int stop = 1;
    got.count = 0;
    CHECK(m && cpu_momentum_sweep(m, mid, &got, &stop) == 1, "a raised abort stops the sweep");
    free(want);
    momentum_pairs_free(&got);
    cpu_momentum_free(m);
}

/* The reference's complete search equals the vector's complete collision
 * list on the mainnet genesis midHash (one thread), and the OpenSSL oracle
 * exactly (same pairs, same order) on a fixed header (two threads). */
static void test_reference_pairs(void)
{
    json_t *root = test_load_vectors("momentum.json");
    json_t *v = json_array_get(json_object_get(root, "vectors"), 0);
    uint8_t mid[32];
    test_json_hex(v, "midHash_internal_hex", mid, 32);
    lode_momentum_pair *got = NULL;
    size_t ng = 0;
    int rc = lode_ref_momentum_pairs(mid, 1, &got, &ng);
    momentum_pair listed[16];
    size_t nl = vector_pairs(v, listed, 16);
    qsort(listed, nl, sizeof *listed, by_pair);
    bool same = rc == 0 && ng == nl;
    for (size_t i = 0; same && i < nl; i++)
        same = got[i].a == listed[i].a && got[i].b == listed[i].b;
    CHECK(same, "%s: the reference search finds exactly the %zu listed pairs (got %zu)", test_json_str(v, "name"),
          nl, ng);
    free(got);
    json_decref(root);

    uint8_t header[80];
    for (int i = 0; i < 80; i++)
        header[i] = (uint8_t)(7 * i + 3);
    lode_ref_momentum_midhash(header, mid);
    got = NULL;
    rc = lode_ref_momentum_pairs(mid, 2, &got, &ng);
    oracle_pair *want = NULL;
    size_t nw = oracle_momentum_pairs(mid, &want);
    CHECK(nw != (size_t)-1, "the oracle ran");
    same = rc == 0 && ng == nw && (ng == 0) == (got == NULL);
    for (size_t i = 0; same && i < nw; i++)
        same = got[i].a == want[i].a && got[i].b == want[i].b;
    CHECK(same, "fixed header, 2 threads: the reference search equals the OpenSSL oracle (rc %d, %zu vs %zu pairs)",
          rc, ng, nw);
    free(got);
    free(want);
}

/* Every SHA-512 path this CPU runs (AVX-512, AVX2, portable) gives the
 * reference's birthdays, lane by lane, on random jobs and bases. */
static void test_sha512_paths(void)
{
    const char *wants[] = {"avx512", "avx2", "portable"};
    for (size_t w = 0; w < 3; w++) {
        unsigned lanes;
        const char *name;
        momentum_sha512_fn fn = momentum_sha512_pick(wants[w], &lanes, &name);
        if (strcmp(name, wants[w]) != 0) {
            printf("SHA-512 path %s: not on this CPU, skipped\n", wants[w]);
            continue;
        }
        bool same = true;
        for (int trial = 0; trial < 64 && same; trial++) {
            uint8_t header[80], mid[32];
            test_rand_bytes(header, 80);
            lode_ref_momentum_midhash(header, mid);
            momentum_consts c;
            momentum_consts_init(&c, mid);
            uint32_t base = (uint32_t)(test_rand() % (MOMENTUM_NONCES / 8 / lanes)) * 8 * lanes;
            if (trial == 0)
                base = 0;
            if (trial == 1)
                base = MOMENTUM_NONCES - 8 * lanes;
            uint64_t got[64];
            fn(&c, base, got);
            for (unsigned i = 0; i < 8 * lanes && same; i++)
                same = got[i] == lode_ref_momentum_birthday(mid, base + i);
        }
        CHECK(same, "SHA-512 path %s (%u lanes) equals the reference", name, lanes);
    }
}

/* Exact pair recovery from a candidate list with noise and a triple. */
static void test_pairs_from_entries(void)
{
    momentum_entry list[] = {{5, 9, 0}, {7, 3, 0}, {5, 1, 0}, {9, 2, 0}, {5, 4, 0}, {8, 6, 0}, {7, 11, 0}};
    momentum_pairs p = {0};
    CHECK(momentum_pairs_from_entries(list, 7, &p) == LODE_OK && p.count == 4, "4 pairs (%zu)", p.count);
    if (p.count == 4)
        CHECK(p.items[0].a == 1 && p.items[0].b == 4 && p.items[1].a == 1 && p.items[1].b == 9 &&
                  p.items[2].a == 4 && p.items[2].b == 9 && p.items[3].a == 3 && p.items[3].b == 11,
              "the triple's three pairs and the pair, a < b");
    momentum_pairs_free(&p);
}

int main(void)
{
    test_seed();
    test_sha512_against_openssl();
    test_vectors();
    test_pairs_from_entries();
    test_sha512_paths();
    /* Testnet genesis (6 collisions) with buckets too small: spills in most
     * of them. The default capacity runs in test_backends and the random
     * test here. */
    test_cpu_search_vector(1, 15500);
    test_cpu_search_random();
    test_reference_pairs();
    return test_summary();
}
