#include "core/dispatch/dispatch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/base/stuck_threads.h"
#include "core/base/target.h"
#include "core/dispatch/dispatch_internal.h"
#include "core/dispatch/selftest.h"

/* Defaults of the health settings (lode_dispatcher_config). */
#define DEFAULT_HYSTERESIS_C 5.0
#define DEFAULT_HANG_TIMEOUT_S 60.0
#define DEFAULT_MAX_RESTARTS 5
#define DEFAULT_BACKOFF_S 1.0
/* A scan is hung past HANG_FACTOR times its expected length (and the hang
 * timeout). */
#define HANG_FACTOR 10.0

struct timespec dispatch_deadline_in(int timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    return deadline;
}

/* The public waits' one sleep (miner lock held): false once the deadline passed. */
bool dispatch_wait_state_changed(lode_dispatcher *m, const struct timespec *deadline)
{
    return pthread_cond_timedwait(&m->state_changed, &m->lock, deadline) != ETIMEDOUT;
}

/* Keeps a span of the current job for another worker (lock held). */
void dispatch_give_back(lode_dispatcher *m, uint64_t start, uint64_t count)
{
    if (count == 0)
        return;
    if (m->returned_count == m->returned_capacity) {
        size_t cap = m->returned_capacity ? 2 * m->returned_capacity : 16;
        index_span *grown = realloc(m->returned, cap * sizeof *grown);
        if (grown == NULL) {
            /* Losing the span would leave the job incomplete forever. */
            lode_log(LODE_LOG_ERROR, "out of memory: cannot requeue nonces %llu..%llu",
                     (unsigned long long)start, (unsigned long long)(start + count - 1));
            abort();
        }
        m->returned = grown;
        m->returned_capacity = cap;
    }
    m->returned[m->returned_count++] = (index_span){start, count};
    pthread_cond_broadcast(&m->work_ready);
}

/* Hands out up to `chunk` indices of the current job (lock held). A
 * worker's first claim of a job may be an equal share of it, so a short job
 * (a trial-factoring class) is one scan per device; later claims shrink
 * toward the end, to an eighth of a chunk, so every worker finishes
 * together. Every scan ends in a pipeline drain on a GPU, so a lone worker
 * takes what is left rather than halving it, and leaves no sliver under a
 * quarter of its chunk. */
static bool claim(lode_dispatcher *m, uint64_t chunk, bool first, lode_range *out)
{
    if (!m->has_job)
        return false;
    if (m->returned_count > 0) {
        index_span *s = &m->returned[m->returned_count - 1];
        uint64_t take = s->count < chunk ? s->count : chunk;
        *out = (lode_range){.start = s->start, .count = take};
        s->start += take;
        s->count -= take;
        if (s->count == 0)
            m->returned_count--;
        return true;
    }
    if (m->next >= m->end)
        return false;
    uint64_t left = m->end - m->next, alive = m->alive ? m->alive : 1;
    uint64_t take = chunk < left ? chunk : left;
    if (alive == 1) {
        if (left - take < chunk / 4)
            take = left;
    } else {
        uint64_t fair = first ? (m->end - m->begin + alive - 1) / alive : left / (2 * alive);
        if (!first && fair < chunk / 8) /* the tail: no scans so small their drains cost more than waiting */
            fair = chunk / 8;
        if (fair > 0 && take > fair)
            take = fair;
    }
    *out = (lode_range){.start = m->next, .count = take};
    m->next += take;
    return true;
}

