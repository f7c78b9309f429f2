/* The dispatcher: runs one worker thread per device worker, hands out the
 * job's index space in chunks (backends never split it themselves), switches
 * every worker to a new job within milliseconds, and re-checks every hit
 * with the reference before anyone sees it. */
#ifndef LODE_CORE_DISPATCH_H
#define LODE_CORE_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/device_state.h"
#include "core/base/energy.h"
#include "core/dispatch/registry.h"

typedef struct lode_dispatcher lode_dispatcher;

/* How long a stop waits for the work in flight: a device call (scan,
 * self-test) that has not returned this long after the stop is abandoned
 * and its device named, rather than waited for; trial factoring keeps a
 * class only if it completes within it. */
#define LODE_STOP_GRACE_MS 2000

/* A hit that the reference confirmed. */
typedef struct lode_found {
    const lode_work *work; /* the job the hit is of (its seq and source_tag); valid during the call */
    size_t device; /* index into the configured device list */
    lode_hit hit;
    uint8_t hash[32]; /* reference PoW hash, internal byte order */
} lode_found;

typedef struct lode_dispatcher_callbacks {
    void *user;
    /* A confirmed hit (called from a worker thread; keep it short). */
    void (*found)(void *user, const lode_found *found);
    /* Every index of job job_seq has been scanned. A job source installs
     * the next job here (lode_dispatcher_set_job may be called from it). */
    void (*exhausted)(void *user, uint64_t job_seq);
    /* Whether hits of job work still matter, asked before each re-check
     * (NULL: always). Unwanted hits are dropped unchecked, so a replaced
     * job's hits cost no reference hashing (at a regtest target every other
     * scrypt hash is a hit) and a stopping miner does not drain a backlog. */
    bool (*wanted)(void *user, const lode_work *work);
} lode_dispatcher_callbacks;

typedef struct lode_dispatcher_config {
    lode_algo algo;
    const lode_device_ref *devices; /* copied */
    size_t device_count;
    unsigned threads;      /* workers per CPU-like device; 0 = the device's default */
    const char *variant;   /* force an implementation variant; NULL = best */
    double chunk_ms;       /* target length of one scan call; 0 = 200 ms */
    lode_dispatcher_callbacks callbacks;

    /* Device health (docs/OPERATIONS.md, "Device health"); zeros are the
     * defaults. */
    const double *max_temp_c;  /* per device (device_count entries, copied); NULL or
                                  <= 0: no thermal limit */
    double temp_hysteresis_c;  /* a device paused above its limit resumes below the
                                  limit minus this; 0 = 5 C */
    double hang_timeout_s;     /* a scan is hung once it has run this long and 10
                                  times its expected length; 0 = 60 s, < 0 = no watchdog */
    int max_restarts;          /* restarts of a device within an hour before it is
                                  quarantined; 0 = 5, < 0 = none (the first fault
                                  quarantines it) */
    double backoff_s;          /* pause before the first reopen, doubled for each
                                  further restart within the hour, at most 60 s; 0 = 1 s */
    double monitor_interval_s; /* sensor polling and watchdog period; 0 = 1 s */
} lode_dispatcher_config;


typedef struct lode_device_stats {
    uint64_t hashes;         /* indices scanned */
    uint64_t hits;           /* hits confirmed by the reference */
    /* Nonce scans only (0 for Momentum and trial factoring): the hits the
     * scanned indices should give on average (each scan's count times the
     * chance a hash meets its job's target), and the hits dropped unchecked
     * because their job had ended (a clean job replaced it): hits +
     * hits_dropped against hits_expected tells whether the hashes counted
     * were all searched, hits alone what of them a pool could credit. */
    double hits_expected;
    uint64_t hits_dropped;
    uint64_t hw_errors;      /* hits the reference rejected */
    unsigned workers_ready;  /* workers that passed their self-test and take work */
    unsigned workers_failed; /* workers refused, given up or abandoned */
    unsigned scans_out;      /* scans in flight whose hashes `hashes` will count (not hung ones) */
    lode_device_state state;
    unsigned restarts;       /* reopens after a device error or a hung scan */
    char last_error[160];    /* the last fault, or why it is paused or quarantined; "" = none */
    lode_sensors sensors;    /* the last reading (about once a second); present = 0: none */
    double max_temp_c;       /* its thermal limit; 0 = none */
    /* Its energy from the first reading at which it had counted work on,
     * and the work of the same span (core/base/energy.h). */
    lode_energy_reading energy;
} lode_device_stats;

