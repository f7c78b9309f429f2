/* The stratum v1 job source: keeps one pool connection alive (failover in
 * priority order, exponential backoff, redirects, stall detection), turns
 * mining.notify into lode_jobs for the mining session, and submits shares.
 *
 * Life cycle:
 *   lode_stratum_config c; lode_stratum_config_defaults(&c); c.pools = ...;
 *   lode_stratum *s = lode_stratum_create(&c, err, sizeof err);
 *   mining config: .source_ops = &lode_stratum_source_ops, .source = s
 *   lode_mining *m = lode_mining_start(...);
 *   lode_stratum_start(s, m);   ...   lode_stratum_stop(s);
 *   lode_mining_free(m); lode_stratum_free(s);
 *
 * Threads: one I/O thread per source. The submit callback only queues the
 * share and wakes that thread. The source never calls the mining session
 * while holding its own lock, so the session may call submit under its lock.
 *
 * Jobs carry generation = the connection count (a share of an older
 * connection is stale), version_mask = the mask the pool granted through
 * mining.configure or mining.set_version_mask (0 unless sha256d with
 * version_rolling), and ntime_roll_max = LODE_STRATUM_NTIME_ROLL_MAX. */
#ifndef LODE_STRATUM_CLIENT_H
#define LODE_STRATUM_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/algo.h"
#include "core/mining/mining.h"

/* How far ntime may follow the clock past the job's ntime: pools accept
 * a few minutes (most allow far more; 300 s stays well inside the usual
 * window and inside the 2-hour future limit of the block rules). */
#define LODE_STRATUM_NTIME_ROLL_MAX 300

typedef struct lode_pool_config {
    const char *url;       /* a pool URL as lode_stratum_url_parse takes it (credentials allowed) */
    const char *user;      /* worker name; NULL = the URL's, or "" */
    const char *pass;      /* NULL = the URL's, or "x" */
    const char *cert_pin;  /* TLS only: sha256 of the leaf certificate, 64 hex (colons allowed); NULL = verify */
} lode_pool_config;

typedef struct lode_stratum_config {
    lode_algo algo;
    const lode_pool_config *pools; /* priority order: pools[0] is the primary */
    size_t pool_count;
    const char *agent;             /* sent in subscribe and get_version; NULL = "lode/<version>" */
    bool version_rolling;          /* BIP 310 mining.configure (sha256d only) */
    double suggest_difficulty;     /* > 0: send mining.suggest_difficulty */
    bool extranonce_subscribe;     /* send mining.extranonce.subscribe */
    bool follow_redirect;          /* honour client.reconnect to the same host (same scheme and credentials) */
    bool allow_redirect_host;      /* ... and to another host too (the pool's credentials go there) */
    unsigned failover_after;       /* failed attempts on a pool before the next; 0 = 3. Once every
                                    * pool refused mining.authorize this many times running, the
                                    * source gives up (lode_mining_fail). */
    double retry_base_s;           /* backoff: base * 2^attempt, jittered down by up to half; 0 = 1 */
    double retry_max_s;            /* backoff cap; 0 = 60 */
    double stall_timeout_s;        /* no job and no submit answer this long, or submits sent and
                                    * none answered this long -> reconnect, counted as a failed
                                    * attempt (failover_after) even if jobs came; 0 = 120 */
    double primary_check_s;        /* on a backup pool, probe pools[0] this often; 0 = 60 */
    double connect_timeout_s;      /* TCP connect (or the proxy's) + TLS handshake; 0 = 15 */
    const char *proxy;             /* socks5[h]://, socks4[a]:// or http:// (CONNECT) proxy for every pool,
                                    * "user:pass@" allowed; NULL = connect directly */
} lode_stratum_config;

/* All the defaults: version rolling, extranonce.subscribe and redirects to
 * the same host on (other hosts off),
 * the numeric defaults above. pools and algo are left to the caller. */
void lode_stratum_config_defaults(lode_stratum_config *config);

typedef struct lode_pool_stats {
    uint64_t accepted, rejected, stale; /* the pool's answers; stale: code 21, job not found */
    uint64_t dropped;       /* not sent: the share's job had ended (a clean job replaced it) */
    uint64_t unsent;        /* shares never sent: they came faster than the pool answers, or were
                             * still queued when the connection ended or the source stopped */
    uint64_t unanswered;    /* submits sent that the pool never answered (connection ended, or
                             * given up after the stall timeout) */
    char last_reject[128];  /* the pool's reason for the last rejected share */
    bool connected;         /* connected and subscribed right now */
    double difficulty;      /* pool difficulty of the current job (0 before the first) */
    uint64_t connects;      /* successful connections (TCP/TLS up) */
    uint64_t bad_lines;     /* lines skipped as malformed, over-long lines included */
} lode_pool_stats;

typedef struct lode_stratum lode_stratum;

/* Validates the configuration (URLs, pins, algo, at least one pool) and
 * copies it. Returns NULL with a reason in err. */
lode_stratum *lode_stratum_create(const lode_stratum_config *config, char *err, size_t err_len);
/* The mining session's view of the source; its `source` is the lode_stratum*. */
extern const lode_job_source_ops lode_stratum_source_ops;
/* Starts the I/O thread, which feeds mining. Returns 0, or -1 if the thread
 * could not start or the source already runs. */
int lode_stratum_start(lode_stratum *s, lode_mining *mining);
/* Stops promptly (the wake pipe interrupts any wait) and joins the thread;
 * the current job is cleared from the session. Safe to call twice. */
void lode_stratum_stop(lode_stratum *s);
size_t lode_stratum_pool_count(const lode_stratum *s);
/* A snapshot of one pool's counters (zeroes for an index out of range). */
void lode_stratum_pool_stats(lode_stratum *s, size_t pool, lode_pool_stats *out);
/* The pool the source mines on, or is connecting to. */
size_t lode_stratum_current_pool(lode_stratum *s);
/* Asks the I/O thread to leave the current pool for the next one in the
 * list (after the last, the first), as a user would: the answers to shares
 * in flight are waited for briefly, and the primary pool is not probed to
 * switch back while the chosen pool works. -1 with one pool, or when the
 * source does not run. */
int lode_stratum_next_pool(lode_stratum *s);
/* Stops if needed and frees. */
void lode_stratum_free(lode_stratum *s);

#endif
