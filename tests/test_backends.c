/* Every backend x device x implementation variant, called only through the
 * vtable, against the plain reference: the shared vectors, range and lane
 * boundaries, ranges ending at nonce 0xFFFFFFFF, random headers with
 * targets placed exactly on a hash, and SHA-256d jobs of several versions
 * (each hit's version too), on both the GPUs' one-pass path and the core's
 * one-version-at-a-time fallback.
 *
 *   test_backends [--variant NAME] [--backend NAME]
 * With --variant, only that variant runs, and the test exits 77 (ctest's
 * skip code) if no device offers it, e.g. AVX-512 on a CPU without it. */
#include "core/base/hex.h"
#include "core/base/momentum_ref.h"
#include "core/base/status.h"
#include "core/dispatch/registry.h"
#include "core/dispatch/tf_selftest.h"
#include "tests/momentum_oracle.h"
#include "tests/test_util.h"

#define MAX_VARIANTS 16

static const atomic_int never_abort = 0;

/* Reference PoW hash of the work's header with this nonce. */
static void ref_hash(const lode_work *w, uint32_t nonce, uint8_t hash[32])
{
    uint8_t header[80];
    memcpy(header, w->header.header, 80);
    for (int i = 0; i < 4; i++)
        header[76 + i] = (uint8_t)(nonce >> (8 * i));
    lode_algo_get(w->algo)->pow_hash_ref(header, hash);
}

static int by_index(const void *a, const void *b)
{
    uint64_t x = ((const lode_hit *)a)->index, y = ((const lode_hit *)b)->index;
    return x < y ? -1 : x > y;
}

/* Installs w and scans [start, start+count) through the vtable, checking
 * that the whole range was done; the hits come back sorted by cmp. */
static lode_hits scan_sorted(lode_handle *h, const lode_work *w, uint64_t start, uint64_t count, const char *what,
                             int (*cmp)(const void *, const void *))
{
    lode_hits hits = {0};
    lode_range r = {.start = start, .count = count};
    uint64_t done = 0;
    int rc = lode_handle_set_work(h, w);
    if (rc == LODE_OK)
        rc = lode_handle_scan(h, &r, &hits, &done, &never_abort);
    CHECK(rc == LODE_OK && done == count, "%s: %s (%u versions) %s scan %llu+%llu: rc %d done %llu", h->ref->id,
          lode_algo_get(w->algo)->name, w->header.version_count, what,
          (unsigned long long)start, (unsigned long long)count, rc, (unsigned long long)done);
    if (hits.count > 1)
        qsort(hits.items, hits.count, sizeof *hits.items, cmp);
    return hits;
}

/* Scans [start, start+count) through the vtable and checks that the hits
 * are exactly the nonces whose reference hash meets the target. */
static void check_scan(lode_handle *h, const lode_work *w, uint64_t start, uint64_t count,
                       const char *what)
{
    lode_hits hits = scan_sorted(h, w, start, count, what, by_index);
    size_t k = 0;
    bool ok = true;
    for (uint64_t n = start; n < start + count; n++) {
        uint8_t hash[32];
        ref_hash(w, (uint32_t)n, hash);
        bool expect = lode_hash_meets_target(hash, &w->header.target);
        bool got = k < hits.count && hits.items[k].index == n;
        if (got)
            k++;
        if (expect != got) {
            ok = false;
            fprintf(stderr, "  nonce %llu: reference says %s, backend says %s\n",
                    (unsigned long long)n, expect ? "hit" : "miss", got ? "hit" : "miss");
        }
    }
    CHECK(ok && k == hits.count, "%s: %s %s: hits match the reference (%zu reported)", h->ref->id,
          lode_algo_get(w->algo)->name, what, hits.count);
    lode_hits_free(&hits);
}

/* The algorithm's vectors, tests/vectors/<name>.json, read as its
 * "lode_embed" object describes them (as the self-test's embedding does). */
