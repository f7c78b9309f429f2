/* The getblocktemplate job source: JSON-RPC over libcurl, three threads
 * (poller, longpoller, submitter); see gbt_client.h for the behaviour. */
#include "core/gbt/gbt_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/hex.h"
#include "core/base/log.h"
#include "core/base/sha256_ref.h"
#include "core/gbt/address.h"
#include "core/gbt/block.h"
#include "core/gbt/node_check.h"
#include "core/gbt/template.h"

#define KEPT_TEMPLATES 8
#define SHARE_QUEUE_LEN 64
#define MAX_REPLY_BYTES (64u << 20)     /* a template with an MWEB block stays far below */
#define LONGPOLL_TIMEOUT_S 600.0        /* the node answers sooner when anything changes */
#define MAX_BACKOFF_S 30.0
#define RPC_INVALID_PARAMETER (-8)
#define SUBMIT_ATTEMPTS 3
#define STOP_SUBMIT_GRACE_S 5.0         /* a submission a stop lets run on, at most */
#define RPC_IN_WARMUP (-28)
#define JOB_TIME_REFRESH_S 60u          /* a new job when the template's time moved this much */
#define RPC_METHOD_NOT_FOUND (-32601)
#define DEFAULT_AUTH_ATTEMPTS 3
#define SENT_HASHES 4                   /* lode's latest submitted blocks, for the log */

typedef struct kept_template {
    uint64_t number;        /* 0 = empty slot */
    lode_gbt_template tpl;
    lode_job job;
} kept_template;

typedef struct queued_share {
    char job_id[LODE_JOB_ID_MAX];
    uint8_t extranonce2[LODE_EXTRANONCE_MAX];
    uint8_t header[80];
} queued_share;

struct lode_gbt {
    lode_algo algo;
    char *url, *user, *pass, *cookie_file, *tag, *payout_text;
    lode_address payout;
    double poll_s, timeout_s;
    unsigned auth_attempts;
    lode_mining *mining;
    bool node_checked;             /* the payout address and the algorithm were checked (poller) */

    atomic_bool stopping;
    pthread_mutex_t lock;          /* everything below */
    pthread_cond_t wake;           /* stop, refresh request, new longpollid, shares */
    bool refresh_requested;
    bool segwit_rules_only;        /* the node refused "mweb" (Bitcoin Core) */
    kept_template kept[KEPT_TEMPLATES];
    uint64_t template_count;
    bool has_current;
    uint8_t current_prevhash[32];
    char current_longpollid[LODE_GBT_LONGPOLLID_MAX];
    uint32_t current_curtime;
    queued_share queue[SHARE_QUEUE_LEN];
    size_t queue_head, queue_len;
    lode_gbt_stats stats;
    bool queue_full_logged;        /* one warning per overflow burst */
    bool unsent_logged;            /* one error per outage for blocks the node missed */
    bool given_up;                 /* lode_mining_fail was called: the node refused us */
    bool has_settled;              /* a block of ours on settled_prevhash was accepted, or
                                      came back inconclusive (the node has another there) */
    uint8_t settled_prevhash[32];
    uint8_t sent_hash[SENT_HASHES][32]; /* hashes of the latest blocks submitted (ring) */
    size_t sent_next;

    pthread_mutex_t install_lock;  /* one template installation at a time */
    pthread_t poller, longpoller, submitter;
    bool started, joined;
};

/* ---------- small helpers ---------- */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void sleep_or_wake(lode_gbt *g, double seconds, bool *flag)
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

/* ---------- JSON-RPC over HTTP ---------- */

typedef struct reply_buffer {
    char *data;
    size_t len;
    bool too_large;
} reply_buffer;

