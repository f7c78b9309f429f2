/* Every hit a device reports is re-checked on the CPU (the algorithm's
 * check_hit) before a callback sees it, on the verifier thread or, when
 * its backlog is full, on the worker's. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/dispatch/dispatch_internal.h"

/* A device with this many rejected hits among its last 32 checked ones is
 * quarantined: a rare hardware error passes, a device that computes
 * garbage does not. */
#define BAD_HITS_LIMIT 8

/* Keeps the outcome of a device's checked hits; one whose recent hits
 * keep failing the re-check is quarantined. */
static void note_hit_outcomes(lode_dispatcher *m, size_t device, uint32_t bad_bits, unsigned n)
{
    device_counters *c = &m->counters[device];
    pthread_mutex_lock(&m->lock);
    c->recent_hits = n >= 32 ? bad_bits : (c->recent_hits << n) | bad_bits;
    c->checked_hits = c->checked_hits + n > 32 ? 32 : c->checked_hits + n;
    unsigned bad = (unsigned)__builtin_popcount(c->recent_hits);
    if (bad >= BAD_HITS_LIMIT && !c->quarantined) {
        char why[96];
        snprintf(why, sizeof why, "%u of its last %u hits failed the CPU re-check", bad, c->checked_hits);
        dispatch_quarantine(m, device, why);
    }
    pthread_mutex_unlock(&m->lock);
}

/* Re-checks each hit with the reference before anyone sees it. A hit
 * outside the scanned part, reported twice, or rejected by the reference is
 * a hardware error of the device. */
void dispatch_confirm_hits(lode_dispatcher *m, size_t device, const lode_work *work,
                         const lode_range *scanned, lode_hits *hits)
{
    const lode_algo_info *algo = lode_algo_get(work->algo);
    device_counters *c = &m->counters[device];
    uint32_t bad_bits = 0; /* outcomes of the last 32 hits checked here */
    unsigned checked = 0;
    if (hits->count > 1)
        qsort(hits->items, hits->count, sizeof *hits->items, lode_hit_compare);
    for (size_t i = 0; i < hits->count; i++) {
        if (m->config.callbacks.wanted && !m->config.callbacks.wanted(m->config.callbacks.user, work)) {
            atomic_fetch_add(&c->hits_dropped, hits->count - i);
            break;
        }
        lode_found f = {.work = work, .device = device, .hit = hits->items[i]};
        bool in_range = f.hit.index >= scanned->start && f.hit.index - scanned->start < scanned->count;
        bool repeated = i > 0 && lode_hit_compare(&hits->items[i - 1], &hits->items[i]) == 0;
        bool bad = !in_range || repeated || !algo->check_hit(work, &f.hit, f.hash);
        bad_bits = bad_bits << 1 | bad;
        checked++;
        if (bad) {
            atomic_fetch_add(&c->hw_errors, 1);
            lode_log(LODE_LOG_WARN, "%s: hardware error: index %llu fails the CPU re-check",
                     m->devices[device].id, (unsigned long long)f.hit.index);
            continue;
        }
        atomic_fetch_add(&c->hits, 1);
        if (m->config.callbacks.found)
            m->config.callbacks.found(m->config.callbacks.user, &f);
    }
    if (checked > 0)
        note_hit_outcomes(m, device, bad_bits, checked);
}

/* Hands a scan's hits to the verifier thread (taking them over from *hits).
 * Returns false if the backlog is full: the caller then checks them. */
bool dispatch_verify_later(lode_dispatcher *m, size_t device, const lode_work *work,
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
void *dispatch_verifier_main(void *arg)
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
        dispatch_confirm_hits(m, item->device, &item->work, &item->scanned, &item->hits);
        lode_hits_free(&item->hits);
        free(item);
        pthread_mutex_lock(&m->lock);
        m->verify_pending--;
        pthread_cond_broadcast(&m->state_changed);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}
