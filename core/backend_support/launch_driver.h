/* The launch driver of the GPU backends: one pipeline for every workload.
 *
 * A backend's scan hands the driver a range of indices and an engine (one
 * per backend and algorithm: it queues a launch over a sub-range, says when
 * a launch is done, and reads its hits). The driver owns everything between:
 *
 *   - it cuts the range into launches of at most launch_size indices and
 *     keeps up to depth of them queued, so the device never waits for the
 *     host;
 *   - it waits for the oldest launch, collects its hits and counts it done
 *     (launches finish in the order they were queued);
 *   - it looks at the abort flag before every launch it queues and after
 *     every launch it collects: on abort it queues nothing more and collects
 *     what is already in flight;
 *   - on an error (enqueue, device, a hit buffer past its capacity:
 *     LODE_ERR_HITS_OVERFLOW) it queues nothing more, drains the engine
 *     (every launch in flight is waited for and dropped) and returns the
 *     error; *done then covers the launches collected before it, so the
 *     dispatcher puts the rest back (and rescans an overflow in halves);
 *   - the waiting policy, so the host sleeps while the device works. An
 *     engine whose wait blocks without spinning (CUDA events created with
 *     cudaEventBlockingSync) sets blocking_wait and the driver just calls
 *     it. Otherwise (NVIDIA's OpenCL spins in clWaitForEvents) the driver
 *     sleeps until shortly before the launch's expected end, measured from
 *     when it really started (when the launch ahead of it was seen to
 *     finish, or when it was queued if the device was idle) with a running
 *     estimate of the time per index, then polls the engine's query with
 *     short sleeps (and blocks in its wait if the query still says running
 *     long after the expected end).
 *
 * The driver is plain C with no device API: tests/test_launch_driver.c runs
 * it on a fake engine. One driver state per device handle (the time
 * estimate carries over from scan to scan); no locks: a handle is used from
 * one thread (core/base/backend.h). */
#ifndef LODE_BACKEND_SUPPORT_LAUNCH_DRIVER_H
#define LODE_BACKEND_SUPPORT_LAUNCH_DRIVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/base/work.h"

/* The most launches an engine may keep in flight. */
#define LODE_LAUNCH_MAX_DEPTH 8u

/* What a backend supplies for one algorithm. slot (0..depth-1) names the
 * launch's place in the pipeline: the driver queues into slots in turn
 * and always waits for the oldest, so an engine with its own first-in,
 * first-out queue may ignore it. Every function returns a lode status
 * unless said otherwise. */
typedef struct lode_launch_engine {
    void *ctx;
    unsigned depth;       /* launches in flight, 1..LODE_LAUNCH_MAX_DEPTH */
    uint64_t launch_size; /* most indices of one launch, >= 1 */
    /* wait blocks without spinning: the driver calls it at once and never
     * calls query. */
    bool blocking_wait;
    /* Queues the indices [start, start + count), 1 <= count <= launch_size,
     * and starts them on the device (no host wait). */
    int (*enqueue)(void *ctx, unsigned slot, uint64_t start, uint64_t count);
    /* The oldest launch (in slot): 1 finished, 0 still running, < 0 a lode
     * status (the device failed). Needed unless blocking_wait. */
    int (*query)(void *ctx, unsigned slot);
    /* Waits until the oldest launch has finished: after query said 1 it
     * should return at once; a polling engine's wait is also the fallback
     * when query still says 0 long after the expected end. */
    int (*wait)(void *ctx, unsigned slot);
    /* Optional: copies a finished launch's results out of its slot, so
     * the driver may queue the next launch before collect (which then reads
     * only what fetch copied) and the device runs while the host works on
     * them. NULL: collect runs first, on the slot itself. */
    int (*fetch)(void *ctx, unsigned slot);
    /* Appends the hits of the finished launch over [start, start + count).
     * LODE_ERR_HITS_OVERFLOW when its hit buffer overflowed (none are
     * appended then), LODE_ERR_DEVICE when the device reported nonsense. */
    int (*collect)(void *ctx, unsigned slot, uint64_t start, uint64_t count, lode_hits *hits);
    /* Waits for every launch still queued and drops its results (after an
     * error; a launch may also be half queued). */
    void (*drain)(void *ctx);
} lode_launch_engine;

/* The driver's state for one device handle: zero it (or
 * lode_launch_driver_init) once. */
typedef struct lode_launch_driver {
    double sec_per_index;   /* running estimate, 0 until the first measurement */
    double last_finish;     /* when the last launch was seen to finish (monotonic s) */
    /* Counters, for tests and measurements. */
    uint64_t launches, polls, sleeps, give_ups;
} lode_launch_driver;

void lode_launch_driver_init(lode_launch_driver *drv);

/* Scans [start, start + count) through the engine: hits are appended to
 * hits, *done is set to the indices from start whose launches were
 * collected (all of them on LODE_OK without abort). Returns LODE_OK (also
 * after an abort), or the first error (the engine then drained). */
int lode_launch_run(lode_launch_driver *drv, const lode_launch_engine *e, uint64_t start, uint64_t count,
                    lode_hits *hits, uint64_t *done, const atomic_int *abort);


#endif
