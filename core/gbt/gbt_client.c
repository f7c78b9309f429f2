/* The getblocktemplate job source: JSON-RPC over libcurl, three threads
 * (poller, longpoller, submitter); see gbt_client.h for the behaviour. */
#include "core/gbt/gbt_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
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
#include "core/base/hex.h"
#include "core/base/log.h"
#include "core/base/sha256_ref.h"
#include "core/gbt/address.h"
#include "core/gbt/block.h"
#include "core/gbt/gbt_internal.h"
#include "core/gbt/node_check.h"
#include "core/gbt/template.h"

#define LONGPOLL_TIMEOUT_S 600.0        /* the node answers sooner when anything changes */
#define MAX_BACKOFF_S 30.0
#define RPC_INVALID_PARAMETER (-8)
#define JOB_TIME_REFRESH_S 60u          /* a new job when the template's time moved this much */
#define RPC_METHOD_NOT_FOUND (-32601)
#define DEFAULT_AUTH_ATTEMPTS 3

/* ---------- small helpers ---------- */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

void lode_gbt_sleep_or_wake(lode_gbt *g, double seconds, bool *flag)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)seconds;
    until.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&g->lock);
    while (!atomic_load(&g->stopping) && !(flag && *flag))
        if (pthread_cond_timedwait(&g->wake, &g->lock, &until) == ETIMEDOUT)
            break;
    if (flag)
        *flag = false;
    pthread_mutex_unlock(&g->lock);
}

/* ---------- templates -> jobs ---------- */

static int fetch_template(lode_gbt *g, CURL *curl, const char *longpollid, double timeout_s,
                          lode_gbt_template *tpl, rpc_status *status, char *err, size_t err_len)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        pthread_mutex_lock(&g->lock);
        bool segwit_only = g->segwit_rules_only;
        pthread_mutex_unlock(&g->lock);
        json_t *request = segwit_only
                              ? json_pack("{s:[s]}", "rules", "segwit")
                              : json_pack("{s:[s,s]}", "rules", "mweb", "segwit");
        json_object_set_new(request, "capabilities",
                            json_pack("[s,s,s,s]", "longpoll", "coinbasetxn", "coinbasevalue",
                                      "workid"));
        if (longpollid && *longpollid)
            json_object_set_new(request, "longpollid", json_string(longpollid));
        int node_code;
        json_t *result = lode_gbt_rpc_call(g, curl, "getblocktemplate", json_pack("[o]", request),
                                  timeout_s, 0, status, &node_code, err, err_len);
        if (result) {
            int rc = lode_gbt_template_parse(result, tpl, err, err_len);
            json_decref(result);
            if (rc != 0) /* the error may quote the node's text (a coinbaseaux key) */
                lode_log_printable(err, err_len, err);
            return rc;
        }
        bool rules_refused = *status == RPC_NODE_ERROR && node_code == RPC_INVALID_PARAMETER &&
                             strstr(err, "rule") != NULL;
        if (!rules_refused || segwit_only)
            return -1;
        lode_log(LODE_LOG_INFO, "getblocktemplate: the node refused the mweb rule (%s); "
                                "asking with the segwit rule only", err);
        pthread_mutex_lock(&g->lock);
        g->segwit_rules_only = true;
        pthread_mutex_unlock(&g->lock);
    }
    return -1;
}

void lode_gbt_display_hash(const uint8_t internal[32], char out[65])
{
    lode_hex_encode_reversed(internal, 32, out);
}

/* Keeps tpl and its job as template number, the one now mined; true when
 * it builds on a block lode sent. */
