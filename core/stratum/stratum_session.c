/* One stratum connection: its connect and read loop, requests and their
 * pending replies, share accounting, notifications, the submit queue's
 * sending and the unanswered-submit watch. Only the I/O thread runs this
 * (stratum_failover.c chooses the pool). */
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
#include "core/stratum/stratum_client_internal.h"
#include "core/stratum/stratum_conn.h"
#include "core/stratum/stratum_msg.h"

bool stratum_stopping(const lode_stratum *s)
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
    if (rc != 0 && !stratum_stopping(ss->s))
        lode_log(LODE_LOG_WARN, "stratum: %s: %s", session_pool(ss)->url_text, err);
    return rc;
}

/* Sends a request and remembers its id. */
int stratum_send_request(session *ss, request_kind kind, char *line, int64_t id, double diff, const char *job_id)
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

int stratum_send_subscribe(session *ss, const char *session_id)
{
    int64_t id = ss->next_id++;
    ss->resuming = session_id != NULL && session_id[0] != '\0';
    return stratum_send_request(ss, REQ_SUBSCRIBE, lode_stratum_build_subscribe(id, ss->s->agent, session_id), id, 0, NULL);
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

/* The answer to mining.subscribe: on success the requests that follow it
 * (extranonce subscription, authorize, suggested difficulty). */
static int subscribe_answered(session *ss, const lode_stratum_msg *msg, bool ok, session_end *end)
{
    lode_stratum *s = ss->s;
    pool_state *p = session_pool(ss);
    char err[256];
    if (!ok || lode_stratum_parse_subscribe_result(msg->u.response.result, p->session_id,
                                                   ss->job_state.extranonce1,
                                                   &ss->job_state.extranonce1_len,
                                                   &ss->job_state.extranonce2_size, err, sizeof err) != 0) {
        if (ss->resuming) { /* the pool forgot the session: start a fresh one */
            lode_log(LODE_LOG_INFO, "stratum: session not resumed, subscribing afresh");
            p->session_id[0] = '\0';
            return stratum_send_subscribe(ss, NULL) == 0 ? 0 : (*end = END_FAILED, -1);
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
        if (stratum_send_request(ss, REQ_EXTRANONCE, lode_stratum_build_extranonce_subscribe(id), id, 0, NULL) != 0)
            return *end = END_FAILED, -1;
    }
    int64_t auth_id = ss->next_id++;
    if (stratum_send_request(ss, REQ_AUTHORIZE, lode_stratum_build_authorize(auth_id, p->user, p->pass), auth_id, 0, NULL) != 0)
        return *end = END_FAILED, -1;
    if (s->config.suggest_difficulty > 0) {
        int64_t id = ss->next_id++;
        if (stratum_send_request(ss, REQ_SUGGEST, lode_stratum_build_suggest_difficulty(id, s->config.suggest_difficulty), id, 0, NULL) != 0)
            return *end = END_FAILED, -1;
    }
    return 0;
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
        return subscribe_answered(ss, msg, ok, end);
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
int stratum_handle_message(session *ss, lode_stratum_msg *msg, session_end *end)
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

int stratum_send_queued_shares(session *ss)
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
        if (stratum_send_request(ss, REQ_SUBMIT, line, id, q->pool_difficulty, q->job_id) != 0) {
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
int stratum_check_unanswered(session *ss, const char *where)
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

/* ---- one session: connect, read and handle until it ends ---- */

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
        while (!ok && !stratum_stopping(s) && lode_clock_s() < deadline) {
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
    while (!stratum_stopping(s) && has_pending_submit(ss) && lode_clock_s() < deadline) {
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
            stratum_handle_message(ss, &msg, &ignored);
        }
        lode_stratum_msg_free(&msg);
    }
}

/* Connects to url and sends the opening requests (mining.configure where
 * versions roll, mining.subscribe); END_GOOD when the session goes on. */
static session_end open_session(lode_stratum *s, size_t pool, const lode_stratum_url *url, session *ss,
                                const char *where)
{
    pool_state *p = &s->pools[pool];
    char err[256];
    ss->conn = lode_stratum_conn_open(url, p->cert_pin, s->config.proxy, s->config.connect_timeout_s, &s->stop, err, sizeof err);
    if (ss->conn == NULL) {
        if (!stratum_stopping(s))
            lode_log(LODE_LOG_WARN, "stratum: %s", err);
        return stratum_stopping(s) ? END_STOP : END_FAILED;
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

    if (s->config.algo == LODE_ALGO_SHA256D && s->config.version_rolling) {
        int64_t id = ss->next_id++;
        if (stratum_send_request(ss, REQ_CONFIGURE, lode_stratum_build_configure(id, LODE_STRATUM_VERSION_MASK, 2), id, 0, NULL) != 0)
            return END_FAILED;
    }
    /* Resume only on the pool that issued the session. */
    bool own_url = strcmp(url->host, p->url.host) == 0 && strcmp(url->port, p->url.port) == 0;
    if (stratum_send_subscribe(ss, own_url ? p->session_id : NULL) != 0)
        return END_FAILED;
    return END_GOOD;
}

/* Before each read: is it time to leave this pool (shares that cannot be
 * sent, a stall, submits unanswered, a switch asked for, the first pool
 * answering again)? If so, true and *end says how. */
static bool time_to_leave(lode_stratum *s, session *ss, size_t pool, const char *where, session_end *end)
{
    pool_state *p = &s->pools[pool];
    if (stratum_send_queued_shares(ss) != 0) {
        *end = ss->got_job ? END_GOOD : END_FAILED;
        return true;
    }
    double now = lode_clock_s();
    if (now - ss->last_progress > s->config.stall_timeout_s) {
        lode_log(LODE_LOG_WARN, "stratum: %s: no job or reply for %.0f s, reconnecting", where,
                 now - ss->last_progress);
        ss->stalled = true;
        *end = END_FAILED;
        return true;
    }
    if (stratum_check_unanswered(ss, where) != 0) {
        ss->stalled = true;
        *end = END_FAILED;
        return true;
    }
    if (atomic_exchange(&s->next_pool, false)) {
        lode_log_event(LODE_LOG_INFO, "pool_switch",
                       LODE_LOG_FIELDS(LODE_LOG_STR("from", p->url_text),
                                       LODE_LOG_STR("to", s->pools[(pool + 1) % s->pool_count].url_text),
                                       LODE_LOG_STR("reason", "asked")),
                       "stratum: leaving %s for the next pool, as asked", where);
        *end = END_NEXT_POOL;
        return true;
    }
    if (pool != 0 && !ss->chosen && now - ss->last_probe > s->config.primary_check_s) {
        ss->last_probe = now;
        if (probe_primary(s)) {
            lode_log_event(LODE_LOG_INFO, "pool_switch",
                           LODE_LOG_FIELDS(LODE_LOG_STR("from", p->url_text), LODE_LOG_STR("to", s->pools[0].url_text),
                                           LODE_LOG_STR("reason", "primary back")),
                           "stratum: %s answers again, switching back", s->pools[0].url_text);
            *end = END_PRIMARY_BACK;
            return true;
        }
        ss->last_probe = lode_clock_s();
    }
    return false;
}

static void count_bad_line(lode_stratum *s, pool_state *p)
{
    pthread_mutex_lock(&s->lock);
    p->stats.bad_lines++;
    pthread_mutex_unlock(&s->lock);
}

/* Reads one line (or waits up to 1 s for one) and handles it; true when
 * the session ends, *end saying how. */
static bool read_and_handle(lode_stratum *s, session *ss, pool_state *p, const char *where, bool *read_more,
                            session_end *end)
{
    char err[256];
    const char *line;
    size_t len;
    /* After a line, read on without waiting while lines are there:
     * answers are taken as fast as they come, between submit batches. */
    lode_conn_status st = lode_stratum_conn_read_line(ss->conn, &s->wake, *read_more ? 0 : 1.0, &line, &len,
                                                      err, sizeof err);
    *read_more = st == LODE_CONN_LINE;
    if (st == LODE_CONN_WOKEN) {
        lode_wake_drain(&s->wake);
        return false;
    }
    if (st == LODE_CONN_TIMEOUT)
        return false;
    if (st == LODE_CONN_ERROR) {
        if (lode_stratum_conn_overlong_lines(ss->conn) > 0)
            count_bad_line(s, p);
        if (!stratum_stopping(s))
            lode_log(LODE_LOG_WARN, "stratum: %s: %s", where, err);
        *end = ss->got_job ? END_GOOD : END_FAILED;
        return true;
    }
    if (len == 0)
        return false; /* blank lines are harmless keep-alives */
    lode_stratum_msg msg;
    if (lode_stratum_parse_line(line, len, &msg, err, sizeof err) != 0) {
        count_bad_line(s, p);
        lode_log_limited(&ss->events.bad_line, LODE_LOG_WARN, "stratum: bad line from the pool skipped: %s", err);
        return false;
    }
    int rc = stratum_handle_message(ss, &msg, end);
    lode_stratum_msg_free(&msg);
    if (rc != 0) {
        if (*end == END_GOOD && !ss->got_job)
            *end = END_FAILED;
        return true;
    }
    return false;
}

session_end stratum_run_session(lode_stratum *s, size_t pool, const lode_stratum_url *url, session *ss)
{
    char where[300];
    lode_stratum_url_format(url, where, sizeof where);
    session_end end = open_session(s, pool, url, ss, where);
    if (end != END_GOOD)
        return end;
    bool read_more = false;
    while (!stratum_stopping(s)) {
        if (time_to_leave(s, ss, pool, where, &end) ||
            read_and_handle(s, ss, &s->pools[pool], where, &read_more, &end))
            break;
    }
    /* Leaving a pool that still works (asked to, the first pool back, or
     * the pool's redirect): its answers to the submits in flight may still
     * come, and a share it accepts counts accepted, not unanswered. */
    if (end == END_NEXT_POOL || end == END_PRIMARY_BACK || end == END_REDIRECT)
        drain_submits(s, ss);
    return stratum_stopping(s) ? END_STOP : end;
}

void stratum_end_session(lode_stratum *s, session *ss, size_t pool)
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
