#include "core/stratum/stratum_client.h"

#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/target.h"
#include "core/stratum/pool_events.h"
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

static char *dup_or(const char *s, const char *fallback)
{
    const char *src = s != NULL ? s : fallback;
    return src != NULL ? strdup(src) : NULL;
}

void lode_stratum_config_defaults(lode_stratum_config *c)
{
    memset(c, 0, sizeof *c);
    c->version_rolling = true;
    c->extranonce_subscribe = true;
    c->follow_redirect = true;
    c->allow_redirect_host = false;
    c->failover_after = 3;
    c->retry_base_s = 1;
    c->retry_max_s = 60;
    c->stall_timeout_s = 120;
    c->primary_check_s = 60;
    c->connect_timeout_s = 15;
}

static void fill_defaults(lode_stratum_config *c)
{
    if (c->failover_after == 0)
        c->failover_after = 3;
    if (!(c->retry_base_s > 0))
        c->retry_base_s = 1;
    if (!(c->retry_max_s > 0))
        c->retry_max_s = 60;
    if (c->retry_max_s < c->retry_base_s)
        c->retry_max_s = c->retry_base_s;
    if (!(c->stall_timeout_s > 0))
        c->stall_timeout_s = 120;
    if (!(c->primary_check_s > 0))
        c->primary_check_s = 60;
    if (!(c->connect_timeout_s > 0))
        c->connect_timeout_s = 15;
}

lode_stratum *lode_stratum_create(const lode_stratum_config *config, char *err, size_t err_len)
{
    if (config == NULL || config->pools == NULL || config->pool_count == 0) {
        snprintf(err, err_len, "no pool configured");
        return NULL;
    }
    if (config->algo >= LODE_ALGO_COUNT || lode_algo_get(config->algo)->kind != LODE_WORK_NONCE_SCAN) {
        snprintf(err, err_len, "stratum mining needs a nonce-scan algorithm (sha256d, scrypt)");
        return NULL;
    }
    if (config->suggest_difficulty < 0 || !isfinite(config->suggest_difficulty)) {
        snprintf(err, err_len, "suggested difficulty must be a finite number >= 0");
        return NULL;
    }
    lode_stratum *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    s->config = *config;
    fill_defaults(&s->config);
    s->config.pools = NULL;
    s->wake.fds[0] = s->wake.fds[1] = -1;
    pthread_mutex_init(&s->lock, NULL);
    atomic_init(&s->stop, false);
    atomic_init(&s->next_pool, false);
    s->agent = dup_or(config->agent, "lode/0.1.0");
    s->config.proxy = NULL;
    if (config->proxy != NULL && config->proxy[0] != '\0') {
        if (lode_stratum_proxy_check(config->proxy, err, err_len) != 0) {
            lode_stratum_free(s);
            return NULL;
        }
        s->config.proxy = strdup(config->proxy);
    }
    s->pools = calloc(config->pool_count, sizeof *s->pools);
    s->pool_count = config->pool_count;
    if (s->agent == NULL || s->pools == NULL || (config->proxy != NULL && config->proxy[0] != '\0' && s->config.proxy == NULL)) {
        snprintf(err, err_len, "out of memory");
        lode_stratum_free(s);
        return NULL;
    }
    for (size_t i = 0; i < config->pool_count; i++) {
        const lode_pool_config *pc = &config->pools[i];
        pool_state *p = &s->pools[i];
        char why[200];
        if (lode_stratum_url_parse(pc->url, &p->url, why, sizeof why) != 0) {
            snprintf(err, err_len, "pool %zu: %s", i + 1, why);
            lode_stratum_free(s);
            return NULL;
        }
        bool pinned = pc->cert_pin != NULL && pc->cert_pin[0] != '\0';
        uint8_t pin[32];
        if (pinned && !p->url.tls) {
            snprintf(err, err_len, "pool %zu: a certificate pin needs a stratum+ssl:// URL", i + 1);
            lode_stratum_free(s);
            return NULL;
        }
        if (pinned && lode_stratum_pin_parse(pc->cert_pin, pin) != 0) {
            snprintf(err, err_len, "pool %zu: certificate pin must be 64 hex digits (sha256), colons allowed", i + 1);
            lode_stratum_free(s);
            return NULL;
        }
        /* What is logged: the URL without any credentials in it. */
        char shown[LODE_STRATUM_HOST_MAX + 32];
        lode_stratum_url_format(&p->url, shown, sizeof shown);
        p->url_text = strdup(shown);
        p->user = dup_or(pc->user, p->url.has_user ? p->url.user : "");
        p->pass = dup_or(pc->pass, p->url.has_pass ? p->url.pass : "x");
        p->cert_pin = pinned ? strdup(pc->cert_pin) : NULL;
        if (p->url_text == NULL || p->user == NULL || p->pass == NULL || (pinned && p->cert_pin == NULL)) {
            snprintf(err, err_len, "out of memory");
            lode_stratum_free(s);
            return NULL;
        }
    }
    if (lode_wake_init(&s->wake) != 0) {
        snprintf(err, err_len, "cannot create the wake-up pipe");
        lode_stratum_free(s);
        return NULL;
    }
    return s;
}

size_t lode_stratum_pool_count(const lode_stratum *s)
{
    return s->pool_count;
}

void lode_stratum_pool_stats(lode_stratum *s, size_t pool, lode_pool_stats *out)
{
    memset(out, 0, sizeof *out);
    if (pool >= s->pool_count)
        return;
    pthread_mutex_lock(&s->lock);
    *out = s->pools[pool].stats;
    pthread_mutex_unlock(&s->lock);
}

/* ---- the submit callback (any thread, must not block) ---- */

