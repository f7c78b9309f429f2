/* The launch driver (core/backend_support/launch_driver.h) on a fake
 * engine: a "device" in plain C that runs each launch for a set time after
 * the one ahead of it, reports hits at known indices, and can be told to
 * overflow a hit buffer, fail, or raise the abort flag. No GPU needed. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/backend_support/launch_driver.h"
#include "core/base/clock.h"
#include "core/base/status.h"
#include "core/base/work.h"

#define NONE UINT64_MAX

typedef struct fake_launch {
    uint64_t start, count;
    double end;
    bool live;
} fake_launch;

typedef struct fake {
    double sec_per_index;   /* the device's speed */
    double overhead;        /* fixed seconds per launch */
    uint64_t hit_mod;       /* an index i is a hit when i % hit_mod == 7 */
    uint64_t overflow_at;   /* the launch holding this index overflows its hit buffer */
    uint64_t fail_at;       /* the launch holding this index fails on the device */
    uint64_t fail_enqueue_at; /* queueing the launch holding this index fails */
    unsigned abort_after;   /* raise the abort flag when this many launches are queued */
    atomic_int *abort;

    fake_launch slot[LODE_LAUNCH_MAX_DEPTH];
    fake_launch fetched;
    unsigned depth, in_flight, max_in_flight, launches, drains;
    unsigned idle_enqueues; /* launches queued while none was in flight */
    double busy_until;
    uint64_t next_expected; /* launches are queued in order, gap-free */
    int errors;             /* contract violations seen by the fake */
} fake;

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static bool holds(const fake_launch *l, uint64_t i) { return i != NONE && i >= l->start && i - l->start < l->count; }

