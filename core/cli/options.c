/* Every option lode takes, applied by name: the command line (main.c) and
 * config files (config.c) both come through cli_apply_option. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli/cli.h"

/* Short options and the getopt table; long names are also config keys.
 * "config", "help", "help-env" and "version" act at once and exist only on the
 * command line (main.c). */
const char cli_short_options[] = ":a:d:t:o:u:p:c:qVh";
const struct option cli_long_options[] = {
    {"algo", required_argument, NULL, 'a'},
    {"devices", required_argument, NULL, 'd'},
    {"threads", required_argument, NULL, 't'},
    {"url", required_argument, NULL, 'o'},
    {"user", required_argument, NULL, 'u'},
    {"pass", required_argument, NULL, 'p'},
    {"config", required_argument, NULL, 'c'},
    {"quiet", no_argument, NULL, 'q'},
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},
    {"help-env", no_argument, NULL, 'E'}, /* long only: 'E' is not in cli_short_options */
    {"benchmark", no_argument, NULL, 0},
    {"time-limit", required_argument, NULL, 0},
    {"variant", required_argument, NULL, 0},
    {"list-devices", no_argument, NULL, 0},
    {"selftest", no_argument, NULL, 0},
    {"no-color", no_argument, NULL, 0},
    {"header", required_argument, NULL, 0},
    {"target", required_argument, NULL, 0},
    {"start", required_argument, NULL, 0},
    {"count", required_argument, NULL, 0},
    {"cert-pin", required_argument, NULL, 0},
    {"coinbase-addr", required_argument, NULL, 0},
    {"cookie", required_argument, NULL, 0},
    {"coinbase-tag", required_argument, NULL, 0},
    {"suggest-diff", required_argument, NULL, 0},
    {"no-version-rolling", no_argument, NULL, 0},
    {"no-redirect", no_argument, NULL, 0},
    {"allow-redirect-host", no_argument, NULL, 0},
    {"failover-after", required_argument, NULL, 0},
    {"retry-pause", required_argument, NULL, 0},
    {"stall-timeout", required_argument, NULL, 0},
    {"log-interval", required_argument, NULL, 0},
    {0},
};

const struct option *cli_find_option(const char *name)
{
    for (const struct option *opt = cli_long_options; opt->name != NULL; opt++)
        if (strcmp(opt->name, name) == 0)
            return opt;
    return NULL;
}

