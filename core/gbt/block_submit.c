/* The getblocktemplate job source's submitter: block candidates from the
 * mining session -> blocks -> submitblock, and the node's verdict counted
 * (see gbt_client.h). */
#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/hex.h"
#include "core/base/log.h"
#include "core/base/sha256_ref.h"
#include "core/base/target.h"
#include "core/gbt/block.h"
#include "core/gbt/gbt_internal.h"
#include "core/gbt/node_check.h"

#define SUBMIT_ATTEMPTS 3
#define RPC_IN_WARMUP (-28)

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

static bool node_reachable(lode_gbt *g)
{
    pthread_mutex_lock(&g->lock);
    bool connected = g->stats.connected;
    pthread_mutex_unlock(&g->lock);
    return connected;
}

/* getblockheader's confirmations for the block (display hex): >= 1 on the
 * node's best chain, -1 on a side branch; 0 when the node did not say. */
static int block_confirmations(lode_gbt *g, CURL *curl, const char *hash_hex)
{
    rpc_status status;
    int node_code, out = 0;
    char err[256];
    json_t *r = lode_gbt_rpc_call(g, curl, "getblockheader", json_pack("[s,b]", hash_hex, 1), g->timeout_s,
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

/* The submitblock params for q's block (a new reference), or NULL when it
 * is no block to send (counted and logged by block_for_share) or memory
 * ran out (logged). */
static json_t *block_params(lode_gbt *g, const queued_share *q, uint32_t *height, const char *hash_hex)
{
    uint8_t *block = NULL;
    size_t block_len = 0;
    char workid[LODE_GBT_WORKID_MAX];
    pthread_mutex_lock(&g->lock);
    int built = block_for_share(g, q, &block, &block_len, height, workid, sizeof workid);
    pthread_mutex_unlock(&g->lock);
    if (built != 0)
        return NULL;
    char *hex = malloc(2 * block_len + 1);
    json_t *params = NULL;
    if (hex) {
        lode_hex_encode(block, block_len, hex);
        params = json_pack("[s]", hex);
        free(hex);
    }
    free(block);
    if (params && workid[0])
        json_array_append_new(params, json_pack("{s:s}", "workid", workid));
    if (!params)
        lode_log(LODE_LOG_ERROR, "getblocktemplate: out of memory for block %s", hash_hex);
    return params;
}

/* submitblock, a few tries when the node does not answer; a node that
 * answers with an error has decided. A stop leaves the try under way (or,
 * for a block still queued, one try) STOP_SUBMIT_GRACE_S: the block was
 * found, the node should have it. Returns the result (or NULL with *status
 * and err); *retried: an earlier try may have reached the node, its reply
 * lost. */
static json_t *send_block(lode_gbt *g, CURL *curl, json_t *params, const char *hash_hex, rpc_status *status,
                          bool *retried, char *err, size_t err_len)
{
    json_t *result = NULL;
    bool stop_retry = false;
    int node_code;
    *status = RPC_TRANSPORT_ERROR;
    *retried = false;
    snprintf(err, err_len, "stopped");
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
            lode_gbt_sleep_or_wake(g, 1.0, NULL);
        }
        *retried = attempt > 0;
        result = lode_gbt_rpc_call(g, curl, "submitblock", json_incref(params), g->timeout_s, STOP_SUBMIT_GRACE_S,
                                   status, &node_code, err, err_len);
        if (*status == RPC_NODE_ERROR && node_code == RPC_IN_WARMUP)
            *status = RPC_TRANSPORT_ERROR; /* restarting: not a verdict on the block */
        else if (result || *status == RPC_NODE_ERROR)
            break;
        if (!node_reachable(g)) /* the poller knows it is down: do not wait */
            break;
    }
    return result;
}

/* Counts and logs the node's verdict on the block (reason: its words,
 * printable). */
