/* The HTTP API of a run: the provider core/api's server is given. It reads
 * the dispatcher's counters and states, the job source's pool counters and
 * the trial-factoring driver's progress once a second (the API's sampler
 * calls it), and pauses devices or switches pools when asked. The server
 * itself knows none of these. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/cli/run_api.h"
#include "core/dispatch/dispatch.h"
#include "core/gbt/gbt_client.h"
#include "core/stratum/stratum_client.h"
#include "core/tf/class_driver.h"

/* Room for the longest token taken, its newline and one more byte, so a
 * longer one shows as such instead of being cut. */
#define TOKEN_BUF (LODE_API_TOKEN_MAX + 3)

static int token_too_long(const char *where, char *err, size_t err_len)
{
    snprintf(err, err_len, "the API token (%s) is longer than %d characters; use a shorter one", where,
             LODE_API_TOKEN_MAX);
    return -1;
}

/* The token: --api-token, else the first line of --api-token-file, else
 * LODE_API_TOKEN; "" when none. A token is taken whole or refused, never
 * cut. 0, or -1 with the reason in err. */
static int read_token(const cli_options *o, char *out, size_t len, char *err, size_t err_len)
{
    out[0] = '\0';
    if (o->api_token != NULL) {
        if (strlen(o->api_token) > LODE_API_TOKEN_MAX)
            return token_too_long("--api-token", err, err_len);
        snprintf(out, len, "%s", o->api_token);
        return 0;
    }
    if (o->api_token_file != NULL) {
        FILE *f = fopen(o->api_token_file, "r");
        if (f == NULL) {
            snprintf(err, err_len, "cannot read the API token file %s: %s", o->api_token_file, strerror(errno));
            return -1;
        }
        if (fgets(out, (int)len, f) == NULL)
            out[0] = '\0';
        fclose(f);
        size_t line = strcspn(out, "\r\n");
        out[line] = '\0';
        if (line > LODE_API_TOKEN_MAX) {
            memset(out, 0, len);
            return token_too_long(o->api_token_file, err, err_len);
        }
        if (out[0] == '\0') {
            snprintf(err, err_len, "the API token file %s is empty", o->api_token_file);
            return -1;
        }
        return 0;
    }
    const char *env = lode_setting_text(LODE_SETTING_API_TOKEN);
    if (env != NULL && strlen(env) > LODE_API_TOKEN_MAX)
        return token_too_long("LODE_API_TOKEN", err, err_len);
    if (env != NULL)
        snprintf(out, len, "%s", env);
    return 0;
}