static void source_submit(void *source, const lode_share *share, bool stale)
{
    lode_stratum *s = source;
    const lode_job *job = share->job;
    pthread_mutex_lock(&s->lock);
    pool_state *p = &s->pools[s->current_pool];
    if (atomic_load(&s->stop)) {
        p->stats.unsent++; /* found while the source stops: never sent */
    } else if (stale || job == NULL || !s->accepting || job->generation != s->generation) {
        p->stats.dropped++;
    } else if (s->queue_len == SUBMIT_QUEUE_MAX) {
        p->stats.unsent++; /* the pool never sees it: neither accepted nor rejected */
    } else {
        queued_share *q = &s->queue[s->queue_len++];
        memcpy(q->job_id, job->id, sizeof q->job_id);
        q->job_id[LODE_JOB_ID_MAX - 1] = '\0';
        size_t en2_len = job->extranonce2_len <= LODE_EXTRANONCE_MAX ? job->extranonce2_len : LODE_EXTRANONCE_MAX;
        memcpy(q->extranonce2, share->extranonce2, en2_len);
        q->extranonce2_len = en2_len;
        q->ntime = share->ntime;
        q->nonce = share->nonce;
        q->version = share->version;
        q->version_mask = job->version_mask;
        q->generation = job->generation;
        q->pool_difficulty = lode_target_to_difficulty(&job->share_target, job->algo);
    }
    pthread_mutex_unlock(&s->lock);
    lode_wake_signal(&s->wake);
}

const lode_job_source_ops lode_stratum_source_ops = {.submit = source_submit};

/* ---- the I/O thread ---- */

static bool stopping(const lode_stratum *s)
{
    return atomic_load(&s->stop);
}

static pool_state *session_pool(session *ss)
{
    return &ss->s->pools[ss->pool];
}

static int send_line(session *ss, char *line)
{
    if (line == NULL) {
        lode_log(LODE_LOG_ERROR, "stratum: out of memory building a request");
        return -1;
    }
    char err[256];
    int rc = lode_stratum_conn_write(ss->conn, line, strlen(line), WRITE_TIMEOUT_S, err, sizeof err);
    free(line);
    if (rc != 0 && !stopping(ss->s))
        lode_log(LODE_LOG_WARN, "stratum: %s: %s", session_pool(ss)->url_text, err);
    return rc;
}

/* Sends a request and remembers its id. */
static int send_request(session *ss, request_kind kind, char *line, int64_t id, double diff, const char *job_id)
{
    /* Submits stop at SUBMITS_IN_FLIGHT_MAX, so only a pool that ignores
     * lode's other requests fills this: forget the oldest of those. */
    for (size_t i = 0; ss->pending_len == PENDING_MAX && i < ss->pending_len; i++) {
        if (ss->pending[i].kind != REQ_SUBMIT) {
            memmove(ss->pending + i, ss->pending + i + 1, (ss->pending_len - i - 1) * sizeof ss->pending[0]);
            ss->pending_len--;
        }
    }
    if (ss->pending_len == PENDING_MAX) {
        free(line);
        lode_log(LODE_LOG_WARN, "stratum: too many requests unanswered");
        return -1;
    }
    pending_request *req = &ss->pending[ss->pending_len++];
    *req = (pending_request){.id = id, .kind = kind, .sent_at = lode_clock_s(), .pool_difficulty = diff};
    snprintf(req->job_id, sizeof req->job_id, "%s", job_id ? job_id : "");
    if (kind == REQ_SUBMIT)
        ss->submits_in_flight++;
    return send_line(ss, line);
}

static int send_subscribe(session *ss, const char *session_id)
{
    int64_t id = ss->next_id++;
    ss->resuming = session_id != NULL && session_id[0] != '\0';
    return send_request(ss, REQ_SUBSCRIBE, lode_stratum_build_subscribe(id, ss->s->agent, session_id), id, 0, NULL);
}

static bool take_pending(session *ss, int64_t id, pending_request *out)
{
    for (size_t i = 0; i < ss->pending_len; i++) {
        if (ss->pending[i].id == id) {
            *out = ss->pending[i];
            memmove(ss->pending + i, ss->pending + i + 1, (ss->pending_len - i - 1) * sizeof ss->pending[0]);
            ss->pending_len--;
            if (out->kind == REQ_SUBMIT)
                ss->submits_in_flight--;
            return true;
        }
    }
    return false;
}

static bool job_is_live(const lode_stratum *s, const char *job_id)
{
    for (size_t i = 0; i < s->live_jobs_len; i++)
        if (strcmp(s->live_jobs[i], job_id) == 0)
            return true;
    return false;
}

/* job: the job being installed (clean: it ends the others), or NULL for a
 * clean job that cannot be mined (no job is live). */
static void set_accepting(session *ss, bool accepting, const lode_job *job)
{
    lode_stratum *s = ss->s;
    pthread_mutex_lock(&s->lock);
    s->accepting = accepting && s->generation == ss->generation;
    if (accepting)
        session_pool(ss)->stats.difficulty = ss->job_state.difficulty;
    if (job == NULL || job->clean)
        s->live_jobs_len = 0;
    if (job != NULL) {
        if (s->live_jobs_len == LIVE_JOBS_MAX) {
            memmove(s->live_jobs, s->live_jobs + 1, (LIVE_JOBS_MAX - 1) * sizeof s->live_jobs[0]);
            s->live_jobs_len--;
        }
        memcpy(s->live_jobs[s->live_jobs_len++], job->id, LODE_JOB_ID_MAX);
    }
    pthread_mutex_unlock(&s->lock);
}

