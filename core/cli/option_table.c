/* Every option lode takes, in one table (cli_option_table): its names,
 * value, the commands it applies to, its --help text and the setter that
 * applies it; an option is defined in one place, its row and the setter
 * above it. Lookup and application: options.c. */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli/compat_options.h"
#include "core/cli/option_parse.h"
#include "core/cli/options.h"
#include "core/stratum/stratum_conn.h"

/* Every setter has the cli_setter signature; most use only some of it. */
#define UNUSED __attribute__((unused))
#define SETTER(fn)                                                                                            \
    static int fn(cli_options *o UNUSED, const cli_option *opt UNUSED, const char *v UNUSED, char *err UNUSED, \
                  size_t err_len UNUSED)
/* The member of o a generic setter writes: the row's field. */
#define FIELD(type) ((type *)(void *)((char *)o + opt->field))

/* ---- generic setters: the row names the member (offsetof) ----------------- */

SETTER(set_text)
{
    *FIELD(const char *) = v;
    return 0;
}

SETTER(set_flag)
{
    *FIELD(bool) = true;
    return 0;
}

/* Text that goes into JSON as it is (tf's --user, --computer). */
SETTER(set_utf8)
{
    json_t *s = v != NULL ? json_string(v) : NULL; /* NULL: not UTF-8 */
    json_decref(s);
    if (s == NULL)
        return lode_fail(err, err_len, "--%s wants UTF-8 text", opt->name);
    *FIELD(const char *) = v;
    return 0;
}

SETTER(set_seconds)
{
    if (cli_parse_seconds(v, FIELD(double)) != 0)
        return lode_fail(err, err_len, "--%s wants seconds, not '%s'", opt->name, v);
    return 0;
}

SETTER(set_positive_seconds)
{
    if (cli_parse_positive(v, FIELD(double)) != 0)
        return lode_fail(err, err_len, "--%s wants seconds above 0, not '%s'", opt->name, v);
    return 0;
}

/* ---- the pools, the node, the mining session ------------------------------ */

/* -u/-p/--cert-pin belong to the last -o, or to every pool before any -o. */
static cli_pool *credentials_target(cli_options *o)
{
    return o->pool_count ? &o->pools[o->pool_count - 1] : &o->defaults;
}

static bool is_node_url(const char *url)
{
    return strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
}

/* -o URL: a node's URL as it is; a pool's parsed (the one URL parser, in
 * the stratum layer), kept without its credentials (what gets logged), which
 * go to the pool's -u/-p; a later -u/-p still overrides them. */
SETTER(set_url)
{
    if (o->pool_count == CLI_MAX_POOLS)
        return lode_fail(err, err_len, "at most %d pools (-o) are supported", CLI_MAX_POOLS);
    cli_pool pool = {0};
    if (is_node_url(v)) {
        const char *host = strstr(v, "://") + 3;
        if (memchr(host, '@', strcspn(host, "/")) != NULL)
            return lode_fail(err, err_len, "give the node's credentials with -u/-p or --cookie, not in the URL");
        pool.url = cli_keep(o, v);
    } else {
        lode_stratum_url url;
        char why[256];
        if (lode_stratum_url_parse(v, &url, why, sizeof why) != 0)
            return lode_fail(err, err_len, "%s", why);
        char clean[LODE_STRATUM_HOST_MAX + 32];
        lode_stratum_url_format(&url, clean, sizeof clean);
        pool.url = cli_keep(o, clean);
        if (url.has_user && (pool.user = cli_keep(o, url.user)) == NULL)
            return lode_fail(err, err_len, "out of memory");
        if (url.has_pass && (pool.pass = cli_keep(o, url.pass)) == NULL)
            return lode_fail(err, err_len, "out of memory");
        explicit_bzero(url.pass, sizeof url.pass);
    }
    if (pool.url == NULL)
        return lode_fail(err, err_len, "out of memory");
    o->pools[o->pool_count++] = pool;
    return 0;
}

SETTER(set_pool_user)
{
    credentials_target(o)->user = v;
    return 0;
}