static bool keep_template(lode_gbt *g, uint64_t number, lode_gbt_template *tpl, const lode_job *job)
{
    pthread_mutex_lock(&g->lock);
    kept_template *slot = &g->kept[number % KEPT_TEMPLATES];
    if (slot->number) {
        lode_gbt_template_free(&slot->tpl);
        lode_job_free(&slot->job);
    }
    slot->number = number;
    slot->tpl = *tpl;
    slot->job = *job;
    g->template_count = number;
    g->has_current = true;
    memcpy(g->current_prevhash, tpl->prevhash, 32);
    snprintf(g->current_longpollid, sizeof g->current_longpollid, "%s", tpl->longpollid);
    g->current_curtime = tpl->curtime;
    g->stats.height = tpl->height;
    /* On a block of our own, "block accepted at height N" already says that
     * N + 1 is next: one line per block, not two. */
    bool on_own_block = false;
    for (size_t i = 0; i < SENT_HASHES; i++)
        on_own_block = on_own_block || memcmp(g->sent_hash[i], tpl->prevhash, 32) == 0;
    pthread_cond_broadcast(&g->wake); /* the longpoller waits for a longpollid */
    pthread_mutex_unlock(&g->lock);
    return on_own_block;
}

/* Makes tpl the current template unless it is the one already mined
 * (same previous block and longpollid). Takes ownership of tpl. */
static void install_job(lode_gbt *g, lode_gbt_template *tpl, const char *origin)
{
    pthread_mutex_lock(&g->install_lock);
    pthread_mutex_lock(&g->lock);
    bool given_up = g->given_up;
    bool same_block = g->has_current && memcmp(g->current_prevhash, tpl->prevhash, 32) == 0;
    /* Same block and transactions: keep the job, unless its time has aged
     * (the devices never roll ntime, so a fresh curtime comes from here). */
    bool unchanged = same_block && tpl->longpollid[0] &&
                     strcmp(g->current_longpollid, tpl->longpollid) == 0 &&
                     tpl->curtime < g->current_curtime + JOB_TIME_REFRESH_S;
    pthread_mutex_unlock(&g->lock);
    if (unchanged || given_up) {
        lode_gbt_template_free(tpl);
        pthread_mutex_unlock(&g->install_lock);
        return;
    }

    uint64_t number = g->template_count + 1; /* written under install_lock only */
    char job_id[LODE_JOB_ID_MAX];
    snprintf(job_id, sizeof job_id, "t%" PRIu64, number);
    lode_gbt_job_params params = {
        .algo = g->algo,
        .payout_script = g->payout.script,
        .payout_script_len = g->payout.script_len,
        .tag = g->tag,
        .job_id = job_id,
        .clean = !same_block,
    };
    lode_job job, copy;
    char err[256];
    if (lode_gbt_build_job(tpl, &params, &job, err, sizeof err) != 0) {
        lode_log(LODE_LOG_ERROR, "getblocktemplate: cannot use the template for height %" PRIu32
                                 ": %s", tpl->height, err);
        lode_gbt_template_free(tpl);
        pthread_mutex_unlock(&g->install_lock);
        return;
    }
    if (lode_job_copy(&copy, &job) != 0) {
        lode_log(LODE_LOG_ERROR, "getblocktemplate: out of memory");
        lode_job_free(&job);
        lode_gbt_template_free(tpl);
        pthread_mutex_unlock(&g->install_lock);
        return;
    }

    uint32_t height = tpl->height;
    size_t tx_count = tpl->tx_count;
    uint64_t value = tpl->coinbasevalue;
    bool on_own_block = keep_template(g, number, tpl, &job);

    if (params.clean && !on_own_block) {
        char prev[65];
        lode_gbt_display_hash(copy.prevhash, prev);
        lode_log(LODE_LOG_INFO, "getblocktemplate: mining height %" PRIu32 " on %s, %zu transactions, "
                                "reward %" PRIu64 " (%s)", height, prev, tx_count, value, origin);
    } else if (!params.clean) {
        lode_log(LODE_LOG_DEBUG, "getblocktemplate: template updated, %zu transactions (%s)", tx_count,
                 origin);
    }
    if (g->mining && lode_mining_set_job(g->mining, &copy) != 0)
        lode_log(LODE_LOG_ERROR, "getblocktemplate: the mining session refused job %s", copy.id);
    lode_job_free(&copy);
    pthread_mutex_unlock(&g->install_lock);
}

/* A curtime far ahead of the clock is pulled back (said once per value the
 * node sends); a template whose mintime is that far ahead is not mined. */
