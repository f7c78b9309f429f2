/* Mining for real: `lode -a ALGO -o URL ...`. Stratum pools (stratum+tcp,
 * stratum+ssl) or a node's getblocktemplate (http) feed the mining session;
 * the devices are the same as everywhere else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/api/api.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/cli/commands.h"
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/cli/report.h"
#include "core/cli/run_api.h"
#include "core/cli/run_setup.h"
#include "core/cli/signals.h"
#include "core/dispatch/dispatch.h"
#include "core/gbt/gbt_client.h"
#include "core/mining/mining.h"
#include "core/stratum/stratum_client.h"
#include "core/stratum/stratum_conn.h"

#define DEFAULT_LOG_INTERVAL 30.0

static bool is_node_url(const char *url)
{
    return strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
}

/* The job source behind a run: a set of pools or one node. */
typedef struct mine_source {
    lode_stratum *stratum;
    lode_gbt *gbt;
} mine_source;

static int create_source(const cli_options *o, mine_source *s, char *err, size_t err_len)
{
    size_t nodes = 0;
    for (size_t i = 0; i < o->pool_count; i++)
        nodes += is_node_url(o->pools[i].url);
    if (nodes > 0) {
        if (o->proxy != NULL) {
            snprintf(err, err_len, "--proxy (-x) is for stratum pools; a node is reached directly");
            return -1;
        }
        if (o->pool_count > 1) {
            snprintf(err, err_len, "solo mining takes one node URL (-o http://HOST:PORT) and no pools");
            return -1;
        }
        const cli_pool *p = &o->pools[0];
        lode_gbt_config c = {
            .algo = o->algo,
            .url = p->url,
            .user = p->user ? p->user : o->defaults.user,
            .pass = p->pass ? p->pass : o->defaults.pass,
            .cookie_file = o->cookie,
            .payout_address = o->coinbase_addr,
            .coinbase_tag = o->coinbase_tag,
        };
        if (c.payout_address == NULL) {
            snprintf(err, err_len, "solo mining needs --coinbase-addr ADDRESS");
            return -1;
        }
        if (o->protocol_dump)
            lode_log(LODE_LOG_WARN, "-P (--protocol-dump): ignored for a node: it dumps stratum traffic");
        if (c.cookie_file == NULL && (c.user == NULL || c.pass == NULL)) {
            snprintf(err, err_len, "solo mining needs -u USER -p PASS or --cookie FILE for the node");
            return -1;
        }
        s->gbt = lode_gbt_create(&c, err, err_len);
        return s->gbt ? 0 : -1;
    }
    if (o->coinbase_addr != NULL || o->cookie != NULL) {
        snprintf(err, err_len, "--coinbase-addr and --cookie are for solo mining (-o http://...)");
        return -1;
    }
    lode_pool_config pools[CLI_MAX_POOLS];
    for (size_t i = 0; i < o->pool_count; i++) {
        const cli_pool *p = &o->pools[i];
        pools[i] = (lode_pool_config){
            .url = p->url,
            .user = p->user ? p->user : o->defaults.user ? o->defaults.user : "",
            .pass = p->pass ? p->pass : o->defaults.pass ? o->defaults.pass : "x",
            .cert_pin = p->cert_pin ? p->cert_pin : o->defaults.cert_pin,
        };
    }
    lode_stratum_config c;
    lode_stratum_config_defaults(&c);
    c.algo = o->algo;
    c.pools = pools;
    c.pool_count = o->pool_count;
    c.agent = "lode/" LODE_VERSION;
    c.version_rolling = !o->no_version_rolling;
    c.suggest_difficulty = o->suggest_diff;
    c.proxy = o->proxy;
    c.follow_redirect = !o->no_redirect;
    c.allow_redirect_host = o->allow_redirect_host;
    if (o->failover_after)
        c.failover_after = o->failover_after;
    if (o->retry_pause > 0)
        c.retry_base_s = o->retry_pause;
    if (o->failover_return > 0)
        c.primary_check_s = o->failover_return;
    if (o->stall_timeout > 0)
        c.stall_timeout_s = o->stall_timeout;
    lode_stratum_set_protocol_dump(o->protocol_dump);
    s->stratum = lode_stratum_create(&c, err, err_len);
    return s->stratum ? 0 : -1;
}

