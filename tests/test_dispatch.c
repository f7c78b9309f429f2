/* The dispatcher, driven through a fake backend whose devices misbehave on
 * purpose:
 * - every hit of the range arrives exactly once, whatever the devices do;
 * - a device that fails its self-test gets no work;
 * - a hit the reference rejects is a hardware error, never a result;
 * - a hit-buffer overflow is rescanned in halves, not lost;
 * - a device that dies mid-scan loses no nonces: others finish its range,
 *   and it is reopened (the restarts and quarantine: test_health.c);
 * - a new job reaches every worker: scans of the old job in progress are
 *   aborted and none of it starts unaborted after the switch (a behaviour
 *   check; how fast that happens is bench_dispatch's figure, not a test);
 * - a job shorter than the devices' chunks (a trial-factoring class) is one
 *   scan per device in equal shares, and one device alone takes it whole
 *   (each scan costs a GPU a pipeline drain);
 * - hits of a job the job source no longer wants are counted stale, not
 *   found, and the hits a range should give are counted as expected. */
#include <math.h>
#include <pthread.h>
#include <time.h>

#include "core/base/sha256_ref.h"
#include "core/base/status.h"
#include "core/dispatch/dispatch.h"
#include "tests/test_util.h"

enum fake_mode { FAKE_GOOD, FAKE_BROKEN, FAKE_LIAR, FAKE_OVERFLOW, FAKE_DIES, FAKE_MODES, FAKE_SPIN };
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

/* What the spinning device saw of the test's jobs (test_job_switch). */
static struct {
    pthread_mutex_t lock;
    uint64_t old_seq;     /* the job being replaced */
    atomic_bool switched; /* lode_dispatcher_set_job of the new job has returned */
    int old_scans;        /* scans of the old job that started */
    int late_starts;      /* ...after the switch, with the abort flag clear */
    int ran_out;          /* scans that never saw the abort flag */
} spin = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The spinning device: on the test's jobs a scan lasts until it is aborted
 * (a scan sized for seconds, as a GPU's); a minute is the hang guard. */
static int spin_scan(lode_device *d, const lode_range *r, uint64_t *done, const atomic_int *abort)
{
    pthread_mutex_lock(&spin.lock);
    if (d->work.seq == spin.old_seq) {
        spin.old_scans++;
        if (atomic_load(&spin.switched) && !atomic_load(abort))
            spin.late_starts++;
    }
    pthread_mutex_unlock(&spin.lock);
    for (int ms = 0; ms < 60000 && !atomic_load(abort); ms++)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    if (!atomic_load(abort)) {
        pthread_mutex_lock(&spin.lock);
        spin.ran_out++;
        pthread_mutex_unlock(&spin.lock);
    }
    *done = r->count / 2; /* aborted part-way */
    return LODE_OK;
}

static int fake_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done,
                     const atomic_int *abort)
{
    if (d->mode == FAKE_SPIN && live(d))
        return spin_scan(d, r, done, abort);
    d->scans++;
    /* The dying device does half of a range of the test's job, then reports
     * a failure (every such scan: however few scans the job's claims give it). */
    bool dying = d->mode == FAKE_DIES && live(d);
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

static int spin_count(void) { return 1; }

static int spin_info(int index, lode_device_info *out)
{
    (void)index;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "fake spinning device");
    out->workers = out->max_workers = 2;
    out->algo_mask = 1u << LODE_ALGO_SHA256D;
    return 0;
}

static int spin_open(int index, const lode_open_params *p, lode_device **out)
{
    (void)index;
    (void)p;
    *out = calloc(1, sizeof **out);
    if (*out == NULL)
        return LODE_ERR_NO_MEMORY;
    (*out)->mode = FAKE_SPIN;
    return LODE_OK;
}

static const lode_backend_ops spin_backend = {
    .name = "spin",
    .probe = fake_probe,
    .device_count = spin_count,
    .device_info = spin_info,
    .open = spin_open,
    .close = fake_close,
    .set_work = fake_set_work,
    .scan = fake_scan,
};

