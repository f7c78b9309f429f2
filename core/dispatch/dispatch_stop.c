/* The dispatcher's stop: every worker is asked to stop, the work in
 * flight gets LODE_STOP_GRACE_MS, and a worker still in a device call then
 * is abandoned and left behind rather than waited for (dispatch.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/stuck_threads.h"
#include "core/dispatch/dispatch_internal.h"

void dispatch_destroy(lode_dispatcher *m)
{
    pthread_cond_destroy(&m->verify_ready);
    pthread_cond_destroy(&m->work_ready);
    pthread_cond_destroy(&m->state_changed);
    pthread_cond_destroy(&m->monitor_wake);
    pthread_mutex_destroy(&m->lock);
    free(m->returned);
    free(m->workers);
    free(m->counters);
    free(m->devices);
    free(m);
}

void lode_dispatcher_request_stop(lode_dispatcher *m)
{
    pthread_mutex_lock(&m->lock);
    if (!m->stopping)
        m->stop_at = lode_clock_s();
    m->stopping = true;
    atomic_store(&m->stop_flag, 1);
    for (size_t k = 0; k < m->worker_count; k++)
        atomic_store(&m->workers[k].abort, 1);
    pthread_cond_broadcast(&m->work_ready);
    pthread_cond_broadcast(&m->state_changed);
    pthread_mutex_unlock(&m->lock);
}

/* Scans out that will count, or hits still to re-check (miner lock held). */
static bool counts_pending(const lode_dispatcher *m)
{
    bool pending = m->verify_pending > 0;
    for (size_t k = 0; k < m->worker_count; k++)
        pending |= scan_to_count(&m->workers[k]);
    return pending;
}

int lode_dispatcher_wait_scans_counted(lode_dispatcher *m, int timeout_ms)
{
    struct timespec deadline = dispatch_deadline_in(timeout_ms);
    pthread_mutex_lock(&m->lock);
    m->counts_waiters++;
    while (counts_pending(m) && dispatch_wait_state_changed(m, &deadline))
        ;
    m->counts_waiters--;
    const bool pending = counts_pending(m);
    pthread_mutex_unlock(&m->lock);
    return !pending;
}

int lode_dispatcher_wait_verified(lode_dispatcher *m, int timeout_ms)
{
    struct timespec deadline = dispatch_deadline_in(timeout_ms);
    pthread_mutex_lock(&m->lock);
    m->counts_waiters++;
    while (m->verify_pending > 0 && dispatch_wait_state_changed(m, &deadline))
        ;
    m->counts_waiters--;
    const bool pending = m->verify_pending > 0;
    pthread_mutex_unlock(&m->lock);
    return !pending;
}

/* Gives up on the workers still out LODE_STOP_GRACE_MS after the stop
 * (lock held), each named in a line: they are left behind. Returns how many. */
static unsigned leave_stuck_workers(lode_dispatcher *m)
{
    unsigned n = 0;
    for (size_t k = 0; k < m->worker_count; k++) {
        worker *w = &m->workers[k];
        if (w->exited)
            continue;
        const char *id = m->devices[w->device].id;
        if (w->state == WORKER_ABANDONED) {
            lode_log(LODE_LOG_WARN, "%s: worker %u is still stuck in a device call: left behind", id, w->slot);
        } else {
            const char *in = w->busy ? "its scan"
                             : w->state == WORKER_STARTING || w->state == WORKER_RESTARTING ? "its self-test"
                                                                                           : "a device call";
            lode_log_event(LODE_LOG_WARN, "device_abandoned",
                           LODE_LOG_FIELDS(LODE_LOG_STR("device", id), LODE_LOG_INT("worker", w->slot)),
                           "%s: worker %u did not return from %s within %d s of the stop: abandoned, lode stops "
                           "without it", id, w->slot, in, LODE_STOP_GRACE_MS / 1000);
            if (w->state == WORKER_STARTING)
                m->settled++;
            w->state = WORKER_ABANDONED; /* whatever it returns with is dropped */
        }
        w->left_behind = true;
        lode_stuck_thread_left();
        n++;
    }
    m->left_behind = n;
    return n;
}

void lode_dispatcher_free(lode_dispatcher *m)
{
    if (m == NULL)
        return;
    lode_dispatcher_request_stop(m);
    /* Every worker returns within a scan, unless it is stuck in a device
     * call: it gets until LODE_STOP_GRACE_MS after the stop was asked. */
    pthread_mutex_lock(&m->lock);
    const double grace_left_s = m->stop_at + LODE_STOP_GRACE_MS / 1000.0 - lode_clock_s();
    struct timespec grace = dispatch_deadline_in(grace_left_s > 0 ? (int)(grace_left_s * 1000) : 0);
    for (;;) {
        bool out = false;
        for (size_t k = 0; k < m->worker_count; k++)
            out |= !m->workers[k].exited;
        if (!out || pthread_cond_timedwait(&m->state_changed, &m->lock, &grace) == ETIMEDOUT)
            break;
    }
    const unsigned stuck = leave_stuck_workers(m);
    pthread_mutex_unlock(&m->lock);
    if (m->monitor_started) {
        pthread_mutex_lock(&m->lock);
        m->monitor_stopping = true;
        pthread_cond_signal(&m->monitor_wake);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->monitor, NULL);
    }
    for (size_t k = 0; k < m->worker_count; k++) {
        if (m->workers[k].left_behind)
            pthread_detach(m->workers[k].thread);
        else
            pthread_join(m->workers[k].thread, NULL);
    }
    if (m->verifier_started) {
        pthread_mutex_lock(&m->lock);
        m->verifier_stopping = true;
        pthread_cond_signal(&m->verify_ready);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->verifier, NULL);
    }
    if (stuck > 0) {
        /* A stuck worker may still return and touch the dispatcher: the
         * last one back frees it. */
        pthread_mutex_lock(&m->lock);
        const bool all_back = m->left_behind == 0;
        m->orphaned = !all_back;
        pthread_mutex_unlock(&m->lock);
        if (!all_back)
            return;
    }
    dispatch_destroy(m);
}