static void test_vectors(lode_handle *h)
{
    char file[64];
    snprintf(file, sizeof file, "%s.json", lode_algo_get(h->algo)->name);
    json_t *root = test_load_vectors(file);
    json_t *embed = json_object_get(root, "lode_embed");
    json_t *list = json_object_get(root, test_json_str(embed, "array"));
    const char *header_key = test_json_str(embed, "header");
    const char *hash_key = test_json_str(embed, "hash");
    json_t *v;
    size_t i;
    json_array_foreach(list, i, v) {
        lode_work w = {.algo = h->algo};
        uint8_t hash_be[32], hash_le[32];
        test_json_hex(v, header_key, w.header.header, 80);
        test_json_hex(v, hash_key, hash_be, 32);
        for (int b = 0; b < 32; b++)
            hash_le[b] = hash_be[31 - b];
        w.header.target = lode_u256_from_le_bytes(hash_le);
        const uint8_t *p = w.header.header + 76;
        uint32_t nonce = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        uint64_t start = nonce >= 3 ? nonce - 3 : 0;
        check_scan(h, &w, start, 7, test_json_str(v, "name"));
    }
    json_decref(root);
}

/* Counts around every SIMD width (1, 2, 4, 8, 16, 32 lanes), at a random
 * start and at the very end of the nonce space. The all-ones target makes
 * every nonce a hit, so a lost or extra lane shows. */
static void test_boundaries(lode_handle *h)
{
    static const uint64_t counts[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 65};
    lode_work w = {.algo = h->algo};
    test_rand_bytes(w.header.header, 80);
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        char what[64];
        uint64_t start = test_rand() % ((UINT64_C(1) << 32) - 100);
        snprintf(what, sizeof what, "all-hit count %llu", (unsigned long long)counts[i]);
        check_scan(h, &w, start, counts[i], what);
        snprintf(what, sizeof what, "all-hit count %llu ending at 0xFFFFFFFF",
                 (unsigned long long)counts[i]);
        check_scan(h, &w, (UINT64_C(1) << 32) - counts[i], counts[i], what);
    }
    /* A 0 target: no hits at all across lane groups. */
    memset(w.header.target.w, 0, sizeof w.header.target.w);
    check_scan(h, &w, test_rand() % 1000000, 40, "zero target");
}

static int cmp_hash(const void *a, const void *b)
{
    const uint8_t *x = a, *y = b;
    for (int i = 31; i >= 0; i--)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* Random headers, with the target set exactly to one nonce's hash (and to
 * one below it), so the comparison must be exact in all 256 bits. */
static void test_random(lode_handle *h, int trials, unsigned span)
{
    for (int t = 0; t < trials; t++) {
        lode_work w = {.algo = h->algo};
        test_rand_bytes(w.header.header, 80);
        uint64_t start = test_rand() % ((UINT64_C(1) << 32) - span);
        uint8_t (*hashes)[32] = malloc(span * 32);
        for (unsigned i = 0; i < span; i++)
            ref_hash(&w, (uint32_t)(start + i), hashes[i]);
        qsort(hashes, span, 32, cmp_hash);
        unsigned pick = (unsigned)(test_rand() % span);
        w.header.target = lode_u256_from_le_bytes(hashes[pick]);
        check_scan(h, &w, start, span, "random target on a hash");
        for (int i = 0; i < 8; i++)
            if (w.header.target.w[i]-- != 0)
                break;
        check_scan(h, &w, start, span, "random target one below a hash");
        free(hashes);
    }
}

/* An abort that is already raised ends the scan early, and whatever it
 * reports done is complete. */
static void test_abort(lode_handle *h)
{
    lode_work w = {.algo = h->algo};
    test_rand_bytes(w.header.header, 80);
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    atomic_int abort_now = 1;
    lode_hits hits = {0};
    uint64_t done = 0, count = h->algo == LODE_ALGO_SHA256D ? 1u << 26 : 1u << 14;
    lode_range r = {.start = 0, .count = count};
    int rc = lode_handle_set_work(h, &w);
    if (rc == LODE_OK)
        rc = lode_handle_scan(h, &r, &hits, &done, &abort_now);
    CHECK(rc == LODE_OK && done < count && hits.count == done,
          "%s: an aborted scan stops early and reports exactly its done part "
          "(done %llu, hits %zu)", h->ref->id, (unsigned long long)done, hits.count);
    lode_hits_free(&hits);
}