/* Installs the held notify as a job. clean_extra forces clean. */
static void install_held(session *ss, bool clean_extra)
{
    if (!ss->have_held || !ss->authorized || !ss->subscribed)
        return;
    const lode_stratum_notify *n = &ss->held.u.notify;
    bool clean = clean_extra || n->clean_jobs || !ss->have_prevhash ||
                 memcmp(ss->last_prevhash, n->prevhash, 32) != 0;
    if (ss->extranonce_changed) { /* set_extranonce takes effect now */
        memcpy(ss->job_state.extranonce1, ss->next_extranonce1, ss->next_extranonce1_len);
        ss->job_state.extranonce1_len = ss->next_extranonce1_len;
        ss->job_state.extranonce2_size = ss->next_extranonce2_size;
        ss->extranonce_changed = false;
        clean = true; /* shares on the old extranonce would be invalid */
    }
    ss->job_state.difficulty = ss->next_difficulty;
    lode_job job;
    char err[200];
    if (lode_stratum_notify_to_job(n, &ss->job_state, clean, &job, err, sizeof err) != 0) {
        clean = clean || n->clean_jobs;
        lode_log(LODE_LOG_WARN, "stratum: job %s not mined: %s%s", n->job_id, err,
                 clean ? " (a clean job: the jobs it replaces stop too; idle until a usable job)" : "");
        if (clean) {
            /* The pool has dropped the older jobs: their shares would be stale. */
            ss->held_installed = false;
            set_accepting(ss, false, NULL);
            lode_mining_drop_jobs(ss->s->mining);
        }
        return;
    }
    memcpy(ss->last_prevhash, n->prevhash, 32);
    ss->have_prevhash = true;
    ss->held_installed = true;
    /* Accept this generation's shares before the devices can find any: a
     * share found the moment the job lands must not be counted stale.
     * Shares of older connections are still refused by their generation. */
    set_accepting(ss, true, &job);
    /* Never call the mining session with our lock held (it calls submit under its own). */
    int rc = lode_mining_set_job(ss->s->mining, &job);
    lode_job_free(&job);
    if (rc != 0) { /* the session stopped the older jobs if this one was clean */
        lode_log(LODE_LOG_WARN, "stratum: the mining session refused job %s", n->job_id);
        return;
    }
    ss->got_job = true;
    ss->job_installed = true;
    ss->last_progress = lode_clock_s();
    lode_log_limited(&ss->events.job, LODE_LOG_DEBUG, "stratum: job %s%s, difficulty %g", n->job_id,
                     clean ? " (clean)" : "", ss->job_state.difficulty);
}

static void count_share(session *ss, const pending_request *req, const lode_stratum_msg *msg)
{
    lode_stratum *s = ss->s;
    pool_state *p = session_pool(ss);
    bool accepted = !msg->u.response.is_error && json_is_true(msg->u.response.result);
    bool stale = msg->u.response.is_error && msg->u.response.error_code == 21;
    const char *reason = msg->u.response.is_error ? msg->u.response.error_message : "rejected by the pool";
    pthread_mutex_lock(&s->lock);
    ss->last_submit_answer = lode_clock_s();
    if (accepted) {
        p->stats.accepted++;
        ss->accepted_any = true;
    } else if (stale)
        p->stats.stale++;
    else {
        p->stats.rejected++;
        snprintf(p->stats.last_reject, sizeof p->stats.last_reject, "%.127s", reason);
    }
    uint64_t a = p->stats.accepted, r = p->stats.rejected;
    pthread_mutex_unlock(&s->lock);
    /* reason is the pool's text, already made printable by the parser. */
    const char *result = accepted ? "accepted" : stale ? "stale" : "rejected";
    const lode_log_field *fields =
        LODE_LOG_FIELDS(LODE_LOG_STR("result", result), LODE_LOG_STR("pool", p->url_text),
                        LODE_LOG_STR("job", req->job_id), LODE_LOG_NUM("difficulty", req->pool_difficulty),
                        LODE_LOG_STR("reason", accepted ? NULL : reason));
    if (accepted)
        lode_log_event(LODE_LOG_INFO, "share", fields, "accepted: %llu/%llu (%.2f%%) diff %g yes!",
                       (unsigned long long)a, (unsigned long long)(a + r), 100.0 * (double)a / (double)(a + r),
                       req->pool_difficulty);
    else if (stale)
        lode_log_event(LODE_LOG_INFO, "share", fields, "stale: %s", reason);
    else
        lode_log_event(LODE_LOG_WARN, "share", fields, "rejected: %s", reason);
}