/* Starts the workers; each opens its device and self-tests before taking
 * work, and a monitor thread that reads the sensors, applies the thermal
 * limits and watches for hung scans. A worker whose device fails (an error
 * of set_work or scan, or a scan the watchdog finds hung) closes its handle
 * and reopens it, self-test included, after a backoff; a device that needs
 * too many restarts, whose hung scan never returns, or whose hits keep
 * failing the CPU re-check is quarantined and the others go on. Every
 * change of a device's state is logged once. Returns NULL with a message in
 * err if nothing could be started.
 * Tests only: with LODE_TEST_FAIL_SCANS_AFTER=N in the environment, every
 * worker fails with a device error in place of its scan N+1 and every one
 * after (a device lost at run time: restarts, then quarantine), so the
 * every-device-failed paths can be tested. */
lode_dispatcher *lode_dispatcher_start(const lode_dispatcher_config *config, char *err, size_t err_len);
/* Waits until every worker has passed or failed its self-test (timeout_ms
 * < 0: for as long as that takes); returns how many passed, or -1 if the
 * timeout came first. */
int lode_dispatcher_wait_ready(lode_dispatcher *m, int timeout_ms);
/* Installs a job over indices [begin, end) and aborts the current scans.
 * Returns the job's sequence number (also written to the work's seq). */
uint64_t lode_dispatcher_set_job(lode_dispatcher *m, const lode_work *work, uint64_t begin, uint64_t end);
/* Waits up to timeout_ms for job seq to be fully scanned. Returns 1 when
 * it is, 0 on timeout, -1 if it never will be (a newer job replaced it, the
 * miner stopped, or every worker failed). */
int lode_dispatcher_wait_job(lode_dispatcher *m, uint64_t seq, int timeout_ms);
void lode_dispatcher_device_stats(lode_dispatcher *m, size_t device, lode_device_stats *out);
/* Pauses (true) or resumes a device: a paused device's workers finish
 * nothing more of their current scans (the rest goes back to the others)
 * and take no work until resumed. Returns -1 for an unknown device. */
int lode_dispatcher_set_paused(lode_dispatcher *m, size_t device, bool paused);
/* Devices that are mining or may again: neither failed nor quarantined
 * (0: nothing is left to mine). */
size_t lode_dispatcher_devices_left(lode_dispatcher *m);
/* How many workers have job seq installed and are scanning it. */
unsigned lode_dispatcher_workers_on_job(lode_dispatcher *m, uint64_t seq);
size_t lode_dispatcher_device_count(const lode_dispatcher *m);
const lode_device_ref *lode_dispatcher_device(const lode_dispatcher *m, size_t device);
/* Asks every worker to stop (async-signal-unsafe; call from a normal thread). */
void lode_dispatcher_request_stop(lode_dispatcher *m);
/* Waits up to timeout_ms until no scan whose hashes will count is in flight
 * and no hit waits for its re-check. After lode_dispatcher_request_stop the
 * scans return aborted, with what they hashed, so a summary taken then
 * counts every hash and hit of the run; without a stop the answer holds
 * only once no scan can be claimed (the job withdrawn or spent). Returns 1
 * when none is pending, 0 on timeout (a scan stuck in a device call). */
int lode_dispatcher_wait_scans_counted(lode_dispatcher *m, int timeout_ms);
/* Waits up to timeout_ms until no hit waits for its re-check in the
 * verifier's queue. Re-checks run on the CPU and always end, so a summary
 * may wait for them longer than for a device. Returns 1 when none waits. */
int lode_dispatcher_wait_verified(lode_dispatcher *m, int timeout_ms);
/* Stops, joins and frees. A worker still in a device call
 * LODE_STOP_GRACE_MS after the stop was asked is abandoned: named in a log
 * line, left behind (core/base/stuck_threads.h) with the dispatcher's
 * memory, which the last such worker frees if it ever returns. */
void lode_dispatcher_free(lode_dispatcher *m);

#endif
