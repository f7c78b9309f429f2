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

#include "core/base/backoff.h"
#include "core/base/clock.h"
#include "core/base/errmsg.h"
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

/* Pool i's state from its configuration: the URL parsed, the pin read,
 * the credentials taken from the URL where the options give none. */
static int set_up_pool(pool_state *p, const lode_pool_config *pc, size_t i, char *err, size_t err_len)
{
    char why[200];
    if (lode_stratum_url_parse(pc->url, &p->url, why, sizeof why) != 0)
        return lode_fail(err, err_len, "pool %zu: %s", i + 1, why);
    bool pinned = pc->cert_pin != NULL && pc->cert_pin[0] != '\0';
    uint8_t pin[32];
    if (pinned && !p->url.tls)
        return lode_fail(err, err_len, "pool %zu: a certificate pin needs a stratum+ssl:// URL", i + 1);
    if (pinned && lode_stratum_pin_parse(pc->cert_pin, pin) != 0)
        return lode_fail(err, err_len, "pool %zu: certificate pin must be 64 hex digits (sha256), colons allowed",
                         i + 1);
    /* What is logged: the URL without any credentials in it. */
    char shown[LODE_STRATUM_HOST_MAX + 32];
    lode_stratum_url_format(&p->url, shown, sizeof shown);
    p->url_text = strdup(shown);
    p->user = dup_or(pc->user, p->url.has_user ? p->url.user : "");
    p->pass = dup_or(pc->pass, p->url.has_pass ? p->url.pass : "x");
    p->cert_pin = pinned ? strdup(pc->cert_pin) : NULL;
    if (p->url_text == NULL || p->user == NULL || p->pass == NULL || (pinned && p->cert_pin == NULL))
        return lode_fail(err, err_len, "out of memory");
    return 0;
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
        if (set_up_pool(&s->pools[i], &config->pools[i], i, err, err_len) != 0) {
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

int lode_stratum_start(lode_stratum *s, lode_mining *mining)
{
    if (s == NULL || s->running)
        return -1;
    s->mining = mining;
    atomic_store(&s->stop, false);
    if (pthread_create(&s->thread, NULL, stratum_io_thread, s) != 0)
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