/* Returns -1 to end the session (with *end set). */
static int handle_response(session *ss, const lode_stratum_msg *msg, session_end *end)
{
    pending_request req;
    if (!msg->id_is_int || !take_pending(ss, msg->int_id, &req)) {
        lode_log_limited(&ss->events.unknown_reply, LODE_LOG_DEBUG, "stratum: reply to an unknown request id, ignored");
        return 0;
    }
    lode_stratum *s = ss->s;
    pool_state *p = session_pool(ss);
    bool ok = !msg->u.response.is_error;
    char err[256];
    switch (req.kind) {
    case REQ_CONFIGURE: {
        uint32_t mask = 0;
        if (ok && lode_stratum_parse_configure_result(msg->u.response.result, &mask, err, sizeof err) != 0)
            lode_log(LODE_LOG_WARN, "stratum: %s", err);
        ss->job_state.version_mask = mask & LODE_STRATUM_VERSION_MASK;
        lode_log(LODE_LOG_INFO, "stratum: version rolling %s (mask %08x)",
                 ss->job_state.version_mask ? "on" : "refused", ss->job_state.version_mask);
        return 0;
    }
    case REQ_SUBSCRIBE:
        if (!ok || lode_stratum_parse_subscribe_result(msg->u.response.result, p->session_id,
                                                       ss->job_state.extranonce1,
                                                       &ss->job_state.extranonce1_len,
                                                       &ss->job_state.extranonce2_size, err, sizeof err) != 0) {
            if (ss->resuming) { /* the pool forgot the session: start a fresh one */
                lode_log(LODE_LOG_INFO, "stratum: session not resumed, subscribing afresh");
                p->session_id[0] = '\0';
                return send_subscribe(ss, NULL) == 0 ? 0 : (*end = END_FAILED, -1);
            }
            lode_log(LODE_LOG_ERROR, "stratum: %s: subscribe failed: %s", p->url_text,
                     ok ? err : msg->u.response.error_message);
            *end = END_FAILED;
            return -1;
        }
        ss->subscribed = true;
        ss->extranonce_changed = false;
        if (s->config.extranonce_subscribe) {
            int64_t id = ss->next_id++;
            if (send_request(ss, REQ_EXTRANONCE, lode_stratum_build_extranonce_subscribe(id), id, 0, NULL) != 0)
                return *end = END_FAILED, -1;
        }
        int64_t auth_id = ss->next_id++;
        if (send_request(ss, REQ_AUTHORIZE, lode_stratum_build_authorize(auth_id, p->user, p->pass), auth_id, 0, NULL) != 0)
            return *end = END_FAILED, -1;
        if (s->config.suggest_difficulty > 0) {
            int64_t id = ss->next_id++;
            if (send_request(ss, REQ_SUGGEST, lode_stratum_build_suggest_difficulty(id, s->config.suggest_difficulty), id, 0, NULL) != 0)
                return *end = END_FAILED, -1;
        }
        return 0;
    case REQ_AUTHORIZE:
        if (!ok || !json_is_true(msg->u.response.result)) {
            /* The user's mistake, not the pool's: said clearly once per pool
             * (until it authorizes again), quietly on the retries. */
            if (p->auth_refusals == 0)
                lode_log(LODE_LOG_ERROR, "stratum: %s refused worker '%s'%s%s; check the user name and password (-u/-p)",
                         p->url_text, p->user, ok ? "" : ": ", ok ? "" : msg->u.response.error_message);
            else
                lode_log(LODE_LOG_INFO, "stratum: %s refused worker '%s' again", p->url_text, p->user);
            ss->auth_refused = true;
            *end = END_FAILED;
            return -1;
        }
        p->auth_refusals = 0;
        ss->authorized = true;
        pthread_mutex_lock(&s->lock);
        p->stats.connected = true;
        pthread_mutex_unlock(&s->lock);
        lode_log(LODE_LOG_INFO, "stratum: authorized as '%s' on %s", p->user, p->url_text);
        install_held(ss, false);
        return 0;
    case REQ_SUBMIT:
        ss->last_progress = lode_clock_s();
        count_share(ss, &req, msg);
        return 0;
    case REQ_EXTRANONCE:
    case REQ_SUGGEST:
        return 0; /* optional extensions: the answer does not matter */
    }
    return 0;
}

static int reply(session *ss, const lode_stratum_msg *msg, char *line)
{
    if (msg->id == NULL || json_is_null(msg->id)) { /* a notification: nothing to answer */
        free(line);
        return 0;
    }
    return send_line(ss, line);
}

/* Returns -1 to end the session (with *end set). */
static int handle_message(session *ss, lode_stratum_msg *msg, session_end *end)
{
    lode_stratum *s = ss->s;
    switch (msg->kind) {
    case LODE_STRATUM_RESPONSE:
        return handle_response(ss, msg, end);
    case LODE_STRATUM_NOTIFY:
        if (ss->have_held)
            lode_stratum_msg_free(&ss->held);
        ss->held = *msg;             /* take ownership */
        memset(msg, 0, sizeof *msg); /* the caller's free is now a no-op */
        ss->have_held = true;
        ss->held_installed = false;
        install_held(ss, false);
        return 0;
    case LODE_STRATUM_SET_DIFFICULTY:
        ss->next_difficulty = msg->u.difficulty;
        lode_pool_events_difficulty(&ss->events, msg->u.difficulty, s->config.algo);
        return 0;
    case LODE_STRATUM_SET_EXTRANONCE:
        memcpy(ss->next_extranonce1, msg->u.set_extranonce.extranonce1, msg->u.set_extranonce.extranonce1_len);
        ss->next_extranonce1_len = msg->u.set_extranonce.extranonce1_len;
        ss->next_extranonce2_size = msg->u.set_extranonce.extranonce2_size;
        ss->extranonce_changed = true;
        return 0;
    case LODE_STRATUM_SET_VERSION_MASK:
        if (s->config.algo == LODE_ALGO_SHA256D && s->config.version_rolling) {
            ss->job_state.version_mask = msg->u.version_mask & LODE_STRATUM_VERSION_MASK;
            lode_log_limited(&ss->events.version_mask, LODE_LOG_INFO, "stratum: version mask now %08x",
                             ss->job_state.version_mask);
            if (ss->held_installed) /* applies at once: re-install the current job */
                install_held(ss, true);
        }
        return 0;
    case LODE_STRATUM_RECONNECT:
        if (!s->config.follow_redirect) {
            lode_log(LODE_LOG_INFO, "stratum: the pool asked to reconnect elsewhere; ignored (redirects off)");
            return 0;
        }
        if (msg->u.reconnect.host[0] != '\0' && !s->config.allow_redirect_host &&
            strcasecmp(msg->u.reconnect.host, session_pool(ss)->url.host) != 0) {
            lode_log(LODE_LOG_WARN, "stratum: the pool asked to reconnect to another host (%s); ignored: "
                     "lode follows redirects to %s only (--allow-redirect-host allows others)",
                     msg->u.reconnect.host, session_pool(ss)->url.host);
            return 0;
        }
        ss->redirect = ss->url;
        if (msg->u.reconnect.host[0] != '\0')
            snprintf(ss->redirect.host, sizeof ss->redirect.host, "%s", msg->u.reconnect.host);
        if (msg->u.reconnect.port != 0)
            snprintf(ss->redirect.port, sizeof ss->redirect.port, "%u", msg->u.reconnect.port);
        ss->redirect_wait = msg->u.reconnect.wait_s;
        lode_log(LODE_LOG_INFO, "stratum: the pool redirects to %s:%s in %g s", ss->redirect.host,
                 ss->redirect.port, ss->redirect_wait);
        *end = END_REDIRECT;
        return -1;
    case LODE_STRATUM_SHOW_MESSAGE:
        lode_log_limited(&ss->events.message, LODE_LOG_INFO, "pool message: %s", msg->u.text);
        return reply(ss, msg, lode_stratum_build_reply_true(msg->id));
    case LODE_STRATUM_GET_VERSION:
        return reply(ss, msg, lode_stratum_build_reply_string(msg->id, s->agent));
    case LODE_STRATUM_PING:
        return reply(ss, msg, lode_stratum_build_reply_string(msg->id, "pong"));
    case LODE_STRATUM_UNKNOWN_METHOD:
        lode_log_limited(&ss->events.unknown_method, LODE_LOG_DEBUG, "stratum: unknown method %s", msg->u.method);
        return reply(ss, msg, lode_stratum_build_reply_error(msg->id, 20, "unknown method"));
    }
    return 0;
}