static bool template_time_ok(lode_gbt *g, lode_gbt_template *tpl)
{
    char why[256];
    uint32_t sent = tpl->curtime;
    int rc = lode_gbt_template_check_time(tpl, (uint64_t)time(NULL), why, sizeof why);
    if (rc == 0)
        return true;
    pthread_mutex_lock(&g->lock);
    bool first = g->time_warned != sent;
    g->time_warned = sent;
    pthread_mutex_unlock(&g->lock);
    if (first)
        lode_log(rc < 0 ? LODE_LOG_ERROR : LODE_LOG_WARN, "getblocktemplate: %s", why);
    return rc > 0;
}

static void install_template(lode_gbt *g, lode_gbt_template *tpl, const char *origin)
{
    if (template_time_ok(g, tpl))
        install_job(g, tpl, origin);
    else
        lode_gbt_template_free(tpl);
}

/* A failed request: the first one after success says the node is lost and
 * pauses mining; later ones are logged as warnings (not at all when quiet). */
static void note_failure(lode_gbt *g, const char *err, bool quiet)
{
    if (atomic_load(&g->stopping))
        return;
    pthread_mutex_lock(&g->lock);
    bool was_connected = g->stats.connected;
    g->stats.connected = false;
    g->has_current = false; /* the next template starts clean */
    g->current_longpollid[0] = '\0';
    pthread_mutex_unlock(&g->lock);
    if (was_connected) {
        lode_log_event(LODE_LOG_ERROR, "pool_disconnect", LODE_LOG_FIELDS(LODE_LOG_STR("node", g->url), LODE_LOG_STR("reason", err)),
                       "getblocktemplate: lost the node at %s: %s; mining paused", g->url, err);
        if (g->mining)
            lode_mining_clear_job(g->mining);
    } else if (!quiet) {
        lode_log(LODE_LOG_WARN, "%s (node %s); retrying", err, g->url);
    }
}

/* The node refused something retrying cannot fix: mining stops and the
 * program exits with why (lode_mining_fail). */
void lode_gbt_give_up(lode_gbt *g, const char *why)
{
    pthread_mutex_lock(&g->lock);
    bool first = !g->given_up;
    g->given_up = true;
    g->stats.connected = false;
    g->has_current = false;
    g->current_longpollid[0] = '\0';
    pthread_cond_broadcast(&g->wake);
    pthread_mutex_unlock(&g->lock);
    if (!first)
        return;
    if (g->mining) {
        lode_mining_clear_job(g->mining);
        lode_mining_fail(g->mining, why); /* the program logs it and exits 3 */
    } else {
        lode_log(LODE_LOG_ERROR, "%s", why);
    }
}

typedef enum check_result { CHECK_OK, CHECK_RETRY, CHECK_REFUSED } check_result;

/* Does the node take the payout address, as the same script lode pays to? */
static check_result check_address(lode_gbt *g, CURL *curl, rpc_status *status, char *err,
                                  size_t err_len)
{
    int node_code;
    json_t *r = lode_gbt_rpc_call(g, curl, "validateaddress", json_pack("[s]", g->payout_text), g->timeout_s,
                         0, status, &node_code, err, err_len);
    if (!r) {
        if (*status == RPC_NODE_ERROR && node_code == RPC_METHOD_NOT_FOUND) {
            lode_log(LODE_LOG_WARN, "getblocktemplate: the node has no validateaddress; the payout "
                                    "address is not checked against its chain");
            return CHECK_OK;
        }
        return CHECK_RETRY;
    }
    check_result out = CHECK_OK;
    const json_t *valid = json_object_get(r, "isvalid");
    const json_t *script = json_object_get(r, "scriptPubKey");
    char ours[2 * LODE_ADDRESS_SCRIPT_MAX + 1];
    lode_hex_encode(g->payout.script, g->payout.script_len, ours);
    if (!json_is_boolean(valid)) {
        snprintf(err, err_len, "validateaddress: the node's reply has no \"isvalid\"");
        out = CHECK_RETRY;
    } else if (!json_is_true(valid)) {
        const json_t *why = json_object_get(r, "error");
        char text[64];
        lode_log_printable(text, sizeof text, json_is_string(why) ? json_string_value(why) : "");
        lode_fail(err, err_len, "the node does not take the payout address %.74s (lode reads a %s %s "
                 "address)%s%s: give an address of the node's chain (--coinbase-addr)",
                 g->payout_text, g->payout.network, g->payout.kind, text[0] ? ": " : "", text);
        out = CHECK_REFUSED;
    } else if (json_is_string(script) && strcasecmp(json_string_value(script), ours) != 0) {
        char text[2 * LODE_ADDRESS_SCRIPT_MAX + 1];
        lode_log_printable(text, sizeof text, json_string_value(script));
        lode_fail(err, err_len, "the node reads the payout address %.74s as script %s, lode as %s: "
                 "not mining to it", g->payout_text, text, ours);
        out = CHECK_REFUSED;
    }
    json_decref(r);
    return out;
}

