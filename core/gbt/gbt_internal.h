/* What the getblocktemplate job source's files share (gbt_client.c: the
 * poller, longpoller and life cycle; node_rpc.c: JSON-RPC over libcurl;
 * block_submit.c: the submitter). Not for use outside core/gbt. */
#ifndef LODE_GBT_INTERNAL_H
#define LODE_GBT_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/gbt/address.h"
#include "core/gbt/gbt_client.h"
#include "core/gbt/template.h"

#define KEPT_TEMPLATES 8
#define SHARE_QUEUE_LEN 64
#define SENT_HASHES 4                   /* lode's latest submitted blocks, for the log */
#define STOP_SUBMIT_GRACE_S 5.0         /* a submission a stop lets run on, at most */

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
    bool node_on_loopback;         /* no proxy from the environment applies to it */

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
    uint32_t time_warned;          /* the node's curtime last said to be too far ahead */
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

/* RPC_AUTH_ERROR: HTTP 401 or 403, the node refused the credentials (or,
 * 403, the address lode connects from). */
typedef enum rpc_status { RPC_OK, RPC_TRANSPORT_ERROR, RPC_AUTH_ERROR, RPC_NODE_ERROR } rpc_status;

/* Calls method(params) and returns its result (a new reference; JSON null
 * for a null result) or NULL with err filled; *node_code gets the JSON-RPC
 * error code when the node answered with an error. params is stolen. A stop
 * aborts the call after stop_grace_s (0: at once). */
json_t *lode_gbt_rpc_call(lode_gbt *g, CURL *curl, const char *method, json_t *params, double timeout_s,
                          double stop_grace_s, rpc_status *status, int *node_code, char *err, size_t err_len);
/* At creation: is the node on loopback (then requests to it never go
 * through a proxy the environment names)? Else, when the environment names
 * a proxy for its scheme (http_proxy, HTTPS_PROXY, ALL_PROXY), says so:
 * libcurl sends the node's RPC there unless no_proxy excludes it. */
void lode_gbt_proxy_setup(lode_gbt *g);
/* "user:pass" of the node's cookie file. */
int lode_gbt_read_cookie(const char *path, char *out, size_t out_len, char *err, size_t err_len);

/* Waits up to seconds, or until a stop or (flag not NULL) *flag, which it
 * clears. */
void lode_gbt_sleep_or_wake(lode_gbt *g, double seconds, bool *flag);
/* Internal order -> display hex. */
void lode_gbt_display_hash(const uint8_t internal[32], char out[65]);
/* The node refused something retrying cannot fix: mining stops and the
 * program exits with why (lode_mining_fail). */
void lode_gbt_give_up(lode_gbt *g, const char *why);

/* The submitter thread (block_submit.c). */
void *lode_gbt_submitter_main(void *arg);

#endif