static size_t on_body(char *chunk, size_t size, size_t count, void *user)
{
    reply_buffer *r = user;
    size_t n = size * count;
    if (n > MAX_REPLY_BYTES - r->len) {
        r->too_large = true;
        return 0; /* aborts the transfer */
    }
    char *grown = realloc(r->data, r->len + n + 1);
    if (!grown)
        return 0;
    memcpy(grown + r->len, chunk, n);
    r->data = grown;
    r->len += n;
    r->data[r->len] = '\0';
    return n;
}

/* One transfer's view of a stop: it aborts stop_grace_s after it first
 * sees the stop (0: at once). */
typedef struct transfer {
    lode_gbt *g;
    double stop_grace_s;
    bool stop_seen;
    struct timespec stop_at;
} transfer;

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    transfer *t = user;
    if (!atomic_load(&t->g->stopping))
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!t->stop_seen) {
        t->stop_seen = true;
        t->stop_at = now;
    }
    double waited = (double)(now.tv_sec - t->stop_at.tv_sec) + (now.tv_nsec - t->stop_at.tv_nsec) / 1e9;
    return waited >= t->stop_grace_s ? 1 : 0;
}

static int read_cookie(const char *path, char *out, size_t out_len, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len, "cannot read the cookie file %s: %s", path, strerror(errno));
        return -1;
    }
    size_t n = fread(out, 1, out_len - 1, f);
    fclose(f);
    out[n] = '\0';
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
        out[--n] = '\0';
    if (!strchr(out, ':')) {
        snprintf(err, err_len, "the cookie file %s does not hold user:password", path);
        return -1;
    }
    return 0;
}

/* "user:pass" from the configuration or the cookie file. */
static int credentials(lode_gbt *g, char *out, size_t out_len, char *err, size_t err_len)
{
    if (g->user) {
        snprintf(out, out_len, "%s:%s", g->user, g->pass ? g->pass : "");
        return 0;
    }
    return read_cookie(g->cookie_file, out, out_len, err, err_len);
}

/* RPC_AUTH_ERROR: HTTP 401 or 403, the node refused the credentials (or,
 * 403, the address lode connects from). */
typedef enum rpc_status { RPC_OK, RPC_TRANSPORT_ERROR, RPC_AUTH_ERROR, RPC_NODE_ERROR } rpc_status;

/* Calls method(params) and returns its result (a new reference; JSON null
 * for a null result) or NULL with err filled; *node_code gets the JSON-RPC
 * error code when the node answered with an error. params is stolen. A stop
 * aborts the call after stop_grace_s (0: at once). */