static void sleep_until(double t)
{
    double s = t - lode_clock_s();
    if (s > 0) {
        struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static int f_enqueue(void *ctx, unsigned slot, uint64_t start, uint64_t count)
{
    fake *f = ctx;
    if (slot >= f->depth || f->slot[slot].live || f->in_flight >= f->depth || start != f->next_expected)
        f->errors++;
    fake_launch l = {.start = start, .count = count, .live = true};
    if (holds(&l, f->fail_enqueue_at))
        return LODE_ERR_DEVICE;
    if (f->in_flight == 0)
        f->idle_enqueues++; /* the device had nothing queued */
    const double now = lode_clock_s();
    const double began = f->busy_until > now ? f->busy_until : now;
    l.end = began + f->overhead + f->sec_per_index * (double)count;
    f->busy_until = l.end;
    f->slot[slot] = l;
    f->next_expected = start + count;
    f->in_flight++;
    f->max_in_flight = f->in_flight > f->max_in_flight ? f->in_flight : f->max_in_flight;
    if (++f->launches == f->abort_after)
        atomic_store(f->abort, 1);
    return LODE_OK;
}

static int f_query(void *ctx, unsigned slot)
{
    fake *f = ctx;
    const fake_launch *l = &f->slot[slot];
    if (!l->live)
        f->errors++;
    if (lode_clock_s() < l->end)
        return 0;
    return holds(l, f->fail_at) ? LODE_ERR_DEVICE : 1;
}

static int f_wait(void *ctx, unsigned slot)
{
    fake *f = ctx;
    const fake_launch *l = &f->slot[slot];
    if (!l->live)
        f->errors++;
    sleep_until(l->end);
    return holds(l, f->fail_at) ? LODE_ERR_DEVICE : LODE_OK;
}

/* The results of a finished launch: its hits, or an overflow. */
static int results(fake *f, const fake_launch *l, uint64_t start, uint64_t count, lode_hits *hits)
{
    if (l->start != start || l->count != count || lode_clock_s() < l->end)
        f->errors++;
    if (holds(l, f->overflow_at))
        return LODE_ERR_HITS_OVERFLOW;
    for (uint64_t i = start; i < start + count; i++)
        if (i % f->hit_mod == 7 && lode_hits_push(hits, (lode_hit){.index = i}) != 0)
            return LODE_ERR_NO_MEMORY;
    return LODE_OK;
}

static int f_collect(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    fake *f = ctx;
    fake_launch *l = &f->slot[slot];
    if (!l->live)
        f->errors++;
    l->live = false;
    f->in_flight--;
    return results(f, l, start, count, hits);
}

static int f_fetch(void *ctx, unsigned slot)
{
    fake *f = ctx;
    if (!f->slot[slot].live)
        f->errors++;
    f->fetched = f->slot[slot];
    f->slot[slot].live = false;
    f->in_flight--;
    return LODE_OK;
}

static int f_collect_fetched(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits)
{
    fake *f = ctx;
    (void)slot;
    return results(f, &f->fetched, start, count, hits);
}

static void f_drain(void *ctx)
{
    fake *f = ctx;
    sleep_until(f->busy_until);
    for (unsigned s = 0; s < LODE_LAUNCH_MAX_DEPTH; s++)
        f->slot[s].live = false;
    f->in_flight = 0;
    f->drains++;
}

enum mode { POLLING, BLOCKING, FETCHING };

static lode_launch_engine engine_of(fake *f, enum mode m, uint64_t launch_size)
{
    return (lode_launch_engine){
        .ctx = f,
        .depth = f->depth,
        .launch_size = launch_size,
        .blocking_wait = m == BLOCKING,
        .enqueue = f_enqueue,
        .query = m == BLOCKING ? NULL : f_query,
        .wait = m == BLOCKING ? f_wait : NULL,
        .fetch = m == FETCHING ? f_fetch : NULL,
        .collect = m == FETCHING ? f_collect_fetched : f_collect,
        .drain = f_drain,
    };
}

static fake new_fake(unsigned depth, double sec_per_index, atomic_int *abort, uint64_t start)
{
    return (fake){.sec_per_index = sec_per_index, .hit_mod = 1000, .overflow_at = NONE, .fail_at = NONE,
                  .fail_enqueue_at = NONE, .abort = abort, .depth = depth, .next_expected = start};
}

/* The hits are exactly the hit indices of [start, start + done). */
static bool hits_exact(const lode_hits *h, uint64_t start, uint64_t done, uint64_t mod)
{
    size_t k = 0;
    for (uint64_t i = start; i < start + done; i++)
        if (i % mod == 7) {
            if (k >= h->count || h->items[k].index != i)
                return false;
            k++;
        }
    return k == h->count;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *mode_name(enum mode m) { return m == POLLING ? "polling" : m == BLOCKING ? "blocking" : "fetching"; }

/* A whole range: every launch collected, in order, depth in flight; the
 * host sleeps while the device works and the device never waits. */
static void test_full(enum mode m)
{
    atomic_int abort = 0;
    lode_launch_driver drv;
    lode_launch_driver_init(&drv);
    const uint64_t size = 10000, start = 123456;
    /* Two scans through one driver: the estimate carries over. */
    for (int scan = 0; scan < 2; scan++) {
        fake f = new_fake(2, 4e-7, &abort, start); /* 4 ms per launch */
        lode_launch_engine e = engine_of(&f, m, size);
        const uint64_t count = 40 * size + 1234; /* a partial last launch */
        lode_hits hits = {0};
        uint64_t done = 99;
        const double t0 = lode_clock_s(), c0 = thread_cpu_s();
        int rc = lode_launch_run(&drv, &e, start, count, &hits, &done, &abort);
        const double wall = lode_clock_s() - t0, cpu = thread_cpu_s() - c0;
        const double ideal = f.sec_per_index * (double)count;
        CHECK(rc == LODE_OK, "%s: rc %d", mode_name(m), rc);
        CHECK(done == count, "%s: done %llu of %llu", mode_name(m), (unsigned long long)done,
              (unsigned long long)count);
        CHECK(hits_exact(&hits, start, count, f.hit_mod), "%s: wrong hits (%zu)", mode_name(m), hits.count);
        CHECK(f.errors == 0, "%s: %d contract violations", mode_name(m), f.errors);
        CHECK(f.max_in_flight == 2, "%s: %u in flight at most", mode_name(m), f.max_in_flight);
        CHECK(f.in_flight == 0 && f.drains == 0, "%s: left %u in flight, %u drains", mode_name(m), f.in_flight,
              f.drains);
        /* The device is kept busy: every launch after the first was queued
         * while another was still in flight, so the device never waits for
         * the host (the order of calls says it; a loaded machine's clock
         * would not). */
        CHECK(f.idle_enqueues == 1, "%s: %u launches queued to an idle device", mode_name(m), f.idle_enqueues);
        /* The host sleeps: thread CPU time, which a loaded machine does not
         * inflate (a spinning wait would use ~100% of the scan's time). */
        CHECK(cpu < 0.5 * wall, "%s: %.1f ms of CPU in %.1f ms", mode_name(m), cpu * 1e3, wall * 1e3);
        printf("%-8s scan %d: %llu launches, %.1f ms (device %.1f ms), CPU %.2f ms (%.1f%%), %llu polls, "
               "%llu sleeps\n",
               mode_name(m), scan, (unsigned long long)f.launches, wall * 1e3, ideal * 1e3, cpu * 1e3,
               100 * cpu / wall, (unsigned long long)drv.polls, (unsigned long long)drv.sleeps);
        lode_hits_free(&hits);
    }
    if (m != BLOCKING) /* a few polls per launch once the estimate is in */
        CHECK(drv.polls < 10 * drv.launches, "%s: %llu polls for %llu launches", mode_name(m),
              (unsigned long long)drv.polls, (unsigned long long)drv.launches);
}

/* The abort flag rises while launches are queued: nothing more is queued,
 * what is in flight is collected, and *done is exactly what was. */
static void test_abort(enum mode m)
{
    atomic_int abort = 0;
    lode_launch_driver drv;
    lode_launch_driver_init(&drv);
    fake f = new_fake(3, 1e-7, &abort, 0);
    f.abort_after = 5;
    lode_launch_engine e = engine_of(&f, m, 5000);
    lode_hits hits = {0};
    uint64_t done = 0;
    int rc = lode_launch_run(&drv, &e, 0, 100 * 5000, &hits, &done, &abort);
    CHECK(rc == LODE_OK, "abort/%s: rc %d", mode_name(m), rc);
    CHECK(f.launches == 5, "abort/%s: %u launches queued", mode_name(m), f.launches);
    CHECK(done == 5 * 5000, "abort/%s: done %llu", mode_name(m), (unsigned long long)done);
    CHECK(hits_exact(&hits, 0, done, f.hit_mod), "abort/%s: wrong hits", mode_name(m));
    CHECK(f.in_flight == 0 && f.drains == 0 && f.errors == 0, "abort/%s: %u in flight, %u drains, %d errors",
          mode_name(m), f.in_flight, f.drains, f.errors);
    lode_hits_free(&hits);

    /* Raised before the scan: nothing is queued. */
    fake g = new_fake(2, 1e-7, &abort, 0);
    e = engine_of(&g, m, 5000);
    rc = lode_launch_run(&drv, &e, 0, 100000, &hits, &done, &abort);
    CHECK(rc == LODE_OK && done == 0 && g.launches == 0 && hits.count == 0,
          "abort before/%s: rc %d, done %llu, %u launches", mode_name(m), rc, (unsigned long long)done, g.launches);
    lode_hits_free(&hits);
}

/* A hit buffer overflows, the device fails, or a launch cannot be queued:
 * the error comes back, the engine is drained, and *done covers the
 * launches before the failing one. */
static void test_errors(enum mode m)
{
    static const struct {
        const char *what;
        int want;
    } cases[] = {{"overflow", LODE_ERR_HITS_OVERFLOW}, {"device", LODE_ERR_DEVICE}, {"enqueue", LODE_ERR_DEVICE}};
    const uint64_t size = 4000, bad = 7 * size + 123; /* inside the eighth launch */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        atomic_int abort = 0;
        lode_launch_driver drv;
        lode_launch_driver_init(&drv);
        fake f = new_fake(2, 2e-7, &abort, 0);
        if (c == 0)
            f.overflow_at = bad;
        else if (c == 1)
            f.fail_at = bad;
        else
            f.fail_enqueue_at = bad;
        lode_launch_engine e = engine_of(&f, m, size);
        lode_hits hits = {0};
        uint64_t done = 0;
        int rc = lode_launch_run(&drv, &e, 0, 30 * size, &hits, &done, &abort);
        CHECK(rc == cases[c].want, "%s/%s: rc %d", cases[c].what, mode_name(m), rc);
        /* A failed enqueue drops what is in flight (up to depth launches,
         * one more where fetch let the next launch go ahead of collect). */
        const uint64_t least = c == 2 ? (7 - f.depth - (m == FETCHING)) * size : 7 * size;
        CHECK(done >= least && done <= 7 * size && done % size == 0, "%s/%s: done %llu", cases[c].what,
              mode_name(m), (unsigned long long)done);
        CHECK(hits_exact(&hits, 0, done, f.hit_mod), "%s/%s: wrong hits", cases[c].what, mode_name(m));
        CHECK(f.drains == 1 && f.in_flight == 0, "%s/%s: %u drains, %u in flight", cases[c].what, mode_name(m),
              f.drains, f.in_flight);
        /* Nothing is queued after the failure was seen. */
        CHECK(f.launches <= 7 + f.depth + (m == FETCHING), "%s/%s: %u launches queued", cases[c].what, mode_name(m), f.launches);
        CHECK(f.errors == 0, "%s/%s: %d contract violations", cases[c].what, mode_name(m), f.errors);
        lode_hits_free(&hits);
    }
}

/* depth 1 and launches of one index (Momentum's shape). */
static void test_single(enum mode m)
{
    atomic_int abort = 0;
    lode_launch_driver drv;
    lode_launch_driver_init(&drv);
    fake f = new_fake(1, 1e-3, &abort, 1000);
    f.hit_mod = 3;
    lode_launch_engine e = engine_of(&f, m, 1);
    lode_hits hits = {0};
    uint64_t done = 0;
    int rc = lode_launch_run(&drv, &e, 1000, 20, &hits, &done, &abort);
    CHECK(rc == LODE_OK && done == 20 && f.launches == 20 && f.max_in_flight == 1 && f.errors == 0,
          "single/%s: rc %d, done %llu, %u launches, %u in flight", mode_name(m), rc, (unsigned long long)done,
          f.launches, f.max_in_flight);
    CHECK(hits_exact(&hits, 1000, 20, f.hit_mod), "single/%s: wrong hits", mode_name(m));
    lode_hits_free(&hits);
}

/* A query that never reports the end (a driver that only completes events
 * inside its own wait): the driver falls back to wait and still finishes. */
static int f_query_stuck(void *ctx, unsigned slot)
{
    fake *f = ctx;
    if (!f->slot[slot].live)
        f->errors++;
    return 0;
}

static void test_stuck_query(void)
{
    atomic_int abort = 0;
    lode_launch_driver drv;
    lode_launch_driver_init(&drv);
    fake f = new_fake(2, 1e-6, &abort, 0);
    lode_launch_engine e = engine_of(&f, POLLING, 1000); /* 1 ms launches */
    e.query = f_query_stuck;
    e.wait = f_wait;
    lode_hits hits = {0};
    uint64_t done = 0;
    /* The first launch waits out the 2 s of an unknown estimate; give it a
     * known one so the test stays short. */
    drv.sec_per_index = 1e-6;
    int rc = lode_launch_run(&drv, &e, 0, 20 * 1000, &hits, &done, &abort);
    CHECK(rc == LODE_OK && done == 20 * 1000 && f.errors == 0 && drv.give_ups == 20,
          "stuck query: rc %d, done %llu, %llu give-ups", rc, (unsigned long long)done,
          (unsigned long long)drv.give_ups);
    CHECK(hits_exact(&hits, 0, done, f.hit_mod), "stuck query: wrong hits");
    lode_hits_free(&hits);
}

/* A tiny launch first (a self-test's: mostly fixed cost) must not teach
 * the driver a time per index that oversleeps full launches. */
static void test_short_first(void)
{
    atomic_int abort = 0;
    lode_launch_driver drv;
    lode_launch_driver_init(&drv);
    lode_hits hits = {0};
    uint64_t done = 0;
    fake f = new_fake(2, 1e-7, &abort, 0);
    f.overhead = 3e-3;
    lode_launch_engine e = engine_of(&f, POLLING, 50000); /* 8 ms full launches */
    int rc = lode_launch_run(&drv, &e, 0, 1, &hits, &done, &abort);
    /* 3 ms for one index would have taught 3e-3 s per index (150 s per
     * full launch): it must teach nothing. */
    CHECK(rc == LODE_OK && drv.sec_per_index == 0, "short first: rc %d, learnt %g s per index", rc,
          drv.sec_per_index);
    fake g = new_fake(2, 1e-7, &abort, 0);
    g.overhead = 3e-3;
    e = engine_of(&g, POLLING, 50000);
    if (rc == LODE_OK)
        rc = lode_launch_run(&drv, &e, 0, 10 * 50000, &hits, &done, &abort);
    CHECK(rc == LODE_OK && done == 10 * 50000 && drv.sec_per_index > 0,
          "short first: rc %d, done %llu, %g s per index", rc, (unsigned long long)done, drv.sec_per_index);
    lode_hits_free(&hits);
}

int main(void)
{
    test_stuck_query();
    test_short_first();
    for (enum mode m = POLLING; m <= FETCHING; m++) {
        test_full(m);
        test_abort(m);
        test_errors(m);
        test_single(m);
    }
    if (failures != 0) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("launch driver: all checks passed\n");
    return 0;
}