int cli_api_check(const cli_options *o)
{
    if (o->api_bind == NULL) {
        if (o->api_token != NULL || o->api_token_file != NULL || o->api_allow_host_count)
            return cli_usage_error("--api-token, --api-token-file and --api-allow-host go with --api-bind "
                                   "HOST:PORT");
        return 0;
    }
    if (!lode_api_available())
        return cli_usage_error("--api-bind: this lode was built without libmicrohttpd (-DLODE_MICROHTTPD=OFF, "
                               "e.g. the portable preset): install libmicrohttpd-dev and libjs-chart.js and "
                               "build again");
    for (size_t i = 0; i < o->api_allow_host_count; i++)
        if (!lode_api_host_name_valid(o->api_allow_hosts[i]))
            return cli_usage_error("--api-allow-host wants host names (letters, digits, '-' and '.', or "
                                   "[IPV6]) without a port, not '%.300s'", o->api_allow_hosts[i]);
    char token[TOKEN_BUF], err[512];
    if (read_token(o, token, sizeof token, err, sizeof err) != 0 ||
        lode_api_check_config(o->api_bind, token, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    return 0;
}

/* Copies what fits (a long device name is cut, not refused). */
static void copy(char *dst, size_t len, const char *src)
{
    size_t n = src ? strnlen(src, len - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

/* A URL without user:password@ in it: the API shows it to anyone allowed to read. */
static void url_without_credentials(char *dst, size_t len, const char *url)
{
    if (url == NULL)
        url = "";
    const char *host = strstr(url, "://");
    host = host ? host + 3 : url;
    size_t span = strcspn(host, "/?#");
    const char *at = memchr(host, '@', span);
    if (at == NULL) {
        copy(dst, len, url);
        return;
    }
    snprintf(dst, len, "%.*s%s", (int)(host - url), url, at + 1);
}

/* The trial-factoring driver's progress, the devices' proof entries and
 * factors, and the PrimeNet client's state. */
static void tf_snapshot(cli_api_source *src, lode_api_snapshot *out)
{
    lode_tf_status st;
    lode_tf_driver_status(src->tf, &st);
    out->tf = (lode_api_tf){
        .running = st.running, .exponent = st.exponent, .bit_min = st.bit_min, .bit_max = st.bit_max,
        .classes_done = st.classes_done, .classes_total = st.classes_total,
        .classes_done_total = st.classes_done_total, .assignments_done = st.assignments_done,
        .ghz_days = st.ghz_days, .candidates = st.candidates, .ghz_days_per_day = st.ghz_days_per_day,
        .eta_s = st.eta_s, .factors = st.factors, .factors_found = st.factors_found};
    for (size_t d = 0; d < out->device_count && d < LODE_TF_STATUS_DEVICES; d++) {
        out->devices[d].proof_entries = st.device_proof_entries[d];
        out->devices[d].factors = st.device_factors[d];
    }
    out->primenet = (lode_api_primenet){.next_contact_s = -1};
    if (src->primenet != NULL)
        src->primenet(src->primenet_user, &out->primenet);
}

static void snapshot(void *user, lode_api_snapshot *out)
{
    cli_api_source *src = user;
    lode_dispatcher *m = src->miner;
    size_t n = m ? lode_dispatcher_device_count(m) : 0;
    if (n > LODE_API_MAX_DEVICES)
        n = LODE_API_MAX_DEVICES;
    for (size_t d = 0; d < n; d++) {
        const lode_device_ref *ref = lode_dispatcher_device(m, d);
        lode_api_device *dev = &out->devices[d];
        lode_device_stats st;
        lode_dispatcher_device_stats(m, d, &st);
        copy(dev->id, sizeof dev->id, ref->id);
        copy(dev->name, sizeof dev->name, ref->info.name);
        copy(dev->backend, sizeof dev->backend, lode_device_backend_name(ref));
        copy(dev->variant, sizeof dev->variant, d < 64 ? src->variants[d] : "");
        copy(dev->state, sizeof dev->state, lode_device_state_name(st.state));
        dev->hashes = st.hashes;
        dev->hits = st.hits;
        dev->hw_errors = st.hw_errors;
        dev->hits_expected = st.hits_expected;
        dev->hits_dropped = st.hits_dropped;
        dev->scans_in_flight = st.scans_out;
        dev->sensors = st.sensors; /* the dispatcher's monitor reads them once a second */
        dev->energy = st.energy;
        copy(dev->uuid, sizeof dev->uuid, ref->info.uuid);
        dev->nvml_index = ref->info.nvml_index;
        copy(dev->bus_id, sizeof dev->bus_id, ref->info.bus_id);
    }
    out->device_count = n;
    if (src->stratum != NULL) {
        size_t pools = lode_stratum_pool_count(src->stratum), current = lode_stratum_current_pool(src->stratum);
        for (size_t p = 0; p < pools && p < LODE_API_MAX_POOLS; p++) {
            lode_pool_stats st;
            lode_stratum_pool_stats(src->stratum, p, &st);
            lode_api_pool *pl = &out->pools[p];
            url_without_credentials(pl->url, sizeof pl->url, p < CLI_MAX_POOLS ? src->pool_urls[p] : NULL);
            pl->active = p == current;
            pl->connected = st.connected;
            pl->accepted = st.accepted;
            pl->rejected = st.rejected;
            pl->stale = st.stale;
            pl->dropped = st.dropped;
            pl->unsent = st.unsent;
            pl->unanswered = st.unanswered;
            pl->difficulty = st.difficulty;
            copy(pl->last_reject, sizeof pl->last_reject, st.last_reject);
            out->pool_count = p + 1;
        }
    } else if (src->gbt != NULL) { /* solo: the node, and blocks for shares */
        lode_gbt_stats st;
        lode_gbt_stats_get(src->gbt, &st);
        lode_api_pool *pl = &out->pools[0];
        url_without_credentials(pl->url, sizeof pl->url, src->node_url);
        pl->active = true;
        pl->connected = st.connected;
        pl->accepted = st.accepted;
        pl->rejected = st.rejected;
        pl->stale = st.stale;
        pl->dropped = st.dropped;
        pl->unsent = st.unsent;
        copy(pl->last_reject, sizeof pl->last_reject, st.last_reject);
        out->pool_count = 1;
    }
    if (src->tf != NULL)
        tf_snapshot(src, out);
}

static int set_paused(void *user, size_t device, bool paused, char *why, size_t why_len)
{
    cli_api_source *src = user;
    if (lode_dispatcher_set_paused(src->miner, device, paused) != 0) {
        snprintf(why, why_len, "no such device");
        return -1;
    }
    return 0;
}

static int next_pool(void *user, char *why, size_t why_len)
{
    cli_api_source *src = user;
    if (lode_stratum_next_pool(src->stratum) != 0) {
        snprintf(why, why_len, "there is no other pool to switch to (give backup pools with more -o)");
        return -1;
    }
    return 0;
}

int cli_api_start(const cli_options *o, cli_api_source *src, struct lode_api **out)
{
    *out = NULL;
    if (o->api_bind == NULL)
        return 0;
    char token[TOKEN_BUF], err[512];
    if (read_token(o, token, sizeof token, err, sizeof err) != 0) {
        lode_log(LODE_LOG_ERROR, "%s", err);
        return EXIT_RUNTIME;
    }
    /* Each device's implementation: the one forced, or the best it has. */
    for (size_t d = 0; src->miner && d < lode_dispatcher_device_count(src->miner) && d < 64; d++) {
        const char *names[1] = {NULL};
        const char *v = o->variant;
        if (v == NULL && lode_device_variants(lode_dispatcher_device(src->miner, d), src->algo, names, 1) > 0)
            v = names[0];
        copy(src->variants[d], sizeof src->variants[d], v);
    }
    char build[256] = "backends:";
    for (size_t b = 0; b < lode_backend_count(); b++) {
        size_t l = strlen(build);
        snprintf(build + l, sizeof build - l, " %s", lode_backend_name(b));
    }
    char where[256];
    url_without_credentials(where, sizeof where, src->where);
    lode_api_config c = {
        .bind = o->api_bind,
        .token = token,
        .allow_hosts = o->api_allow_hosts,
        .allow_host_count = o->api_allow_host_count,
        .version = LODE_VERSION,
        .build = build,
        .algorithm = lode_algo_get(src->algo)->name,
        .unit = src->unit,
        .source_kind = src->kind,
        .source = where,
        .provider = {.user = src, .snapshot = snapshot, .set_paused = src->miner ? set_paused : NULL,
                     .next_pool = src->stratum && lode_stratum_pool_count(src->stratum) > 1 ? next_pool : NULL},
    };
    *out = lode_api_start(&c, err, sizeof err);
    memset(token, 0, sizeof token);
    if (*out == NULL) {
        lode_log(LODE_LOG_ERROR, "%s", err);
        return EXIT_RUNTIME;
    }
    return 0;
}

void cli_api_stop(struct lode_api *api)
{
    lode_api_stop(api);
}