static json_t *rpc_call(lode_gbt *g, CURL *curl, const char *method, json_t *params,
                        double timeout_s, double stop_grace_s, rpc_status *status, int *node_code,
                        char *err, size_t err_len)
{
    *status = RPC_TRANSPORT_ERROR;
    *node_code = 0;
    json_t *request = json_pack("{s:s, s:s, s:o}", "jsonrpc", "1.0", "method", method, "params",
                                params ? params : json_array());
    char *body = request ? json_dumps(request, JSON_COMPACT) : NULL;
    json_decref(request);
    if (!body) {
        snprintf(err, err_len, "out of memory building the %s request", method);
        return NULL;
    }
    char userpwd[512];
    if (credentials(g, userpwd, sizeof userpwd, err, err_len) != 0) {
        free(body);
        return NULL;
    }

    reply_buffer reply = {0};
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, g->url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERPWD, userpwd);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    transfer progress = {.g = g, .stop_grace_s = stop_grace_s};
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &progress);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)((timeout_s < 10 ? timeout_s : 10) * 1000));
    CURLcode rc = curl_easy_perform(curl);
    long http_code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_code);
    curl_slist_free_all(headers);
    memset(userpwd, 0, sizeof userpwd);
    free(body);

    json_t *result = NULL;
    if (rc != CURLE_OK) {
        if (reply.too_large)
            snprintf(err, err_len, "%s: the reply is larger than %u bytes", method, MAX_REPLY_BYTES);
        else if (rc == CURLE_ABORTED_BY_CALLBACK)
            snprintf(err, err_len, "%s: stopped", method);
        else
            snprintf(err, err_len, "%s: %s", method, curl_easy_strerror(rc));
        goto done;
    }
    json_error_t jerr;
    json_t *root = reply.data ? json_loadb(reply.data, reply.len, 0, &jerr) : NULL;
    const json_t *error = root ? json_object_get(root, "error") : NULL;
    if (error && !json_is_null(error)) {
        const json_t *code = json_object_get(error, "code");
        const json_t *message = json_object_get(error, "message");
        *node_code = json_is_integer(code) ? (int)json_integer_value(code) : 0;
        char text[201];
        lode_log_printable(text, sizeof text,
                           json_is_string(message) ? json_string_value(message) : "(no message)");
        snprintf(err, err_len, "%s: node error %d: %s", method, *node_code, text);
        *status = RPC_NODE_ERROR;
    } else if (http_code == 401 || http_code == 403) {
        snprintf(err, err_len, "%s: HTTP %ld: the node refused the RPC password (-u/-p) or "
                 "cookie (--cookie)%s", method, http_code,
                 http_code == 403 ? ", or connections from this address (-rpcallowip)" : "");
        *status = RPC_AUTH_ERROR;
    } else if (http_code != 200) {
        snprintf(err, err_len, "%s: HTTP %ld from the node", method, http_code);
    } else if (!root || !json_is_object(root) || !json_object_get(root, "result")) {
        snprintf(err, err_len, "%s: the node's reply is not a JSON-RPC response", method);
    } else {
        result = json_incref(json_object_get(root, "result"));
        *status = RPC_OK;
    }
    json_decref(root);