/* The node's header for block hash (internal order), checked to hash to it. */
static int get_header(lode_gbt *g, CURL *curl, const uint8_t hash[32], uint8_t header[80],
                      rpc_status *status, char *err, size_t err_len)
{
    char hex[65];
    lode_gbt_display_hash(hash, hex);
    int node_code;
    json_t *r = lode_gbt_rpc_call(g, curl, "getblockheader", json_pack("[s,b]", hex, 0), g->timeout_s, 0,
                         status, &node_code, err, err_len);
    if (!r)
        return -1;
    uint8_t check[32];
    int rc = -1;
    if (!json_is_string(r) || json_string_length(r) != 160 ||
        lode_hex_decode(json_string_value(r), header, 80) != 0)
        snprintf(err, err_len, "getblockheader: the node's reply is not an 80-byte header");
    else if (lode_ref_sha256d(header, 80, check), memcmp(check, hash, 32) != 0)
        snprintf(err, err_len, "getblockheader: the node's header for block %s has another hash", hex);
    else
        rc = 0;
    json_decref(r);
    if (rc != 0)
        *status = RPC_TRANSPORT_ERROR; /* a broken reply: retried like one */
    return rc;
}

/* Is the chain's proof of work g->algo? See core/gbt/node_check.h. */
static check_result check_algo(lode_gbt *g, CURL *curl, rpc_status *status, char *err,
                               size_t err_len)
{
    int node_code;
    json_t *r = lode_gbt_rpc_call(g, curl, "getbestblockhash", NULL, g->timeout_s, 0, status, &node_code, err,
                         err_len);
    if (!r)
        return CHECK_RETRY;
    uint8_t hash[32];
    bool ok = json_is_string(r) && json_string_length(r) == 64 &&
              lode_hex_decode(json_string_value(r), hash, 32) == 0;
    json_decref(r);
    if (!ok) {
        snprintf(err, err_len, "getbestblockhash: the node's reply is not a block hash");
        *status = RPC_TRANSPORT_ERROR;
        return CHECK_RETRY;
    }
    for (size_t i = 0; i < 16; i++) { /* display order -> internal */
        uint8_t t = hash[i];
        hash[i] = hash[31 - i];
        hash[31 - i] = t;
    }
    const char *algo = lode_algo_get(g->algo)->name;
    lode_gbt_pow_check c;
    lode_gbt_pow_check_init(&c, g->algo);
    for (unsigned depth = 0; depth < LODE_GBT_POW_CHECK_MAX_HEADERS; depth++) {
        uint8_t header[80];
        if (get_header(g, curl, hash, header, status, err, err_len) != 0)
            return CHECK_RETRY;
        switch (lode_gbt_pow_check_header(&c, header)) {
        case LODE_GBT_POW_CONFIRMED:
            lode_log(LODE_LOG_DEBUG, "getblocktemplate: %u headers meet their targets under %s: "
                                     "the chain's proof of work is %s", c.headers, algo, algo);
            return CHECK_OK;
        case LODE_GBT_POW_WRONG: {
            char hex[65];
            lode_gbt_display_hash(hash, hex);
            char where[48] = "its tip";
            if (depth > 0)
                snprintf(where, sizeof where, "%u block%s below its tip", depth, depth > 1 ? "s" : "");
            snprintf(err, err_len, "-a %s is not this chain's proof of work: the node's block %s (%s) "
                     "misses its own target under %s; give the chain's algorithm", algo, hex, where,
                     algo);
            return CHECK_REFUSED;
        }
        case LODE_GBT_POW_MALFORMED:
            snprintf(err, err_len, "getblockheader: the node's header has invalid nBits");
            *status = RPC_TRANSPORT_ERROR;
            return CHECK_RETRY;
        case LODE_GBT_POW_GENESIS:
            depth = LODE_GBT_POW_CHECK_MAX_HEADERS; /* nothing older */
            break;
        case LODE_GBT_POW_MORE:
            memcpy(hash, header + 4, 32);
            break;
        }
    }
    lode_log(LODE_LOG_WARN, "getblocktemplate: the chain's %u blocks above genesis do not prove that "
                            "its proof of work is %s (another algorithm passes them with chance "
                            "2^%.0f); the node's first \"high-hash\" answer to a block will",
             c.headers, algo, c.log2_pass);
    return CHECK_OK;
}

