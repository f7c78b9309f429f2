/* Other miners' options (ccminer, cpuminer, cgminer, xmrig) that a pasted
 * command line or config file brings: applied with lode's meaning where it
 * has one, otherwise accepted with one warning that says why it is ignored
 * (docs/MINING.md, "Command lines from cpuminer and ccminer"). Their table entries
 * are in option_table.c's one table, with these setters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/cli/compat_options.h"
#include "core/cli/option_parse.h"
#include "core/cli/options.h"

/* The ignored ones: lode has nothing to set, and says why. */
static const struct {
    const char *name, *shown, *why;
} ignored[] = {
    {"intensity", "-i (--intensity)", "lode sizes each device's scans itself (about 200 ms a scan)"},
    {"statsavg", "-N (--statsavg)", "lode's hashrate lines average over each --log-interval"},
    {"debug", "-D (--debug)", "lode logs its debug lines without it (-q hides them)"},
    {"scantime", "-s (--scantime)",
     "lode takes new work as soon as the pool sends it or the node's template changes"},
    {"no-longpoll", "--no-longpoll", "lode long-polls a node that offers it (pools push their work)"},
    {"cpu-affinity", "--cpu-affinity",
     "lode binds each CPU worker thread to a core of its own; choose how many with -t, which CPU with -d"},
    {"keepalive", "-k (--keepalive)",
     "xmrig's keepalived requests are not stratum; lode keeps TCP keepalive on and reconnects after "
     "--stall-timeout"},
    {"api-allow", "--api-allow",
     "lode admits API clients by --api-token (needed for every request beyond loopback), not by address"},
};

_Static_assert(sizeof ignored / sizeof ignored[0] <= 8 * sizeof(unsigned), "cli_options.compat_ignored bits");

int cli_set_ignored(cli_options *o, const cli_option *opt, const char *value, char *err, size_t err_len)
{
    (void)value;
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        if (strcmp(opt->name, ignored[i].name) == 0) {
            o->compat_ignored |= 1u << i;
            return 0;
        }
    return lode_fail(err, err_len, "unknown option '%s'", opt->name); /* a row without its entry above */
}

/* cgminer's --scrypt: -a scrypt. */
int cli_set_scrypt(cli_options *o, const cli_option *opt, const char *value, char *err, size_t err_len)
{
    (void)opt, (void)value, (void)err, (void)err_len;
    o->algo = LODE_ALGO_SCRYPT;
    o->algo_given = true;
    return 0;
}

/* cgminer's --api-listen: its API on 127.0.0.1:4028, unless --api-bind says where. */
int cli_set_api_listen(cli_options *o, const cli_option *opt, const char *value, char *err, size_t err_len)
{
    (void)opt, (void)value, (void)err, (void)err_len;
    if (o->api_bind == NULL)
        o->api_bind = "127.0.0.1:4028";
    return 0;
}

/* ccminer's --shares-limit N. */
int cli_set_shares_limit(cli_options *o, const cli_option *opt, const char *value, char *err, size_t err_len)
{
    (void)opt;
    char *end = "";
    unsigned long long n = value && *value >= '0' && *value <= '9' ? strtoull(value, &end, 10) : 0;
    if (n == 0 || *end != '\0' || n > 1000000000)
        return lode_fail(err, err_len, "--shares-limit wants a number of shares from 1 to 1000000000, not '%s'",
                        value ? value : "");
    o->shares_limit = n;
    return 0;
}

void cli_warn_ignored_options(const cli_options *o)
{
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        if (o->compat_ignored & (1u << i))
            lode_log(LODE_LOG_WARN, "%s: ignored: %s", ignored[i].shown, ignored[i].why);
    /* Those that need a pool, given to a run without one (--benchmark, scan). */
    if (o->pool_count == 0 && o->shares_limit > 0)
        lode_log(LODE_LOG_WARN, "--shares-limit: ignored: it counts the shares a pool accepts (mining with -o)");
    if (o->pool_count == 0 && o->protocol_dump)
        lode_log(LODE_LOG_WARN, "-P (--protocol-dump): ignored: it dumps a pool's traffic (mining with -o)");
}