SETTER(set_pool_pass)
{
    /* A copy: main.c masks the command line's. */
    if ((credentials_target(o)->pass = cli_keep(o, v)) == NULL)
        return lode_fail(err, err_len, "out of memory");
    return 0;
}

SETTER(set_userpass)
{
    const char *colon = strchr(v, ':');
    if (colon == NULL)
        return lode_fail(err, err_len, "--userpass (-O) wants USER:PASS");
    char *both = (char *)cli_keep(o, v);
    if (both == NULL)
        return lode_fail(err, err_len, "out of memory");
    both[colon - v] = '\0';
    credentials_target(o)->user = both;
    credentials_target(o)->pass = both + (colon - v) + 1;
    return 0;
}

SETTER(set_cert_pin)
{
    credentials_target(o)->cert_pin = v;
    return 0;
}

/* -x: the pools' proxy, and lode tf's to PrimeNet. */
SETTER(set_proxy)
{
    if (lode_stratum_proxy_check(v, err, err_len) != 0)
        return -1;
    if ((o->proxy = cli_keep(o, v)) == NULL)
        return lode_fail(err, err_len, "out of memory");
    return 0;
}

SETTER(set_coinbase_tag)
{
    if (strlen(v) > 32)
        return lode_fail(err, err_len, "--coinbase-tag takes at most 32 characters");
    o->coinbase_tag = v;
    return 0;
}

SETTER(set_suggest_diff)
{
    if (cli_parse_positive(v, &o->suggest_diff) != 0)
        return lode_fail(err, err_len, "--suggest-diff wants a difficulty above 0, not '%s'", v);
    return 0;
}

SETTER(set_failover_after)
{
    uint64_t n;
    if (cli_parse_u64(v, 1000, &n) != 0 || n == 0)
        return lode_fail(err, err_len, "--failover-after wants a number from 1 to 1000, not '%s'", v);
    o->failover_after = (unsigned)n;
    return 0;
}

/* ---- what every run takes -------------------------------------------------- */

SETTER(set_algo)
{
    if (lode_algo_parse(v, &o->algo) != 0 && strncmp(v, "scrypt:", 7) == 0)
        return lode_fail(err, err_len, "-a %s: lode's scrypt is N=1024 (scrypt or scrypt:1024), not N=%s", v, v + 7);
    if (lode_algo_parse(v, &o->algo) != 0)
        return lode_fail(err, err_len, "unknown algorithm '%s' (known: %s)", v, lode_algo_names());
    o->algo_given = true;
    return 0;
}

SETTER(set_devices)
{
    /* An empty list is a script's empty variable, not "every device"
     * (leave -d out for that). */
    if (v == NULL || v[strspn(v, " \t")] == '\0')
        return lode_fail(err, err_len, "--devices wants a list of devices (cpu, cuda:0, ...), not ''; "
                        "leave it out for every device");
    o->devices = v;
    return 0;
}

SETTER(set_threads)
{
    uint64_t n;
    if (cli_parse_u64(v, 4096, &n) != 0 || n == 0)
        return lode_fail(err, err_len, "--threads wants a number from 1 to 4096, not '%s'", v);
    o->threads = (unsigned)n;
    return 0;
}

SETTER(set_time_limit)
{
    if (cli_parse_positive(v, &o->time_limit) != 0)
        return lode_fail(err, err_len, "--time-limit wants a number of seconds above 0, not '%s'", v);
    return 0;
}

/* ---- scan and lode check --------------------------------------------------- */

SETTER(set_start)
{
    /* A nonce, or for tf an index n (below 2^52): cmd_scan checks the range. */
    if (cli_parse_u64(v, (UINT64_C(1) << 52) - 1, &o->start) != 0)
        return lode_fail(err, err_len, "--start wants a nonce from 0 to 4294967295 (tf: an index below 2^52), not '%s'",
                        v);
    o->start_given = true;
    return 0;
}

SETTER(set_count)
{
    if (cli_parse_u64(v, UINT64_C(1) << 52, &o->count) != 0 || o->count == 0)
        return lode_fail(err, err_len, "--count wants a number from 1 to 4294967296 (tf: to 2^52), not '%s'", v);
    o->count_given = true;
    return 0;
}

