/* The dispatcher's private state, shared by its files: dispatch.c (the
 * workers, the monitor, the verifier, jobs) and dispatch_stop.c (the
 * stop: waiting for the work in flight, abandoning what does not return,
 * freeing). Nothing outside core/dispatch includes it. */
#ifndef LODE_CORE_DISPATCH_INTERNAL_H
#define LODE_CORE_DISPATCH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/dispatch/dispatch.h"

typedef struct index_span {
    uint64_t start, count;
} index_span;

/* What one worker is doing (under the miner lock). */
typedef enum worker_state {
    WORKER_STARTING,   /* opening and self-testing its handle */
    WORKER_READY,      /* takes work */
    WORKER_RESTARTING, /* closed after a fault; waiting out its backoff, reopening */
    WORKER_HUNG,       /* its scan overran the watchdog: its range went to the others */
    WORKER_FAILED,     /* refused at start, or done for (quarantine, stop) */
    WORKER_ABANDONED,  /* hung for good: its thread is left behind */
} worker_state;

typedef struct device_counters {
    atomic_uint_fast64_t hashes, hits, hw_errors, hits_dropped;
    size_t first_worker;    /* its workers are workers[first_worker ..] */
    unsigned workers;       /* workers of the device */
    /* The rest under the miner lock. */
    lode_device_state state; /* as last logged (log_state_change) */
    bool paused;            /* by the user */
    bool thermal;           /* above its temperature limit */
    bool quarantined;
    bool no_sensor_warned;  /* a limit but no temperature sensor: said once */
    double max_temp_c;      /* 0 = no limit */
    unsigned restarts;      /* every restart so far */
    unsigned window_restarts; /* restarts since window_start */
    double window_start;
    uint32_t recent_hits;   /* outcomes of its last 32 checked hits: bit set = rejected */
    unsigned checked_hits;  /* how many of those bits mean something (at most 32) */
    char last_error[160];
    lode_sensors sensors;
    lode_energy_meter energy; /* from its first reading with work counted */
    double hits_expected;   /* nonce scans: the sum of each scan's count x its target's chance */
} device_counters;

typedef struct worker {
    lode_dispatcher *miner;
    size_t device;
    unsigned slot;
    pthread_t thread;
    atomic_int abort; /* set when the job changes, the device pauses or the miner stops */
    atomic_uint_fast64_t on_job; /* sequence number of the job installed on the device */
    /* Under the miner lock. */
    worker_state state;
    bool exited, joined;
    bool left_behind;      /* still in a device call when lode_dispatcher_free gave up on it */
    bool busy;             /* in set_work or scan of `range` of job busy_seq */
    bool scan_out;         /* claimed a range whose hashes are not counted yet (busy, then counting) */
    lode_range range;
    uint64_t busy_seq;
    double busy_since, hang_limit_s; /* hang_limit_s = 0: not watched */
    double backoff_s;      /* set by the watchdog with a hang: the restart's backoff (-1: none) */
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
    double stop_at;          /* when the stop was first asked (lode_clock_s) */
    atomic_int stop_flag;    /* set with stopping: a self-test in progress polls it */
    unsigned left_behind;    /* workers abandoned at the stop and still out */
    bool orphaned;           /* lode_dispatcher_free returned: the last of them frees it */
    unsigned settled, alive; /* workers past their first self-test; workers neither failed
                                nor abandoned */

    /* The current job and the part of its index space not yet handed out. */
    bool has_job;
    lode_work job;
    uint64_t begin, next, end;
    uint64_t unscanned; /* indices of the job not yet reported scanned */
    index_span *returned; /* spans given back by aborted or failed scans */
    size_t returned_count, returned_capacity;

    pthread_t verifier;
    bool verifier_started, verifier_stopping;
    pthread_cond_t verify_ready;
    verify_item *verify_head, *verify_tail;
    size_t verify_pending; /* queued or being checked */
    unsigned counts_waiters; /* in lode_dispatcher_wait_scans_counted: a scan's return wakes them */

    pthread_t monitor; /* sensors, thermal limits, watchdog */
    bool monitor_started, monitor_stopping;
    pthread_cond_t monitor_wake;

    long fail_after; /* LODE_TEST_FAIL_SCANS_AFTER; -1 = off */
};

/* A hung scan that has not returned after ABANDON_FACTOR times its limit
 * is given up. */
#define ABANDON_FACTOR 3.0

/* The device state machine (dispatch_state.c; the lock held). */
bool dispatch_worker_live(worker_state s);
/* Recomputes a device's state after one of its inputs changed (why). */
void dispatch_refresh_state(lode_dispatcher *m, size_t device, const char *why);
void dispatch_set_worker(lode_dispatcher *m, worker *w, worker_state s, const char *why);
/* Keeps the last fault (cut to fit) for the stats. */
void dispatch_note_error(device_counters *c, const char *why);
/* Aborts the scans of a device's workers; their indices go to the others. */
void dispatch_abort_device(lode_dispatcher *m, size_t device);
/* Gives a device up: its workers close their handles and end. */
void dispatch_quarantine(lode_dispatcher *m, size_t device, const char *why);
/* Counts a restart; the backoff before the reopen, or -1 once quarantined. */
double dispatch_count_restart(lode_dispatcher *m, size_t device, const char *why);
/* Not paused (by the user or its temperature) nor quarantined. */
bool dispatch_takes_work(const device_counters *c);
/* The monitor thread: sensors, thermal limits, the scan watchdog. */
void *dispatch_monitor_main(void *arg);
/* Returns a range of the current job to the unscanned pool (lock held). */
void dispatch_give_back(lode_dispatcher *m, uint64_t start, uint64_t count);

/* The CPU re-check of hits (dispatch_hits.c). */
void dispatch_confirm_hits(lode_dispatcher *m, size_t device, const lode_work *work, const lode_range *scanned,
                           lode_hits *hits);
/* Queues a scan's hits for the verifier thread; false if its backlog is full. */
bool dispatch_verify_later(lode_dispatcher *m, size_t device, const lode_work *work, const lode_range *scanned,
                           lode_hits *hits);
void *dispatch_verifier_main(void *arg);

/* The monotonic deadline timeout_ms from now. */
struct timespec dispatch_deadline_in(int timeout_ms);
/* The public waits' one sleep (miner lock held): false once the deadline passed. */
bool dispatch_wait_state_changed(lode_dispatcher *m, const struct timespec *deadline);
/* Frees the dispatcher's memory (every thread joined or gone). */
void dispatch_destroy(lode_dispatcher *m);

/* A scan out whose hashes will be counted: a hung or abandoned worker's
 * counts nothing when (if ever) it returns, its range went to the others. */
static inline bool scan_to_count(const worker *w)
{
    return w->scan_out && w->state != WORKER_HUNG && w->state != WORKER_ABANDONED;
}

#endif
