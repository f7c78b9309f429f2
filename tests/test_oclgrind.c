/* lode's OpenCL kernels on Oclgrind (Debian's OpenCL simulator), in jobs
 * small enough for a simulator about a thousand times slower than a CPU,
 * each result compared with the CPU reference. tests/test_oclgrind.py runs
 * it with Oclgrind's checks on and fails on any report Oclgrind makes.
 *
 *   test_oclgrind sha256d|scrypt|momentum|tf
 * Exit 77 when no Oclgrind device is registered (no OpenCL ICD for it). */
#include "core/base/status.h"
#include "core/base/tf_ref.h"
#include "core/dispatch/registry.h"
#include "core/dispatch/tf_selftest.h"
#include "tests/test_util.h"

#define MAX_VARIANTS 16

static const atomic_int never_abort = 0;

static void ref_hash(const lode_work *w, uint32_t nonce, uint8_t hash[32])
{
    uint8_t header[80];
    memcpy(header, w->header.header, 80);
    for (int i = 0; i < 4; i++)
        header[76 + i] = (uint8_t)(nonce >> (8 * i));
    lode_algo_get(w->algo)->pow_hash_ref(header, hash);
}

static void set_version(uint8_t header[80], uint32_t version)
{
    for (int i = 0; i < 4; i++)
        header[i] = (uint8_t)(version >> (8 * i));
}

static int scan(lode_handle *h, const lode_work *w, uint64_t start, uint64_t count, lode_hits *hits)
{
    lode_range r = {.start = start, .count = count};
    uint64_t done = 0;
    int rc = lode_handle_set_work(h, w);
    if (rc == LODE_OK)
        rc = lode_handle_scan(h, &r, hits, &done, &never_abort);
    return rc == LODE_OK && done != count ? LODE_ERR_DEVICE : rc;
}

/* Scans [start, start+count) and checks that the hits are exactly the
 * (nonce, version) pairs whose reference hash meets the target (with no
 * versions: the header's own). */
static void check_scan(lode_handle *h, const lode_work *w, uint64_t start, uint64_t count, const char *what)
{
    lode_hits hits = {0};
    int rc = scan(h, w, start, count, &hits);
    const uint32_t versions = w->header.version_count ? w->header.version_count : 1;
    size_t expected = 0, matched = 0;
    lode_work one = *w;
    one.header.version_count = 0;
    for (uint64_t n = start; n < start + count; n++)
        for (uint32_t v = 0; v < versions; v++) {
            uint8_t hash[32];
            if (w->header.version_count)
                set_version(one.header.header, w->header.versions[v]);
            ref_hash(&one, (uint32_t)n, hash);
            if (!lode_hash_meets_target(hash, &w->header.target))
                continue;
            expected++;
            for (size_t i = 0; i < hits.count; i++)
                matched += hits.items[i].index == n &&
                           (!w->header.version_count || hits.items[i].version == w->header.versions[v]);
        }
    CHECK(rc == LODE_OK && hits.count == expected && matched == expected,
          "%s %s %s: rc %d, %zu hits, %zu matched, reference %zu", h->ref->id, lode_algo_get(w->algo)->name, what, rc,
          hits.count, matched, expected);
    lode_hits_free(&hits);
}