static void note_success(lode_gbt *g)
{
    pthread_mutex_lock(&g->lock);
    bool was_connected = g->stats.connected;
    g->stats.connected = true;
    g->unsent_logged = false;
    bool segwit_only = g->segwit_rules_only;
    pthread_mutex_unlock(&g->lock);
    if (!was_connected)
        lode_log_event(LODE_LOG_INFO, "pool_connect", LODE_LOG_FIELDS(LODE_LOG_STR("node", g->url)),
                       "getblocktemplate: connected to %s (rules: %s)", g->url,
                 segwit_only ? "segwit" : "mweb, segwit");
}

static void *poller_main(void *arg)
{
    lode_gbt *g = arg;
    CURL *curl = curl_easy_init();
    unsigned failures = 0;      /* in a row: the backoff's attempt */
    unsigned auth_refusals = 0; /* in a row */
    while (!atomic_load(&g->stopping)) {
        pthread_mutex_lock(&g->lock);
        bool given_up = g->given_up; /* by the submitter: nothing more to fetch */
        pthread_mutex_unlock(&g->lock);
        if (given_up)
            break;
        lode_gbt_template tpl;
        char err[256];
        double wait = g->poll_s;
        rpc_status status = RPC_OK;
        check_result checked = CHECK_OK;
        if (curl && !g->node_checked) {
            checked = check_address(g, curl, &status, err, sizeof err);
            if (checked == CHECK_OK)
                checked = check_algo(g, curl, &status, err, sizeof err);
            g->node_checked = checked == CHECK_OK;
        }
        if (checked == CHECK_REFUSED) {
            lode_gbt_give_up(g, err);
            break;
        }
        if (!curl) {
            lode_log(LODE_LOG_ERROR, "getblocktemplate: libcurl could not start");
            curl = curl_easy_init();
            wait = MAX_BACKOFF_S;
        } else if (checked == CHECK_OK &&
                   fetch_template(g, curl, NULL, g->timeout_s, &tpl, &status, err, sizeof err) == 0) {
            note_success(g);
            install_template(g, &tpl, "poll");
            failures = 0;
            auth_refusals = 0;
        } else {
            /* Refused credentials are the user's to fix: a few tries (a node
             * that restarts writes a new cookie), then the program stops. */
            auth_refusals = status == RPC_AUTH_ERROR ? auth_refusals + 1 : 0;
            if (auth_refusals >= g->auth_attempts) {
                char why[400];
                snprintf(why, sizeof why, "%s; giving up after %u tries", err, auth_refusals);
                lode_gbt_give_up(g, why);
                break;
            }
            note_failure(g, err, auth_refusals > 0); /* said once, when giving up */
            wait = lode_backoff_s(1, failures, MAX_BACKOFF_S);
            if (failures < 32) /* the cap is reached long before */
                failures++;
        }
        lode_gbt_sleep_or_wake(g, wait, &g->refresh_requested);
    }
    if (curl)
        curl_easy_cleanup(curl);
    return NULL;
}