static void summarise_source(mine_source *s, const cli_options *o)
{
    if (s->gbt != NULL) {
        lode_gbt_stats st;
        lode_gbt_stats_get(s->gbt, &st);
        lode_log_event(LODE_LOG_NOTICE, "node_summary",
                       LODE_LOG_FIELDS(LODE_LOG_INT("submitted", st.submitted), LODE_LOG_INT("accepted", st.accepted),
                                       LODE_LOG_INT("rejected", st.rejected), LODE_LOG_INT("stale", st.stale),
                                       LODE_LOG_INT("dropped", st.dropped), LODE_LOG_INT("unsent", st.unsent),
                                       LODE_LOG_INT("inconclusive", st.inconclusive)),
                 "summary: blocks submitted %llu, accepted %llu, rejected %llu, stale %llu, dropped %llu, "
                 "unsent %llu, inconclusive %llu",
                 (unsigned long long)st.submitted, (unsigned long long)st.accepted,
                 (unsigned long long)st.rejected, (unsigned long long)st.stale, (unsigned long long)st.dropped,
                 (unsigned long long)st.unsent, (unsigned long long)st.inconclusive);
        return;
    }
    for (size_t i = 0; i < lode_stratum_pool_count(s->stratum); i++) {
        lode_pool_stats st;
        lode_stratum_pool_stats(s->stratum, i, &st);
        /* The pool's answers (accepted, rejected, stale), then what it never
         * answered: dropped (job ended before sending), unsent (a flood),
         * unanswered (sent, no answer). docs/OPERATIONS.md, "Words". */
        lode_log_event(LODE_LOG_NOTICE, "pool_summary",
                       LODE_LOG_FIELDS(LODE_LOG_INT("index", i), LODE_LOG_STR("pool", o->pools[i].url),
                                       LODE_LOG_INT("accepted", st.accepted), LODE_LOG_INT("rejected", st.rejected),
                                       LODE_LOG_INT("stale", st.stale), LODE_LOG_INT("dropped", st.dropped),
                                       LODE_LOG_INT("unsent", st.unsent), LODE_LOG_INT("unanswered", st.unanswered)),
                 "summary: pool %zu %s: accepted %llu, rejected %llu, stale %llu, dropped %llu, unsent %llu, "
                 "unanswered %llu", i, o->pools[i].url, (unsigned long long)st.accepted,
                 (unsigned long long)st.rejected, (unsigned long long)st.stale, (unsigned long long)st.dropped,
                 (unsigned long long)st.unsent, (unsigned long long)st.unanswered);
    }
}

/* The shares every pool accepted and rejected (the blocks, solo). */
static void answered_totals(mine_source *s, uint64_t *accepted, uint64_t *rejected)
{
    *accepted = *rejected = 0;
    if (s->gbt != NULL) {
        lode_gbt_stats st;
        lode_gbt_stats_get(s->gbt, &st);
        *accepted = st.accepted;
        *rejected = st.rejected;
        return;
    }
    for (size_t i = 0; i < lode_stratum_pool_count(s->stratum); i++) {
        lode_pool_stats st;
        lode_stratum_pool_stats(s->stratum, i, &st);
        *accepted += st.accepted;
        *rejected += st.rejected;
    }
}

/* What the systemd STATUS line adds: the shares the pools or the node took. */
static void status_extra(void *user, char *out, size_t len)
{
    mine_source *s = user;
    uint64_t accepted, rejected;
    answered_totals(s, &accepted, &rejected);
    snprintf(out, len, "%saccepted %llu, rejected %llu", s->gbt != NULL ? "blocks " : "",
             (unsigned long long)accepted, (unsigned long long)rejected);
}

/* --shares-limit N (ccminer's): the pools (or the node) accepted N. */
static bool shares_limit_reached(const cli_options *o, mine_source *s)
{
    uint64_t accepted, rejected;
    if (o->shares_limit == 0)
        return false;
    answered_totals(s, &accepted, &rejected);
    if (accepted < o->shares_limit)
        return false;
    lode_log(LODE_LOG_NOTICE, "%llu %s accepted (--shares-limit %llu): stopping", (unsigned long long)accepted,
             s->gbt != NULL ? "blocks" : "shares", (unsigned long long)o->shares_limit);
    return true;
}

/* Mines until Ctrl-C, --time-limit, --shares-limit, a refusal by the pool
 * or node, or no device left: the exit status. */
static int mine_until_stopped(const cli_options *o, cli_run *run, mine_source *source)
{
    double start = lode_clock_s();
    char why[256];
    int status = 0;
    while (!cli_interrupted()) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        if ((o->time_limit > 0 && lode_clock_s() - start >= o->time_limit) || shares_limit_reached(o, source))
            break;
        cli_rate_report_tick(&run->report);
        if (lode_mining_failure(run->mining, why, sizeof why)) {
            lode_log(LODE_LOG_ERROR, "%s", why);
            status = EXIT_REFUSED;
            break;
        }
        if (cli_devices_left(run->miner) == 0) {
            lode_log(LODE_LOG_ERROR, "every device has failed or is quarantined; nothing is mining");
            status = EXIT_RUNTIME;
            break;
        }
    }
    if (status == 0)
        status = cli_interrupted() ? EXIT_INTERRUPTED : 0;
    return status;
}

