/* The mining session: joins a job source (stratum pools, getblocktemplate)
 * to the dispatcher.
 *
 * A source runs its own threads and calls lode_mining_set_job whenever its
 * job changes; the session turns the job into 2^32-nonce headers (rolling
 * extranonce2, version bits and ntime), installs them on every device, and
 * hands each share the reference confirmed back to the source's submit
 * callback, or counts it stale if a clean job replaced its job. */
#ifndef LODE_CORE_MINING_H
#define LODE_CORE_MINING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/job.h"
#include "core/dispatch/dispatch.h"

typedef struct lode_mining lode_mining;

/* What a job source implements. Every callback may be called from any
 * thread and must return quickly (queue the work, do not block on I/O). */
typedef struct lode_job_source_ops {
    /* A share on one of the source's jobs, re-checked against the job's
     * share target. stale: a clean job has replaced the share's job, so the
     * source must only count it. The share and its job are valid only
     * during the call. */
    void (*submit)(void *source, const lode_share *share, bool stale);
} lode_job_source_ops;

typedef struct lode_mining_config {
    lode_dispatcher_config miner;           /* algo, devices, threads, variant, chunk_ms */
    const lode_job_source_ops *source_ops;
    void *source;
    /* Nonces scanned per header before rolling to the next; 0 = all 2^32.
     * Tests use fewer to exercise the rolling. */
    uint64_t nonces_per_header;
} lode_mining_config;

/* Starts the devices (the miner's callbacks are the session's own).
 * Returns NULL with a message in err if no device could start. */
lode_mining *lode_mining_start(const lode_mining_config *config, char *err, size_t err_len);
/* The underlying dispatcher (readiness, per-device stats). */
lode_dispatcher *lode_mining_miner(lode_mining *mining);
/* Installs a new job (copied): devices switch to it within milliseconds.
 * Returns 0, or -1 if the job is malformed or memory ran out (the old job
 * then goes on if it was not clean, else the devices idle).
 *
 * No header is hashed twice: once every (version, extranonce2, ntime) the
 * job allows is used, the devices idle until the next job (logged). */
int lode_mining_set_job(lode_mining *mining, const lode_job *job);
/* Stops hashing until the next job (the source lost its connection). */
void lode_mining_clear_job(lode_mining *mining);
/* A clean job the source could not turn into a lode_job: it still replaces
 * every older job, so their shares are stale from now on and the devices
 * idle until the next job. */
void lode_mining_drop_jobs(lode_mining *mining);

typedef struct lode_mining_stats {
    uint64_t shares;       /* shares handed to the source (not stale) */
    uint64_t stale;        /* shares of replaced jobs, not submitted */
    uint64_t jobs;         /* jobs installed */
    uint64_t spent;        /* jobs whose every header was mined before the next job came */
    uint64_t job_events;   /* lode_mining_set_job, _clear_job and _drop_jobs calls so far */
} lode_mining_stats;
void lode_mining_stats_get(lode_mining *mining, lode_mining_stats *out);

/* A job source gives up for good: the pool or node refused what the user
 * configured (credentials, payout address, algorithm), so retrying cannot
 * help. The first reason is kept; the program polls lode_mining_failure and
 * stops with a non-zero exit. Any thread. */
void lode_mining_fail(lode_mining *mining, const char *why);
/* True once a source called lode_mining_fail; copies its reason to why. */
bool lode_mining_failure(lode_mining *mining, char *why, size_t why_len);

/* Stops the devices and frees the session. Call after the source stopped. */
void lode_mining_free(lode_mining *mining);

#endif
