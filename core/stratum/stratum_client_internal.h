/* The stratum client's private types, shared by stratum_client.c (the
 * client, the submit queue, the I/O thread's pools and failover) and
 * stratum_session.c (one connection's requests, replies and notifications). */
#ifndef LODE_STRATUM_CLIENT_INTERNAL_H
#define LODE_STRATUM_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/stratum/pool_events.h"
#include "core/stratum/stratum_client.h"
#include "core/stratum/stratum_conn.h"
#include "core/stratum/stratum_msg.h"

#define SUBMIT_QUEUE_MAX 256     /* shares waiting for the I/O thread */
/* Submits sent and not yet answered. More wait in the queue (and beyond it
 * are not sent): replies are never dropped unread, so lode's counts agree
 * with the pool's however fast shares come. 256 submit lines fit the socket
 * buffers, so a write never waits on a pool that waits on lode to read. */
#define SUBMITS_IN_FLIGHT_MAX 256
#define PENDING_MAX (SUBMITS_IN_FLIGHT_MAX + 16) /* requests awaiting a reply */
#define FLOOD_WARN_S 30.0
/* Job ids whose shares may still be sent: those since the last clean job
 * (the session keeps 8 jobs; older shares are stale anyway). */
#define LIVE_JOBS_MAX 16        /* at most one "shares not sent" warning this often */
#define WRITE_TIMEOUT_S 10.0
#define PROBE_TIMEOUT_S 5.0
#define DRAIN_TIMEOUT_S 5.0      /* leaving a working pool: wait this long for submit answers */

typedef struct queued_share {
    char job_id[LODE_JOB_ID_MAX];
    uint8_t extranonce2[LODE_EXTRANONCE_MAX];
    size_t extranonce2_len;
    uint32_t ntime, nonce, version, version_mask;
    uint64_t generation;
    double pool_difficulty;
} queued_share;

typedef struct pool_state {
    char *url_text, *user, *pass, *cert_pin;
    lode_stratum_url url;
    lode_pool_stats stats;   /* under the source's lock */
    char session_id[LODE_JOB_ID_MAX]; /* I/O thread: the subscription to resume */
    unsigned auth_refusals;  /* I/O thread: mining.authorize refused this many times running */
} pool_state;

struct lode_stratum {
    lode_stratum_config config;
    char *agent;
    pool_state *pools;
    size_t pool_count;
    lode_wake wake;
    atomic_bool stop;
    atomic_bool next_pool;  /* lode_stratum_next_pool asked to move on */
    pthread_t thread;
    bool running;
    lode_mining *mining;

    pthread_mutex_t lock;   /* guards everything below, and pool stats */
    uint64_t generation;    /* the current connection's number */
    bool accepting;         /* a job of this generation is installed */
    size_t current_pool;
    queued_share queue[SUBMIT_QUEUE_MAX];
    size_t queue_len;
    /* A share waits in the queue and in flight; by the time it is sent its
     * job may have been replaced by a clean job: then it is stale. */
    char live_jobs[LIVE_JOBS_MAX][LODE_JOB_ID_MAX];
    size_t live_jobs_len;
};

typedef enum request_kind { REQ_CONFIGURE, REQ_SUBSCRIBE, REQ_EXTRANONCE, REQ_AUTHORIZE, REQ_SUGGEST, REQ_SUBMIT } request_kind;

typedef struct pending_request {
    int64_t id;
    request_kind kind;
    double sent_at;
    double pool_difficulty; /* submits: for the log */
    char job_id[LODE_JOB_ID_MAX]; /* submits: for the log */
} pending_request;

typedef enum session_end { END_GOOD, END_FAILED, END_REDIRECT, END_PRIMARY_BACK, END_NEXT_POOL, END_STOP } session_end;

/* One connection's state; only the I/O thread touches it. */
typedef struct session {
    lode_stratum *s;
    size_t pool;
    lode_stratum_url url;
    lode_stratum_conn *conn;
    uint64_t generation;
    int64_t next_id;
    pending_request pending[PENDING_MAX];
    size_t pending_len;
    size_t submits_in_flight;
    double last_submit_answer;  /* session start until the first answer */
    bool resuming, subscribed, authorized, got_job, job_installed;
    bool auth_refused;          /* the pool refused mining.authorize */
    bool accepted_any;          /* a share was accepted on this connection */
    uint64_t unsent_warned;     /* the pool's unsent count at the last flood warning */
    double flood_warned_at;
    lode_stratum_session job_state;
    double next_difficulty;
    bool extranonce_changed;
    uint8_t next_extranonce1[LODE_EXTRANONCE_MAX];
    size_t next_extranonce1_len, next_extranonce2_size;
    lode_stratum_msg held;      /* the last notify (kept to install after authorize or re-install) */
    bool have_held, held_installed;
    uint8_t last_prevhash[32];
    bool have_prevhash;
    double last_progress, last_probe;
    lode_stratum_url redirect;
    double redirect_wait;
    bool chosen;                /* the user chose this pool: no probing for the primary */
    bool stalled;               /* ended as stalled: counts as a failure for failover */
    lode_pool_events events;    /* rate limits of what the pool may repeat */
} session;

/* One connection's side (stratum_session.c). */

/* The client is being stopped. */
bool stratum_stopping(const lode_stratum *s);
/* Sends a request and keeps it pending until its reply. */
int stratum_send_request(session *ss, request_kind kind, char *line, int64_t id, double diff, const char *job_id);
/* mining.subscribe, resuming session_id if not NULL. */
int stratum_send_subscribe(session *ss, const char *session_id);
/* One message from the pool: a reply or a notification. */
int stratum_handle_message(session *ss, lode_stratum_msg *msg, session_end *end);
/* Sends what waits in the submit queue, within the in-flight limit. */
int stratum_send_queued_shares(session *ss);
/* Counts and warns of submits unanswered past the stall timeout. */
int stratum_check_unanswered(session *ss, const char *where);
/* One session on pool at url, from connect to its end; how it ended. */
session_end stratum_run_session(lode_stratum *s, size_t pool, const lode_stratum_url *url, session *ss);
/* After stratum_run_session: counts what the session left unsent or
 * unanswered, takes its job back and closes the connection. */
void stratum_end_session(lode_stratum *s, session *ss, size_t pool);

/* The I/O thread (stratum_failover.c): sessions one after another, the
 * pool chosen by failover, redirects and the backoff between them. */
void *stratum_io_thread(void *arg);

#endif
