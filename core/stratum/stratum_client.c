#include "core/base/backoff.h"
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
#include "core/stratum/stratum_client_internal.h"
#include "core/stratum/stratum_conn.h"
#include "core/stratum/stratum_msg.h"
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

static session_end run_session(lode_stratum *s, size_t pool, const lode_stratum_url *url, session *ss)
{
    pool_state *p = &s->pools[pool];
    char err[256];
    char where[300];
    lode_stratum_url_format(url, where, sizeof where);
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

    session_end end = END_GOOD;
    if (s->config.algo == LODE_ALGO_SHA256D && s->config.version_rolling) {
        int64_t id = ss->next_id++;
        if (stratum_send_request(ss, REQ_CONFIGURE, lode_stratum_build_configure(id, LODE_STRATUM_VERSION_MASK, 2), id, 0, NULL) != 0)
            return END_FAILED;
    }
    /* Resume only on the pool that issued the session. */
    bool own_url = strcmp(url->host, p->url.host) == 0 && strcmp(url->port, p->url.port) == 0;
    if (stratum_send_subscribe(ss, own_url ? p->session_id : NULL) != 0)
        return END_FAILED;

    bool read_more = false;
    while (!stratum_stopping(s)) {
        if (stratum_send_queued_shares(ss) != 0) {
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
        if (stratum_check_unanswered(ss, where) != 0) {
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
            if (!stratum_stopping(s))
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
        int rc = stratum_handle_message(ss, &msg, &end);
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
    return stratum_stopping(s) ? END_STOP : end;
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
    while (!stratum_stopping(s) && !atomic_load(&s->next_pool)) {
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
    double d = lode_backoff_s(c->retry_base_s, attempt > 30 ? 30 : attempt, c->retry_max_s);
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
    while (!stratum_stopping(s)) {
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
        if (stratum_stopping(s))
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
