/* The contract of core/base/backend.h, checked once by the wrappers of
 * core/dispatch/registry.c: a call that breaks it returns LODE_ERR_INVALID without
 * reaching the backend (a counting fake here), and one that keeps it does
 * reach it:
 * - set_work: a work of another algorithm, or an invalid trial-factoring job;
 * - scan: a nonce range beyond 32 bits (start > UINT32_MAX, or
 *   start + count > 2^32) for the nonce algorithms; trial factoring's
 *   indices are 64 bits; count 0 returns at once. */
#include "core/dispatch/registry.h"
#include "core/base/status.h"
#include "core/base/tf_ref.h"
#include "tests/test_util.h"

struct lode_device {
    int set_works, scans;
};

static struct lode_device fake;

static int fake_probe(char why[LODE_WHY_LEN]) { why[0] = 0; return 0; }
static int fake_count(void) { return 1; }
static int fake_info(int index, lode_device_info *out)
{
    (void)index;
    memset(out, 0, sizeof *out);
    out->workers = out->max_workers = 1;
    out->algo_mask = (1u << LODE_ALGO_COUNT) - 1;
    return 0;
}
static int fake_open(int index, const lode_open_params *p, lode_device **out)
{
    (void)index, (void)p;
    *out = &fake;
    return LODE_OK;
}
static void fake_close(lode_device *d) { (void)d; }
static int fake_set_work(lode_device *d, const lode_work *w)
{
    (void)w;
    d->set_works++;
    return LODE_OK;
}
static int fake_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done, const atomic_int *abort)
{
    (void)hits, (void)abort;
    d->scans++;
    *done = r->count;
    return LODE_OK;
}

static const lode_backend_ops fake_backend = {
    .name = "fake", .probe = fake_probe, .device_count = fake_count, .device_info = fake_info,
    .open = fake_open, .close = fake_close, .set_work = fake_set_work, .scan = fake_scan,
};

static int scan(lode_handle *h, uint64_t start, uint64_t count)
{
    lode_range r = {.start = start, .count = count};
    uint64_t done = 99;
    atomic_int abort_flag = 0;
    return lode_handle_scan(h, &r, NULL, &done, &abort_flag);
}

static void test_nonce_ranges(lode_algo algo)
{
    lode_device_ref ref = {.backend = &fake_backend, .index = 0, .id = "fake:0"};
    fake_info(0, &ref.info);
    lode_handle h;
    lode_open_params p = {.algo = algo};
    CHECK(lode_handle_open(&h, &ref, &p) == LODE_OK, "open %s", lode_algo_get(algo)->name);
    const char *name = lode_algo_get(algo)->name;
    static const struct {
        uint64_t start, count;
        bool ok;
    } cases[] = {
        {0, 1, true},
        {0, UINT64_C(1) << 32, true},          /* the whole nonce space */
        {UINT32_MAX, 1, true},                 /* the last nonce */
        {UINT32_MAX, 2, false},                /* one past it */
        {(UINT64_C(1) << 32), 1, false},       /* start beyond 32 bits */
        {0, (UINT64_C(1) << 32) + 1, false},   /* count beyond */
        {1, UINT64_MAX, false},                /* start + count wraps 64 bits */
        {UINT64_MAX, 1, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake.scans = 0;
        int rc = scan(&h, cases[i].start, cases[i].count);
        if (cases[i].ok)
            CHECK(rc == LODE_OK && fake.scans == 1, "%s: %llu+%llu reaches the backend (rc %d)", name,
                  (unsigned long long)cases[i].start, (unsigned long long)cases[i].count, rc);
        else
            CHECK(rc == LODE_ERR_INVALID && fake.scans == 0, "%s: %llu+%llu refused before the backend (rc %d)",
                  name, (unsigned long long)cases[i].start, (unsigned long long)cases[i].count, rc);
    }
    fake.scans = 0;
    CHECK(scan(&h, 5, 0) == LODE_OK && fake.scans == 0, "%s: count 0 does not reach the backend", name);

    /* A work of another algorithm. */
    fake.set_works = 0;
    lode_work w = {.algo = algo == LODE_ALGO_SHA256D ? LODE_ALGO_SCRYPT : LODE_ALGO_SHA256D};
    CHECK(lode_handle_set_work(&h, &w) == LODE_ERR_INVALID && fake.set_works == 0, "%s: another algorithm's work",
          name);
    w.algo = algo;
    CHECK(lode_handle_set_work(&h, &w) == LODE_OK && fake.set_works == 1, "%s: its own work", name);
    lode_handle_close(&h);
}

static void test_tf(void)
{
    lode_device_ref ref = {.backend = &fake_backend, .index = 0, .id = "fake:0"};
    fake_info(0, &ref.info);
    lode_handle h;
    lode_open_params p = {.algo = LODE_ALGO_TF};
    CHECK(lode_handle_open(&h, &ref, &p) == LODE_OK, "open tf");
    const lode_tf_job good = {
        .exponent = 100003, .bit_min = 17, .bit_max = 40, .num_classes = LODE_TF_CLASSES, .class_index = 0};
    CHECK(lode_tf_job_valid(&good), "the good job is valid");
    lode_tf_job bad[] = {good, good, good, good, good};
    bad[0].num_classes = 7;
    bad[1].class_index = LODE_TF_CLASSES;
    bad[2].bit_min = 40, bad[2].bit_max = 17;
    bad[3].exponent = 100000; /* not prime */
    bad[4].bit_max = 200;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lode_work w = {.algo = LODE_ALGO_TF, .factor = bad[i]};
        fake.set_works = 0;
        CHECK(!lode_tf_job_valid(&bad[i]), "bad job %zu is invalid", i);
        CHECK(lode_handle_set_work(&h, &w) == LODE_ERR_INVALID && fake.set_works == 0,
              "invalid tf job %zu refused before the backend", i);
    }
    lode_work w = {.algo = LODE_ALGO_TF, .factor = good};
    fake.set_works = 0;
    CHECK(lode_handle_set_work(&h, &w) == LODE_OK && fake.set_works == 1, "a valid tf job reaches the backend");
    /* Trial factoring's indices are not nonces: 64-bit ranges pass. */
    fake.scans = 0;
    CHECK(scan(&h, UINT64_C(1) << 40, UINT64_C(1) << 33) == LODE_OK && fake.scans == 1,
          "tf: a range beyond 32 bits reaches the backend");
    lode_handle_close(&h);
}

int main(void)
{
    test_nonce_ranges(LODE_ALGO_SHA256D);
    test_nonce_ranges(LODE_ALGO_SCRYPT);
    test_nonce_ranges(LODE_ALGO_MOMENTUM);
    test_tf();
    return test_summary();
}
