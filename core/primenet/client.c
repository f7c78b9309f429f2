#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "core/base/backoff.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/primenet/client_internal.h"

bool pn_stopping(lode_primenet_client *c)
{
    return atomic_load(&c->stopping) || (c->cfg.stop != NULL && c->cfg.stop());
}

static bool http_stop(void *user)
{
    return pn_stopping(user);
}

bool pn_pause(lode_primenet_client *c, double s)
{
    double end = lode_clock_s() + s;
    while (!pn_stopping(c)) {
        double left = end - lode_clock_s();
        if (left <= 0)
            return true;
        double step = left < 0.1 ? left : 0.1;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(step * 1e9)};
        nanosleep(&ts, NULL);
    }
    return false;
}

void pn_set_state(lode_primenet_client *c, const char *state)
{
    pthread_mutex_lock(&c->lock);
    snprintf(c->status.state, sizeof c->status.state, "%s", state);
    pthread_mutex_unlock(&c->lock);
}

void pn_note_error(lode_primenet_client *c, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    lode_log(LODE_LOG_WARN, "PrimeNet: %s", text);
    pthread_mutex_lock(&c->lock);
    snprintf(c->status.last_error, sizeof c->status.last_error, "%s", text);
    pthread_mutex_unlock(&c->lock);
}

void pn_detail(const lode_pn_reply *r, char *out, size_t len)
{
    char joined[LODE_PN_VALUE_MAX * 2];
    size_t o = 0;
    for (const char *s = r->detail; *s && o + 4 < sizeof joined; s++) {
        if (*s == '\n') {
            memcpy(joined + o, " / ", 3);
            o += 3;
        } else {
            joined[o++] = *s;
        }
    }
    joined[o] = '\0';
    lode_log_printable(out, len, joined);
}

