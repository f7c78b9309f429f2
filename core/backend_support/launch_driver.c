/* The launch driver (launch_driver.h): the pipeline and the waiting policy
 * of every GPU backend's scan. */
#include "core/backend_support/launch_driver.h"

#include <time.h>

#include "core/base/clock.h"
#include "core/base/status.h"

/* Polling engines: wake this share of the expected duration after the
 * launch began, then poll every expected/POLL_DIVISOR, within the bounds. */
#define WAKE_SHARE 0.97
#define POLL_DIVISOR 50.0
#define POLL_MIN_S 20e-6
#define POLL_MAX_S 2e-3
/* Before the first measurement. */
#define POLL_UNKNOWN_S 200e-6
/* Weight of a new measurement in the running estimate. */
#define ESTIMATE_WEIGHT 0.25
/* A launch already finished at the first poll ended at an unknown time
 * before it: the estimate was too long, so shorten it by this factor. */
#define ESTIMATE_SHRINK 0.9
/* A launch still reported running this long after it began (GIVE_UP_FACTOR
 * times the estimate plus GIVE_UP_MIN_S, or GIVE_UP_UNKNOWN_S before the
 * first estimate) is waited for with the engine's wait. */
#define GIVE_UP_FACTOR 4.0
#define GIVE_UP_MIN_S 0.01
#define GIVE_UP_UNKNOWN_S 2.0

static void sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

void lode_launch_driver_init(lode_launch_driver *drv)
{
    *drv = (lode_launch_driver){0};
}

typedef struct launch {
    uint64_t start, count;
    double queued_at;
} launch;

/* Waits for the oldest launch of a polling engine: sleep through most of
 * its expected duration, then poll with short sleeps; the time it took
 * updates the estimate. */
static int wait_polling(lode_launch_driver *drv, const lode_launch_engine *e, unsigned slot, const launch *l,
                        bool full)
{
    /* The device runs launches in order: this one began when the one ahead
     * of it was seen to finish, or when it was queued if that was later. */
    const double began = l->queued_at > drv->last_finish ? l->queued_at : drv->last_finish;
    const double expect = drv->sec_per_index * (double)l->count;
    double poll = POLL_UNKNOWN_S;
    if (expect > 0) {
        poll = expect / POLL_DIVISOR;
        poll = poll < POLL_MIN_S ? POLL_MIN_S : poll > POLL_MAX_S ? POLL_MAX_S : poll;
        const double ahead = began + WAKE_SHARE * expect - lode_clock_s();
        if (ahead > POLL_MIN_S) {
            sleep_s(ahead);
            drv->sleeps++;
        }
    }
    /* Past this, stop trusting the query and block in wait (a driver that
     * updates an event's state only inside its own wait must not hang us). */
    const double give_up = began + (expect > 0 ? GIVE_UP_FACTOR * expect + GIVE_UP_MIN_S : GIVE_UP_UNKNOWN_S);
    bool caught_running = false;
    for (;;) {
        int q = e->query(e->ctx, slot);
        drv->polls++;
        if (q < 0)
            return q;
        if (q > 0)
            break;
        if (e->wait != NULL && lode_clock_s() > give_up) {
            drv->give_ups++;
            int rc = e->wait(e->ctx, slot);
            drv->last_finish = lode_clock_s(); /* no measurement: it may have ended long ago */
            return rc;
        }
        caught_running = true;
        sleep_s(poll);
    }
    const double t = lode_clock_s();
    drv->last_finish = t;
    /* Only full launches teach the estimate: a launch has a fixed cost too,
     * so a short one (a self-test's, a range's tail) would inflate the time
     * per index; for short ones the proportional estimate errs early,
     * which costs a few polls, never a late wake. */
    if (!full)
        return e->wait != NULL ? e->wait(e->ctx, slot) : LODE_OK;
    /* Seen running and then finished: the time is known to within a poll.
     * Finished at the first look: it took at most this long. */
    const double measured = (t - began) / (double)l->count;
    if (drv->sec_per_index <= 0)
        drv->sec_per_index = measured;
    else if (caught_running)
        drv->sec_per_index += ESTIMATE_WEIGHT * (measured - drv->sec_per_index);
    else
        drv->sec_per_index = ESTIMATE_SHRINK * (measured < drv->sec_per_index ? measured : drv->sec_per_index);
    return e->wait != NULL ? e->wait(e->ctx, slot) : LODE_OK;
}

static bool aborted(const atomic_int *abort)
{
    return abort != NULL && atomic_load_explicit(abort, memory_order_relaxed) != 0;
}

/* The pipeline of one scan. */
typedef struct pipeline {
    launch queued[LODE_LAUNCH_MAX_DEPTH];
    unsigned depth, oldest, in_flight;
    uint64_t next, end, size;
    bool stopping;
} pipeline;

/* Queues launches until depth are in flight, the range is queued, or the
 * abort flag is up. */
static int fill(lode_launch_driver *drv, const lode_launch_engine *e, pipeline *p, const atomic_int *abort)
{
    while (!p->stopping && p->in_flight < p->depth && p->next < p->end) {
        if (aborted(abort)) {
            p->stopping = true;
            break;
        }
        const unsigned slot = (p->oldest + p->in_flight) % p->depth;
        const uint64_t n = p->end - p->next < p->size ? p->end - p->next : p->size;
        int rc = e->enqueue(e->ctx, slot, p->next, n);
        if (rc != LODE_OK)
            return rc;
        p->queued[slot] = (launch){.start = p->next, .count = n, .queued_at = lode_clock_s()};
        p->next += n;
        p->in_flight++;
        drv->launches++;
    }
    return LODE_OK;
}

int lode_launch_run(lode_launch_driver *drv, const lode_launch_engine *e, uint64_t start, uint64_t count,
                    lode_hits *hits, uint64_t *done, const atomic_int *abort)
{
    *done = 0;
    pipeline p = {
        .depth = e->depth < 1 ? 1 : e->depth > LODE_LAUNCH_MAX_DEPTH ? LODE_LAUNCH_MAX_DEPTH : e->depth,
        .size = e->launch_size < 1 ? 1 : e->launch_size,
        .next = start,
        .end = start + count,
    };
    int rc = LODE_OK;
    for (;;) {
        rc = fill(drv, e, &p, abort);
        if (rc != LODE_OK || p.in_flight == 0)
            break;
        /* Wait for the oldest and collect it. */
        const unsigned slot = p.oldest;
        const launch l = p.queued[slot];
        if (e->blocking_wait) {
            rc = e->wait(e->ctx, slot);
            drv->last_finish = lode_clock_s();
        } else {
            rc = wait_polling(drv, e, slot, &l, l.count == p.size);
        }
        if (rc == LODE_OK && e->fetch != NULL)
            rc = e->fetch(e->ctx, slot);
        if (rc != LODE_OK)
            break;
        if (e->fetch != NULL) {
            /* Its results are off the slot: queue the next launch first, so
             * the device works while the host collects. */
            p.oldest = (p.oldest + 1) % p.depth;
            p.in_flight--;
            if (aborted(abort))
                p.stopping = true;
            rc = fill(drv, e, &p, abort);
            if (rc == LODE_OK)
                rc = e->collect(e->ctx, slot, l.start, l.count, hits);
        } else {
            rc = e->collect(e->ctx, slot, l.start, l.count, hits);
            p.oldest = (p.oldest + 1) % p.depth;
            p.in_flight--;
        }
        if (rc != LODE_OK)
            break;
        *done += l.count;
        if (aborted(abort))
            p.stopping = true;
    }
    if (rc != LODE_OK)
        e->drain(e->ctx);
    return rc;
}