/* Opens a worker's handle and self-tests it; false with the reason in why. */
static bool open_and_test(worker *w, lode_handle *h, char *why, size_t why_len)
{
    lode_dispatcher *m = w->miner;
    const lode_device_ref *ref = &m->devices[w->device];
    lode_open_params params = {.algo = m->config.algo, .worker = w->slot, .variant = m->config.variant};
    int rc = lode_handle_open(h, ref, &params);
    if (rc != LODE_OK) {
        h->dev = NULL;
        snprintf(why, why_len, "worker %u cannot open the device: %s", w->slot, lode_status_str(rc));
        return false;
    }
    /* LODE_SKIP_SELFTEST=1 (sanitizer runs only): said once per worker. */
    if (lode_setting_flag(LODE_SETTING_SKIP_SELFTEST)) {
        lode_log(LODE_LOG_WARN, "%s: worker %u starts without its self-test (LODE_SKIP_SELFTEST=1)", ref->id,
                 w->slot);
        return true;
    }
    char failure[400];
    if (lode_selftest_handle(h, &m->stop_flag, failure, sizeof failure) != 0) {
        snprintf(why, why_len, "worker %u failed its self-test: %.200s", w->slot, failure);
        lode_handle_close(h);
        return false;
    }
    return true;
}

/* Tunes a handle that just passed its self-test. */
static void tune(worker *w, lode_handle *h)
{
    int rc = lode_handle_tune(h, w->miner->config.chunk_ms);
    if (rc != LODE_OK)
        lode_log(LODE_LOG_WARN, "%s: tuning failed (%s): default launch sizes", w->miner->devices[w->device].id,
                 lode_status_str(rc));
}

/* After a fault: closes the handle, waits out the backoff, reopens and
 * self-tests, until the handle works again (true) or the device is
 * quarantined or the miner stops (false). A hung scan's restart was
 * counted by the watchdog already (counted). Called without the lock;
 * the handle is closed and opened on the worker's own thread, as the
 * backend contract wants. */