static void count_verdict(lode_gbt *g, const queued_share *q, lode_gbt_verdict verdict, const char *note,
                          const char *reason, uint32_t height, const char *hash_hex)
{
    pthread_mutex_lock(&g->lock);
    switch (verdict) {
    case LODE_GBT_KEPT: /* resolved to accepted or inconclusive by the caller */
    case LODE_GBT_ACCEPTED:
        g->stats.accepted++;
        g->has_settled = true;
        memcpy(g->settled_prevhash, q->header + 4, 32);
        pthread_mutex_unlock(&g->lock);
        lode_log_event(LODE_LOG_INFO, "block", LODE_LOG_FIELDS(LODE_LOG_STR("result", "accepted"), LODE_LOG_STR("node", g->url), LODE_LOG_INT("height", height), LODE_LOG_STR("hash", hash_hex), LODE_LOG_STR("reason", NULL)),
                       "block accepted at height %" PRIu32 " (hash %s)%s", height, hash_hex, note);
        break;
    case LODE_GBT_INCONCLUSIVE:
        g->stats.inconclusive++;
        g->has_settled = true;
        memcpy(g->settled_prevhash, q->header + 4, 32);
        pthread_mutex_unlock(&g->lock);
        lode_log_event(LODE_LOG_WARN, "block", LODE_LOG_FIELDS(LODE_LOG_STR("result", "inconclusive"), LODE_LOG_STR("node", g->url), LODE_LOG_INT("height", height), LODE_LOG_STR("hash", hash_hex), LODE_LOG_STR("reason", reason)),
                       "block inconclusive at height %" PRIu32 " (hash %s): the node kept it but it is not on the "
                       "node's best chain%s (\"%s\"); counted neither accepted nor rejected",
                       height, hash_hex, note, reason);
        break;
    case LODE_GBT_KNOWN:
        g->stats.stale++;
        pthread_mutex_unlock(&g->lock);
        lode_log_event(LODE_LOG_WARN, "block", LODE_LOG_FIELDS(LODE_LOG_STR("result", "duplicate"), LODE_LOG_STR("node", g->url), LODE_LOG_INT("height", height), LODE_LOG_STR("hash", hash_hex), LODE_LOG_STR("reason", NULL)),
                       "block %s at height %" PRIu32 ": the node had it already (\"duplicate\" to a first try) "
                       "and not on its best chain; not counted again", hash_hex, height);
        break;
    case LODE_GBT_REJECTED:
        g->stats.rejected++;
        snprintf(g->stats.last_reject, sizeof g->stats.last_reject, "%.127s", reason);
        pthread_mutex_unlock(&g->lock);
        lode_log_event(LODE_LOG_ERROR, "block", LODE_LOG_FIELDS(LODE_LOG_STR("result", "rejected"), LODE_LOG_STR("node", g->url), LODE_LOG_INT("height", height), LODE_LOG_STR("hash", hash_hex), LODE_LOG_STR("reason", reason)),
                       "block rejected: %s (height %" PRIu32 ", hash %s)", reason, height, hash_hex);
        if (strcmp(reason, "high-hash") == 0) {
            /* block_for_share checked the hash against the target under
             * g->algo, so the node hashes with another algorithm. */
            char why[256];
            const char *algo = lode_algo_get(g->algo)->name;
            snprintf(why, sizeof why, "-a %s is not this chain's proof of work: the node calls block "
                     "%.16s... \"high-hash\" though it meets its target under %s; give the "
                     "chain's algorithm", algo, hash_hex, algo);
            lode_gbt_give_up(g, why);
        }
        break;
    }
}

/* No answer to any try: the node may still have kept the block (the reply
 * was lost). On its best chain it counts accepted; else unsent. */
static void count_unanswered(lode_gbt *g, CURL *curl, const queued_share *q, const char *err, uint32_t height,
                             const char *hash_hex)
{
    if (node_reachable(g) && block_confirmations(g, curl, hash_hex) > 0) {
        count_verdict(g, q, LODE_GBT_ACCEPTED, " (its reply was lost; it is on the node's best chain)", "",
                      height, hash_hex);
        return;
    }
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
}

static void submit_block(lode_gbt *g, CURL *curl, const queued_share *q)
{
    char hash_hex[65];
    uint8_t block_hash[32];
    lode_ref_sha256d(q->header, 80, block_hash);
    lode_gbt_display_hash(block_hash, hash_hex);
    uint32_t height = 0;
    json_t *params = block_params(g, q, &height, hash_hex);
    if (!params)
        return;
    pthread_mutex_lock(&g->lock);
    g->stats.submitted++;
    /* Before the node has it: a long poll may bring the template on it first. */
    memcpy(g->sent_hash[g->sent_next], block_hash, 32);
    g->sent_next = (g->sent_next + 1) % SENT_HASHES;
    pthread_mutex_unlock(&g->lock);
    rpc_status status;
    bool retried;
    char err[256];
    json_t *result = send_block(g, curl, params, hash_hex, &status, &retried, err, sizeof err);
    json_decref(params);
    if (!result && status != RPC_NODE_ERROR) {
        count_unanswered(g, curl, q, err, height, hash_hex);
    } else {
        /* The node's words, made printable (err is already). */
        char reason[256] = "";
        const char *note = "";
        lode_gbt_verdict verdict = LODE_GBT_REJECTED;
        if (result && json_is_null(result)) {
            verdict = LODE_GBT_ACCEPTED;
        } else if (result && json_is_string(result)) {
            verdict = lode_gbt_submit_verdict(json_string_value(result), retried);
            lode_log_printable(reason, sizeof reason, json_string_value(result));
        } else {
            snprintf(reason, sizeof reason, "%s", result ? "unexpected submitblock result" : err);
        }
        if (verdict == LODE_GBT_KEPT || verdict == LODE_GBT_KNOWN) {
            /* The node has the block: on its best chain it counts accepted
             * (whichever try it kept); else inconclusive (our retry) or
             * known. Unknown is not on the best chain. */
            int confirmations = block_confirmations(g, curl, hash_hex);
            if (confirmations > 0) {
                verdict = LODE_GBT_ACCEPTED;
                note = " (\"duplicate\": the node kept a try whose reply was lost; it is on the node's best chain)";
            } else if (verdict == LODE_GBT_KEPT) {
                verdict = LODE_GBT_INCONCLUSIVE;
                note = confirmations < 0 ? " (a side branch)" : " now";
            }
        }
        count_verdict(g, q, verdict, note, reason, height, hash_hex);
    }
    json_decref(result);
    /* Whatever happened, the node's tip has probably moved: ask at once. */
    pthread_mutex_lock(&g->lock);
    g->refresh_requested = true;
    pthread_cond_broadcast(&g->wake);
    pthread_mutex_unlock(&g->lock);
}

void *lode_gbt_submitter_main(void *arg)
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