static int fail(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A decimal integer in [0, max], nothing else. */
static int parse_u64(const char *text, uint64_t max, uint64_t *out)
{
    if (text == NULL || *text < '0' || *text > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

/* A finite number above 0. */
static int parse_positive(const char *text, double *out)
{
    if (text == NULL || *text == '\0')
        return -1;
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !(v > 0) || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* -u/-p/--cert-pin belong to the last -o, or to every pool before any -o. */
static cli_pool *credentials_target(cli_options *o)
{
    return o->pool_count ? &o->pools[o->pool_count - 1] : &o->defaults;
}

int cli_apply_option(cli_options *o, const char *name, const char *v, char *err, size_t err_len)
{
    uint64_t n;
    if (strcmp(name, "algo") == 0) {
        if (lode_algo_parse(v, &o->algo) != 0)
            return fail(err, err_len, "unknown algorithm '%s' (known: %s)", v, lode_algo_names());
        o->algo_given = true;
    } else if (strcmp(name, "devices") == 0) {
        o->devices = v;
    } else if (strcmp(name, "threads") == 0) {
        if (parse_u64(v, 4096, &n) != 0 || n == 0)
            return fail(err, err_len, "--threads wants a number from 1 to 4096, not '%s'", v);
        o->threads = (unsigned)n;
    } else if (strcmp(name, "benchmark") == 0) {
        o->benchmark = true;
    } else if (strcmp(name, "time-limit") == 0) {
        if (parse_positive(v, &o->time_limit) != 0)
            return fail(err, err_len, "--time-limit wants a number of seconds above 0, not '%s'", v);
    } else if (strcmp(name, "variant") == 0) {
        o->variant = v;
    } else if (strcmp(name, "list-devices") == 0) {
        o->list_devices = true;
    } else if (strcmp(name, "selftest") == 0) {
        o->selftest = true;
    } else if (strcmp(name, "quiet") == 0) {
        o->quiet = true;
    } else if (strcmp(name, "no-color") == 0) {
        o->no_color = true;
    } else if (strcmp(name, "header") == 0) {
        o->header = v;
    } else if (strcmp(name, "target") == 0) {
        o->target = v;
    } else if (strcmp(name, "start") == 0) {
        if (parse_u64(v, UINT32_MAX, &o->start) != 0)
            return fail(err, err_len, "--start wants a nonce from 0 to 4294967295, not '%s'", v);
        o->start_given = true;
    } else if (strcmp(name, "count") == 0) {
        if (parse_u64(v, UINT64_C(1) << 32, &o->count) != 0 || o->count == 0)
            return fail(err, err_len, "--count wants a number from 1 to 4294967296, not '%s'", v);
        o->count_given = true;
    } else if (strcmp(name, "url") == 0) {
        if (o->pool_count == CLI_MAX_POOLS)
            return fail(err, err_len, "at most %d pools (-o) are supported", CLI_MAX_POOLS);
        o->pools[o->pool_count++] = (cli_pool){.url = v};
    } else if (strcmp(name, "user") == 0) {
        credentials_target(o)->user = v;
    } else if (strcmp(name, "pass") == 0) {
        credentials_target(o)->pass = v;
    } else if (strcmp(name, "cert-pin") == 0) {
        credentials_target(o)->cert_pin = v;
    } else if (strcmp(name, "coinbase-addr") == 0) {
        o->coinbase_addr = v;
    } else if (strcmp(name, "cookie") == 0) {
        o->cookie = v;
    } else if (strcmp(name, "coinbase-tag") == 0) {
        if (strlen(v) > 32)
            return fail(err, err_len, "--coinbase-tag takes at most 32 characters");
        o->coinbase_tag = v;
    } else if (strcmp(name, "suggest-diff") == 0) {
        if (parse_positive(v, &o->suggest_diff) != 0)
            return fail(err, err_len, "--suggest-diff wants a difficulty above 0, not '%s'", v);
    } else if (strcmp(name, "no-version-rolling") == 0) {
        o->no_version_rolling = true;
    } else if (strcmp(name, "no-redirect") == 0) {
        o->no_redirect = true;
    } else if (strcmp(name, "allow-redirect-host") == 0) {
        o->allow_redirect_host = true;
    } else if (strcmp(name, "failover-after") == 0) {
        if (parse_u64(v, 1000, &n) != 0 || n == 0)
            return fail(err, err_len, "--failover-after wants a number from 1 to 1000, not '%s'", v);
        o->failover_after = (unsigned)n;
    } else if (strcmp(name, "retry-pause") == 0) {
        if (parse_positive(v, &o->retry_pause) != 0)
            return fail(err, err_len, "--retry-pause wants seconds above 0, not '%s'", v);
    } else if (strcmp(name, "stall-timeout") == 0) {
        if (parse_positive(v, &o->stall_timeout) != 0)
            return fail(err, err_len, "--stall-timeout wants seconds above 0, not '%s'", v);
    } else if (strcmp(name, "log-interval") == 0) {
        if (parse_positive(v, &o->log_interval) != 0)
            return fail(err, err_len, "--log-interval wants seconds above 0, not '%s'", v);
    } else {
        return fail(err, err_len, "unknown option '%s'", name);
    }
    return 0;
}

void cli_options_free(cli_options *o)
{
    for (size_t i = 0; i < o->owned_count; i++)
        free(o->owned[i]);
    free(o->owned);
    o->owned = NULL;
    o->owned_count = 0;
}