static bool restart(worker *w, lode_handle *h, const char *fault, bool counted)
{
    lode_dispatcher *m = w->miner;
    device_counters *c = &m->counters[w->device];
    char why[256];
    snprintf(why, sizeof why, "%s", fault);
    lode_handle_close(h);
    pthread_mutex_lock(&m->lock);
    for (;;) {
        double backoff = counted ? w->backoff_s : dispatch_count_restart(m, w->device, why);
        counted = false;
        if (backoff < 0 || m->stopping || c->quarantined)
            break;
        dispatch_set_worker(m, w, WORKER_RESTARTING, why);
        lode_log(LODE_LOG_WARN, "%s: %s; reopening in %.3g s", m->devices[w->device].id, why, backoff);
        struct timespec until = dispatch_deadline_in((int)(backoff * 1000));
        while (!m->stopping && !c->quarantined &&
               pthread_cond_timedwait(&m->work_ready, &m->lock, &until) != ETIMEDOUT)
            ;
        if (m->stopping || c->quarantined)
            break;
        pthread_mutex_unlock(&m->lock);
        bool ok = open_and_test(w, h, why, sizeof why);
        if (ok)
            tune(w, h);
        pthread_mutex_lock(&m->lock);
        if (ok) {
            dispatch_set_worker(m, w, WORKER_READY, "reopened, self-test passed");
            pthread_mutex_unlock(&m->lock);
            return true;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return false;
}

/* How long a scan expected to last expected_s may run before the watchdog
 * calls it hung; 0: not watched. Before the first measured scan of a
 * handle the length is a guess, so the limit is looser. */
static double hang_limit(const lode_dispatcher *m, double expected_s)
{
    double floor_s = m->config.hang_timeout_s;
    if (floor_s < 0)
        return 0;
    if (expected_s <= 0) {
        double guess = HANG_FACTOR * m->config.chunk_ms / 1000.0;
        return ABANDON_FACTOR * (guess > floor_s ? guess : floor_s);
    }
    return HANG_FACTOR * expected_s > floor_s ? HANG_FACTOR * expected_s : floor_s;
}

/* The indices of job that make about `hashes` hashes (at least one). */
static uint64_t chunk_indices(const lode_work *job, uint64_t hashes)
{
    const uint64_t per_index = lode_work_hashes(job, 1);
    return hashes / per_index > 0 ? hashes / per_index : 1;
}

/* A worker's first self-test has settled: it takes work, or it failed. A
 * stop that cut the test short is no fault of the device. */
static void first_test_done(worker *w, bool opened, const char *why)
{
    lode_dispatcher *m = w->miner;
    pthread_mutex_lock(&m->lock);
    if (!opened && m->stopping) {
        if (w->state == WORKER_STARTING) { /* not given up on at the stop already */
            m->settled++;
            m->alive--;
            w->state = WORKER_FAILED;
            pthread_cond_broadcast(&m->state_changed);
        }
    } else {
        if (!opened) {
            lode_log(LODE_LOG_ERROR, "%s: %s; it gets no work", m->devices[w->device].id, why);
            dispatch_note_error(&m->counters[w->device], why);
        }
        dispatch_set_worker(m, w, opened ? WORKER_READY : WORKER_FAILED, opened ? "self-test passed" : why);
    }
    pthread_mutex_unlock(&m->lock);
}

/* The end of a worker's thread, its handle closed. One the stop left behind
 * (dispatch_stop.c) frees the dispatcher if it is the last of them back. */
static void worker_exit(worker *w, const char *why)
{
    lode_dispatcher *m = w->miner;
    const device_counters *c = &m->counters[w->device];
    pthread_mutex_lock(&m->lock);
    /* Stopping is no failure: the device keeps the state it had. */
    if (!m->stopping && w->state != WORKER_ABANDONED && w->state != WORKER_FAILED)
        dispatch_set_worker(m, w, WORKER_FAILED, c->quarantined ? c->last_error : why);
    w->exited = true;
    pthread_cond_broadcast(&m->state_changed);
    const bool was_left = w->left_behind;
    bool last_out = false;
    if (was_left) {
        m->left_behind--;
        last_out = m->orphaned && m->left_behind == 0;
    }
    pthread_mutex_unlock(&m->lock);
    if (was_left)
        lode_stuck_thread_returned();
    if (last_out)
        dispatch_destroy(m);
}

/* What one worker carries from scan to scan. Chunks and rates count
 * hashes, not indices: an index of a version-rolled job is several hashes
 * (lode_work_hashes), and a switch between such jobs must not change how
 * long a scan runs. */
typedef struct scan_state {
    double chunk_s;         /* the scan length aimed at */
    uint64_t chunk;         /* hashes of the next scan */
    double rate;            /* hashes per second of the last measured scan; 0 = none yet */
    uint64_t installed;     /* the job on the handle; job sequence numbers start at 1 */
    uint64_t claimed_seq;   /* the job this worker last claimed from */
    lode_work work;
    lode_hits hits;
    long scans;
} scan_state;

/* Waits for a range of the current job and marks the worker busy on it
 * (watched by the monitor until the scan returns, set_work included);
 * false at a stop or once the device is quarantined. */
static bool claim_next(worker *w, scan_state *st, lode_range *r, bool *reinstall)
{
    lode_dispatcher *m = w->miner;
    device_counters *c = &m->counters[w->device];
    pthread_mutex_lock(&m->lock);
    while (!m->stopping && !c->quarantined &&
           (!dispatch_takes_work(c) ||
            !claim(m, chunk_indices(&m->job, st->chunk), m->job.seq != st->claimed_seq, r)))
        pthread_cond_wait(&m->work_ready, &m->lock);
    if (m->stopping || c->quarantined) {
        pthread_mutex_unlock(&m->lock);
        return false;
    }
    st->claimed_seq = m->job.seq;
    *reinstall = m->job.seq != st->installed;
    if (*reinstall)
        st->work = m->job;
    atomic_store(&w->abort, 0);
    w->busy = true;
    w->scan_out = true;
    w->range = *r;
    w->busy_seq = m->job.seq;
    w->busy_since = lode_clock_s();
    w->hang_limit_s = hang_limit(m, st->rate > 0 ? (double)lode_work_hashes(&m->job, r->count) / st->rate : 0);
    pthread_mutex_unlock(&m->lock);
    return true;
}

/* Scans r (the job installed first where it changed) and sizes the next
 * chunk from the rate; the scan's status, *done the indices scanned. */
static int run_scan(worker *w, lode_handle *h, scan_state *st, const lode_range *r, bool reinstall, uint64_t *done)
{
    lode_dispatcher *m = w->miner;
    *done = 0;
    int rc = reinstall ? lode_handle_set_work(h, &st->work) : LODE_OK;
    if (rc == LODE_OK && m->fail_after >= 0 && st->scans++ >= m->fail_after)
        rc = LODE_ERR_DEVICE; /* the injected fault: as a device lost mid-run */
    if (rc != LODE_OK)
        return rc;
    st->installed = st->work.seq;
    atomic_store(&w->on_job, st->installed);
    lode_hits_clear(&st->hits);
    double t0 = lode_clock_s();
    rc = lode_handle_scan(h, r, &st->hits, done, &w->abort);
    double elapsed = lode_clock_s() - t0;
    if (*done > r->count)
        *done = r->count;
    if (rc == LODE_ERR_HITS_OVERFLOW) { /* rescan the range in smaller pieces */
        *done = 0;
        lode_hits_clear(&st->hits);
        st->chunk = lode_work_hashes(&st->work, r->count) > 1 ? lode_work_hashes(&st->work, r->count) / 2 : 1;
        rc = LODE_OK;
    } else if (elapsed > 1e-3 && *done > 0) {
        /* Aim each scan at chunk_ms, growing at most 4x at a time. */
        st->rate = (double)lode_work_hashes(&st->work, *done) / elapsed;
        double want = st->rate * st->chunk_s;
        uint64_t next = want < 1 ? 1 : (uint64_t)want;
        st->chunk = next > 4 * st->chunk ? 4 * st->chunk : next;
    } else if (*done == r->count && st->chunk < (UINT64_C(1) << 40)) {
        st->chunk *= 4;
    }
    return rc;
}

/* Counts a returned scan: its hits, hashes and expected hits, and the rest
 * of its range given back. *taken: the watchdog had declared it hung and
 * handed its range to the others already, so what it did is dropped (or it
 * would count twice). True when the worker was abandoned meanwhile. */
static bool finish_scan(worker *w, scan_state *st, const lode_range *r, uint64_t done, bool *taken)
{
    lode_dispatcher *m = w->miner;
    device_counters *c = &m->counters[w->device];
    const lode_work *work = &st->work;
    pthread_mutex_lock(&m->lock);
    w->busy = false;
    *taken = w->state == WORKER_HUNG || w->state == WORKER_ABANDONED;
    pthread_mutex_unlock(&m->lock);
    if (!*taken) {
        lode_range scanned = {.start = r->start, .count = done};
        if (st->hits.count > 0 && !dispatch_verify_later(m, w->device, work, &scanned, &st->hits))
            dispatch_confirm_hits(m, w->device, work, &scanned, &st->hits);
        atomic_fetch_add(&c->hashes, lode_work_hashes(work, done));
    }

    bool exhausted = false;
    pthread_mutex_lock(&m->lock);
    if (!*taken && lode_algo_get(work->algo)->kind == LODE_WORK_NONCE_SCAN)
        c->hits_expected += (double)lode_work_hashes(work, done) * lode_target_chance(&work->header.target);
    w->scan_out = false; /* its hashes are in the counters now */
    if (m->counts_waiters > 0)
        pthread_cond_broadcast(&m->state_changed);
    if (!*taken && m->job.seq == work->seq) {
        m->unscanned -= done;
        dispatch_give_back(m, r->start + done, r->count - done);
        exhausted = m->unscanned == 0 && done > 0;
        if (exhausted)
            pthread_cond_broadcast(&m->state_changed);
    }
    bool abandoned = w->state == WORKER_ABANDONED;
    pthread_mutex_unlock(&m->lock);
    if (exhausted && m->config.callbacks.exhausted)
        m->config.callbacks.exhausted(m->config.callbacks.user, work->seq);
    return abandoned;
}

/* After a device error or a hung scan: a fresh handle (restart), the job
 * to go in again; the device's rate stays what it was, and so do its
 * chunks. False when the device is not reopened. */
static bool recover(worker *w, lode_handle *h, scan_state *st, int rc, bool taken, char *why, size_t why_len)
{
    if (rc != LODE_OK)
        snprintf(why, why_len, "worker %u: device error: %s", w->slot, lode_status_str(rc));
    else
        snprintf(why, why_len, "worker %u: its scan hung", w->slot);
    if (!restart(w, h, why, taken))
        return false;
    st->installed = 0;
    st->chunk = st->rate > 0 ? (uint64_t)(st->rate * st->chunk_s)
                             : lode_handle_preferred_chunk(h, w->miner->config.chunk_ms);
    if (st->chunk == 0)
        st->chunk = st->rate > 0 ? 1 : 256;
    return true;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    lode_dispatcher *m = w->miner;
    const lode_device_ref *ref = &m->devices[w->device];
    lode_handle h = {0};
    char why[256];
    /* Named for top -H and the CPU-time measurements: "cuda:0/1" is worker
     * 1 of cuda:0 (the kernel keeps 15 bytes). */
    char name[16];
    snprintf(name, sizeof name, "%.10s/%u", ref->id, w->slot % 1000);
    pthread_setname_np(pthread_self(), name);

    bool opened = open_and_test(w, &h, why, sizeof why);
    first_test_done(w, opened, why);
    if (opened)
        tune(w, &h);

    scan_state st = {.chunk_s = m->config.chunk_ms / 1000.0};
    st.chunk = opened ? lode_handle_preferred_chunk(&h, m->config.chunk_ms) : 0;
    if (st.chunk == 0)
        st.chunk = 256;
    while (opened) {
        lode_range r;
        bool reinstall, taken;
        if (!claim_next(w, &st, &r, &reinstall))
            break;
        uint64_t done;
        int rc = run_scan(w, &h, &st, &r, reinstall, &done);
        if (finish_scan(w, &st, &r, done, &taken))
            break;
        if ((rc != LODE_OK || taken) && !recover(w, &h, &st, rc, taken, why, sizeof why))
            break;
    }
    lode_hits_free(&st.hits);
    lode_handle_close(&h);
    worker_exit(w, why);
    return NULL;
}

static unsigned workers_of(const lode_dispatcher_config *cfg, const lode_device_ref *ref)
{
    unsigned n = ref->info.workers ? ref->info.workers : 1;
    if (cfg->threads > 0 && ref->info.max_workers > 1)
        n = cfg->threads;
    if (ref->info.max_workers > 0 && n > ref->info.max_workers)
        n = ref->info.max_workers;
    return n;
}

/* Tests only: LODE_TEST_FAIL_SCANS_AFTER=N makes every worker fail with a
 * device error instead of its scan number N+1 and every one after (counted
 * after its self-test), as a GPU that falls off the bus would: how the
 * tests of `lode` reach the every-device-failed paths without a failing
 * device. -1 when unset. */
static long fault_injection(void)
{
    unsigned n;
    if (!lode_setting_unsigned_given(LODE_SETTING_TEST_FAIL_SCANS_AFTER, &n))
        return -1;
    lode_log(LODE_LOG_WARN, "fault injection: every worker fails at scan %ld", (long)n + 1);
    return (long)n;
}

lode_dispatcher *lode_dispatcher_start(const lode_dispatcher_config *config, char *err, size_t err_len)
{
    lode_dispatcher *m = calloc(1, sizeof *m);
    if (m == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    m->config = *config;
    m->fail_after = fault_injection();
    if (m->config.chunk_ms <= 0)
        m->config.chunk_ms = 200;
    lode_dispatcher_config *h = &m->config; /* the health settings' defaults */
    if (h->temp_hysteresis_c <= 0)
        h->temp_hysteresis_c = DEFAULT_HYSTERESIS_C;
    if (h->hang_timeout_s == 0)
        h->hang_timeout_s = DEFAULT_HANG_TIMEOUT_S;
    if (h->max_restarts == 0)
        h->max_restarts = DEFAULT_MAX_RESTARTS;
    if (h->backoff_s <= 0)
        h->backoff_s = DEFAULT_BACKOFF_S;
    if (h->monitor_interval_s <= 0)
        h->monitor_interval_s = 1.0;
    h->max_temp_c = NULL; /* copied into the devices' counters */
    size_t nd = config->device_count;
    m->devices = calloc(nd ? nd : 1, sizeof *m->devices);
    m->counters = calloc(nd ? nd : 1, sizeof *m->counters);
    for (size_t d = 0; d < nd; d++)
        m->worker_count += workers_of(config, &config->devices[d]);
    m->workers = calloc(m->worker_count ? m->worker_count : 1, sizeof *m->workers);
    if (m->devices == NULL || m->counters == NULL || m->workers == NULL || nd == 0) {
        snprintf(err, err_len, nd == 0 ? "no device selected" : "out of memory");
        free(m->devices);
        free(m->counters);
        free(m->workers);
        free(m);
        return NULL;
    }
    memcpy(m->devices, config->devices, nd * sizeof *m->devices);
    m->config.devices = m->devices;
    pthread_mutex_init(&m->lock, NULL);
    pthread_condattr_t attr; /* timed waits count on the monotonic clock */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&m->work_ready, &attr);
    pthread_cond_init(&m->state_changed, &attr);
    pthread_cond_init(&m->monitor_wake, &attr);
    pthread_condattr_destroy(&attr);

    size_t k = 0;
    for (size_t d = 0; d < nd; d++) {
        unsigned n = workers_of(config, &m->devices[d]);
        m->counters[d].workers = n;
        m->counters[d].first_worker = k;
        if (config->max_temp_c != NULL && config->max_temp_c[d] > 0)
            m->counters[d].max_temp_c = config->max_temp_c[d];
        for (unsigned s = 0; s < n; s++, k++)
            m->workers[k] = (worker){.miner = m, .device = d, .slot = s};
    }
    pthread_cond_init(&m->verify_ready, NULL);
    /* Without the verifier thread, workers check their own hits. */
    m->verifier_started = pthread_create(&m->verifier, NULL, dispatch_verifier_main, m) == 0;
    /* Without the monitor, no thermal limit and no watchdog: said, not fatal. */
    m->monitor_started = pthread_create(&m->monitor, NULL, dispatch_monitor_main, m) == 0;
    if (!m->monitor_started)
        lode_log(LODE_LOG_WARN, "cannot start the device monitor: no thermal limit, no watchdog");
    pthread_mutex_lock(&m->lock);
    for (k = 0; k < m->worker_count; k++) {
        if (pthread_create(&m->workers[k].thread, NULL, worker_main, &m->workers[k]) != 0) {
            snprintf(err, err_len, "cannot start a worker thread: %s", strerror(errno));
            m->worker_count = k;
            pthread_mutex_unlock(&m->lock);
            lode_dispatcher_free(m);
            return NULL;
        }
        m->alive++;
    }
    pthread_mutex_unlock(&m->lock);
    return m;
}

int lode_dispatcher_wait_ready(lode_dispatcher *m, int timeout_ms)
{
    struct timespec deadline = dispatch_deadline_in(timeout_ms > 0 ? timeout_ms : 0);
    int ready = 0;
    pthread_mutex_lock(&m->lock);
    while (m->settled < m->worker_count && ready == 0) {
        if (timeout_ms < 0)
            pthread_cond_wait(&m->state_changed, &m->lock);
        else if (pthread_cond_timedwait(&m->state_changed, &m->lock, &deadline) == ETIMEDOUT)
            ready = -1;
    }
    for (size_t k = 0; ready >= 0 && k < m->worker_count; k++) /* passed and still working */
        ready += dispatch_worker_live(m->workers[k].state) && m->workers[k].state != WORKER_STARTING;
    pthread_mutex_unlock(&m->lock);
    return ready;
}

uint64_t lode_dispatcher_set_job(lode_dispatcher *m, const lode_work *work, uint64_t begin, uint64_t end)
{
    pthread_mutex_lock(&m->lock);
    uint64_t seq = m->job.seq + 1;
    m->job = *work;
    m->job.algo = m->config.algo;
    m->job.seq = seq;
    m->has_job = true;
    m->begin = m->next = begin;
    m->end = end > begin ? end : begin;
    m->unscanned = m->end - begin;
    m->returned_count = 0;
    for (size_t k = 0; k < m->worker_count; k++)
        atomic_store(&m->workers[k].abort, 1);
    pthread_cond_broadcast(&m->work_ready);
    pthread_cond_broadcast(&m->state_changed);
    pthread_mutex_unlock(&m->lock);
    return seq;
}

int lode_dispatcher_wait_job(lode_dispatcher *m, uint64_t seq, int timeout_ms)
{
    struct timespec deadline = dispatch_deadline_in(timeout_ms);
    pthread_mutex_lock(&m->lock);
    int result;
    for (;;) {
        if (m->job.seq == seq && m->unscanned == 0 && m->verify_pending == 0) {
            result = 1;
            break;
        }
        if (m->job.seq != seq || m->stopping || m->alive == 0) {
            result = -1;
            break;
        }
        if (!dispatch_wait_state_changed(m, &deadline)) {
            result = 0;
            break;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return result;
}

void lode_dispatcher_device_stats(lode_dispatcher *m, size_t device, lode_device_stats *out)
{
    device_counters *c = &m->counters[device];
    *out = (lode_device_stats){0};
    pthread_mutex_lock(&m->lock);
    for (unsigned i = 0; i < c->workers; i++) {
        const worker *w = &m->workers[c->first_worker + i];
        out->workers_ready += w->state == WORKER_READY;
        out->workers_failed += !dispatch_worker_live(w->state);
        out->scans_out += scan_to_count(w);
    }
    /* Read after scans_out: a scan's hashes are added before its worker
     * clears scan_out under this lock, so a scan not out is in `hashes`
     * (its hits may still wait for the re-check thread). */
    out->hashes = atomic_load(&c->hashes);
    out->hits = atomic_load(&c->hits);
    out->hw_errors = atomic_load(&c->hw_errors);
    out->hits_dropped = atomic_load(&c->hits_dropped);
    out->hits_expected = c->hits_expected;
    out->state = c->state;
    out->restarts = c->restarts;
    memcpy(out->last_error, c->last_error, sizeof out->last_error);
    out->sensors = c->sensors;
    out->max_temp_c = c->max_temp_c;
    out->energy = lode_energy_meter_read(&c->energy);
    pthread_mutex_unlock(&m->lock);
}

size_t lode_dispatcher_devices_left(lode_dispatcher *m)
{
    size_t left = 0;
    pthread_mutex_lock(&m->lock);
    for (size_t d = 0; d < m->config.device_count; d++)
        left += m->counters[d].state != LODE_DEVICE_FAILED && m->counters[d].state != LODE_DEVICE_QUARANTINED;
    pthread_mutex_unlock(&m->lock);
    return left;
}

int lode_dispatcher_set_paused(lode_dispatcher *m, size_t device, bool paused)
{
    if (device >= m->config.device_count)
        return -1;
    pthread_mutex_lock(&m->lock);
    device_counters *c = &m->counters[device];
    if (c->paused != paused) {
        c->paused = paused;
        if (paused) /* its scans stop now; their unscanned indices go back to the others */
            dispatch_abort_device(m, device);
        else
            pthread_cond_broadcast(&m->work_ready);
        dispatch_refresh_state(m, device, paused ? "paused by the user" : "resumed by the user");
    }
    pthread_mutex_unlock(&m->lock);
    return 0;
}

unsigned lode_dispatcher_workers_on_job(lode_dispatcher *m, uint64_t seq)
{
    unsigned n = 0;
    for (size_t k = 0; k < m->worker_count; k++)
        n += atomic_load(&m->workers[k].on_job) == seq;
    return n;
}

size_t lode_dispatcher_device_count(const lode_dispatcher *m) { return m->config.device_count; }

const lode_device_ref *lode_dispatcher_device(const lode_dispatcher *m, size_t device)
{
    return &m->devices[device];
}