/* The recording devices (test_short_job): every scan of the test's job
 * noted; a scan waits until `expect` scans have begun, so the split does
 * not depend on which worker's thread runs first or how late the other
 * starts. The wait is a hang guard (a minute): a dispatcher that gives one
 * worker the whole job, or both halves, never starts a second scan while the
 * first waits, so after the guard test_short_job sees one scan, or two by
 * one device, and fails. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t started;
    int expect, count;
    lode_range scan[16];
    lode_device *by[16];
} rec = {.lock = PTHREAD_MUTEX_INITIALIZER, .started = PTHREAD_COND_INITIALIZER};

static int rec_count(void) { return 2; }

static int rec_open(int index, const lode_open_params *p, lode_device **out)
{
    (void)index;
    return fake_open(FAKE_GOOD, p, out);
}

static uint64_t rec_preferred_chunk(lode_device *d, double target_ms)
{
    (void)d;
    (void)target_ms;
    return UINT64_C(1) << 20;
}

static int rec_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done, const atomic_int *abort)
{
    if (!live(d))
        return fake_scan(d, r, hits, done, abort); /* the self-test */
    pthread_mutex_lock(&rec.lock);
    if (rec.count < 16) {
        rec.scan[rec.count] = *r;
        rec.by[rec.count] = d;
    }
    rec.count++;
    pthread_cond_broadcast(&rec.started);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    while (rec.count < rec.expect && pthread_cond_timedwait(&rec.started, &rec.lock, &until) == 0)
        ;
    pthread_mutex_unlock(&rec.lock);
    *done = r->count;
    return LODE_OK;
}

static const lode_backend_ops rec_backend = {
    .name = "rec",
    .probe = fake_probe,
    .device_count = rec_count,
    .device_info = fake_info,
    .open = rec_open,
    .close = fake_close,
    .set_work = fake_set_work,
    .scan = rec_scan,
    .preferred_chunk = rec_preferred_chunk,
};

/* Runs one job of `span` indices on `devices` recording devices; returns the
 * number of scans (their ranges in rec.scan). */
static int short_job(size_t devices, uint64_t span)
{
    lode_device_ref refs[2];
    for (size_t i = 0; i < devices; i++) {
        refs[i] = (lode_device_ref){.backend = &rec_backend, .index = (int)i};
        snprintf(refs[i].id, sizeof refs[i].id, "rec:%zu", i);
        fake_info(FAKE_GOOD, &refs[i].info);
    }
    lode_dispatcher_config cfg = {.algo = LODE_ALGO_SHA256D, .devices = refs, .device_count = devices};
    char err[256];
    lode_dispatcher *m = lode_dispatcher_start(&cfg, err, sizeof err);
    CHECK(m != NULL, "miner starts: %s", err);
    if (m == NULL)
        return -1;
    CHECK(lode_dispatcher_wait_ready(m, -1) == (int)devices, "%zu recording device(s) ready", devices);
    pthread_mutex_lock(&rec.lock);
    rec.count = 0;
    rec.expect = (int)devices;
    pthread_mutex_unlock(&rec.lock);
    lode_work w = {.algo = LODE_ALGO_SHA256D};
    test_rand_bytes(w.header.header, 80);
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    w.header.target.w[7] = TEST_TARGET_TOP;
    uint64_t seq = lode_dispatcher_set_job(m, &w, 1000, 1000 + span);
    int rc;
    while ((rc = lode_dispatcher_wait_job(m, seq, 1000)) == 0)
        ;
    CHECK(rc == 1, "the short job is scanned");
    lode_dispatcher_free(m);
    return rec.count;
}

static void test_short_job(void)
{
    int n = short_job(2, 100001);
    CHECK(n == 2 && rec.by[0] != rec.by[1] && rec.scan[0].count + rec.scan[1].count == 100001 &&
              rec.scan[0].count >= 50000 && rec.scan[1].count >= 50000,
          "two devices: one scan each, equal shares (%d scans: %llu, %llu)", n,
          (unsigned long long)rec.scan[0].count, (unsigned long long)rec.scan[1].count);
    n = short_job(1, (UINT64_C(1) << 20) + (UINT64_C(1) << 17));
    CHECK(n == 1 && rec.scan[0].start == 1000 && rec.scan[0].count == (UINT64_C(1) << 20) + (UINT64_C(1) << 17),
          "one device: the job in one scan, no sliver left over (%d scans)", n);
    n = short_job(1, (UINT64_C(1) << 20) + (UINT64_C(1) << 19));
    CHECK(n == 2 && rec.scan[0].count == UINT64_C(1) << 20 && rec.scan[1].count == UINT64_C(1) << 19,
          "one device, a job of 1.5 chunks: a chunk, then the rest, not halves (%d scans)", n);
}