static int cmp_hash(const void *a, const void *b)
{
    const uint8_t *x = a, *y = b;
    for (int i = 31; i >= 0; i--)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* The target set to the rank-th smallest hash of the span (all versions). */
static void target_on_hash(lode_work *w, uint64_t start, unsigned span, unsigned rank)
{
    const uint32_t versions = w->header.version_count ? w->header.version_count : 1;
    uint8_t (*hashes)[32] = malloc((size_t)span * versions * 32);
    lode_work one = *w;
    one.header.version_count = 0;
    for (uint32_t v = 0; v < versions; v++) {
        if (w->header.version_count)
            set_version(one.header.header, w->header.versions[v]);
        for (unsigned n = 0; n < span; n++)
            ref_hash(&one, (uint32_t)(start + n), hashes[v * span + n]);
    }
    qsort(hashes, (size_t)span * versions, 32, cmp_hash);
    w->header.target = lode_u256_from_le_bytes(hashes[rank]);
    free(hashes);
}

/* Header hashes (SHA-256d, scrypt): a target on one hash of a span ending
 * at nonce 0xFFFFFFFF; for SHA-256d also every nonce a hit at a random
 * start, and a version-rolled job of LODE_VERSIONS_MAX versions (the
 * rolled kernels). */
static void test_header(lode_handle *h, unsigned span)
{
    lode_work w = {.algo = h->algo};
    test_rand_bytes(w.header.header, 80);
    const uint64_t end = (UINT64_C(1) << 32) - span;
    target_on_hash(&w, end, span, span / 4);
    check_scan(h, &w, end, span, "target on a hash, ending at 0xFFFFFFFF");
    if (h->algo != LODE_ALGO_SHA256D)
        return;
    const uint64_t start = test_rand() % end;
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    check_scan(h, &w, start, span, "every nonce a hit");
    w.header.version_count = LODE_VERSIONS_MAX;
    for (uint32_t i = 0; i < LODE_VERSIONS_MAX; i++)
        w.header.versions[i] = 0x20000000u | (uint32_t)(test_rand() % 0xffff) << 13;
    set_version(w.header.header, w.header.versions[0]);
    target_on_hash(&w, start, span / 4, span / 4);
    check_scan(h, &w, start, span / 4, "16 versions, target on a hash");
}

/* A tf class of a small exponent: every index's q checked by the
 * reference, and one known factor (tests/vectors/mersenne-factors.json)
 * found in a short window of its class. */
static void test_tf(lode_handle *h)
{
    const uint32_t p = 100043;
    const uint64_t count = 4000;
    uint32_t c = 0;
    size_t expected = 0;
    for (; expected == 0 && c < LODE_TF_CLASSES; c += expected == 0) /* a class with a factor */
        for (uint64_t n = 0; lode_tf_class_needed(p, c) && n < count; n++)
            expected += lode_tf_divides(p, lode_tf_q(p, lode_tf_k(c, n)));
    lode_work w = {.algo = LODE_ALGO_TF, .factor = {p, 1, 50, LODE_TF_CLASSES, c}};
    lode_hits hits = {0};
    int rc = scan(h, &w, 0, count, &hits);
    size_t matched = 0;
    for (uint64_t n = 0; n < count; n++)
        if (lode_tf_divides(p, lode_tf_q(p, lode_tf_k(c, n))))
            for (size_t i = 0; i < hits.count; i++)
                matched += hits.items[i].index == n;
    CHECK(rc == LODE_OK && expected > 0 && hits.count == expected && matched == expected,
          "%s tf M%u class %u n 0+%llu: rc %d, %zu hits, reference %zu", h->ref->id, p, c,
          (unsigned long long)count, rc, hits.count, expected);
    lode_hits_free(&hits);
    char why[512];
    CHECK(lode_tf_selftest_vector(h, &lode_tf_vectors[0], 2000, why, sizeof why) == 0, "%s tf known factor: %s",
          h->ref->id, why);
}

static void test_variant(const lode_device_ref *dev, lode_algo algo, const char *variant)
{
    printf("%s %s %s\n", dev->id, lode_algo_get(algo)->name, variant ? variant : "default");
    fflush(stdout);
    lode_open_params params = {.algo = algo, .variant = variant};
    lode_handle h;
    int rc = lode_handle_open(&h, dev, &params);
    CHECK(rc == LODE_OK, "%s %s opens (%s)", dev->id, variant ? variant : "", lode_status_str(rc));
    if (rc != LODE_OK)
        return;
    if (algo == LODE_ALGO_TF)
        test_tf(&h);
    else
        test_header(&h, algo == LODE_ALGO_SHA256D ? 256 : 4);
    lode_handle_close(&h);
}

static bool listed(const char *variant, char **only, int n)
{
    for (int i = 0; i < n; i++)
        if (variant != NULL && strcmp(variant, only[i]) == 0)
            return true;
    return n == 0;
}

int main(int argc, char **argv)
{
    lode_algo algo;
    if (argc < 2 || lode_algo_parse(argv[1], &algo) != 0) {
        fprintf(stderr, "usage: test_oclgrind sha256d|scrypt|momentum|tf [VARIANT...]\n");
        return 2;
    }
    test_seed();
    lode_device_ref *devices;
    size_t count;
    if (lode_registry_enumerate(&devices, &count) != 0)
        return 1;
    int runs = 0;
    for (size_t d = 0; d < count; d++) {
        if (strcmp(lode_device_backend_name(&devices[d]), "opencl") != 0 ||
            strstr(devices[d].info.name, "Oclgrind") == NULL || !((devices[d].info.algo_mask >> algo) & 1u))
            continue;
        const char *names[MAX_VARIANTS];
        int k = lode_device_variants(&devices[d], algo, names, MAX_VARIANTS);
        for (int v = 0; v < k; v++) {
            if (!listed(names[v], argv + 2, argc - 2)) {
                printf("%s %s %s: not run here (not among the variants asked for)\n", devices[d].id, argv[1],
                       names[v] ? names[v] : "default");
                continue;
            }
            test_variant(&devices[d], algo, names[v]);
            runs++;
        }
    }
    free(devices);
    CHECK(runs >= argc - 2, "every variant asked for ran (%d of %d)", runs, argc - 2);
    if (runs == 0) {
        printf("no Oclgrind OpenCL device runs %s (is its ICD registered?): skipped\n", argv[1]);
        return 77;
    }
    return test_summary();
}