static void *longpoller_main(void *arg)
{
    lode_gbt *g = arg;
    CURL *curl = curl_easy_init();
    while (curl && !atomic_load(&g->stopping)) {
        char longpollid[LODE_GBT_LONGPOLLID_MAX];
        pthread_mutex_lock(&g->lock);
        while (!atomic_load(&g->stopping) && !g->given_up && !g->current_longpollid[0])
            pthread_cond_wait(&g->wake, &g->lock);
        snprintf(longpollid, sizeof longpollid, "%s", g->current_longpollid);
        bool given_up = g->given_up;
        pthread_mutex_unlock(&g->lock);
        if (atomic_load(&g->stopping) || given_up)
            break;
        lode_gbt_template tpl;
        rpc_status status;
        char err[256];
        const double t0 = lode_clock_s();
        if (fetch_template(g, curl, longpollid, LONGPOLL_TIMEOUT_S, &tpl, &status, err,
                           sizeof err) == 0) {
            install_template(g, &tpl, "long poll");
            /* A node that ignores longpollid answers at once: do not hammer it. */
            double elapsed = lode_clock_s() - t0;
            if (elapsed < 1.0)
                lode_gbt_sleep_or_wake(g, 1.0, NULL);
        } else {
            /* The poller reports a lost node; here just do not spin. */
            if (!atomic_load(&g->stopping))
                lode_log(LODE_LOG_DEBUG, "getblocktemplate long poll: %s", err);
            lode_gbt_sleep_or_wake(g, g->poll_s, NULL);
        }
    }
    if (curl)
        curl_easy_cleanup(curl);
    return NULL;
}

/* ---------- life cycle ---------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;
static void init_curl(void)
{
    curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The configuration as lode_gbt_create takes it: a node URL, a nonce-scan
 * algorithm, credentials (a cookie file that exists now), a tag that fits,
 * a payout address (parsed into *payout), times in bounds. */
static int check_config(const lode_gbt_config *config, lode_address *payout, char *err, size_t err_len)
{
    if (!config->url || (strncmp(config->url, "http://", 7) != 0 &&
                         strncmp(config->url, "https://", 8) != 0))
        return lode_fail(err, err_len, "the node URL must start with http:// or https:// (got \"%s\")",
                         config->url ? config->url : "");
    if (strlen(config->url) > 1000 || strpbrk(config->url, " \t\r\n"))
        return lode_fail(err, err_len, "the node URL is malformed");
    if (config->algo >= LODE_ALGO_COUNT ||
        lode_algo_get(config->algo)->kind != LODE_WORK_NONCE_SCAN)
        return lode_fail(err, err_len, "getblocktemplate mining needs a nonce-scan algorithm");
    if (!config->user && !config->cookie_file)
        return lode_fail(err, err_len, "getblocktemplate needs an RPC user/password or the node's cookie file");
    if (config->coinbase_tag && strlen(config->coinbase_tag) > LODE_GBT_TAG_MAX)
        return lode_fail(err, err_len, "the coinbase tag is longer than %d bytes", LODE_GBT_TAG_MAX);
    char why[160];
    if (lode_address_parse(config->payout_address, payout, why, sizeof why) != 0)
        return lode_fail(err, err_len, "payout address \"%.100s\": %s",
                         config->payout_address ? config->payout_address : "", why);
    if (!config->user) {
        /* A cookie file missing now is a wrong path (or a node not started):
         * said at once. Later the node may remove and rewrite it when it
         * restarts, so then a missing cookie is retried like a lost node. */
        char cookie[512];
        int rc = lode_gbt_read_cookie(config->cookie_file, cookie, sizeof cookie, err, err_len);
        memset(cookie, 0, sizeof cookie);
        if (rc != 0) {
            size_t n = strlen(err);
            snprintf(err + n, err_len - n, " (the node writes it in its datadir when it starts; "
                     "is it running, and is this its datadir?)");
            return -1;
        }
    }
    if (config->poll_s < 0 || config->timeout_s < 0 || config->poll_s > 3600 ||
        config->timeout_s > 3600)
        return lode_fail(err, err_len, "poll and timeout must be 0..3600 seconds");
    return 0;
}