/* The summary lines; a run with hardware errors, or without a single job,
 * turns a 0 status into EXIT_RUNTIME. */
static int summarise_run(const cli_options *o, cli_run *run, mine_source *source, int status)
{
    uint64_t hw_errors;
    cli_rate_report_stop_and_summarise(&run->report, &hw_errors);
    lode_mining_stats ms;
    lode_mining_stats_get(run->mining, &ms);
    /* Hits on live jobs (a hit is a share); the other lines count the dropped. */
    lode_log(LODE_LOG_NOTICE, "summary: jobs %llu, %llu %s passed to the %s", (unsigned long long)ms.jobs,
             (unsigned long long)ms.shares, source->gbt ? "blocks" : "shares", source->gbt ? "node" : "pool");
    summarise_source(source, o);
    if (hw_errors && status == 0)
        status = EXIT_RUNTIME;
    if (status == 0 && ms.jobs == 0) {
        /* The run ended (--time-limit) without a job: its pool, proxy or
         * node was never reached, and nothing was mined: not a success. */
        lode_log(LODE_LOG_ERROR, "no job came from %s in the whole run: nothing was mined (see the errors above)",
                 source->gbt ? "the node" : o->pool_count > 1 ? "any pool" : "the pool");
        status = EXIT_RUNTIME;
    }
    return status;
}

/* The mining session on the selected devices, from start to summary. */
static int run_mining(const cli_options *o, cli_run *run, mine_source *source)
{
    lode_mining_config config = {
        .miner = {.algo = o->algo, .devices = run->devices, .device_count = run->device_count,
                  .threads = o->threads, .variant = o->variant},
        .source_ops = source->gbt ? &lode_gbt_source_ops : &lode_stratum_source_ops,
        .source = source->gbt ? (void *)source->gbt : (void *)source->stratum,
    };
    int status = cli_run_start_mining(run, o, &config);
    if (status != 0)
        return status;
    run->api_source = (cli_api_source){.algo = o->algo, .kind = source->gbt ? "gbt" : "stratum",
                                       .where = o->pools[0].url, .stratum = source->stratum, .gbt = source->gbt,
                                       .node_url = o->pools[0].url, .unit = cli_rate_unit(o->algo)};
    for (size_t i = 0; i < o->pool_count; i++)
        run->api_source.pool_urls[i] = o->pools[i].url;
    if ((status = cli_run_start_api(run, o)) != 0 || (status = cli_run_wait_ready(run)) != 0 ||
        (status = cli_run_start_report(run, o->algo,
                                       o->log_interval > 0 ? o->log_interval : DEFAULT_LOG_INTERVAL)) != 0)
        return status;
    int started = source->gbt ? lode_gbt_start(source->gbt, run->mining)
                              : lode_stratum_start(source->stratum, run->mining);
    if (started != 0) {
        lode_log(LODE_LOG_ERROR, "cannot start the job source");
        status = EXIT_RUNTIME;
    } else {
        lode_log(LODE_LOG_INFO, "mining %s on %zu device(s) from %s; Ctrl-C stops", lode_algo_get(o->algo)->name,
                 lode_dispatcher_device_count(run->miner), o->pools[0].url);
        cli_run_running(run, lode_algo_get(o->algo)->name, cli_rate_unit(o->algo), status_extra, source);
        status = mine_until_stopped(o, run, source);
        lode_log(LODE_LOG_INFO, "stopping");
        cli_run_stopping(run);
        if (source->gbt)
            lode_gbt_stop(source->gbt);
        else
            lode_stratum_stop(source->stratum);
    }
    return summarise_run(o, run, source, status);
}

int cmd_mine(const cli_options *o)
{
    if (!o->algo_given)
        return cli_usage_error("mining needs --algo (%s)", lode_algo_names());
    /* Pools and getblocktemplate speak of 80-byte headers and 32-bit nonces. */
    if (lode_algo_get(o->algo)->kind != LODE_WORK_NONCE_SCAN)
        return cli_usage_error("mining on pools and nodes is for sha256d and scrypt, not %s",
                               lode_algo_get(o->algo)->name);
    if (cli_api_check(o) != 0)
        return EXIT_USAGE;
    char err[512];
    mine_source source = {0};
    if (create_source(o, &source, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    cli_run run = {0};
    int status = cli_run_select(&run, o, o->algo);
    if (status == 0)
        status = run_mining(o, &run, &source);
    cli_run_end(&run); /* the session before its job source */
    lode_stratum_free(source.stratum);
    lode_gbt_free(source.gbt);
    return status;
}
