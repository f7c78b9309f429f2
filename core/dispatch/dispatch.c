#include "core/dispatch/dispatch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/status.h"
#include "core/dispatch/selftest.h"

typedef struct index_span {
    uint64_t start, count;
} index_span;

typedef struct device_counters {
    atomic_uint_fast64_t hashes, hits, hw_errors;
    unsigned workers;       /* workers of the device */
    unsigned ready, failed; /* under the miner lock */
    bool paused;            /* under the miner lock */
} device_counters;

typedef struct worker {
    lode_dispatcher *miner;
    size_t device;
    unsigned slot;
    pthread_t thread;
    atomic_int abort; /* set when the job changes or the miner stops */
    atomic_uint_fast64_t on_job; /* sequence number of the job installed on the device */
} worker;

/* Hits of one scan waiting for their CPU re-check. */
typedef struct verify_item {
    struct verify_item *next;
    size_t device;
    lode_work work;
    lode_range scanned; /* the part of the range the scan completed */
    lode_hits hits;
} verify_item;

/* Re-checks run on a thread of their own so that a GPU worker is back
 * launching while the CPU verifies; past this backlog a worker verifies its
 * hits itself, which bounds the memory held by waiting hits. */
#define VERIFY_BACKLOG 64

struct lode_dispatcher {
    lode_dispatcher_config config;
    lode_device_ref *devices;
    device_counters *counters;
    worker *workers;
    size_t worker_count;

    pthread_mutex_t lock;
    pthread_cond_t work_ready;    /* workers wait here for something to scan */
    pthread_cond_t state_changed; /* waiters: self-tests settled, job done */
    bool stopping;
    unsigned settled, alive; /* workers past their self-test; workers running */

    /* The current job and the part of its index space not yet handed out. */
    bool has_job;
    lode_work job;
    uint64_t next, end;
    uint64_t unscanned; /* indices of the job not yet reported scanned */
    index_span *returned; /* spans given back by aborted or failed scans */
    size_t returned_count, returned_capacity;

    pthread_t verifier;
    bool verifier_started, verifier_stopping;
    pthread_cond_t verify_ready;
    verify_item *verify_head, *verify_tail;
    size_t verify_pending; /* queued or being checked */

    long fail_after; /* LODE_TEST_FAIL_SCANS_AFTER; -1 = off */
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Keeps a span of the current job for another worker (lock held). */
static void give_back(lode_dispatcher *m, uint64_t start, uint64_t count)
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

/* Hands out up to `chunk` indices of the current job (lock held). Near the
 * end of a finite range chunks shrink so every worker finishes together. */
static bool claim(lode_dispatcher *m, uint64_t chunk, lode_range *out)
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
    uint64_t left = m->end - m->next;
    uint64_t fair = left / (2 * (uint64_t)(m->alive ? m->alive : 1));
    uint64_t take = chunk < left ? chunk : left;
    if (fair > 0 && take > fair)
        take = fair;
    *out = (lode_range){.start = m->next, .count = take};
    m->next += take;
    return true;
}

static void settle(lode_dispatcher *m, size_t device, bool ready)
{
    pthread_mutex_lock(&m->lock);
    if (ready)
        m->counters[device].ready++;
    else
        m->counters[device].failed++;
    m->settled++;
    if (!ready)
        m->alive--;
    pthread_cond_broadcast(&m->state_changed);
    pthread_mutex_unlock(&m->lock);
}

static int by_hit(const void *a, const void *b)
{
    const lode_hit *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return memcmp(x->pair, y->pair, sizeof x->pair);
}

/* Re-checks each hit with the reference before anyone sees it. A hit
 * outside the scanned part, reported twice, or rejected by the reference is
 * a hardware error of the device. */
