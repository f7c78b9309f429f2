/* The stratum I/O thread: one session after another, each on the pool
 * that failover, a redirect or the user chose, with a jittered backoff
 * between the failed ones. stratum_session.c runs each session. */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/base/backoff.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/stratum/stratum_client_internal.h"

/* Where the next session goes and how long the one after a failure waits. */
typedef struct failover {
    size_t pool;
    unsigned failures;          /* in a row on this pool: failover_after moves on */
    unsigned attempt;           /* the backoff's attempt */
    unsigned seed;              /* the backoff's jitter */
    bool redirected;            /* the next session goes to redirect_url */
    bool chosen;                /* the user chose the pool: no probing for the primary */
    unsigned redirects;         /* redirects in a row with no share accepted in between */
    lode_stratum_url redirect_url;
} failover;

/* What a finished session leaves for the choice of the next. */
typedef struct session_outcome {
    session_end end;
    lode_stratum_url redirect;
    double redirect_wait;
    bool got_job, stalled;
} session_outcome;

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

/* Counts a refused mining.authorize on pool; true (the run fails) once
 * every pool has refused its worker. */
static bool refused_everywhere(lode_stratum *s, size_t pool)
{
    s->pools[pool].auth_refusals++;
    if (!all_pools_refused(s))
        return false;
    char why[300];
    if (s->pool_count == 1)
        snprintf(why, sizeof why, "%s refused worker '%s' %u times: check the user name and "
                 "password (-u/-p)", s->pools[0].url_text, s->pools[0].user, s->pools[0].auth_refusals);
    else
        snprintf(why, sizeof why, "every pool refused its worker (%u times each): check the user "
                 "names and passwords (-u/-p)", s->config.failover_after);
    lode_mining_fail(s->mining, why);
    return true;
}

/* Runs one session on f's pool and fills *out; true when the run must
 * end (every pool refused the worker). */
static bool run_one(lode_stratum *s, failover *f, session *ss, session_outcome *out)
{
    ss->s = s;
    ss->pool = f->pool;
    ss->url = f->redirected ? f->redirect_url : s->pools[f->pool].url;
    ss->chosen = f->chosen;
    lode_pool_events_init(&ss->events);
    pthread_mutex_lock(&s->lock);
    s->current_pool = f->pool; /* the pool tried, for lode_stratum_current_pool */
    pthread_mutex_unlock(&s->lock);
    out->end = stratum_run_session(s, f->pool, &ss->url, ss);
    stratum_end_session(s, ss, f->pool);
    out->redirect = ss->redirect;
    out->redirect_wait = ss->redirect_wait;
    out->got_job = ss->got_job;
    out->stalled = ss->stalled;
    if (ss->accepted_any)
        f->redirects = 0;
    return ss->auth_refused && refused_everywhere(s, f->pool);
}

static void move_to_next_pool(lode_stratum *s, failover *f)
{
    f->pool = (f->pool + 1) % s->pool_count;
    f->redirected = false;
    f->chosen = f->pool != 0;
    f->failures = f->attempt = 0;
}

/* "stratum: <before> <pool's URL><after>", with the pool_switch event. */
static void log_move(lode_stratum *s, const failover *f, lode_log_level level, const char *reason,
                     const char *before, const char *after)
{
    size_t from = (f->pool + s->pool_count - 1) % s->pool_count;
    lode_log_event(level, "pool_switch",
                   LODE_LOG_FIELDS(LODE_LOG_STR("from", s->pools[from].url_text),
                                   LODE_LOG_STR("to", s->pools[f->pool].url_text), LODE_LOG_STR("reason", reason)),
                   "stratum: %s %s%s", before, s->pools[f->pool].url_text, after);
}

/* A failed session: the same pool again, or the list after a redirect
 * target, or the next pool after failover_after failures in a row. */
static void after_failure(lode_stratum *s, failover *f, const session_outcome *out)
{
    if (out->got_job && !out->stalled) { /* it worked for a while: retry the same pool first */
        f->failures = f->attempt = 0;
    } else if (f->redirected) {
        f->redirected = false; /* the redirect target failed: back to the list */
    } else if (++f->failures >= s->config.failover_after && s->pool_count > 1) {
        f->pool = (f->pool + 1) % s->pool_count;
        f->failures = 0;
        f->chosen = false;
        log_move(s, f, LODE_LOG_WARN, "failover", "failing over to", "");
    }
}

/* Follows a pool's client.reconnect, after a backoff when it keeps
 * redirecting (the same backoff as a pool that keeps failing). */
static void follow_redirect(lode_stratum *s, failover *f, const session_outcome *out)
{
    f->redirected = true;
    f->redirect_url = out->redirect;
    f->attempt = 0;
    double delay = f->redirects ? backoff_delay(&s->config, f->redirects - 1, &f->seed) : 0;
    f->redirects++;
    if (delay > out->redirect_wait)
        lode_log(LODE_LOG_INFO, "stratum: redirected %u times in a row; reconnecting in %.1f s", f->redirects,
                 delay);
    pause_for(s, delay > out->redirect_wait ? delay : out->redirect_wait);
}

/* Chooses the next session's pool from how the last ended; true when it
 * starts at once, false when it waits out the backoff first. */
static bool choose_next(lode_stratum *s, failover *f, const session_outcome *out)
{
    switch (out->end) {
    case END_STOP:
        return false;
    case END_REDIRECT:
        follow_redirect(s, f, out);
        return true;
    case END_PRIMARY_BACK:
        f->pool = 0;
        f->redirected = f->chosen = false;
        f->failures = f->attempt = 0;
        return true;
    case END_NEXT_POOL:
        move_to_next_pool(s, f);
        return true;
    case END_GOOD:
        f->failures = f->attempt = 0;
        return false;
    case END_FAILED:
        after_failure(s, f, out);
        return false;
    }
    return false;
}

void *stratum_io_thread(void *arg)
{
    lode_stratum *s = arg;
    failover f = {.seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)s};
    while (!stratum_stopping(s)) {
        session *ss = calloc(1, sizeof *ss);
        if (ss == NULL) {
            lode_log(LODE_LOG_ERROR, "stratum: out of memory");
            pause_for(s, 1);
            continue;
        }
        session_outcome out;
        bool give_up = run_one(s, &f, ss, &out);
        free(ss);
        if (give_up)
            break;
        if (choose_next(s, &f, &out))
            continue;
        if (stratum_stopping(s))
            break;
        if (atomic_exchange(&s->next_pool, false)) { /* asked while this pool was down */
            move_to_next_pool(s, &f);
            log_move(s, &f, LODE_LOG_INFO, "asked", "moving on to", ", as asked");
            continue;
        }
        double delay = backoff_delay(&s->config, f.attempt, &f.seed);
        if (out.end == END_FAILED && !out.got_job)
            f.attempt++;
        lode_log(LODE_LOG_INFO, "stratum: reconnecting in %.1f s", delay);
        pause_for(s, delay);
    }
    return NULL;
}