static int send_queued_shares(session *ss)
{
    lode_stratum *s = ss->s;
    queued_share batch[SUBMIT_QUEUE_MAX];
    pthread_mutex_lock(&s->lock);
    /* Send what the in-flight limit allows; the rest waits its turn. */
    size_t room = SUBMITS_IN_FLIGHT_MAX - ss->submits_in_flight;
    size_t n = s->queue_len < room ? s->queue_len : room;
    memcpy(batch, s->queue, n * sizeof batch[0]);
    memmove(s->queue, s->queue + n, (s->queue_len - n) * sizeof s->queue[0]);
    s->queue_len -= n;
    size_t dropped = 0;
    for (size_t i = 0; i < n; i++) {
        /* Its connection ended, or a clean job replaced its job while it
         * waited: the pool would call it stale; it is dropped, not sent. */
        if (batch[i].generation == ss->generation && !job_is_live(s, batch[i].job_id))
            batch[i].generation = 0;
        if (batch[i].generation != ss->generation)
            dropped++;
    }
    pool_state *p = session_pool(ss);
    p->stats.dropped += dropped;
    uint64_t unsent = p->stats.unsent;
    double difficulty = p->stats.difficulty;
    pthread_mutex_unlock(&s->lock);
    double now = lode_clock_s();
    if (unsent > ss->unsent_warned && (ss->flood_warned_at == 0 || now - ss->flood_warned_at > FLOOD_WARN_S)) {
        lode_log(LODE_LOG_WARN, "stratum: %llu share(s) not sent: they come faster than %s answers "
                 "(pool difficulty %g is too low for this hash rate)",
                 (unsigned long long)(unsent - ss->unsent_warned), p->url_text, difficulty);
        ss->unsent_warned = unsent;
        ss->flood_warned_at = now;
    }
    for (size_t i = 0; i < n; i++) {
        queued_share *q = &batch[i];
        if (q->generation != ss->generation)
            continue;
        int64_t id = ss->next_id++;
        char *line = lode_stratum_build_submit(id, p->user, q->job_id, q->extranonce2,
                                               q->extranonce2_len, q->ntime, q->nonce, q->version_mask != 0,
                                               q->version & q->version_mask);
        if (send_request(ss, REQ_SUBMIT, line, id, q->pool_difficulty, q->job_id) != 0) {
            /* This one and the rest of the batch never reached the pool. */
            pthread_mutex_lock(&s->lock);
            for (size_t k = i; k < n; k++)
                p->stats.unsent += batch[k].generation == ss->generation;
            pthread_mutex_unlock(&s->lock);
            return -1;
        }
    }
    return 0;
}

/* Submits the pool has not answered for the stall timeout. If it answered
 * none of them in that time it is stalled (returns -1); if it answers
 * others, these are given up on and counted unanswered. */
static int check_unanswered(session *ss, const char *where)
{
    double now = lode_clock_s(), limit = ss->s->config.stall_timeout_s;
    size_t old = 0;
    for (size_t i = 0; i < ss->pending_len; i++)
        old += ss->pending[i].kind == REQ_SUBMIT && now - ss->pending[i].sent_at > limit;
    if (old == 0)
        return 0;
    if (now - ss->last_submit_answer > limit) {
        lode_log(LODE_LOG_WARN, "stratum: %s: %zu share submit(s) unanswered for %.0f s, reconnecting", where,
                 ss->submits_in_flight, now - ss->last_submit_answer);
        return -1;
    }
    size_t kept = 0;
    for (size_t i = 0; i < ss->pending_len; i++) {
        if (ss->pending[i].kind == REQ_SUBMIT && now - ss->pending[i].sent_at > limit)
            continue;
        ss->pending[kept++] = ss->pending[i];
    }
    ss->pending_len = kept;
    ss->submits_in_flight -= old;
    pthread_mutex_lock(&ss->s->lock);
    session_pool(ss)->stats.unanswered += old;
    pthread_mutex_unlock(&ss->s->lock);
    lode_log(LODE_LOG_WARN, "stratum: %s: %zu share submit(s) unanswered for %.0f s; counted unanswered", where,
             old, limit);
    return 0;
}