static void confirm_hits(lode_dispatcher *m, size_t device, const lode_work *work,
                         const lode_range *scanned, lode_hits *hits)
{
    const lode_algo_info *algo = lode_algo_get(work->algo);
    device_counters *c = &m->counters[device];
    if (hits->count > 1)
        qsort(hits->items, hits->count, sizeof *hits->items, by_hit);
    for (size_t i = 0; i < hits->count; i++) {
        if (m->config.callbacks.wanted && !m->config.callbacks.wanted(m->config.callbacks.user, work->seq))
            break;
        lode_found f = {.job_seq = work->seq, .device = device, .hit = hits->items[i]};
        bool in_range = f.hit.index >= scanned->start && f.hit.index - scanned->start < scanned->count;
        bool repeated = i > 0 && by_hit(&hits->items[i - 1], &hits->items[i]) == 0;
        if (!in_range || repeated || !algo->check_hit(work, &f.hit, f.hash)) {
            atomic_fetch_add(&c->hw_errors, 1);
            lode_log(LODE_LOG_WARN, "%s: hardware error: index %llu fails the CPU re-check",
                     m->devices[device].id, (unsigned long long)f.hit.index);
            continue;
        }
        atomic_fetch_add(&c->hits, 1);
        if (m->config.callbacks.found)
            m->config.callbacks.found(m->config.callbacks.user, &f);
    }
}

/* Hands a scan's hits to the verifier thread (taking them over from *hits).
 * Returns false if the backlog is full: the caller then checks them. */
static bool verify_later(lode_dispatcher *m, size_t device, const lode_work *work,
                         const lode_range *scanned, lode_hits *hits)
{
    verify_item *item = malloc(sizeof *item);
    if (item == NULL)
        return false;
    pthread_mutex_lock(&m->lock);
    if (!m->verifier_started || m->verify_pending >= VERIFY_BACKLOG) {
        pthread_mutex_unlock(&m->lock);
        free(item);
        return false;
    }
    *item = (verify_item){.device = device, .work = *work, .scanned = *scanned, .hits = *hits};
    *hits = (lode_hits){0};
    if (m->verify_tail)
        m->verify_tail->next = item;
    else
        m->verify_head = item;
    m->verify_tail = item;
    m->verify_pending++;
    pthread_cond_signal(&m->verify_ready);
    pthread_mutex_unlock(&m->lock);
    return true;
}

/* Checks queued hits until told to stop and the queue is empty: no hit a
 * device found is dropped on the way out. */