/* ---- version-rolled SHA-256d (core/base/work.h) ---- */

static void set_version(uint8_t header[80], uint32_t version)
{
    for (int i = 0; i < 4; i++)
        header[i] = (uint8_t)(version >> (8 * i));
}

static int by_index_version(const void *a, const void *b)
{
    const lode_hit *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->version < y->version ? -1 : x->version > y->version;
}

/* Scans a version-rolled job and checks that the hits are exactly the
 * (nonce, version) pairs whose reference hash meets the target. */
static void check_scan_versions(lode_handle *h, const lode_work *w, uint64_t start, uint64_t count,
                                const char *what)
{
    lode_hits hits = scan_sorted(h, w, start, count, what, by_index_version);
    /* The reference, in the same order: nonce, then version. */
    uint32_t order[LODE_VERSIONS_MAX];
    for (uint32_t i = 0; i < w->header.version_count; i++)
        order[i] = w->header.versions[i];
    for (uint32_t i = 1; i < w->header.version_count; i++)
        for (uint32_t j = i; j > 0 && order[j - 1] > order[j]; j--) {
            uint32_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t k = 0, expected = 0;
    bool ok = true;
    lode_work one = *w;
    one.header.version_count = 0;
    for (uint64_t n = start; n < start + count; n++)
        for (uint32_t i = 0; i < w->header.version_count; i++) {
            uint8_t hash[32];
            set_version(one.header.header, order[i]);
            ref_hash(&one, (uint32_t)n, hash);
            bool expect = lode_hash_meets_target(hash, &w->header.target);
            bool got = k < hits.count && hits.items[k].index == n && hits.items[k].version == order[i];
            expected += expect;
            if (got)
                k++;
            if (expect != got) {
                ok = false;
                fprintf(stderr, "  nonce %llu version %08x: reference says %s, backend says %s\n",
                        (unsigned long long)n, order[i], expect ? "hit" : "miss", got ? "hit" : "miss");
            }
        }
    CHECK(ok && k == hits.count, "%s: sha256d %u versions, %s: hits match the reference (%zu of %zu reported)",
          h->ref->id, w->header.version_count, what, hits.count, expected);
    lode_hits_free(&hits);
}

/* Version-rolled jobs of every size: LODE_VERSIONS_MAX (the GPUs' rolled
 * kernels) and fewer (the core's one-version-at-a-time fallback), with
 * BIP 320's version bits rolled, a target placed exactly on one of the
 * span's hashes (and one below it), ranges ending at 0xFFFFFFFF, and an
 * aborted scan that must report exactly its done part. */
static void test_versions(lode_handle *h)
{
    static const uint32_t sizes[] = {LODE_VERSIONS_MAX, 3, 1};
    const unsigned span = 512;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        lode_work w = {.algo = h->algo};
        test_rand_bytes(w.header.header, 80);
        const uint32_t base = 0x20000000u | (uint32_t)(test_rand() & 0x1fff);
        const uint32_t first = (uint32_t)(test_rand() % 0xfff0);
        w.header.version_count = sizes[s];
        for (uint32_t i = 0; i < sizes[s]; i++)
            w.header.versions[i] = base | (first + 7 * i) << 13;
        set_version(w.header.header, w.header.versions[0]);
        for (int end = 0; end < 2; end++) {
            uint64_t start = end ? (UINT64_C(1) << 32) - span : test_rand() % ((UINT64_C(1) << 32) - span);
            uint8_t (*hashes)[32] = malloc((size_t)span * sizes[s] * 32);
            lode_work one = w;
            one.header.version_count = 0;
            for (uint32_t i = 0; i < sizes[s]; i++) {
                set_version(one.header.header, w.header.versions[i]);
                for (unsigned n = 0; n < span; n++)
                    ref_hash(&one, (uint32_t)(start + n), hashes[i * span + n]);
            }
            qsort(hashes, (size_t)span * sizes[s], 32, cmp_hash);
            /* About 20 hits: the 20th smallest hash is the target. */
            w.header.target = lode_u256_from_le_bytes(hashes[19]);
            check_scan_versions(h, &w, start, span, end ? "target on a hash, ending at 0xFFFFFFFF" : "target on a hash");
            for (int i = 0; i < 8; i++)
                if (w.header.target.w[i]-- != 0)
                    break;
            check_scan_versions(h, &w, start, span, "target one below a hash");
            free(hashes);
        }
    }
    for (size_t s = 0; s < 2; s++) {
        lode_work w = {.algo = h->algo};
        test_rand_bytes(w.header.header, 80);
        memset(w.header.target.w, 0xff, sizeof w.header.target.w);
        w.header.version_count = sizes[s];
        for (uint32_t i = 0; i < sizes[s]; i++)
            w.header.versions[i] = 0x20000000u | i << 13;
        atomic_int abort_now = 1;
        lode_hits hits = {0};
        uint64_t done = 0, count = 1u << 26;
        lode_range r = {.start = 0, .count = count};
        int rc = lode_handle_set_work(h, &w);
        if (rc == LODE_OK)
            rc = lode_handle_scan(h, &r, &hits, &done, &abort_now);
        CHECK(rc == LODE_OK && done < count && hits.count == done * sizes[s],
              "%s: an aborted %u-version scan stops early and reports exactly its done part "
              "(done %llu, hits %zu)", h->ref->id, sizes[s], (unsigned long long)done, hits.count);
        lode_hits_free(&hits);
    }
    /* A job the contract refuses: too many versions. */
    lode_work bad = {.algo = h->algo};
    bad.header.version_count = LODE_VERSIONS_MAX + 1;
    CHECK(lode_handle_set_work(h, &bad) == LODE_ERR_INVALID, "%s: a job of %u versions is refused", h->ref->id,
          LODE_VERSIONS_MAX + 1);
}