/* Is pools[0] answering? A connection and a successful subscribe reply. */
static bool probe_primary(lode_stratum *s)
{
    pool_state *p = &s->pools[0];
    char err[256];
    lode_stratum_conn *c = lode_stratum_conn_open(&p->url, p->cert_pin, s->config.proxy, PROBE_TIMEOUT_S, &s->stop, err, sizeof err);
    if (c == NULL)
        return false;
    bool ok = false;
    char *line = lode_stratum_build_subscribe(1, s->agent, NULL);
    if (line != NULL && lode_stratum_conn_write(c, line, strlen(line), PROBE_TIMEOUT_S, err, sizeof err) == 0) {
        double deadline = lode_clock_s() + PROBE_TIMEOUT_S;
        while (!ok && !stopping(s) && lode_clock_s() < deadline) {
            const char *text;
            size_t len;
            lode_conn_status st = lode_stratum_conn_read_line(c, NULL, deadline - lode_clock_s(), &text, &len, err, sizeof err);
            if (st != LODE_CONN_LINE)
                break;
            lode_stratum_msg msg;
            if (lode_stratum_parse_line(text, len, &msg, err, sizeof err) != 0)
                continue;
            ok = msg.kind == LODE_STRATUM_RESPONSE && msg.id_is_int && msg.int_id == 1 && !msg.u.response.is_error;
            lode_stratum_msg_free(&msg);
        }
    }
    free(line);
    lode_stratum_conn_close(c);
    return ok;
}

static bool has_pending_submit(const session *ss)
{
    for (size_t i = 0; i < ss->pending_len; i++)
        if (ss->pending[i].kind == REQ_SUBMIT)
            return true;
    return false;
}

/* Before leaving a pool that still works (run_session's planned ends),
 * stop mining its jobs and wait a little for the answers to the shares
 * already sent, so that lode's counts agree with the pool's. Only replies
 * are handled; new jobs are ignored. */
static void drain_submits(lode_stratum *s, session *ss)
{
    pthread_mutex_lock(&s->lock);
    s->accepting = false; /* shares found from now on are dropped */
    pthread_mutex_unlock(&s->lock);
    if (ss->job_installed)
        lode_mining_clear_job(s->mining);
    double deadline = lode_clock_s() + DRAIN_TIMEOUT_S;
    char err[256];
    while (!stopping(s) && has_pending_submit(ss) && lode_clock_s() < deadline) {
        const char *line;
        size_t len;
        lode_conn_status st =
            lode_stratum_conn_read_line(ss->conn, &s->wake, deadline - lode_clock_s(), &line, &len, err, sizeof err);
        if (st == LODE_CONN_WOKEN) {
            lode_wake_drain(&s->wake);
            continue;
        }
        if (st != LODE_CONN_LINE)
            break;
        lode_stratum_msg msg;
        if (len == 0 || lode_stratum_parse_line(line, len, &msg, err, sizeof err) != 0)
            continue;
        if (msg.kind == LODE_STRATUM_RESPONSE) {
            session_end ignored = END_GOOD;
            handle_message(ss, &msg, &ignored);
        }
        lode_stratum_msg_free(&msg);
    }
}

static session_end run_session(lode_stratum *s, size_t pool, const lode_stratum_url *url, session *ss)
{
    pool_state *p = &s->pools[pool];
    char err[256];
    char where[300];
    lode_stratum_url_format(url, where, sizeof where);
    ss->conn = lode_stratum_conn_open(url, p->cert_pin, s->config.proxy, s->config.connect_timeout_s, &s->stop, err, sizeof err);
    if (ss->conn == NULL) {
        if (!stopping(s))
            lode_log(LODE_LOG_WARN, "stratum: %s", err);
        return stopping(s) ? END_STOP : END_FAILED;
    }
    lode_log_event(LODE_LOG_INFO, "pool_connect", LODE_LOG_FIELDS(LODE_LOG_STR("pool", where), LODE_LOG_INT("index", pool)),
                   "stratum: connected to %s", where);
    pthread_mutex_lock(&s->lock);
    ss->generation = ++s->generation;
    s->accepting = false;
    s->current_pool = pool;
    p->stats.connects++;
    pthread_mutex_unlock(&s->lock);
    ss->next_id = 1;
    ss->job_state.algo = s->config.algo;
    ss->job_state.difficulty = 1.0; /* until set_difficulty says otherwise */
    ss->next_difficulty = 1.0;
    ss->job_state.ntime_roll_max = LODE_STRATUM_NTIME_ROLL_MAX;
    ss->job_state.generation = ss->generation;
    ss->last_progress = ss->last_probe = ss->last_submit_answer = lode_clock_s();

    session_end end = END_GOOD;
    if (s->config.algo == LODE_ALGO_SHA256D && s->config.version_rolling) {
        int64_t id = ss->next_id++;
        if (send_request(ss, REQ_CONFIGURE, lode_stratum_build_configure(id, LODE_STRATUM_VERSION_MASK, 2), id, 0, NULL) != 0)
            return END_FAILED;
    }
    /* Resume only on the pool that issued the session. */
    bool own_url = strcmp(url->host, p->url.host) == 0 && strcmp(url->port, p->url.port) == 0;
    if (send_subscribe(ss, own_url ? p->session_id : NULL) != 0)
        return END_FAILED;

    bool read_more = false;
    while (!stopping(s)) {
        if (send_queued_shares(ss) != 0) {
            end = ss->got_job ? END_GOOD : END_FAILED;
            break;
        }
        double now = lode_clock_s();
        if (now - ss->last_progress > s->config.stall_timeout_s) {
            lode_log(LODE_LOG_WARN, "stratum: %s: no job or reply for %.0f s, reconnecting", where,
                     now - ss->last_progress);
            ss->stalled = true;
            end = END_FAILED;
            break;
        }
        if (check_unanswered(ss, where) != 0) {
            ss->stalled = true;
            end = END_FAILED;
            break;
        }
        if (atomic_exchange(&s->next_pool, false)) {
            lode_log_event(LODE_LOG_INFO, "pool_switch",
                           LODE_LOG_FIELDS(LODE_LOG_STR("from", p->url_text),
                                           LODE_LOG_STR("to", s->pools[(pool + 1) % s->pool_count].url_text),
                                           LODE_LOG_STR("reason", "asked")),
                           "stratum: leaving %s for the next pool, as asked", where);
            end = END_NEXT_POOL;
            break;
        }
        if (pool != 0 && !ss->chosen && now - ss->last_probe > s->config.primary_check_s) {
            ss->last_probe = now;
            if (probe_primary(s)) {
                lode_log_event(LODE_LOG_INFO, "pool_switch",
                               LODE_LOG_FIELDS(LODE_LOG_STR("from", p->url_text), LODE_LOG_STR("to", s->pools[0].url_text),
                                               LODE_LOG_STR("reason", "primary back")),
                               "stratum: %s answers again, switching back", s->pools[0].url_text);
                end = END_PRIMARY_BACK;
                break;
            }
            ss->last_probe = lode_clock_s();
        }
        const char *line;
        size_t len;
        /* After a line, read on without waiting while lines are there:
         * answers are taken as fast as they come, between submit batches. */
        lode_conn_status st = lode_stratum_conn_read_line(ss->conn, &s->wake, read_more ? 0 : 1.0, &line, &len,
                                                          err, sizeof err);
        read_more = st == LODE_CONN_LINE;
        if (st == LODE_CONN_WOKEN) {
            lode_wake_drain(&s->wake);
            continue;
        }
        if (st == LODE_CONN_TIMEOUT)
            continue;
        if (st == LODE_CONN_ERROR) {
            if (lode_stratum_conn_overlong_lines(ss->conn) > 0) {
                pthread_mutex_lock(&s->lock);
                p->stats.bad_lines++;
                pthread_mutex_unlock(&s->lock);
            }
            if (!stopping(s))
                lode_log(LODE_LOG_WARN, "stratum: %s: %s", where, err);
            end = ss->got_job ? END_GOOD : END_FAILED;
            break;
        }
        if (len == 0)
            continue; /* blank lines are harmless keep-alives */
        lode_stratum_msg msg;
        if (lode_stratum_parse_line(line, len, &msg, err, sizeof err) != 0) {
            pthread_mutex_lock(&s->lock);
            p->stats.bad_lines++;
            pthread_mutex_unlock(&s->lock);
            lode_log_limited(&ss->events.bad_line, LODE_LOG_WARN, "stratum: bad line from the pool skipped: %s", err);
            continue;
        }
        int rc = handle_message(ss, &msg, &end);
        lode_stratum_msg_free(&msg);
        if (rc != 0) {
            if (end == END_GOOD && !ss->got_job)
                end = END_FAILED;
            break;
        }
    }
    /* Leaving a pool that still works (asked to, the first pool back, or
     * the pool's redirect): its answers to the submits in flight may still
     * come, and a share it accepts counts accepted, not unanswered. */
    if (end == END_NEXT_POOL || end == END_PRIMARY_BACK || end == END_REDIRECT)
        drain_submits(s, ss);
    return stopping(s) ? END_STOP : end;
}