static void *verifier_main(void *arg)
{
    lode_dispatcher *m = arg;
    pthread_setname_np(pthread_self(), "lode-verify");
    pthread_mutex_lock(&m->lock);
    for (;;) {
        while (m->verify_head == NULL && !m->verifier_stopping)
            pthread_cond_wait(&m->verify_ready, &m->lock);
        verify_item *item = m->verify_head;
        if (item == NULL)
            break;
        m->verify_head = item->next;
        if (m->verify_head == NULL)
            m->verify_tail = NULL;
        pthread_mutex_unlock(&m->lock);
        confirm_hits(m, item->device, &item->work, &item->scanned, &item->hits);
        lode_hits_free(&item->hits);
        free(item);
        pthread_mutex_lock(&m->lock);
        m->verify_pending--;
        pthread_cond_broadcast(&m->state_changed);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    lode_dispatcher *m = w->miner;
    const lode_device_ref *ref = &m->devices[w->device];
    lode_open_params params = {.algo = m->config.algo, .worker = w->slot, .variant = m->config.variant};
    lode_handle h;
    char why[512];
    /* Named for top -H and the CPU-time measurements: "cuda:0/1" is worker
     * 1 of cuda:0 (the kernel keeps 15 bytes). */
    char name[16];
    snprintf(name, sizeof name, "%.10s/%u", ref->id, w->slot % 1000);
    pthread_setname_np(pthread_self(), name);

    int rc = lode_handle_open(&h, ref, &params);
    if (rc != LODE_OK) {
        lode_log(LODE_LOG_ERROR, "%s: cannot open worker %u: %s", ref->id, w->slot,
                 lode_status_str(rc));
        settle(m, w->device, false);
        return NULL;
    }
    /* LODE_SKIP_SELFTEST=1 (sanitizer runs only): said once per worker. */
    if (lode_setting_flag(LODE_SETTING_SKIP_SELFTEST))
        lode_log(LODE_LOG_WARN, "%s: worker %u starts without its self-test (LODE_SKIP_SELFTEST=1)", ref->id,
                 w->slot);
    else if (lode_selftest_handle(&h, why, sizeof why) != 0) {
        lode_log(LODE_LOG_ERROR, "%s: self-test failed, the device gets no work: %s", ref->id, why);
        lode_handle_close(&h);
        settle(m, w->device, false);
        return NULL;
    }
    settle(m, w->device, true);
    rc = lode_handle_tune(&h, m->config.chunk_ms);
    if (rc != LODE_OK)
        lode_log(LODE_LOG_WARN, "%s: tuning failed (%s): default launch sizes", ref->id,
                 lode_status_str(rc));

    double chunk_s = m->config.chunk_ms / 1000.0;
    uint64_t chunk = lode_handle_preferred_chunk(&h, m->config.chunk_ms);
    if (chunk == 0)
        chunk = 256;
    uint64_t installed = 0; /* job sequence numbers start at 1 */
    lode_work work;
    lode_hits hits = {0};
    device_counters *c = &m->counters[w->device];
    long scans = 0;

    for (;;) {
        lode_range r;
        pthread_mutex_lock(&m->lock);
        while (!m->stopping && (c->paused || !claim(m, chunk, &r)))
            pthread_cond_wait(&m->work_ready, &m->lock);
        if (m->stopping) {
            pthread_mutex_unlock(&m->lock);
            break;
        }
        bool reinstall = m->job.seq != installed;
        if (reinstall)
            work = m->job;
        atomic_store(&w->abort, 0);
        pthread_mutex_unlock(&m->lock);

        uint64_t done = 0;
        rc = reinstall ? lode_handle_set_work(&h, &work) : LODE_OK;
        if (rc == LODE_OK && m->fail_after >= 0 && scans++ >= m->fail_after)
            rc = LODE_ERR_DEVICE; /* the injected fault: as a device lost mid-run */
        if (rc == LODE_OK) {
            installed = work.seq;
            atomic_store(&w->on_job, installed);
            lode_hits_clear(&hits);
            double t0 = now_seconds();
            rc = lode_handle_scan(&h, &r, &hits, &done, &w->abort);
            double elapsed = now_seconds() - t0;
            if (done > r.count)
                done = r.count;
            if (rc == LODE_ERR_HITS_OVERFLOW) { /* rescan the range in smaller pieces */
                done = 0;
                lode_hits_clear(&hits);
                chunk = r.count > 1 ? r.count / 2 : 1;
                rc = LODE_OK;
            } else if (elapsed > 1e-3 && done > 0) {
                /* Aim each scan at chunk_ms, growing at most 4x at a time. */
                double want = (double)done / elapsed * chunk_s;
                uint64_t next = want < 1 ? 1 : (uint64_t)want;
                chunk = next > 4 * chunk ? 4 * chunk : next;
            } else if (done == r.count && chunk < (UINT64_C(1) << 40)) {
                chunk *= 4;
            }
            lode_range scanned = {.start = r.start, .count = done};
            if (hits.count > 0 && !verify_later(m, w->device, &work, &scanned, &hits))
                confirm_hits(m, w->device, &work, &scanned, &hits);
            atomic_fetch_add(&c->hashes, done);
        }

        bool exhausted = false;
        pthread_mutex_lock(&m->lock);
        if (m->job.seq == work.seq) {
            m->unscanned -= done;
            give_back(m, r.start + done, r.count - done);
            exhausted = m->unscanned == 0 && done > 0;
            if (exhausted)
                pthread_cond_broadcast(&m->state_changed);
        }
        pthread_mutex_unlock(&m->lock);
        if (rc != LODE_OK) {
            lode_log(LODE_LOG_ERROR, "%s: worker %u disabled: %s", ref->id, w->slot,
                     lode_status_str(rc));
            pthread_mutex_lock(&m->lock);
            c->failed++;
            c->ready--;
            pthread_mutex_unlock(&m->lock);
            break;
        }
        if (exhausted && m->config.callbacks.exhausted)
            m->config.callbacks.exhausted(m->config.callbacks.user, work.seq);
    }
    lode_hits_free(&hits);
    lode_handle_close(&h);
    pthread_mutex_lock(&m->lock);
    m->alive--;
    pthread_cond_broadcast(&m->state_changed);
    pthread_mutex_unlock(&m->lock);
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
 * device error instead of its scan number N+1 (after its self-test), as a
 * GPU that falls off the bus would: how the tests of `lode` reach the
 * every-device-failed paths without a failing device. -1 when unset. */
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
    pthread_cond_init(&m->work_ready, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&m->state_changed, &attr);
    pthread_condattr_destroy(&attr);

    size_t k = 0;
    for (size_t d = 0; d < nd; d++) {
        unsigned n = workers_of(config, &m->devices[d]);
        m->counters[d].workers = n;
        for (unsigned s = 0; s < n; s++, k++)
            m->workers[k] = (worker){.miner = m, .device = d, .slot = s};
    }
    pthread_cond_init(&m->verify_ready, NULL);
    /* Without the verifier thread, workers check their own hits. */
    m->verifier_started = pthread_create(&m->verifier, NULL, verifier_main, m) == 0;
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

static struct timespec deadline_in(int timeout_ms)
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

int lode_dispatcher_wait_ready(lode_dispatcher *m, int timeout_ms)
{
    struct timespec deadline = deadline_in(timeout_ms > 0 ? timeout_ms : 0);
    int ready = 0;
    pthread_mutex_lock(&m->lock);
    while (m->settled < m->worker_count && ready == 0) {
        if (timeout_ms < 0)
            pthread_cond_wait(&m->state_changed, &m->lock);
        else if (pthread_cond_timedwait(&m->state_changed, &m->lock, &deadline) == ETIMEDOUT)
            ready = -1;
    }
    if (ready == 0)
        for (size_t d = 0; d < m->config.device_count; d++)
            ready += (int)m->counters[d].ready;
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
    m->next = begin;
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
    struct timespec deadline = deadline_in(timeout_ms);
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
        if (pthread_cond_timedwait(&m->state_changed, &m->lock, &deadline) == ETIMEDOUT) {
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
    out->hashes = atomic_load(&c->hashes);
    out->hits = atomic_load(&c->hits);
    out->hw_errors = atomic_load(&c->hw_errors);
    pthread_mutex_lock(&m->lock);
    out->workers_ready = c->ready;
    out->workers_failed = c->failed;
    if (c->paused)
        out->state = LODE_DEVICE_PAUSED;
    else if (c->ready > 0)
        out->state = LODE_DEVICE_MINING;
    else if (c->ready + c->failed < c->workers)
        out->state = LODE_DEVICE_STARTING;
    else
        out->state = LODE_DEVICE_FAILED;
    pthread_mutex_unlock(&m->lock);
}

const char *lode_device_state_name(lode_device_state state)
{
    switch (state) {
    case LODE_DEVICE_STARTING: return "starting";
    case LODE_DEVICE_MINING: return "mining";
    case LODE_DEVICE_PAUSED: return "paused";
    case LODE_DEVICE_PAUSED_THERMAL: return "paused-thermal";
    case LODE_DEVICE_RESTARTING: return "restarting";
    case LODE_DEVICE_FAILED: return "failed";
    case LODE_DEVICE_QUARANTINED: return "quarantined";
    }
    return "unknown";
}

int lode_dispatcher_set_paused(lode_dispatcher *m, size_t device, bool paused)
{
    if (device >= m->config.device_count)
        return -1;
    pthread_mutex_lock(&m->lock);
    if (m->counters[device].paused != paused) {
        m->counters[device].paused = paused;
        lode_log(LODE_LOG_INFO, "%s: %s", m->devices[device].id, paused ? "paused" : "resumed");
        /* A paused device's scans stop now; its workers' unscanned indices go back to the others. */
        for (size_t k = 0; k < m->worker_count; k++)
            if (paused && m->workers[k].device == device)
                atomic_store(&m->workers[k].abort, 1);
        pthread_cond_broadcast(&m->work_ready);
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

void lode_dispatcher_request_stop(lode_dispatcher *m)
{
    pthread_mutex_lock(&m->lock);
    m->stopping = true;
    for (size_t k = 0; k < m->worker_count; k++)
        atomic_store(&m->workers[k].abort, 1);
    pthread_cond_broadcast(&m->work_ready);
    pthread_cond_broadcast(&m->state_changed);
    pthread_mutex_unlock(&m->lock);
}

void lode_dispatcher_free(lode_dispatcher *m)
{
    if (m == NULL)
        return;
    lode_dispatcher_request_stop(m);
    for (size_t k = 0; k < m->worker_count; k++)
        pthread_join(m->workers[k].thread, NULL);
    if (m->verifier_started) {
        pthread_mutex_lock(&m->lock);
        m->verifier_stopping = true;
        pthread_cond_signal(&m->verify_ready);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->verifier, NULL);
    }
    pthread_cond_destroy(&m->verify_ready);
    pthread_cond_destroy(&m->work_ready);
    pthread_cond_destroy(&m->state_changed);
    pthread_mutex_destroy(&m->lock);
    free(m->returned);
    free(m->workers);
    free(m->counters);
    free(m->devices);
    free(m);
}