/* Versions are SHA-256d's alone: any other header job carrying them is
 * refused before it reaches the backend. */
static void test_versions_refused(lode_handle *h)
{
    lode_work bad = {.algo = h->algo};
    test_rand_bytes(bad.header.header, 80);
    bad.header.version_count = 1;
    bad.header.versions[0] = 0x20000000u;
    CHECK(lode_handle_set_work(h, &bad) == LODE_ERR_INVALID, "%s: a %s job with versions is refused", h->ref->id,
          lode_algo_get(h->algo)->name);
}

/* ---- collision search (Momentum) ---- */

static int by_hit_pair(const void *a, const void *b)
{
    const lode_hit *x = a, *y = b;
    if (x->pair[0] != y->pair[0])
        return x->pair[0] < y->pair[0] ? -1 : 1;
    return x->pair[1] < y->pair[1] ? -1 : x->pair[1] > y->pair[1];
}

/* Sweeps header nonce `index` of w through the vtable; the hits must be
 * exactly want[0..n) (sorted by a, b), each re-checked by the reference. */
static void check_sweep(lode_handle *h, const lode_work *w, uint32_t index, const oracle_pair *want,
                        size_t n, const char *what)
{
    lode_hits hits = {0};
    lode_range r = {.start = index, .count = 1};
    uint64_t done = 0;
    int rc = lode_handle_set_work(h, w);
    if (rc == LODE_OK)
        rc = lode_handle_scan(h, &r, &hits, &done, &never_abort);
    CHECK(rc == LODE_OK && done == 1, "%s: momentum %s: rc %d done %llu", h->ref->id, what, rc,
          (unsigned long long)done);
    if (hits.count > 1)
        qsort(hits.items, hits.count, sizeof *hits.items, by_hit_pair);
    bool same = hits.count == n;
    for (size_t i = 0; same && i < n; i++) {
        uint8_t hash[32];
        same = hits.items[i].index == index && hits.items[i].pair[0] == want[i].a &&
               hits.items[i].pair[1] == want[i].b &&
               lode_algo_get(w->algo)->check_hit(w, &hits.items[i], hash);
    }
    CHECK(same, "%s: momentum %s: exactly the %zu expected pair(s), got %zu", h->ref->id, what, n,
          hits.count);
    for (size_t i = 0; !same && i < hits.count; i++)
        fprintf(stderr, "  got %u %u\n", hits.items[i].pair[0], hits.items[i].pair[1]);
    lode_hits_free(&hits);
}