done:
    free(reply.data);
    return result;
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
        json_t *result = rpc_call(g, curl, "getblocktemplate", json_pack("[o]", request),
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

static void display_hash(const uint8_t internal[32], char out[65])
{
    lode_hex_encode_reversed(internal, 32, out);
}

/* Makes tpl the current template unless it is the one already mined
 * (same previous block and longpollid). Takes ownership of tpl. */
static void install_template(lode_gbt *g, lode_gbt_template *tpl, const char *origin)
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

    pthread_mutex_lock(&g->lock);
    kept_template *slot = &g->kept[number % KEPT_TEMPLATES];
    if (slot->number) {
        lode_gbt_template_free(&slot->tpl);
        lode_job_free(&slot->job);
    }
    slot->number = number;
    slot->tpl = *tpl;
    slot->job = job;
    g->template_count = number;
    g->has_current = true;
    memcpy(g->current_prevhash, tpl->prevhash, 32);
    snprintf(g->current_longpollid, sizeof g->current_longpollid, "%s", tpl->longpollid);
    g->current_curtime = tpl->curtime;
    g->stats.height = tpl->height;
    uint32_t height = tpl->height;
    size_t tx_count = tpl->tx_count;
    uint64_t value = tpl->coinbasevalue;
    /* On a block of our own, "block accepted at height N" already says that
     * N + 1 is next: one line per block, not two. */
    bool on_own_block = false;
    for (size_t i = 0; i < SENT_HASHES; i++)
        on_own_block = on_own_block || memcmp(g->sent_hash[i], tpl->prevhash, 32) == 0;
    pthread_cond_broadcast(&g->wake); /* the longpoller waits for a longpollid */
    pthread_mutex_unlock(&g->lock);

    if (params.clean && !on_own_block) {
        char prev[65];
        display_hash(copy.prevhash, prev);
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
static void give_up(lode_gbt *g, const char *why)
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

/* A message cut to err_len on purpose (the node's text can be long). */
static void say(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

/* Does the node take the payout address, as the same script lode pays to? */
static check_result check_address(lode_gbt *g, CURL *curl, rpc_status *status, char *err,
                                  size_t err_len)
{
    int node_code;
    json_t *r = rpc_call(g, curl, "validateaddress", json_pack("[s]", g->payout_text), g->timeout_s,
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
        say(err, err_len, "the node does not take the payout address %.74s (lode reads a %s %s "
                 "address)%s%s: give an address of the node's chain (--coinbase-addr)",
                 g->payout_text, g->payout.network, g->payout.kind, text[0] ? ": " : "", text);
        out = CHECK_REFUSED;
    } else if (json_is_string(script) && strcasecmp(json_string_value(script), ours) != 0) {
        char text[2 * LODE_ADDRESS_SCRIPT_MAX + 1];
        lode_log_printable(text, sizeof text, json_string_value(script));
        say(err, err_len, "the node reads the payout address %.74s as script %s, lode as %s: "
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
    display_hash(hash, hex);
    int node_code;
    json_t *r = rpc_call(g, curl, "getblockheader", json_pack("[s,b]", hex, 0), g->timeout_s, 0,
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
    json_t *r = rpc_call(g, curl, "getbestblockhash", NULL, g->timeout_s, 0, status, &node_code, err,
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
            display_hash(hash, hex);
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
    double backoff = 1;
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
            give_up(g, err);
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
            backoff = 1;
            auth_refusals = 0;
        } else {
            /* Refused credentials are the user's to fix: a few tries (a node
             * that restarts writes a new cookie), then the program stops. */
            auth_refusals = status == RPC_AUTH_ERROR ? auth_refusals + 1 : 0;
            if (auth_refusals >= g->auth_attempts) {
                char why[400];
                snprintf(why, sizeof why, "%s; giving up after %u tries", err, auth_refusals);
                give_up(g, why);
                break;
            }
            note_failure(g, err, auth_refusals > 0); /* said once, when giving up */
            wait = backoff;
            backoff = backoff * 2 > MAX_BACKOFF_S ? MAX_BACKOFF_S : backoff * 2;
        }
        sleep_or_wake(g, wait, &g->refresh_requested);
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
                sleep_or_wake(g, 1.0, NULL);
        } else {
            /* The poller reports a lost node; here just do not spin. */
            if (!atomic_load(&g->stopping))
                lode_log(LODE_LOG_DEBUG, "getblocktemplate long poll: %s", err);
            sleep_or_wake(g, g->poll_s, NULL);
        }
    }
    if (curl)
        curl_easy_cleanup(curl);
    return NULL;
}

/* ---------- shares -> blocks ---------- */

static void source_submit(void *source, const lode_share *share, bool stale)
{
    lode_gbt *g = source;
    pthread_mutex_lock(&g->lock);
    if (stale || atomic_load(&g->stopping) || g->given_up) {
        g->stats.dropped++;
    } else if (g->queue_len == SHARE_QUEUE_LEN) {
        g->stats.unsent++;
        if (!g->queue_full_logged)
            lode_log(LODE_LOG_WARN, "getblocktemplate: %d block candidates wait already; "
                                    "dropping more until they are sent", SHARE_QUEUE_LEN);
        g->queue_full_logged = true;
    } else {
        queued_share *q = &g->queue[(g->queue_head + g->queue_len) % SHARE_QUEUE_LEN];
        snprintf(q->job_id, sizeof q->job_id, "%s", share->job->id);
        memcpy(q->extranonce2, share->extranonce2, sizeof q->extranonce2);
        memcpy(q->header, share->header, 80);
        g->queue_len++;
        pthread_cond_broadcast(&g->wake);
    }
    pthread_mutex_unlock(&g->lock);
}

const lode_job_source_ops lode_gbt_source_ops = {.submit = source_submit};

/* Builds the block for share q, under g->lock. Returns 0 with *block, 1 if
 * the share is not a block (logged), -1 on an error (logged). */
static int block_for_share(lode_gbt *g, const queued_share *q, uint8_t **block, size_t *block_len,
                           uint32_t *height, char *workid, size_t workid_len)
{
    if (g->given_up) {
        g->stats.unsent++; /* the node refused lode's configuration: nothing more is sent */
        return 1;
    }
    const kept_template *k = NULL;
    for (size_t i = 0; i < KEPT_TEMPLATES; i++)
        if (g->kept[i].number && strcmp(g->kept[i].job.id, q->job_id) == 0)
            k = &g->kept[i];
    if (!k) {
        lode_log(LODE_LOG_WARN, "getblocktemplate: block candidate on job %s, whose template is "
                                "gone; not submitted", q->job_id);
        g->stats.dropped++;
        return 1;
    }
    if (g->has_settled && memcmp(g->settled_prevhash, k->tpl.prevhash, 32) == 0) {
        /* Our block on this parent is in, or the node has another: a further
         * one would only compete with it, on a side branch. */
        g->stats.dropped++;
        return 1;
    }
    uint8_t hash[32];
    lode_algo_get(g->algo)->pow_hash_ref(q->header, hash);
    if (!lode_hash_meets_target(hash, &k->tpl.target)) {
        lode_log(LODE_LOG_WARN, "getblocktemplate: a share on job %s misses the block target; "
                                "not submitted", q->job_id);
        return 1;
    }
    char err[256];
    if (lode_gbt_build_block(&k->tpl, &k->job, q->header, q->extranonce2, block, block_len, err,
                             sizeof err) != 0) {
        lode_log(LODE_LOG_ERROR, "getblocktemplate: cannot build the block: %s", err);
        return -1;
    }
    *height = k->tpl.height;
    snprintf(workid, workid_len, "%s", k->tpl.workid);
    return 0;
}

/* getblockheader's confirmations for the block (display hex): >= 1 on the
 * node's best chain, -1 on a side branch; 0 when the node did not say. */
static int block_confirmations(lode_gbt *g, CURL *curl, const char *hash_hex)
{
    rpc_status status;
    int node_code, out = 0;
    char err[256];
    json_t *r = rpc_call(g, curl, "getblockheader", json_pack("[s,b]", hash_hex, 1), g->timeout_s,
                         STOP_SUBMIT_GRACE_S, &status, &node_code, err, sizeof err);
    const json_t *c = r ? json_object_get(r, "confirmations") : NULL;
    if (json_is_integer(c))
        out = json_integer_value(c) > 0 ? 1 : json_integer_value(c) < 0 ? -1 : 0;
    else
        lode_log(LODE_LOG_DEBUG, "getblocktemplate: confirmations of block %s unknown: %s", hash_hex,
                 r ? "no \"confirmations\" in the reply" : err);
    json_decref(r);
    return out;
}

static void submit_block(lode_gbt *g, CURL *curl, const queued_share *q)
{
    uint8_t *block = NULL;
    size_t block_len = 0;
    uint32_t height = 0;
    char workid[LODE_GBT_WORKID_MAX];
    pthread_mutex_lock(&g->lock);
    int built = block_for_share(g, q, &block, &block_len, &height, workid, sizeof workid);
    pthread_mutex_unlock(&g->lock);
    if (built != 0)
        return;

    char hash_hex[65];
    uint8_t block_hash[32];
    lode_ref_sha256d(q->header, 80, block_hash);
    display_hash(block_hash, hash_hex);
    char *hex = malloc(2 * block_len + 1);
    if (!hex) {
        free(block);
        lode_log(LODE_LOG_ERROR, "getblocktemplate: out of memory for block %s", hash_hex);
        return;
    }
    lode_hex_encode(block, block_len, hex);
    free(block);
    json_t *params = json_pack("[s]", hex);
    free(hex);
    if (params && workid[0])
        json_array_append_new(params, json_pack("{s:s}", "workid", workid));

    if (!params) {
        lode_log(LODE_LOG_ERROR, "getblocktemplate: out of memory for block %s", hash_hex);
        return;
    }
    pthread_mutex_lock(&g->lock);
    g->stats.submitted++;
    /* Before the node has it: a long poll may bring the template on it first. */
    memcpy(g->sent_hash[g->sent_next], block_hash, 32);
    g->sent_next = (g->sent_next + 1) % SENT_HASHES;
    pthread_mutex_unlock(&g->lock);
    rpc_status status = RPC_TRANSPORT_ERROR;
    int node_code;
    char err[256] = "stopped";
    /* A block is worth a few tries when the node does not answer; a node
     * that answers with an error has decided. A stop leaves the try under
     * way (or, for a block still queued, one try) STOP_SUBMIT_GRACE_S: the
     * block was found, the node should have it. */
    json_t *result = NULL;
    bool retried = false; /* an earlier try may have reached the node, its reply lost */
    bool stop_retry = false;
    for (int attempt = 0; attempt < SUBMIT_ATTEMPTS; attempt++) {
        if (attempt > 0 && atomic_load(&g->stopping)) {
            /* Stopping: one more try still, so a block the node kept but
             * whose reply was lost is counted; then no more. */
            if (stop_retry)
                break;
            stop_retry = true;
        }
        if (attempt > 0) {
            lode_log(LODE_LOG_WARN, "block %s not submitted yet: %s; trying again", hash_hex, err);
            sleep_or_wake(g, 1.0, NULL);
        }
        retried = attempt > 0;
        result = rpc_call(g, curl, "submitblock", json_incref(params), g->timeout_s,
                          STOP_SUBMIT_GRACE_S, &status, &node_code, err, sizeof err);
        if (status == RPC_NODE_ERROR && node_code == RPC_IN_WARMUP)
            status = RPC_TRANSPORT_ERROR; /* restarting: not a verdict on the block */
        else if (result || status == RPC_NODE_ERROR)
            break;
        pthread_mutex_lock(&g->lock);
        bool node_lost = !g->stats.connected; /* the poller knows it is down: do not wait */
        pthread_mutex_unlock(&g->lock);
        if (node_lost)
            break;
    }
    json_decref(params);
    if (!result && status != RPC_NODE_ERROR) {
        pthread_mutex_lock(&g->lock);
        g->stats.unsent++;
        bool first = !g->unsent_logged; /* one line per outage, the count in the stats */
        g->unsent_logged = true;
        pthread_mutex_unlock(&g->lock);
        if (first && !atomic_load(&g->stopping))
            lode_log_event(LODE_LOG_ERROR, "block", LODE_LOG_FIELDS(LODE_LOG_STR("result", "unsent"), LODE_LOG_STR("node", g->url), LODE_LOG_INT("height", height), LODE_LOG_STR("hash", hash_hex), LODE_LOG_STR("reason", err)),
                           "block not submitted, the node is unreachable: %s (height %" PRIu32
                                     ", hash %s); more are counted, not logged, until it is back",
                     err, height, hash_hex);
        goto refresh;
    }
    /* The node's words, made printable (err is already). */
    char reason[256];
    lode_gbt_verdict verdict = LODE_GBT_REJECTED;
    int confirmations = 0;
    if (result && json_is_null(result)) {
        verdict = lode_gbt_submit_verdict(NULL, retried);
        reason[0] = '\0';
    } else if (result && json_is_string(result)) {
        verdict = lode_gbt_submit_verdict(json_string_value(result), retried);
        lode_log_printable(reason, sizeof reason, json_string_value(result));
        if (verdict == LODE_GBT_KEPT) {
            /* The node has the block: on its best chain (accepted), or on a
             * side branch (inconclusive)? Unknown is inconclusive too. */
            confirmations = block_confirmations(g, curl, hash_hex);
            verdict = confirmations > 0 ? LODE_GBT_ACCEPTED : LODE_GBT_INCONCLUSIVE;
        }
    } else {
        snprintf(reason, sizeof reason, "%s", result ? "unexpected submitblock result" : err);
    }
    pthread_mutex_lock(&g->lock);
    switch (verdict) {
    case LODE_GBT_KEPT: /* resolved to accepted or inconclusive above */
    case LODE_GBT_ACCEPTED:
        g->stats.accepted++;
        g->has_settled = true;
        memcpy(g->settled_prevhash, q->header + 4, 32);
        pthread_mutex_unlock(&g->lock);
        lode_log_event(LODE_LOG_INFO, "block", LODE_LOG_FIELDS(LODE_LOG_STR("result", "accepted"), LODE_LOG_STR("node", g->url), LODE_LOG_INT("height", height), LODE_LOG_STR("hash", hash_hex), LODE_LOG_STR("reason", NULL)),
                       "block accepted at height %" PRIu32 " (hash %s)%s", height, hash_hex,
                 reason[0] ? " (\"duplicate\": the node kept the try whose reply was lost; it is "
                             "on the node's best chain)"
                           : "");
        break;
    case LODE_GBT_INCONCLUSIVE:
        g->stats.inconclusive++;
        g->has_settled = true;
        memcpy(g->settled_prevhash, q->header + 4, 32);
        pthread_mutex_unlock(&g->lock);
        lode_log_event(LODE_LOG_WARN, "block", LODE_LOG_FIELDS(LODE_LOG_STR("result", "inconclusive"), LODE_LOG_STR("node", g->url), LODE_LOG_INT("height", height), LODE_LOG_STR("hash", hash_hex), LODE_LOG_STR("reason", reason)),
                       "block inconclusive at height %" PRIu32 " (hash %s): the node kept it "
                                "but it is not on the node's best chain %s (\"%s\"); counted neither "
                                "accepted nor rejected", height, hash_hex,
                 confirmations < 0 ? "(a side branch)" : confirmations == 0 ? "now" : "",
                 reason);
        break;
    case LODE_GBT_KNOWN:
        g->stats.stale++;
        pthread_mutex_unlock(&g->lock);
        lode_log_event(LODE_LOG_WARN, "block", LODE_LOG_FIELDS(LODE_LOG_STR("result", "duplicate"), LODE_LOG_STR("node", g->url), LODE_LOG_INT("height", height), LODE_LOG_STR("hash", hash_hex), LODE_LOG_STR("reason", NULL)),
                       "block %s at height %" PRIu32 ": the node had it already "
                                "(\"duplicate\" to a first try); not counted again", hash_hex, height);
        break;
    case LODE_GBT_REJECTED:
        g->stats.rejected++;
        snprintf(g->stats.last_reject, sizeof g->stats.last_reject, "%.127s", reason);
        pthread_mutex_unlock(&g->lock);
        lode_log_event(LODE_LOG_ERROR, "block", LODE_LOG_FIELDS(LODE_LOG_STR("result", "rejected"), LODE_LOG_STR("node", g->url), LODE_LOG_INT("height", height), LODE_LOG_STR("hash", hash_hex), LODE_LOG_STR("reason", reason)),
                       "block rejected: %s (height %" PRIu32 ", hash %s)", reason, height,
                 hash_hex);
        if (strcmp(reason, "high-hash") == 0) {
            /* block_for_share checked the hash against the target under
             * g->algo, so the node hashes with another algorithm. */
            char why[256];
            const char *algo = lode_algo_get(g->algo)->name;
            snprintf(why, sizeof why, "-a %s is not this chain's proof of work: the node calls block "
                     "%.16s... \"high-hash\" though it meets its target under %s; give the "
                     "chain's algorithm", algo, hash_hex, algo);
            give_up(g, why);
        }
        break;
    }
refresh:
    json_decref(result);
    /* Whatever happened, the node's tip has probably moved: ask at once. */
    pthread_mutex_lock(&g->lock);
    g->refresh_requested = true;
    pthread_cond_broadcast(&g->wake);
    pthread_mutex_unlock(&g->lock);
}

static void *submitter_main(void *arg)
{
    lode_gbt *g = arg;
    CURL *curl = curl_easy_init();
    for (;;) {
        pthread_mutex_lock(&g->lock);
        while (!atomic_load(&g->stopping) && g->queue_len == 0)
            pthread_cond_wait(&g->wake, &g->lock);
        /* On a stop the blocks already queued still go out (each once, with
         * a short timeout), unless the node is known to be down. */
        if (g->queue_len == 0 || (atomic_load(&g->stopping) && !g->stats.connected)) {
            g->stats.unsent += (uint64_t)g->queue_len;
            g->queue_len = 0;
            pthread_mutex_unlock(&g->lock);
            break; /* stopping: the wait above only ends empty-handed then */
        }
        queued_share q = g->queue[g->queue_head];
        g->queue_head = (g->queue_head + 1) % SHARE_QUEUE_LEN;
        g->queue_len--;
        if (g->queue_len == 0)
            g->queue_full_logged = false;
        pthread_mutex_unlock(&g->lock);
        if (curl)
            submit_block(g, curl, &q);
        else
            lode_log(LODE_LOG_ERROR, "getblocktemplate: libcurl could not start; block lost");
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

lode_gbt *lode_gbt_create(const lode_gbt_config *config, char *err, size_t err_len)
{
    if (!config->url || (strncmp(config->url, "http://", 7) != 0 &&
                         strncmp(config->url, "https://", 8) != 0)) {
        snprintf(err, err_len, "the node URL must start with http:// or https:// (got \"%s\")",
                 config->url ? config->url : "");
        return NULL;
    }
    if (strlen(config->url) > 1000 || strpbrk(config->url, " \t\r\n")) {
        snprintf(err, err_len, "the node URL is malformed");
        return NULL;
    }
    if (config->algo >= LODE_ALGO_COUNT ||
        lode_algo_get(config->algo)->kind != LODE_WORK_NONCE_SCAN) {
        snprintf(err, err_len, "getblocktemplate mining needs a nonce-scan algorithm");
        return NULL;
    }
    if (!config->user && !config->cookie_file) {
        snprintf(err, err_len, "getblocktemplate needs an RPC user/password or the node's cookie file");
        return NULL;
    }
    if (config->coinbase_tag && strlen(config->coinbase_tag) > LODE_GBT_TAG_MAX) {
        snprintf(err, err_len, "the coinbase tag is longer than %d bytes", LODE_GBT_TAG_MAX);
        return NULL;
    }
    lode_address payout;
    char why[160];
    if (lode_address_parse(config->payout_address, &payout, why, sizeof why) != 0) {
        snprintf(err, err_len, "payout address \"%.100s\": %s",
                 config->payout_address ? config->payout_address : "", why);
        return NULL;
    }
    if (!config->user) {
        /* A cookie file missing now is a wrong path (or a node not started):
         * said at once. Later the node may remove and rewrite it when it
         * restarts, so then a missing cookie is retried like a lost node. */
        char cookie[512];
        int rc = read_cookie(config->cookie_file, cookie, sizeof cookie, err, err_len);
        memset(cookie, 0, sizeof cookie);
        if (rc != 0) {
            size_t n = strlen(err);
            snprintf(err + n, err_len - n, " (the node writes it in its datadir when it starts; "
                     "is it running, and is this its datadir?)");
            return NULL;
        }
    }
    if (config->poll_s < 0 || config->timeout_s < 0 || config->poll_s > 3600 ||
        config->timeout_s > 3600) {
        snprintf(err, err_len, "poll and timeout must be 0..3600 seconds");
        return NULL;
    }
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
    return g;
}

int lode_gbt_start(lode_gbt *g, lode_mining *mining)
{
    if (g->started)
        return -1;
    g->mining = mining;
    if (pthread_create(&g->submitter, NULL, submitter_main, g) != 0)
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