static void end_session(lode_stratum *s, session *ss, size_t pool)
{
    if (ss->conn != NULL) {
        char where[300];
        lode_stratum_url_format(&ss->url, where, sizeof where);
        lode_log_event(LODE_LOG_DEBUG, "pool_disconnect",
                       LODE_LOG_FIELDS(LODE_LOG_STR("pool", where), LODE_LOG_INT("index", pool),
                                       LODE_LOG_INT("unanswered", ss->submits_in_flight)),
                       "stratum: disconnected from %s", where);
    }
    lode_pool_events_flush(&ss->events);
    pthread_mutex_lock(&s->lock);
    s->accepting = false;
    s->pools[pool].stats.connected = false;
    /* Shares still queued never left: unsent (their jobs did not end). */
    s->pools[pool].stats.unsent += s->queue_len;
    s->queue_len = 0;
    /* Submits sent that the pool never answered. */
    s->pools[pool].stats.unanswered += ss->submits_in_flight;
    pthread_mutex_unlock(&s->lock);
    if (ss->job_installed)
        lode_mining_clear_job(s->mining);
    lode_stratum_conn_close(ss->conn);
    ss->conn = NULL;
    if (ss->have_held)
        lode_stratum_msg_free(&ss->held);
}

/* Sleeps up to seconds; a stop ends it at once. */
static void pause_for(lode_stratum *s, double seconds)
{
    double deadline = lode_clock_s() + seconds;
    while (!stopping(s) && !atomic_load(&s->next_pool)) {
        double left = deadline - lode_clock_s();
        if (left <= 0)
            return;
        struct pollfd pfd = {.fd = s->wake.fds[0], .events = POLLIN};
        if (poll(&pfd, 1, (int)(left * 1000) + 1) > 0)
            lode_wake_drain(&s->wake);
    }
}

static double backoff_delay(const lode_stratum_config *c, unsigned attempt, unsigned *seed)
{
    double d = c->retry_base_s * pow(2.0, attempt > 30 ? 30 : attempt);
    if (d > c->retry_max_s)
        d = c->retry_max_s;
    /* Jitter down to half, so many miners do not retry in step. */
    return d * (0.5 + 0.5 * (double)rand_r(seed) / RAND_MAX);
}

/* Every pool refused mining.authorize failover_after times running. */
static bool all_pools_refused(const lode_stratum *s)
{
    for (size_t i = 0; i < s->pool_count; i++)
        if (s->pools[i].auth_refusals < s->config.failover_after)
            return false;
    return true;
}