static int by_hit_pair_oracle(const void *a, const void *b)
{
    const oracle_pair *x = a, *y = b;
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

static void header_with_nonce(const lode_work *w, uint32_t nonce, uint8_t header[80])
{
    memcpy(header, w->header.header, 80);
    for (int i = 0; i < 4; i++)
        header[76 + i] = (uint8_t)(nonce >> (8 * i));
}

/* The genesis vectors (every collision, then the target on the genesis
 * pair's hash), a random header against the OpenSSL oracle, and an abort. */
static void test_momentum(lode_handle *h)
{
    json_t *root = test_load_vectors("momentum.json");
    json_t *v;
    size_t i;
    json_array_foreach(json_object_get(root, "vectors"), i, v) {
        lode_work w = {.algo = h->algo};
        uint8_t h88[88], hash_be[32], hash_le[32];
        test_json_hex(v, "header88_hex", h88, 88);
        memcpy(w.header.header, h88, 80);
        uint32_t nonce = (uint32_t)h88[76] | (uint32_t)h88[77] << 8 | (uint32_t)h88[78] << 16 |
                         (uint32_t)h88[79] << 24;
        oracle_pair want[16];
        size_t n = 0, k;
        json_t *it;
        json_array_foreach(json_object_get(json_object_get(v, "all_collisions_in_nonce_space"), "items"), k, it) {
            uint32_t a = (uint32_t)test_json_uint(it, "nBirthdayA"), b = (uint32_t)test_json_uint(it, "nBirthdayB");
            if (n < 16)
                want[n++] = (oracle_pair){a < b ? a : b, a < b ? b : a, 0};
        }
        qsort(want, n, sizeof *want, by_hit_pair_oracle);
        memset(w.header.target.w, 0xff, sizeof w.header.target.w);
        char what[160];
        snprintf(what, sizeof what, "%s, every collision", test_json_str(v, "name"));
        check_sweep(h, &w, nonce, want, n, what);
        if (i > 0)
            continue; /* one sweep per vector is enough on slow devices */
        test_json_hex(v, "block_hash", hash_be, 32);
        for (int b = 0; b < 32; b++)
            hash_le[b] = hash_be[31 - b];
        w.header.target = lode_u256_from_le_bytes(hash_le);
        oracle_pair genesis = {(uint32_t)test_json_uint(v, "nBirthdayA"), (uint32_t)test_json_uint(v, "nBirthdayB"), 0};
        /* The target on its block hash, three header nonces in one scan (GPU
         * backends queue sweeps ahead): only the middle one's genesis pair
         * meets it, and the reference re-checks that hit. */
        lode_hits hits = {0};
        lode_range r = {.start = nonce - 1, .count = 3};
        uint64_t done = 0;
        int rc = lode_handle_set_work(h, &w);
        if (rc == LODE_OK)
            rc = lode_handle_scan(h, &r, &hits, &done, &never_abort);
        uint8_t hash[32];
        CHECK(rc == LODE_OK && done == 3 && hits.count == 1 && hits.items[0].index == nonce &&
                  hits.items[0].pair[0] == genesis.a && hits.items[0].pair[1] == genesis.b &&
                  lode_algo_get(w.algo)->check_hit(&w, &hits.items[0], hash),
              "%s: momentum scan of 3 header nonces, target on the %s block hash: rc %d done %llu, %zu hit(s)",
              h->ref->id, test_json_str(v, "name"), rc, (unsigned long long)done, hits.count);
        lode_hits_free(&hits);
    }
    json_decref(root);

    /* A random header: the backend against the independent full search. */
    lode_work w = {.algo = h->algo};
    test_rand_bytes(w.header.header, 80);
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    uint32_t index = (uint32_t)test_rand();
    uint8_t header[80], mid[32];
    header_with_nonce(&w, index, header);
    lode_ref_momentum_midhash(header, mid);
    oracle_pair *want = NULL;
    size_t n = oracle_momentum_pairs(mid, &want);
    CHECK(n != (size_t)-1, "the oracle ran");
    if (n != (size_t)-1)
        check_sweep(h, &w, index, want, n, "random header against the OpenSSL oracle");
    free(want);

    /* An abort raised before the scan: nothing done, nothing reported. */
    atomic_int abort_now = 1;
    lode_hits hits = {0};
    uint64_t done = 0;
    lode_range r = {.start = index, .count = 3};
    int rc = lode_handle_scan(h, &r, &hits, &done, &abort_now);
    CHECK(rc == LODE_OK && done < 3 && (done > 0 || hits.count == 0),
          "%s: an aborted momentum scan stops early (done %llu)", h->ref->id, (unsigned long long)done);
    lode_hits_free(&hits);
}

/* The checks of one device, algorithm and variant (NULL: the default);
 * 1 when they ran, 0 when the device did not open. */
static int test_variant(const lode_device_ref *dev, lode_algo algo, const char *variant)
{
    printf("%s %s %s\n", dev->id, lode_algo_get(algo)->name, variant ? variant : "default");
    lode_open_params params = {.algo = algo, .variant = variant};
    lode_handle h;
    int rc = lode_handle_open(&h, dev, &params);
    CHECK(rc == LODE_OK, "%s opens (%s)", dev->id, lode_status_str(rc));
    if (rc != LODE_OK)
        return 0;
    if (lode_algo_get(algo)->kind == LODE_WORK_TF) {
        /* Every known factor (tests/vectors/mersenne-factors.json);
         * tests/test_tf.c has the rest. */
        char why[512];
        CHECK(lode_tf_selftest_handle(&h, false, NULL, why, sizeof why) == 0, "%s tf: %s",
              dev->id, why);
        lode_handle_close(&h);
        return 1;
    }
    if (lode_algo_get(algo)->kind == LODE_WORK_COLLISION_SEARCH) {
        test_versions_refused(&h);
        test_momentum(&h);
        lode_handle_close(&h);
        return 1;
    }
    bool cheap = algo == LODE_ALGO_SHA256D;
    test_vectors(&h);
    test_boundaries(&h);
    test_random(&h, cheap ? 40 : 3, cheap ? 300 : 48);
    test_abort(&h);
    if (algo == LODE_ALGO_SHA256D)
        test_versions(&h);
    else
        test_versions_refused(&h);
    lode_handle_close(&h);
    return 1;
}

int main(int argc, char **argv)
{
    const char *only_variant = NULL, *only_backend = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--variant") == 0)
            only_variant = argv[i + 1];
        else if (strcmp(argv[i], "--backend") == 0)
            only_backend = argv[i + 1];
    }
    test_seed();
    lode_device_ref *devices;
    size_t count;
    if (lode_registry_enumerate(&devices, &count) != 0 || count == 0) {
        fprintf(stderr, "no devices at all\n");
        return 1;
    }
    int runs = 0;
    for (size_t d = 0; d < count; d++) {
        if (only_backend && strcmp(lode_device_backend_name(&devices[d]), only_backend) != 0)
            continue;
        for (int a = 0; a < LODE_ALGO_COUNT; a++) {
            if (!((devices[d].info.algo_mask >> a) & 1u))
                continue;
            const char *names[MAX_VARIANTS];
            int k = lode_device_variants(&devices[d], (lode_algo)a, names, MAX_VARIANTS);
            for (int v = 0; v < k; v++) {
                if (only_variant && (names[v] == NULL || strcmp(names[v], only_variant) != 0))
                    continue;
                /* The CPU's Momentum variants differ only in their SHA-512 path
                 * (tests/test_momentum.c compares each with the reference lane
                 * by lane; ctest's backend_cpu_<variant> sweeps each): a run of
                 * every variant sweeps only the best, each sweep being 2^26
                 * hashes on one core. */
                if (only_variant == NULL && v > 0 && a == LODE_ALGO_MOMENTUM &&
                    strcmp(devices[d].backend->name, "cpu") == 0)
                    continue;
                runs += test_variant(&devices[d], (lode_algo)a, names[v]);
            }
        }
    }
    free(devices);
    if (runs == 0 && test_failed == 0) { /* a device that failed to open is a failure, not a skip */
        printf("no device offers %s%s: skipped\n", only_variant ? "variant " : "backend ",
               only_variant ? only_variant : only_backend ? only_backend : "?");
        return 77;
    }
    return test_summary();
}
