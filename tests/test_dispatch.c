/* The dispatcher, driven through a fake backend whose devices misbehave on
 * purpose, and through the real CPU backend for job-switch latency:
 * - every hit of the range arrives exactly once, whatever the devices do;
 * - a device that fails its self-test gets no work;
 * - a hit the reference rejects is a hardware error, never a result;
 * - a hit-buffer overflow is rescanned in halves, not lost;
 * - a device that dies mid-scan loses no nonces: others finish its range;
 * - a new job reaches the workers within milliseconds. */
#include <pthread.h>
#include <time.h>

#include "core/dispatch.h"
#include "core/sha256_ref.h"
#include "core/status.h"
#include "tests/test_util.h"

enum fake_mode { FAKE_GOOD, FAKE_BROKEN, FAKE_LIAR, FAKE_OVERFLOW, FAKE_DIES, FAKE_MODES };
static const char *mode_names[] = {"good", "broken", "liar", "overflow", "dies"};

struct lode_device {
    enum fake_mode mode;
    lode_work work;
    int scans;
};

static int fake_probe(char why[LODE_WHY_LEN]) { why[0] = 0; return 0; }
static int fake_count(void) { return FAKE_MODES; }

static int fake_info(int index, lode_device_info *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "fake %s device", mode_names[index]);
    out->workers = out->max_workers = 1;
    out->algo_mask = 1u << LODE_ALGO_SHA256D;
    return 0;
}

static int fake_open(int index, const lode_open_params *p, lode_device **out)
{
    (void)p;
    *out = calloc(1, sizeof **out);
    (*out)->mode = (enum fake_mode)index;
    return *out ? LODE_OK : LODE_ERR_NO_MEMORY;
}

static void fake_close(lode_device *d) { free(d); }

/* The misbehaviour starts only on the test's own job (recognised by its
 * target), so the liar and the dying device pass their self-tests first. */
#define TEST_TARGET_TOP 0x0fffffffu

static int fake_set_work(lode_device *d, const lode_work *w)
{
    d->work = *w;
    d->scans = 0;
    return LODE_OK;
}

static bool live(const lode_device *d) { return d->work.header.target.w[7] == TEST_TARGET_TOP; }

static bool ref_hit(const lode_work *w, uint32_t nonce)
{
    uint8_t header[80], hash[32];
    memcpy(header, w->header.header, 80);
    memcpy(header + 76, &nonce, 4); /* little-endian hosts only, as lode's targets */
    lode_ref_sha256d(header, 80, hash);
    return lode_hash_meets_target(hash, &w->header.target);
}

static int fake_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                     const atomic_int *abort)
{
    (void)abort;
    d->scans++;
    /* The dying device does half of its second range, then reports a failure. */
    bool dying = d->mode == FAKE_DIES && live(d) && d->scans > 1;
    uint64_t count = dying ? r->count / 2 : r->count;
    for (uint64_t n = r->start; n < r->start + count; n++) {
        bool hit = ref_hit(&d->work, (uint32_t)n);
        if (d->mode == FAKE_BROKEN) /* wrong answers: must fail the self-test */
            hit = !hit;
        if (hit)
            lode_hits_push(hits, (lode_hit){.index = n});
    }
    if (d->mode == FAKE_OVERFLOW && hits->count > 3)
        return LODE_ERR_HITS_OVERFLOW;
    if (d->mode == FAKE_LIAR && live(d)) /* a made-up hit next to real ones */
        lode_hits_push(hits, (lode_hit){.index = r->start});
    *done = count;
    return dying ? LODE_ERR_DEVICE : LODE_OK;
}

static const lode_backend_ops fake_backend = {
    .name = "fake",
    .probe = fake_probe,
    .device_count = fake_count,
    .device_info = fake_info,
    .open = fake_open,
    .close = fake_close,
    .set_work = fake_set_work,
    .scan = fake_scan,
};

typedef struct collected {
    pthread_mutex_t lock;
    uint32_t *seen; /* count per nonce */
} collected;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_found(void *user, const lode_found *f)
{
    collected *c = user;
    pthread_mutex_lock(&c->lock);
    if (c->seen != NULL)
        c->seen[f->hit.index]++;
    pthread_mutex_unlock(&c->lock);
}