lode_gbt *lode_gbt_create(const lode_gbt_config *config, char *err, size_t err_len)
{
    lode_address payout;
    if (check_config(config, &payout, err, err_len) != 0)
        return NULL;
    pthread_once(&curl_once, init_curl);
    if (curl_init_result != CURLE_OK) {
        snprintf(err, err_len, "libcurl: %s", curl_easy_strerror(curl_init_result));
        return NULL;
    }
    lode_gbt *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    g->algo = config->algo;
    g->payout = payout;
    g->poll_s = config->poll_s > 0 ? config->poll_s : 5.0;
    g->timeout_s = config->timeout_s > 0 ? config->timeout_s : 30.0;
    g->auth_attempts = config->auth_attempts > 0 ? config->auth_attempts : DEFAULT_AUTH_ATTEMPTS;
    g->payout_text = strdup(config->payout_address);
    g->url = strdup(config->url);
    g->user = dup_or_null(config->user);
    g->pass = dup_or_null(config->pass);
    g->cookie_file = dup_or_null(config->cookie_file);
    g->tag = dup_or_null(config->coinbase_tag);
    atomic_init(&g->stopping, false);
    pthread_mutex_init(&g->lock, NULL);
    pthread_mutex_init(&g->install_lock, NULL);
    pthread_cond_init(&g->wake, NULL);
    if (!g->url || (config->user && !g->user) || (config->pass && !g->pass) ||
        (config->cookie_file && !g->cookie_file) || (config->coinbase_tag && !g->tag) ||
        !g->payout_text) {
        lode_gbt_free(g);
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    lode_log(LODE_LOG_INFO, "getblocktemplate: paying to a %s %s address", payout.network,
             payout.kind);
    lode_gbt_proxy_setup(g);
    return g;
}

int lode_gbt_start(lode_gbt *g, lode_mining *mining)
{
    if (g->started)
        return -1;
    g->mining = mining;
    if (pthread_create(&g->submitter, NULL, lode_gbt_submitter_main, g) != 0)
        return -1;
    if (pthread_create(&g->longpoller, NULL, longpoller_main, g) != 0) {
        atomic_store(&g->stopping, true);
        pthread_mutex_lock(&g->lock);
        pthread_cond_broadcast(&g->wake);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->submitter, NULL);
        return -1;
    }
    if (pthread_create(&g->poller, NULL, poller_main, g) != 0) {
        atomic_store(&g->stopping, true);
        pthread_mutex_lock(&g->lock);
        pthread_cond_broadcast(&g->wake);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->submitter, NULL);
        pthread_join(g->longpoller, NULL);
        return -1;
    }
    g->started = true;
    return 0;
}

void lode_gbt_stop(lode_gbt *g)
{
    if (!g || !g->started || g->joined)
        return;
    atomic_store(&g->stopping, true);
    pthread_mutex_lock(&g->lock);
    pthread_cond_broadcast(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->poller, NULL);
    pthread_join(g->longpoller, NULL);
    pthread_join(g->submitter, NULL);
    g->joined = true;
}

void lode_gbt_stats_get(lode_gbt *g, lode_gbt_stats *out)
{
    pthread_mutex_lock(&g->lock);
    *out = g->stats;
    pthread_mutex_unlock(&g->lock);
}

void lode_gbt_free(lode_gbt *g)
{
    if (!g)
        return;
    lode_gbt_stop(g);
    for (size_t i = 0; i < KEPT_TEMPLATES; i++) {
        if (g->kept[i].number) {
            lode_gbt_template_free(&g->kept[i].tpl);
            lode_job_free(&g->kept[i].job);
        }
    }
    pthread_mutex_destroy(&g->lock);
    pthread_mutex_destroy(&g->install_lock);
    pthread_cond_destroy(&g->wake);
    free(g->url);
    free(g->user);
    if (g->pass)
        memset(g->pass, 0, strlen(g->pass));
    free(g->pass);
    free(g->cookie_file);
    free(g->tag);
    free(g->payout_text);
    free(g);
}