/* lode check's -a: names, comma-separated, added to those given before
 * (each once). */
SETTER(set_check_algos)
{
    const char *p = v ? v : "";
    for (;;) {
        size_t len = strcspn(p, ",");
        char name[32];
        lode_algo algo;
        if (len == 0 || len >= sizeof name)
            return lode_fail(err, err_len, "--algo wants names (%s), comma-separated, not '%s'", lode_algo_names(),
                            v);
        memcpy(name, p, len);
        name[len] = '\0';
        if (lode_algo_parse(name, &algo) != 0)
            return lode_fail(err, err_len, "unknown algorithm '%s' (known: %s)", name, lode_algo_names());
        bool seen = false;
        for (size_t i = 0; i < o->check.algo_count; i++)
            seen |= o->check.algos[i] == algo;
        if (!seen)
            o->check.algos[o->check.algo_count++] = algo;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

SETTER(set_jobs)
{
    if (cli_parse_u64(v, 1000000000, &o->check.jobs) != 0 || o->check.jobs == 0)
        return lode_fail(err, err_len, "--jobs wants a number from 1 to 1000000000, not '%s'", v);
    return 0;
}

SETTER(set_duration)
{
    if (cli_parse_duration(v, &o->check.duration) != 0)
        return lode_fail(err, err_len, "--duration wants a time above 0: seconds, or 90s, 5m, 2h; not '%s'", v);
    return 0;
}

SETTER(set_seed)
{
    /* Below 2^53: exact as a JSON number in any reader. */
    if (cli_parse_u64(v, (UINT64_C(1) << 53) - 1, &o->check.seed) != 0)
        return lode_fail(err, err_len, "--seed wants a number from 0 to %llu, not '%s'",
                        (unsigned long long)((UINT64_C(1) << 53) - 1), v);
    o->check.seed_given = true;
    return 0;
}

/* ---- lode tf and its PrimeNet client --------------------------------------- */

SETTER(set_stop_after_factor)
{
    uint64_t n;
    if (cli_parse_u64(v, 2, &n) != 0)
        return lode_fail(err, err_len, "--stop-after-factor wants 0, 1 or 2, not '%s'", v);
    o->tf.stop_after_factor = (unsigned)n;
    return 0;
}

SETTER(set_work_pref)
{
    uint64_t n;
    if (cli_parse_u64(v, 99, &n) != 0 || (n != 2 && n != 12))
        return lode_fail(err, err_len, "--work-pref wants 2 (trial factoring) or 12 (trial factoring on a GPU), "
                        "not '%s'", v);
    o->tf.work_pref = (unsigned)n;
    return 0;
}

SETTER(set_days_of_work)
{
    if (cli_parse_positive(v, &o->tf.days_of_work) != 0 || o->tf.days_of_work > 180)
        return lode_fail(err, err_len, "--days-of-work wants days above 0, at most 180, not '%s'", v);
    return 0;
}

SETTER(set_unreserve)
{
    uint64_t n;
    if (cli_parse_u64(v, UINT32_MAX, &n) != 0 || n == 0)
        return lode_fail(err, err_len, "--unreserve wants an exponent, not '%s'", v);
    o->tf.unreserve = (uint32_t)n;
    return 0;
}

/* ---- device health ---------------------------------------------------------- */

/* --max-temp: "C" for every device, or "ID=C" entries (a device id or a
 * backend name), comma-separated; added to those given before. */
SETTER(set_max_temps)
{
    if (v == NULL || *v == '\0')
        return lode_fail(err, err_len, "--max-temp wants C or ID=C[,ID=C...], not ''");
    const char *p = v;
    for (;;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        size_t id_len = eq ? (size_t)(eq - p) : 0;
        char number[32];
        size_t num_len = eq ? len - id_len - 1 : len;
        double c;
        if (o->max_temp_count == CLI_MAX_TEMPS)
            return lode_fail(err, err_len, "--max-temp: at most %d limits", CLI_MAX_TEMPS);
        if ((eq && (id_len == 0 || id_len >= sizeof o->max_temps[0].device)) || num_len == 0 ||
            num_len >= sizeof number)
            return lode_fail(err, err_len, "--max-temp wants C or ID=C (cuda:0=80), not '%.*s'", (int)len, p);
        memcpy(number, eq ? eq + 1 : p, num_len);
        number[num_len] = '\0';
        if (cli_parse_positive(number, &c) != 0 || c > 150)
            return lode_fail(err, err_len, "--max-temp wants degrees Celsius above 0 and at most 150, not '%s'",
                            number);
        snprintf(o->max_temps[o->max_temp_count].device, sizeof o->max_temps[0].device, "%.*s", (int)id_len,
                 p);
        o->max_temps[o->max_temp_count++].celsius = c;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

SETTER(set_max_restarts)
{
    uint64_t n;
    if (cli_parse_u64(v, 1000, &n) != 0)
        return lode_fail(err, err_len, "--max-restarts wants a number from 0 to 1000, not '%s'", v);
    o->max_restarts = (unsigned)n;
    o->max_restarts_given = true;
    return 0;
}

SETTER(set_hang_timeout)
{
    if (cli_parse_seconds(v, &o->hang_timeout) != 0)
        return lode_fail(err, err_len, "--hang-timeout wants seconds, not '%s'", v);
    o->hang_timeout_given = true;
    return 0;
}

/* ---- the API, the log, the process ----------------------------------------- */

SETTER(set_api_token)
{
    /* A copy: main.c masks the command line's in place (ps). */
    if ((o->api_token = cli_keep(o, v)) == NULL)
        return lode_fail(err, err_len, "out of memory");
    return 0;
}

/* --api-allow-host NAME[,NAME...]: each name kept (cli_api_check checks them). */
SETTER(set_allow_hosts)
{
    char name[256];
    for (const char *p = v;; p++) {
        size_t n = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
        if (n >= sizeof name || n == 0)
            return lode_fail(err, err_len, "--api-allow-host wants host names, comma-separated, not '%s'", v);
        if (o->api_allow_host_count == CLI_MAX_ALLOW_HOSTS)
            return lode_fail(err, err_len, "--api-allow-host: at most %d names", CLI_MAX_ALLOW_HOSTS);
        if ((o->api_allow_hosts[o->api_allow_host_count++] = cli_keep(o, name)) == NULL)
            return lode_fail(err, err_len, "out of memory");
        p += n;
        if (*p == '\0')
            return 0;
    }
}

SETTER(set_log_file)
{
    if (*v == '\0')
        return lode_fail(err, err_len, "--log-file wants a file name");
    o->log_file = v;
    return 0;
}

SETTER(set_log_format)
{
    if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0)
        return lode_fail(err, err_len, "--log-format wants text or json, not '%s'", v);
    o->log_json = strcmp(v, "json") == 0;
    return 0;
}

SETTER(set_cpu_priority)
{
    uint64_t n;
    if (cli_parse_u64(v, 5, &n) != 0)
        return lode_fail(err, err_len, "--cpu-priority wants a number from 0 (idle) to 5 (highest), not '%s'", v);
    o->cpu_priority = (int)n;
    return 0;
}

/* ---- the table -------------------------------------------------------------- */

/* A row's setter and the member it writes. */
#define CALL(fn) fn, 0
#define TEXT(member) set_text, offsetof(cli_options, member)
#define FLAG(member) set_flag, offsetof(cli_options, member)
#define UTF8(member) set_utf8, offsetof(cli_options, member)
#define SECONDS(member) set_seconds, offsetof(cli_options, member)
#define POSITIVE_SECONDS(member) set_positive_seconds, offsetof(cli_options, member)
#define ALIAS NULL, 0    /* applies its same_as option */
#define NOT_HERE NULL, 0 /* acts at once on the command line (main.c) */

/* The one table. "config", "help", "help-env" and "version" act at once and exist
 * only on the command line (main.c). */
const cli_option cli_option_table[] = {
    {"algo", 'a', "ALGO", CLI_MINER, false, CALL(set_algo), NULL /* cli_print_options lists the algorithms */},
    {"algo", 'a', "LIST", CLI_CHECK, false, CALL(set_check_algos),
     "the algorithms to check, comma-separated or repeated\n"
     "(default: every one)"},
    {"url", 'o', "URL", CLI_MINER, false, CALL(set_url),
     "stratum+tcp://HOST:PORT or stratum+ssl://HOST:PORT (a pool;\n"
     "repeat -o for backup pools, in priority order), or\n"
     "http://HOST:PORT (a node: solo mining with getblocktemplate);\n"
     "HOST:PORT alone is stratum+tcp, stratum+tcps:// is TLS,\n"
     "and USER:PASS@ before the host sets -u/-p"},
    {"user", 'u', "USER", CLI_MINER, false, CALL(set_pool_user), "pool user / worker, or node RPC user"},
    {"pass", 'p', "PASS", CLI_MINER, false, CALL(set_pool_pass),
     "its password (-u, -p and --cert-pin after an -o belong to\n"
     "that pool; before any -o, to every pool)"},
    {"userpass", 'O', "USER:PASS", CLI_MINER, false, CALL(set_userpass), "-u and -p in one (cpuminer's -O)"},
    {"proxy", 'x', "URL", CLI_MINER, false, CALL(set_proxy),
     "reach the pools through a proxy: socks5://HOST:PORT,\n"
     "socks5h://HOST:PORT (the proxy resolves pool names),\n"
     "socks4://HOST:PORT, socks4a:// (the proxy resolves) or\n"
     "http://HOST:PORT (HTTP CONNECT); USER:PASS@ allowed"},
    {"cert-pin", 0, "HEX", CLI_MINER, false, CALL(set_cert_pin),
     "accept exactly the TLS certificate with this SHA-256\n"
     "fingerprint (pools with self-signed certificates)"},
    {"coinbase-addr", 0, "A", CLI_MINER, false, TEXT(coinbase_addr), "solo: the address the block reward goes to"},
    {"cookie", 0, "FILE", CLI_MINER, false, TEXT(cookie), "solo: the node's .cookie file instead of -u/-p"},
    {"coinbase-tag", 0, "T", CLI_MINER, false, CALL(set_coinbase_tag), "solo: text put in the coinbase (default /lode/)"},
    {"suggest-diff", 0, "D", CLI_MINER, true, CALL(set_suggest_diff), "ask the pool for this share difficulty"},
    {"no-version-rolling", 0, NULL, CLI_MINER, false, FLAG(no_version_rolling), "sha256d: do not negotiate BIP 310 version rolling; the benchmark hashes one version a nonce"},
    {"no-redirect", 0, NULL, CLI_MINER, false, FLAG(no_redirect), "ignore the pool's client.reconnect"},
    {"allow-redirect-host", 0, NULL, CLI_MINER, false, FLAG(allow_redirect_host),
     "follow client.reconnect to another host too (it gets\n"
     "the pool's -u/-p); by default only to the same host"},
    {"failover-after", 0, "N", CLI_MINER, true, CALL(set_failover_after), "failed connection attempts before the next pool (3)"},
    {"retries", 'r', "N", CLI_MINER, true, ALIAS, "cpuminer's and ccminer's name of --failover-after", "failover-after"},
    {"failover-return", 0, "S", CLI_MINER, true, POSITIVE_SECONDS(failover_return), "on a backup pool, try the first pool again this often (60)"},
    {"retry-pause", 'R', "S", CLI_MINER, true, POSITIVE_SECONDS(retry_pause), "first pause before reconnecting; doubles up to 60 s (1)"},
    {"stall-timeout", 0, "S", CLI_MINER, true, POSITIVE_SECONDS(stall_timeout), "reconnect when a pool is silent this long (120)"},
    {"timeout", 'T', "S", CLI_MINER, true, ALIAS, "cpuminer's and ccminer's name of --stall-timeout", "stall-timeout"},
    {"log-interval", 0, "S", CLI_MINER, true, POSITIVE_SECONDS(log_interval), "seconds between hashrate lines (30; --benchmark: 5)"},
    {"config", 'c', "FILE", CLI_EVERY, false, NOT_HERE,
     "JSON options, keyed by long name: {\"threads\": 2, ...};\n"
     "pools as \"pools\": [{\"url\": ..., \"user\": ..., \"pass\": ...}]"},
    {"devices", 'd', "LIST", CLI_EVERY, false, CALL(set_devices),
     "devices to use, e.g. cpu, cpu:0, cuda:1 (default: all;\n"
     "lode tf: the GPUs, or the CPU where there is none)"},
    {"threads", 't', "N", CLI_ALL, true, CALL(set_threads), "CPU worker threads per device (default: one per core)"},
    {"threads", 't', "N", CLI_CHECK, true, CALL(set_threads), "threads of the CPU reference (default: one per core)"},
    {"benchmark", 0, NULL, CLI_MINER, false, FLAG(benchmark), "hash a synthetic job and report the hashrate"},
    {"time-limit", 0, "S", CLI_MINER, true, CALL(set_time_limit), "stop after S seconds"},
    {"variant", 0, "NAME", CLI_MINER, false, TEXT(variant), "force one implementation (see --list-devices)"},
    {"variant", 0, "NAME", CLI_CHECK, false, TEXT(variant), "check this implementation only (default: every one)"},
    {"jobs", 0, "N", CLI_CHECK, true, CALL(set_jobs), "random jobs per device x variant x algorithm (4)"},
    {"duration", 0, "TIME", CLI_CHECK, false, CALL(set_duration),
     "run this long instead, at full load (a stability test):\n"
     "seconds, or with s, m or h (90, 5m, 2h)"},
    {"seed", 0, "S", CLI_CHECK, true, CALL(set_seed), "the jobs' random seed (default: new each run, printed)"},
    {"json", 0, NULL, CLI_CHECK, false, FLAG(check.json), "print the result as one JSON object"},
    {"list-devices", 0, NULL, CLI_MINER, false, FLAG(list_devices), "list every device of every backend"},
    {"selftest", 0, NULL, CLI_MINER, false, FLAG(selftest), "run the known-answer vectors on the devices"},
    {"selftest", 0, NULL, CLI_TF, false, FLAG(selftest), "every known factor on every device (not the short set)"},
    {"verify", 0, "FILE", CLI_TF, false, TEXT(tf.verify),
     "check a proof file M<p>_<a>_<b>.proof (docs/TF-PROOF.md);\n"
     "needs no device: exit 0 when the proof holds, 1 when not"},
    {"worktodo", 'w', "FILE", CLI_TF, false, TEXT(tf.worktodo),
     "assignments: Factor=[AID,]exponent,bit_min,bit_max;\n"
     "worktodo.add beside it is merged in at start, after\n"
     "each finished assignment and every --worktodo-add-delay;\n"
     "FILE.lock keeps a second lode tf off the same file"},
    {"results", 0, "FILE", CLI_TF, false, TEXT(tf.results), "PrimeNet JSON results (results.json.txt)"},
    {"legacy-results", 0, "FILE", CLI_TF, false, TEXT(tf.legacy), "also append the legacy lines here (e.g. results.txt)"},
    {"checkpoint-dir", 0, "DIR", CLI_TF, false, TEXT(tf.ckp_dir), "where M<p>_<a>_<b>.ckp live (.)"},
    {"checkpoint-interval", 0, "S", CLI_TF, true, SECONDS(tf.ckp_interval), "seconds between checkpoints (60; 0 = every class)"},
    {"no-checkpoints", 0, NULL, CLI_TF, false, FLAG(tf.no_checkpoints),
     "no progress saves (a finished assignment's short-lived\n"
     "record against a second report is still written)"},
    {"progress-interval", 0, "S", CLI_TF, true, SECONDS(tf.progress_interval), "seconds between progress lines (10)"},
    {"stages", 0, NULL, CLI_TF, false, FLAG(tf.stages),
     "run an assignment of several bit levels one bit level at\n"
     "a time, a result each (mfaktc's Stages=1; default: whole)"},
    {"stop-after-factor", 0, "N", CLI_TF, true, CALL(set_stop_after_factor),
     "after a factor: 0 go on, 1 stop at the end of the bit\n"
     "level (of the range without --stages), 2 at the end of\n"
     "the class (a partial range, credited less) (1)"},
    {"worktodo-add-delay", 0, "S", CLI_TF, true, SECONDS(tf.add_delay),
     "merge worktodo.add this often while an assignment runs\n"
     "(600; 0 = after every class)"},
    {"user", 0, "NAME", CLI_TF, false, UTF8(tf.user),
     "put into the JSON results (UTF-8); with --primenet the\n"
     "PrimeNet user ID, at most 20 characters (ANONYMOUS)"},
    {"computer", 0, "NAME", CLI_TF, false, UTF8(tf.computer),
     "put into the JSON results (UTF-8); with --primenet the\n"
     "computer's name, at most 20 characters (the host name)"},
    {"primenet", 0, NULL, CLI_TF, false, FLAG(tf.primenet),
     "fetch the assignments from PrimeNet, report progress and\n"
     "send each result (its v5 API; docs/GIMPS.md)"},
    {"work-pref", 0, "N", CLI_TF, true, CALL(set_work_pref), "PrimeNet work: 2 trial factoring, 12 on a GPU (12)"},
    {"days-of-work", 0, "D", CLI_TF, true, CALL(set_days_of_work), "keep D days of work queued at the measured rate (1)"},
    {"primenet-url", 0, "URL", CLI_TF, false, TEXT(tf.primenet_url),
     "the PrimeNet server (https://v5.mersenne.org/v5server/);\n"
     "plain http:// only to a loopback address"},
    {"no-more-work", 0, NULL, CLI_TF, false, FLAG(tf.no_more_work), "finish the queued work, fetch nothing more, then exit"},
    {"unreserve", 0, "EXPONENT", CLI_TF, true, CALL(set_unreserve),
     "give this exponent's assignments back to PrimeNet,\n"
     "remove their lines, exit"},
    {"unreserve-all", 0, NULL, CLI_TF, false, FLAG(tf.unreserve_all), "give every PrimeNet assignment back, remove them, exit"},
    {"proxy", 'x', "URL", CLI_TF, false, CALL(set_proxy),
     "reach PrimeNet through a proxy, as -x for pools:\n"
     "socks5[h]://, socks4[a]:// or http://HOST:PORT"},
    {"class-log", 0, "FILE", CLI_TF, false, TEXT(tf.class_log), "append each class as it completes (for tests)"},
    {"max-temp", 0, "C", CLI_ALL, true, CALL(set_max_temps),
     "pause a device above C degrees Celsius until it is 5 C\n"
     "below; per device ID=C or BACKEND=C (cuda:0=80,cpu=90),\n"
     "comma-separated, repeatable; in a config file also\n"
     "{\"cuda:0\": 80, ...}"},
    {"max-restarts", 0, "N", CLI_ALL, true, CALL(set_max_restarts),
     "reopen a device that fails or hangs at most N times an\n"
     "hour, then quarantine it (5; 0: at its first fault)"},
    {"hang-timeout", 0, "S", CLI_ALL, true, CALL(set_hang_timeout),
     "a scan running S seconds and 10 times its expected\n"
     "length is hung: the device is reopened (60; 0: no watchdog)"},
    {"api-bind", 'b', "HOST:PORT", CLI_ALL, false, TEXT(api_bind),
     "serve the HTTP API, /metrics and the dashboard here\n"
     "(e.g. 127.0.0.1:4028; a PORT alone binds 127.0.0.1;\n"
     "port 0 = any free port; beyond loopback only with a token)"},
    {"api-listen", 0, NULL, CLI_ALL, false, CALL(cli_set_api_listen), "cgminer's: the API on 127.0.0.1:4028 (unless --api-bind)"},
    {"api-token", 0, "TOKEN", CLI_ALL, false, CALL(set_api_token),
     "the API's token: needed for control (pause, resume,\n"
     "next pool) and for every request beyond loopback;\n"
     "masked in ps, but --api-token-file or LODE_API_TOKEN\n"
     "keep it out of the shell's history too"},
    {"api-token-file", 0, "FILE", CLI_ALL, false, TEXT(api_token_file), "read the API token from the first line of FILE"},
    {"api-allow-host", 0, "NAME", CLI_ALL, false, CALL(set_allow_hosts),
     "also answer requests whose Host is NAME (a reverse proxy's;\n"
     "comma-separated, repeatable); others than the bound\n"
     "address and localhost get 403"},
    {"quiet", 'q', NULL, CLI_EVERY, false, FLAG(quiet), "only warnings, errors, the API address and the summary"},
    {"no-color", 0, NULL, CLI_EVERY, false, FLAG(no_color), "no colours in log lines (lode tf and lode check print none)"},
    {"log-file", 0, "FILE", CLI_ALL, false, CALL(set_log_file),
     "also append the log to FILE (moved away by logrotate:\n"
     "opened anew at the next line)"},
    {"syslog", 0, NULL, CLI_ALL, false, FLAG(log_syslog), "also log to syslog (ident lode, facility daemon)"},
    {"log-format", 0, "FMT", CLI_ALL, false, CALL(set_log_format),
     "text (the default) or json: one JSON object a line,\n"
     "with events (shares, pools, blocks, devices, tf results)"},
    {"background", 'B', NULL, CLI_ALL, false, FLAG(background),
     "detach from the terminal and run in the background\n"
     "(needs --log-file or --syslog; not under systemd)"},
    {"cpu-priority", 0, "N", CLI_ALL, true, CALL(set_cpu_priority),
     "0 idle (nice 19, SCHED_IDLE), 1 low (nice 10, SCHED_BATCH),\n"
     "2 normal, 3-5 higher (nice -5, -10, -15: needs root)"},
    {"protocol-dump", 'P', NULL, CLI_MINER, false, FLAG(protocol_dump), "log every stratum line sent and received (passwords masked)"},
    {"shares-limit", 0, "N", CLI_MINER, true, CALL(cli_set_shares_limit), "stop (exit 0) once the pools have accepted N shares"},
    {"scrypt", 0, NULL, CLI_MINER, false, CALL(cli_set_scrypt), "cgminer's name of -a scrypt"},
    /* Other miners' options lode ignores, each with a warning saying why
     * (compat_options.c); not in --help, listed in docs/MINING.md. */
    {"intensity", 'i', "N", CLI_MINER, true, CALL(cli_set_ignored), NULL},
    {"statsavg", 'N', "N", CLI_MINER, true, CALL(cli_set_ignored), NULL},
    {"debug", 'D', NULL, CLI_MINER, false, CALL(cli_set_ignored), NULL},
    {"scantime", 's', "S", CLI_MINER, true, CALL(cli_set_ignored), NULL},
    {"no-longpoll", 0, NULL, CLI_MINER, false, CALL(cli_set_ignored), NULL},
    {"cpu-affinity", 0, "MASK", CLI_ALL, false, CALL(cli_set_ignored), NULL},
    {"keepalive", 'k', NULL, CLI_MINER, false, CALL(cli_set_ignored), NULL},
    {"api-allow", 0, "IP", CLI_ALL, false, CALL(cli_set_ignored), NULL},
    {"header", 0, "HEX", CLI_MINER, false, TEXT(header), NULL}, /* scan and hash: in the usage lines */
    {"target", 0, "HEX", CLI_MINER, false, TEXT(target), NULL},
    {"versions", 0, "V,V,...", CLI_MINER, false, TEXT(versions), NULL},
    {"start", 0, "N", CLI_MINER, true, CALL(set_start), NULL},
    {"count", 0, "M", CLI_MINER, true, CALL(set_count), NULL},
    {"tf-class", 0, "P,A,B,C", CLI_MINER, false, TEXT(tf_class), NULL},
    {"version", 'V', NULL, CLI_EVERY, false, NOT_HERE,
     "print the version, the build, the backends and what they\n"
     "find here (runtimes, drivers, platforms, CPU paths), and\n"
     "the library versions"},
    {"help", 'h', NULL, CLI_EVERY, false, NOT_HERE, "this text"},
    {"help-env", 0, NULL, CLI_EVERY, false, NOT_HERE, "the LODE_* environment variables lode reads"},
    {0},
};