static bool never_wanted(void *user, const lode_work *work)
{
    (void)user;
    (void)work;
    return false;
}

/* A job source that dropped the job (a clean job replaced it): the scans'
 * hits are stale, none found; the hashes and the expectation still count. */
static void test_stale_hits(void)
{
    enum { SPAN = 4000 };
    lode_device_ref ref = {.backend = &fake_backend, .index = FAKE_GOOD, .id = "fake:0"};
    fake_info(FAKE_GOOD, &ref.info);
    lode_dispatcher_config cfg = {.algo = LODE_ALGO_SHA256D, .devices = &ref, .device_count = 1, .chunk_ms = 1,
                                  .callbacks = {.wanted = never_wanted}};
    char err[256];
    lode_dispatcher *m = lode_dispatcher_start(&cfg, err, sizeof err);
    CHECK(m != NULL, "miner starts: %s", err);
    if (m == NULL)
        return;
    CHECK(lode_dispatcher_wait_ready(m, -1) == 1, "the good device is ready");
    lode_work w = {.algo = LODE_ALGO_SHA256D};
    test_rand_bytes(w.header.header, 80);
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    w.header.target.w[7] = TEST_TARGET_TOP;
    uint64_t seq = lode_dispatcher_set_job(m, &w, 0, SPAN);
    while (lode_dispatcher_wait_job(m, seq, 1000) == 0)
        ;
    uint64_t want = 0;
    for (uint32_t n = 0; n < SPAN; n++)
        want += ref_hit(&w, n);
    lode_device_stats st;
    lode_dispatcher_device_stats(m, 0, &st);
    CHECK(st.hits == 0 && st.hits_dropped == want && st.hashes == SPAN && fabs(st.hits_expected - SPAN / 16.0) < 1e-6,
          "every hit of the unwanted job is stale (%llu hits, %llu stale, want %llu; %.3f expected)",
          (unsigned long long)st.hits, (unsigned long long)st.hits_dropped, (unsigned long long)want,
          st.hits_expected);
    lode_dispatcher_free(m);
}

typedef struct collected {
    pthread_mutex_t lock;
    uint32_t *seen; /* count per nonce */
    uint64_t tag[2]; /* the job's source_tag */
    size_t wrong_tag; /* hits whose job came back without it */
} collected;

static void on_found(void *user, const lode_found *f)
{
    collected *c = user;
    pthread_mutex_lock(&c->lock);
    if (c->seen != NULL)
        c->seen[f->hit.index]++;
    c->wrong_tag += f->work == NULL || f->work->source_tag[0] != c->tag[0] || f->work->source_tag[1] != c->tag[1];
    pthread_mutex_unlock(&c->lock);
}

/* One job over [0, span) on the faulty devices: the whole range scanned,
 * every hit exactly once with its job's source tag. */
static void run_checked_job(lode_dispatcher *m, collected *c, int job, uint32_t span)
{
    lode_work w = {.algo = LODE_ALGO_SHA256D, .source_tag = {c->tag[0], c->tag[1]}};
    test_rand_bytes(w.header.header, 80);
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    w.header.target.w[7] = TEST_TARGET_TOP; /* about one nonce in 16 */
    memset(c->seen, 0, span * sizeof(uint32_t)); /* the last job's scans are all back */
    uint64_t seq = lode_dispatcher_set_job(m, &w, 0, span);
    int rc;
    while ((rc = lode_dispatcher_wait_job(m, seq, 1000)) == 0)
        ;
    CHECK(rc == 1, "job %d: the whole range gets scanned", job);
    CHECK(c->wrong_tag == 0, "every hit comes with its job and the job's source tag (%zu without)", c->wrong_tag);

    size_t missing = 0, duplicated = 0, extra = 0;
    for (uint32_t n = 0; n < span; n++) {
        bool want = ref_hit(&w, n);
        missing += want && c->seen[n] == 0;
        duplicated += c->seen[n] > 1;
        extra += !want && c->seen[n] > 0;
    }
    CHECK(missing == 0 && duplicated == 0 && extra == 0,
          "job %d: every hit exactly once: %zu missing, %zu duplicated, %zu false", job, missing, duplicated,
          extra);
}

