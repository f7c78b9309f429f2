/* getblocktemplate (BIP 22/23) solo mining: a job source that talks JSON-RPC
 * over HTTP to a Litecoin Core or Bitcoin Core node.
 *
 * Threads (started by lode_gbt_start):
 *  - poller: fetches a template at once, then every poll_s seconds (default
 *    5 s) and whenever a block was submitted; a new job is installed when the
 *    previous block or the node's longpollid changed (new transactions), or
 *    when the template's curtime is 60 s past the job's (ntime is not rolled).
 *  - longpoller: getblocktemplate with the last longpollid on its own
 *    connection, so a new block on the network reaches the devices at once;
 *    the poller is the fallback for nodes without long polling.
 *  - submitter: turns queued block candidates (at most 64 waiting) into
 *    blocks so the mining session's submit callback never waits on the
 *    network: it finds the template by job id, re-checks the PoW against
 *    the block target and the header's merkle root against the template,
 *    calls submitblock (with the template's workid if any), logs
 *    "block accepted at height H (hash ...)" or "block rejected: REASON",
 *    and asks the poller for a fresh template at once. A node that does not
 *    answer gets 3 tries a second apart (none while the poller knows it is
 *    down); such blocks count as unsent, not rejected. A stop lets a
 *    submission in flight run on for up to 5 s and sends the blocks still
 *    queued (one try each, up to 5 s), unless the node is known to be
 *    down. Once a block of ours was accepted (or came back inconclusive: the
 *    node has another block there), later candidates on the same parent
 *    are dropped.
 * Request: getblocktemplate {"rules":["mweb","segwit"], "capabilities":
 * ["longpoll","coinbasetxn","coinbasevalue","workid"]}; if the node rejects
 * the rules with an invalid-parameter error naming "rule", it is asked again
 * with ["segwit"] once and from then on. A lost node (refused connection,
 * HTTP 500, time-out, malformed reply) is logged once, mining pauses
 * (lode_mining_clear_job) and the poller retries with a back-off of 1 s
 * doubling to 30 s. Every transfer polls the stop flag, so lode_gbt_stop
 * returns within about a second.
 *
 * What retrying cannot fix stops the program through lode_mining_fail (exit
 * status 3), the reason logged once: HTTP 401/403 (credentials, or
 * -rpcallowip) auth_attempts times in a row; and, checked by the poller
 * before its first template, a payout address the node's validateaddress
 * does not take (or reads as another script), or a chain whose headers do
 * not meet their targets under algo (core/gbt/node_check.h; on a chain too
 * short to tell, a warning, and then the node's first "high-hash" answer to
 * a block that meets the target under algo). A node without validateaddress
 * is mined with a warning. A cookie file that cannot be read at
 * lode_gbt_create is an error there (the node rewrites it when it restarts,
 * so later a missing cookie is retried like a lost node).
 *
 * Blocks: every block the node has on its best chain counts accepted.
 * submitblock's null is accepted; a "duplicate" answer, and tries that all
 * went unanswered (the reply lost), are accepted if getblockheader shows the
 * block on the node's best chain; else "duplicate" to a retry is
 * inconclusive, to a first try stale (the node had it), and no answer
 * unsent. "inconclusive" is counted apart (stored, not fully validated: not
 * on the best chain then); the rest is rejected. Each submitblock goes on a
 * connection of its own, so libcurl never re-sends one behind lode's back
 * (it does on a reused connection that dies before the reply). Text from
 * the node reaches the log through lode_log_printable.
 *
 * Proxies: a node on loopback is always reached directly (CURLOPT_PROXY
 * ""), so its RPC credentials never go to a proxy from the environment; for
 * another node, libcurl's environment rules apply (http_proxy, HTTPS_PROXY,
 * ALL_PROXY, no_proxy) and lode_gbt_create logs the proxy named.
 *
 * Jobs: one per template, id "t<number>", share target = the block target,
 * ntime = curtime (not rolled; a curtime more than 2 hours ahead of this
 * machine's clock, as 2^32-1, becomes max(now, mintime) with a warning, and a
 * template whose mintime is that far ahead is not mined), no version rolling, 8-byte extranonce2 (see
 * core/gbt/block.h for the coinbase). The last 8 templates are kept, so a
 * block found on a job that was just replaced (same previous block) is still
 * submitted; a share the session marks stale is only counted. */
#ifndef LODE_GBT_CLIENT_H
#define LODE_GBT_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/algo.h"
#include "core/mining/mining.h"

typedef struct lode_gbt lode_gbt;

typedef struct lode_gbt_config {
    lode_algo algo;             /* the chain's PoW (scrypt: Litecoin) */
    const char *url;            /* http://host:port/ (https works where libcurl has TLS) */
    const char *user, *pass;    /* RPC basic auth; or NULL and ... */
    const char *cookie_file;    /* ... the node's .cookie, read before every request */
    const char *payout_address; /* see core/gbt/address.h */
    const char *coinbase_tag;   /* NULL = "/lode/"; at most 32 bytes */
    double poll_s;              /* template refresh; 0 = 5 s */
    double timeout_s;           /* one RPC call; 0 = 30 s */
    unsigned auth_attempts;     /* HTTP 401/403 answers in a row before giving up; 0 = 3 */
} lode_gbt_config;

typedef struct lode_gbt_stats {
    uint64_t submitted, accepted, rejected;
    uint64_t stale;             /* the node's answer "duplicate" to a first try: it had the block */
    uint64_t dropped;           /* not sent: the job had ended (lode stopping, its template gone,
                                   or a block of its parent already in) */
    uint64_t unsent;            /* the node could not be reached (not in rejected); also blocks
                                   still queued at a stop while the node was down, beyond the
                                   queue, or after the node refused lode's configuration */
    uint64_t inconclusive;      /* submitblock said "inconclusive": the node stored the block
                                   without validating it fully (not on its best chain then);
                                   neither accepted nor rejected */
    uint64_t height;            /* of the block being mined */
    char last_reject[128];      /* the node's reason for the last rejection */
    bool connected;             /* the last template request succeeded */
} lode_gbt_stats;

/* Validates the configuration (URL, address, tag, credentials present) and
 * copies it; contacts nothing. Returns NULL with a message in err. */
lode_gbt *lode_gbt_create(const lode_gbt_config *config, char *err, size_t err_len);
/* The job source operations for lode_mining_config (source = the lode_gbt*). */
extern const lode_job_source_ops lode_gbt_source_ops;
/* Starts the threads; jobs go to mining. Returns 0, or -1 if a thread could
 * not start (nothing is left running). Call once. */
int lode_gbt_start(lode_gbt *g, lode_mining *mining);
/* Stops the threads promptly (in-flight requests are aborted). Idempotent. */
void lode_gbt_stop(lode_gbt *g);
void lode_gbt_stats_get(lode_gbt *g, lode_gbt_stats *out);
/* Stops if needed and frees. NULL is fine. */
void lode_gbt_free(lode_gbt *g);

#endif