/* One try: the query with the current GUID, the GET, the parse. */
static int call_once(lode_primenet_client *c, const char *t, const pn_param *params, size_t n,
                     lode_pn_reply *reply, char *err, size_t err_len)
{
    lode_pn_query q;
    lode_pn_query_start(&q, t, c->state.guid);
    for (size_t i = 0; i < n; i++)
        lode_pn_query_add(&q, params[i].name, params[i].value);
    const char *query = lode_pn_query_finish(&q);
    if (query == NULL) {
        lode_pn_query_free(&q);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    char *body;
    size_t len;
    int rc = lode_pn_http_get(&c->http, query, &body, &len, err, err_len);
    lode_pn_query_free(&q);
    if (rc != 0)
        return -1;
    rc = lode_pn_reply_parse(body, len, reply, err, err_len);
    free(body);
    return rc;
}

static bool reregisters(int code)
{
    return code == LODE_PN_UNREGISTERED_CPU || code == LODE_PN_STALE_CPU_INFO ||
           code == LODE_PN_CPU_IDENTITY_MISMATCH || code == LODE_PN_CPU_CONFIGURATION_MISMATCH ||
           code == LODE_PN_INVALID_WORK_TYPE;
}

static int refuse(lode_primenet_client *c, const char *t, const lode_pn_reply *r)
{
    char detail[256];
    pn_detail(r, detail, sizeof detail);
    lode_log(LODE_LOG_ERROR, "PrimeNet refused user '%s' (t=%s, error %d, %s: %s): check --user; lode stops",
             c->cfg.user, t, r->code, lode_pn_error_text(r->code), detail);
    pthread_mutex_lock(&c->lock);
    snprintf(c->status.last_error, sizeof c->status.last_error, "refused: error %d, %s: %.150s", r->code,
             lode_pn_error_text(r->code), detail);
    snprintf(c->status.state, sizeof c->status.state, "refused");
    pthread_mutex_unlock(&c->lock);
    atomic_store(&c->refused, true);
    return PN_TX_REFUSED;
}

int pn_transact(lode_primenet_client *c, const char *t, const pn_param *params, size_t n, lode_pn_reply *reply)
{
    bool reregistered = false;
    for (int attempt = 0;; attempt++) {
        char err[512];
        int rc = call_once(c, t, params, n, reply, err, sizeof err);
        if (pn_stopping(c))
            return PN_TX_STOPPED;
        if (rc != 0 || reply->code == LODE_PN_SERVER_BUSY) {
            /* 1, 2, 4 s with the default retry interval of 60 s (tests
             * shorten both). */
            double wait = lode_backoff_s(c->cfg.retry_s / 60.0, (unsigned)attempt, HUGE_VAL);
            if (rc == 0)
                snprintf(err, sizeof err, "the server is busy (error 3)");
            pn_note_error(c, "t=%s: %s%s", t, err, attempt < PN_QUICK_RETRIES ? "; trying again" : "");
            if (attempt < PN_QUICK_RETRIES && pn_pause(c, wait))
                continue;
            return pn_stopping(c) ? PN_TX_STOPPED : PN_TX_FAILED;
        }
        int code = reply->code;
        if (code == LODE_PN_ACCESS_DENIED || code == LODE_PN_INVALID_USER || code == LODE_PN_OBSOLETE_CLIENT)
            return refuse(c, t, reply);
        if (strcmp(t, "uc") != 0 && reregisters(code) && !reregistered) {
            char detail[256];
            pn_detail(reply, detail, sizeof detail);
            lode_log(LODE_LOG_WARN, "PrimeNet: t=%s: error %d (%s: %s): registering the computer again%s", t,
                     code, lode_pn_error_text(code), detail,
                     code == LODE_PN_UNREGISTERED_CPU || code == LODE_PN_CPU_IDENTITY_MISMATCH
                         ? " with a new GUID" : "");
            if (code == LODE_PN_UNREGISTERED_CPU || code == LODE_PN_CPU_IDENTITY_MISMATCH) {
                if (lode_pn_new_guid(c->state.guid) != 0)
                    return PN_TX_FAILED;
            }
            c->state.registered = c->state.options_sent = false;
            int reg = pn_register(c);
            if (reg != PN_TX_OK)
                return reg;
            reregistered = true;
            attempt = -1;
            continue;
        }
        return PN_TX_OK;
    }
}

/* Waits for the next pass: a wake (once any wait after failures is over),
 * its planned time, the last pass, or a stop (false). */
static bool wait_due(lode_primenet_client *c, double next_pass)
{
    pthread_mutex_lock(&c->lock);
    c->next_contact = next_pass;
    bool go = false;
    while (!pn_stopping(c)) {
        double now = lode_clock_s();
        if (c->finishing || (c->wake && now >= c->hold_until) || now >= next_pass) {
            go = true;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&c->cond, &c->lock, &ts);
    }
    c->wake = false;
    c->next_contact = 0;
    pthread_mutex_unlock(&c->lock);
    return go;
}

static double doubled(double wait, double first)
{
    /* The first wait, then each one twice the last. */
    return wait > 0 ? lode_backoff_s(wait, 1, PN_LONGEST_WAIT) : lode_backoff_s(first, 0, PN_LONGEST_WAIT);
}

static int run_pass(lode_primenet_client *c, bool last)
{
    pn_send_results(c, false); /* the count, for the status, whatever happens next */
    int rc = pn_ensure_registered(c);
    if (rc == PN_TX_OK)
        rc = pn_send_results(c, true);
    if (rc != PN_TX_OK || last)
        return rc;
    if ((rc = pn_register_keyless(c)) != PN_TX_OK)
        return rc;
    double now = lode_clock_s();
    if (!c->cfg.no_more_work && now >= c->fetch_after && pn_queue_short(c)) {
        bool no_work = false;
        if ((rc = pn_fill_queue(c, &no_work)) != PN_TX_OK)
            return rc;
        c->fetch_wait = no_work ? doubled(c->fetch_wait, c->cfg.retry_s) : 0;
        c->fetch_after = no_work ? lode_clock_s() + c->fetch_wait : 0;
    }
    if (lode_clock_s() >= c->next_report) {
        if ((rc = pn_report_progress(c)) != PN_TX_OK)
            return rc;
        c->next_report = lode_clock_s() + c->cfg.checkin_s;
    }
    return PN_TX_OK;
}

/* When the next pass is due after one that went well. */
static double next_pass_after_success(lode_primenet_client *c)
{
    double next = c->next_report;
    if (!c->cfg.no_more_work && pn_queue_short(c) && c->fetch_after < next)
        next = c->fetch_after;
    return next;
}

static void *client_main(void *arg)
{
    lode_primenet_client *c = arg;
    double next_pass = 0;
    while (wait_due(c, next_pass)) {
        pthread_mutex_lock(&c->lock);
        bool last = c->finishing;
        pthread_mutex_unlock(&c->lock);
        int rc = run_pass(c, last);
        if (rc == PN_TX_REFUSED || rc == PN_TX_STOPPED || last)
            break;
        double now = lode_clock_s();
        if (rc == PN_TX_FAILED) {
            c->retry_wait = doubled(c->retry_wait, c->cfg.retry_s);
            c->hold_until = next_pass = now + c->retry_wait;
            lode_log(LODE_LOG_INFO, "PrimeNet: next try in %.0f s (results stay queued, the work goes on)",
                     c->retry_wait);
            pn_set_state(c, "waiting to retry");
        } else {
            c->retry_wait = 0;
            c->hold_until = 0;
            next_pass = next_pass_after_success(c);
            pthread_mutex_lock(&c->lock);
            c->status.last_error[0] = '\0';
            pthread_mutex_unlock(&c->lock);
            pn_set_state(c, "idle");
        }
    }
    pthread_mutex_lock(&c->lock);
    c->next_contact = -1;
    if (!atomic_load(&c->refused))
        snprintf(c->status.state, sizeof c->status.state, "stopped");
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* uc's a: "Linux64,lode,v0.1.0". */
static void application_text(lode_primenet_client *c)
{
    struct utsname un;
    const char *os = uname(&un) == 0 ? un.sysname : "Linux";
    char name[32];
    size_t n = 0;
    for (const char *s = os; *s && n + 1 < sizeof name; s++)
        if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))
            name[n++] = *s;
    name[n] = '\0';
    snprintf(c->app, sizeof c->app, "%s%s,lode,v%s", n ? name : "Linux", sizeof(void *) == 8 ? "64" : "",
             c->cfg.program_version);
}