/* After the jobs: the broken device refused, the liar's hits hardware
 * errors, the dying device restarted, the counts adding up. */
static void check_faulty_stats(lode_dispatcher *m, int jobs, uint32_t span, double want_expected)
{
    lode_device_stats st;
    lode_dispatcher_device_stats(m, FAKE_BROKEN, &st);
    CHECK(st.workers_failed == 1 && st.hashes == 0, "the broken device is refused and gets no work");
    lode_dispatcher_device_stats(m, FAKE_LIAR, &st);
    CHECK(st.hw_errors > 0, "the liar's made-up hits count as hardware errors (%llu, %llu hashes)",
          (unsigned long long)st.hw_errors, (unsigned long long)st.hashes);
    lode_dispatcher_device_stats(m, FAKE_DIES, &st);
    CHECK(st.restarts >= 1 && strstr(st.last_error, "device error") != NULL,
          "the dying device is restarted (%u restarts, last error '%s')", st.restarts, st.last_error);
    uint64_t total = 0;
    double expected = 0;
    for (int i = 0; i < FAKE_MODES; i++) {
        lode_dispatcher_device_stats(m, (size_t)i, &st);
        total += st.hashes;
        expected += st.hits_expected;
    }
    CHECK(total == (uint64_t)span * (uint64_t)jobs, "scanned counts add up to the ranges (%llu over %d jobs)",
          (unsigned long long)total, jobs);
    /* The target's chance from first principles: 0x0fffffff.ff.. + 1 over 2^256 is 2^-4. */
    CHECK(fabs(expected - want_expected) < 1e-6, "the expected hits are the ranges times the target's chance "
          "(%.6f, want %.6f)", expected, want_expected);
}

static void test_faulty_devices(void)
{
    /* Hundreds of scans a job; jobs until the liar and the dying device have
     * each had scans of one (a loaded machine may leave a worker asleep for
     * a whole job), at most MAX_JOBS. */
    enum { SPAN = 200000, MAX_JOBS = 20 };
    lode_device_ref refs[FAKE_MODES];
    for (int i = 0; i < FAKE_MODES; i++) {
        refs[i] = (lode_device_ref){.backend = &fake_backend, .index = i};
        snprintf(refs[i].id, sizeof refs[i].id, "fake:%d", i);
        fake_info(i, &refs[i].info);
    }
    collected c = {.lock = PTHREAD_MUTEX_INITIALIZER, .seen = calloc(SPAN, sizeof(uint32_t)),
                   .tag = {test_rand(), test_rand()}};
    lode_dispatcher_config cfg = {
        .algo = LODE_ALGO_SHA256D,
        .devices = refs,
        .device_count = FAKE_MODES,
        .chunk_ms = 1,
        .callbacks = {.user = &c, .found = on_found},
    };
    char err[256];
    lode_dispatcher *m = lode_dispatcher_start(&cfg, err, sizeof err);
    CHECK(m != NULL, "miner starts: %s", err);
    CHECK(lode_dispatcher_wait_ready(m, -1) == FAKE_MODES - 1, "all but the broken device pass");

    int jobs = 0;
    double want_expected = 0;
    for (bool both_scanned = false; !both_scanned && jobs < MAX_JOBS; jobs++) {
        run_checked_job(m, &c, jobs, SPAN);
        want_expected += SPAN / 16.0;
        lode_device_stats liar, dies;
        lode_dispatcher_device_stats(m, FAKE_LIAR, &liar);
        lode_dispatcher_device_stats(m, FAKE_DIES, &dies);
        both_scanned = liar.hashes > 0 && dies.restarts > 0;
    }
    if (jobs > 1)
        printf("NOTE: the liar and the dying device had scans after %d jobs\n", jobs);

    check_faulty_stats(m, jobs, SPAN, want_expected);
    lode_dispatcher_free(m);
    free(c.seen);
}