static void test_faulty_devices(void)
{
    enum { SPAN = 20000 };
    lode_device_ref refs[FAKE_MODES];
    for (int i = 0; i < FAKE_MODES; i++) {
        refs[i] = (lode_device_ref){.backend = &fake_backend, .index = i};
        snprintf(refs[i].id, sizeof refs[i].id, "fake:%d", i);
        fake_info(i, &refs[i].info);
    }
    collected c = {.lock = PTHREAD_MUTEX_INITIALIZER, .seen = calloc(SPAN, sizeof(uint32_t))};
    lode_miner_config cfg = {
        .algo = LODE_ALGO_SHA256D,
        .devices = refs,
        .device_count = FAKE_MODES,
        .chunk_ms = 1,
        .callbacks = {.user = &c, .found = on_found},
    };
    char err[256];
    lode_miner *m = lode_miner_start(&cfg, err, sizeof err);
    CHECK(m != NULL, "miner starts: %s", err);
    CHECK(lode_miner_wait_ready(m, -1) == FAKE_MODES - 1, "all but the broken device pass");

    lode_work w = {.algo = LODE_ALGO_SHA256D};
    test_rand_bytes(w.header.header, 80);
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    w.header.target.w[7] = TEST_TARGET_TOP; /* about one nonce in 16 */
    uint64_t seq = lode_miner_set_job(m, &w, 0, SPAN);
    int rc;
    while ((rc = lode_miner_wait_job(m, seq, 1000)) == 0)
        ;
    CHECK(rc == 1, "the whole range gets scanned");

    size_t missing = 0, duplicated = 0, extra = 0;
    for (uint32_t n = 0; n < SPAN; n++) {
        bool want = ref_hit(&w, n);
        missing += want && c.seen[n] == 0;
        duplicated += c.seen[n] > 1;
        extra += !want && c.seen[n] > 0;
    }
    CHECK(missing == 0 && duplicated == 0 && extra == 0,
          "every hit exactly once: %zu missing, %zu duplicated, %zu false", missing, duplicated, extra);

    lode_device_stats st;
    lode_miner_device_stats(m, FAKE_BROKEN, &st);
    CHECK(st.workers_failed == 1 && st.hashes == 0, "the broken device is refused and gets no work");
    lode_miner_device_stats(m, FAKE_LIAR, &st);
    CHECK(st.hw_errors > 0, "the liar's made-up hits count as hardware errors (%llu)",
          (unsigned long long)st.hw_errors);
    lode_miner_device_stats(m, FAKE_DIES, &st);
    CHECK(st.workers_failed == 1, "the dying device is disabled");
    uint64_t total = 0;
    for (int i = 0; i < FAKE_MODES; i++) {
        lode_miner_device_stats(m, (size_t)i, &st);
        total += st.hashes;
    }
    CHECK(total == SPAN, "scanned counts add up to the range (%llu)", (unsigned long long)total);
    lode_miner_free(m);
    free(c.seen);
}

/* A new job reaches busy CPU workers within milliseconds, even when their
 * scans are sized to last seconds: only the abort flag makes that happen. */
static void test_job_switch_latency(void)
{
    lode_device_ref *devices;
    size_t count;
    char err[256];
    if (lode_registry_select("cpu:0", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err) != 0) {
        CHECK(false, "cpu:0 exists: %s", err);
        return;
    }
    lode_miner_config cfg = {
        .algo = LODE_ALGO_SHA256D,
        .devices = devices,
        .device_count = 1,
        .chunk_ms = 5000,
    };
    lode_miner *m = lode_miner_start(&cfg, err, sizeof err);
    free(devices);
    int workers = m ? lode_miner_wait_ready(m, -1) : 0;
    CHECK(workers > 0, "CPU miner starts");
    lode_work w = {.algo = LODE_ALGO_SHA256D};
    test_rand_bytes(w.header.header, 80);
    lode_miner_set_job(m, &w, 0, UINT64_C(1) << 32);
    nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL); /* scans are now long */
    double worst_ms = 0;
    for (int round = 0; round < 5; round++) {
        w.header.header[0]++;
        double t0 = now_seconds();
        uint64_t seq = lode_miner_set_job(m, &w, 0, UINT64_C(1) << 32);
        while ((int)lode_miner_workers_on_job(m, seq) < workers && now_seconds() - t0 < 10)
            nanosleep(&(struct timespec){0, 100 * 1000}, NULL);
        double ms = (now_seconds() - t0) * 1e3;
        worst_ms = ms > worst_ms ? ms : worst_ms;
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
    printf("job switch: all %d workers on the new job within %.2f ms (worst of 5)\n", workers,
           worst_ms);
    CHECK(worst_ms < 100, "new job within milliseconds (worst %.2f ms)", worst_ms);
    lode_miner_free(m);
}

static bool keep_odd(const void *ctx, uint32_t nonce)
{
    (void)ctx;
    return nonce & 1;
}

/* How GPU backends hand their hit buffers to the core: range checked with
 * 32-bit wraparound, filtered, and a nonce outside the launch is a fault. */
static void test_push_nonces(void)
{
    lode_hits hits = {0};
    const uint32_t at_end[] = {0xFFFFFFFFu, 0xFFFFFFFEu, 0xFFFFFFF0u};
    CHECK(lode_hits_push_nonces(&hits, at_end, 3, 0xFFFFFFF0u, 16, NULL, NULL) == LODE_OK &&
              hits.count == 3 && hits.items[0].index == 0xFFFFFFFFu,
          "nonces up to 0xFFFFFFFF are inside a launch ending there");
    lode_hits_clear(&hits);
    CHECK(lode_hits_push_nonces(&hits, at_end, 3, 0xFFFFFFF0u, 16, keep_odd, NULL) == LODE_OK &&
              hits.count == 1 && hits.items[0].index == 0xFFFFFFFFu,
          "the filter drops candidates");
    const uint32_t outside[] = {5, 100};
    CHECK(lode_hits_push_nonces(&hits, outside, 2, 0, 100, NULL, NULL) == LODE_ERR_DEVICE,
          "a nonce past the launch is a device fault");
    const uint32_t wrapped[] = {3};
    CHECK(lode_hits_push_nonces(&hits, wrapped, 1, 0xFFFFFFF0u, 16, NULL, NULL) == LODE_ERR_DEVICE,
          "a nonce that wrapped past 2^32 is a device fault");
    lode_hits_free(&hits);
}

int main(void)
{
    test_seed();
    test_push_nonces();
    test_faulty_devices();
    test_job_switch_latency();
    return test_summary();
}