lode_primenet_client *lode_primenet_start(const lode_primenet_config *cfg, char *err, size_t err_len)
{
    lode_primenet_client *c = calloc(1, sizeof *c);
    if (c == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    c->cfg = *cfg;
    c->cfg.retry_s = cfg->retry_s > 0 ? cfg->retry_s : 60;
    c->cfg.checkin_s = cfg->checkin_s > 0 ? cfg->checkin_s : 3600;
    c->cfg.timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 180;
    c->http = (lode_pn_http){.url = cfg->url, .proxy = cfg->proxy, .proxy_user = cfg->proxy_user,
                             .proxy_pass = cfg->proxy_pass, .timeout_s = c->cfg.timeout_s,
                             .connect_timeout_s = c->cfg.timeout_s < 30 ? c->cfg.timeout_s : 30,
                             .stop = http_stop, .stop_user = c};
    int loaded = lode_pn_state_load(cfg->state_file, &c->state, err, err_len);
    if (loaded < 0) {
        free(c);
        return NULL;
    }
    c->state_loaded = loaded == 1;
    application_text(c);
    snprintf(c->status.state, sizeof c->status.state, "registering");
    c->next_contact = 0;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    if (pthread_create(&c->thread, NULL, client_main, c) != 0) {
        snprintf(err, err_len, "cannot start the PrimeNet thread: %s", strerror(errno));
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->cond);
        free(c);
        return NULL;
    }
    c->thread_started = true;
    return c;
}

void lode_primenet_wake(lode_primenet_client *c)
{
    pthread_mutex_lock(&c->lock);
    c->wake = true;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

bool lode_primenet_refused(lode_primenet_client *c)
{
    return atomic_load(&c->refused);
}

void lode_primenet_client_status(lode_primenet_client *c, lode_primenet_status *out)
{
    pthread_mutex_lock(&c->lock);
    *out = c->status;
    double now = lode_clock_s();
    out->next_contact_s = c->next_contact < 0 ? -1 : c->next_contact > now ? c->next_contact - now : 0;
    pthread_mutex_unlock(&c->lock);
}

static void join(lode_primenet_client *c)
{
    if (c->thread_started)
        pthread_join(c->thread, NULL);
    c->thread_started = false;
}

uint64_t lode_primenet_finish(lode_primenet_client *c)
{
    pthread_mutex_lock(&c->lock);
    c->finishing = true;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
    join(c);
    pthread_mutex_lock(&c->lock);
    uint64_t left = c->status.results_queued;
    pthread_mutex_unlock(&c->lock);
    return left;
}

void lode_primenet_stop(lode_primenet_client *c)
{
    if (c == NULL)
        return;
    atomic_store(&c->stopping, true);
    pthread_mutex_lock(&c->lock);
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
    join(c);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    free(c);
}