/* Waits (hang guard: about a minute) until n workers have job seq installed. */
static bool wait_workers_on(lode_dispatcher *m, uint64_t seq, unsigned n)
{
    for (int ms = 0; ms < 60000; ms++) {
        if (lode_dispatcher_workers_on_job(m, seq) >= n)
            return true;
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    return false;
}

/* A dispatcher over the spinning device, its two workers past their
 * self-tests, and a live job for it in *w (NULL when it did not start). */
static lode_dispatcher *start_spinning(lode_work *w, unsigned *workers)
{
    static lode_device_ref ref = {.backend = &spin_backend, .index = 0, .id = "spin:0"};
    spin_info(0, &ref.info);
    lode_dispatcher_config cfg = {.algo = LODE_ALGO_SHA256D, .devices = &ref, .device_count = 1};
    char err[256];
    lode_dispatcher *m = lode_dispatcher_start(&cfg, err, sizeof err);
    CHECK(m != NULL, "miner starts: %s", err);
    if (m == NULL)
        return NULL;
    *workers = (unsigned)lode_dispatcher_wait_ready(m, -1);
    CHECK(*workers == 2, "both spinning workers pass their self-tests (%u)", *workers);
    *w = (lode_work){.algo = LODE_ALGO_SHA256D};
    test_rand_bytes(w->header.header, 80);
    memset(w->header.target.w, 0xff, sizeof w->header.target.w);
    w->header.target.w[7] = TEST_TARGET_TOP;
    return m;
}

/* A new job replaces the old one on every worker, however long their scans
 * were meant to last: the scans of the old job in progress see the abort
 * flag and return, and no scan of the old job starts unaborted once
 * lode_dispatcher_set_job has returned. Behaviour only: the switch's latency is
 * measured by bench_dispatch (docs/PERFORMANCE.md). */
static void test_job_switch(void)
{
    lode_work w;
    unsigned workers;
    lode_dispatcher *m = start_spinning(&w, &workers);
    if (m == NULL)
        return;
    for (int round = 0; round < 5; round++) {
        uint64_t old_seq = lode_dispatcher_set_job(m, &w, 0, UINT64_C(1) << 32);
        CHECK(wait_workers_on(m, old_seq, workers), "round %d: every worker starts job %llu", round,
              (unsigned long long)old_seq);
        pthread_mutex_lock(&spin.lock);
        spin.old_seq = old_seq;
        spin.old_scans = spin.late_starts = spin.ran_out = 0;
        atomic_store(&spin.switched, false);
        pthread_mutex_unlock(&spin.lock);

        w.header.header[0]++;
        uint64_t seq = lode_dispatcher_set_job(m, &w, 0, UINT64_C(1) << 32);
        atomic_store(&spin.switched, true);
        CHECK(wait_workers_on(m, seq, workers), "round %d: every worker takes the new job", round);
        pthread_mutex_lock(&spin.lock);
        CHECK(spin.ran_out == 0, "round %d: %d scan(s) of the old job never saw the abort", round,
              spin.ran_out);
        CHECK(spin.late_starts == 0,
              "round %d: %d scan(s) of the old job started unaborted after the switch", round,
              spin.late_starts);
        pthread_mutex_unlock(&spin.lock);
    }
    lode_dispatcher_free(m);
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

/* Stopping counts what the scans in flight hashed: a benchmark's or a
 * mining run's summary is taken once lode_dispatcher_wait_scans_counted
 * returns. The spinning device's scans last until aborted, so before the
 * stop nothing is counted, and after it each worker's aborted half-scan is. */
static void test_stop_counts_scans(void)
{
    lode_work w;
    unsigned workers;
    lode_dispatcher *m = start_spinning(&w, &workers);
    if (m == NULL)
        return;
    uint64_t seq = lode_dispatcher_set_job(m, &w, 0, UINT64_C(1) << 32);
    CHECK(wait_workers_on(m, seq, workers), "every worker scans the job");
    lode_device_stats st;
    lode_dispatcher_device_stats(m, 0, &st);
    CHECK(st.scans_out == workers && st.hashes == 0, "%u scans out (of %u), %llu hashes counted", st.scans_out,
          workers, (unsigned long long)st.hashes);
    lode_dispatcher_request_stop(m);
    CHECK(lode_dispatcher_wait_scans_counted(m, 60000) == 1, "the aborted scans are counted");
    lode_dispatcher_device_stats(m, 0, &st);
    CHECK(st.scans_out == 0 && st.hashes > 0, "after the stop: %u scans out, %llu hashes counted", st.scans_out,
          (unsigned long long)st.hashes);
    lode_dispatcher_free(m);
}

int main(void)
{
    test_seed();
    test_push_nonces();
    test_faulty_devices();
    test_job_switch();
    test_stop_counts_scans();
    test_short_job();
    test_stale_hits();
    return test_summary();
}