static void *io_thread(void *arg)
{
    lode_stratum *s = arg;
    size_t pool = 0;
    unsigned failures = 0, attempt = 0;
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)s;
    bool redirected = false, chosen = false;
    unsigned redirects = 0; /* redirects in a row with no share accepted in between */
    lode_stratum_url redirect_url;
    while (!stopping(s)) {
        session *ss = calloc(1, sizeof *ss);
        if (ss == NULL) {
            lode_log(LODE_LOG_ERROR, "stratum: out of memory");
            pause_for(s, 1);
            continue;
        }
        ss->s = s;
        ss->pool = pool;
        ss->url = redirected ? redirect_url : s->pools[pool].url;
        ss->chosen = chosen;
        lode_pool_events_init(&ss->events);
        pthread_mutex_lock(&s->lock);
        s->current_pool = pool; /* the pool tried, for lode_stratum_current_pool */
        pthread_mutex_unlock(&s->lock);
        session_end end = run_session(s, pool, &ss->url, ss);
        end_session(s, ss, pool);
        lode_stratum_url next_redirect = ss->redirect;
        double redirect_wait = ss->redirect_wait;
        bool got_job = ss->got_job, stalled = ss->stalled;
        if (ss->accepted_any)
            redirects = 0;
        if (ss->auth_refused) {
            s->pools[pool].auth_refusals++;
            if (all_pools_refused(s)) {
                char why[300];
                if (s->pool_count == 1)
                    snprintf(why, sizeof why, "%s refused worker '%s' %u times: check the user name and "
                             "password (-u/-p)", s->pools[0].url_text, s->pools[0].user, s->pools[0].auth_refusals);
                else
                    snprintf(why, sizeof why, "every pool refused its worker (%u times each): check the user "
                             "names and passwords (-u/-p)", s->config.failover_after);
                lode_mining_fail(s->mining, why);
                free(ss);
                break;
            }
        }
        free(ss);
        switch (end) {
        case END_STOP:
            break;
        case END_REDIRECT: {
            redirected = true;
            redirect_url = next_redirect;
            attempt = 0;
            /* A pool that keeps redirecting gets the same backoff as one
             * that keeps failing. */
            double delay = redirects ? backoff_delay(&s->config, redirects - 1, &seed) : 0;
            redirects++;
            if (delay > redirect_wait)
                lode_log(LODE_LOG_INFO, "stratum: redirected %u times in a row; reconnecting in %.1f s", redirects,
                         delay);
            pause_for(s, delay > redirect_wait ? delay : redirect_wait);
            continue;
        }
        case END_PRIMARY_BACK:
            pool = 0;
            redirected = chosen = false;
            failures = attempt = 0;
            continue;
        case END_NEXT_POOL:
            pool = (pool + 1) % s->pool_count;
            redirected = false;
            chosen = pool != 0;
            failures = attempt = 0;
            continue;
        case END_GOOD:
            failures = attempt = 0;
            break;
        case END_FAILED:
            if (got_job && !stalled) { /* it worked for a while: retry the same pool first */
                failures = attempt = 0;
            } else if (redirected) {
                redirected = false; /* the redirect target failed: back to the list */
            } else if (++failures >= s->config.failover_after && s->pool_count > 1) {
                pool = (pool + 1) % s->pool_count;
                failures = 0;
                chosen = false;
                lode_log_event(LODE_LOG_WARN, "pool_switch",
                               LODE_LOG_FIELDS(LODE_LOG_STR("from", s->pools[(pool + s->pool_count - 1) % s->pool_count].url_text),
                                               LODE_LOG_STR("to", s->pools[pool].url_text), LODE_LOG_STR("reason", "failover")),
                               "stratum: failing over to %s", s->pools[pool].url_text);
            }
            break;
        }
        if (stopping(s))
            break;
        if (atomic_exchange(&s->next_pool, false)) { /* asked while this pool was down */
            pool = (pool + 1) % s->pool_count;
            redirected = false;
            chosen = pool != 0;
            failures = attempt = 0;
            lode_log_event(LODE_LOG_INFO, "pool_switch",
                           LODE_LOG_FIELDS(LODE_LOG_STR("from", s->pools[(pool + s->pool_count - 1) % s->pool_count].url_text),
                                           LODE_LOG_STR("to", s->pools[pool].url_text), LODE_LOG_STR("reason", "asked")),
                           "stratum: moving on to %s, as asked", s->pools[pool].url_text);
            continue;
        }
        double delay = backoff_delay(&s->config, attempt, &seed);
        if (end == END_FAILED && !got_job)
            attempt++;
        lode_log(LODE_LOG_INFO, "stratum: reconnecting in %.1f s", delay);
        pause_for(s, delay);
    }
    return NULL;
}

int lode_stratum_start(lode_stratum *s, lode_mining *mining)
{
    if (s == NULL || s->running)
        return -1;
    s->mining = mining;
    atomic_store(&s->stop, false);
    if (pthread_create(&s->thread, NULL, io_thread, s) != 0)
        return -1;
    s->running = true;
    return 0;
}

void lode_stratum_stop(lode_stratum *s)
{
    if (s == NULL || !s->running)
        return;
    atomic_store(&s->stop, true);
    lode_wake_signal(&s->wake);
    pthread_join(s->thread, NULL);
    s->running = false;
}

size_t lode_stratum_current_pool(lode_stratum *s)
{
    pthread_mutex_lock(&s->lock);
    size_t pool = s->current_pool;
    pthread_mutex_unlock(&s->lock);
    return pool;
}

int lode_stratum_next_pool(lode_stratum *s)
{
    if (s == NULL || !s->running || s->pool_count < 2)
        return -1;
    atomic_store(&s->next_pool, true);
    lode_wake_signal(&s->wake);
    return 0;
}

void lode_stratum_free(lode_stratum *s)
{
    if (s == NULL)
        return;
    lode_stratum_stop(s);
    for (size_t i = 0; s->pools != NULL && i < s->pool_count; i++) {
        free(s->pools[i].url_text);
        free(s->pools[i].user);
        free(s->pools[i].pass);
        free(s->pools[i].cert_pin);
    }
    free(s->pools);
    free(s->agent);
    free((char *)s->config.proxy);
    if (s->wake.fds[0] >= 0)
        lode_wake_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
