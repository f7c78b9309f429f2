/* Every option lode takes, in one table (cli_option_table: names, values,
 * the commands they apply to, --help text), applied by name: the command
 * line (main.c) and config files (config.c) both come through
 * cli_apply_option. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli/cli.h"
#include "core/stratum/stratum_conn.h"

/* The one table. "config", "help", "help-env" and "version" act at once and exist
 * only on the command line (main.c). */
const cli_option cli_option_table[] = {
    {"algo", 'a', "ALGO", CLI_MINER, false, NULL /* cli_print_options lists the algorithms */},
    {"algo", 'a', "LIST", CLI_CHECK, false,
     "the algorithms to check, comma-separated or repeated\n"
     "(default: every one)"},
    {"url", 'o', "URL", CLI_MINER, false,
     "stratum+tcp://HOST:PORT or stratum+ssl://HOST:PORT (a pool;\n"
     "repeat -o for backup pools, in priority order), or\n"
     "http://HOST:PORT (a node: solo mining with getblocktemplate);\n"
     "HOST:PORT alone is stratum+tcp, stratum+tcps:// is TLS,\n"
     "and USER:PASS@ before the host sets -u/-p"},
    {"user", 'u', "USER", CLI_MINER, false, "pool user / worker, or node RPC user"},
    {"pass", 'p', "PASS", CLI_MINER, false,
     "its password (-u, -p and --cert-pin after an -o belong to\n"
     "that pool; before any -o, to every pool)"},
    {"userpass", 'O', "USER:PASS", CLI_MINER, false, "-u and -p in one (cpuminer's -O)"},
    {"proxy", 'x', "URL", CLI_MINER, false,
     "reach the pools through a proxy: socks5://HOST:PORT,\n"
     "socks5h://HOST:PORT (the proxy resolves pool names),\n"
     "socks4://HOST:PORT, socks4a:// (the proxy resolves) or\n"
     "http://HOST:PORT (HTTP CONNECT); USER:PASS@ allowed"},
    {"cert-pin", 0, "HEX", CLI_MINER, false,
     "accept exactly the TLS certificate with this SHA-256\n"
     "fingerprint (pools with self-signed certificates)"},
    {"coinbase-addr", 0, "A", CLI_MINER, false, "solo: the address the block reward goes to"},
    {"cookie", 0, "FILE", CLI_MINER, false, "solo: the node's .cookie file instead of -u/-p"},
    {"coinbase-tag", 0, "T", CLI_MINER, false, "solo: text put in the coinbase (default /lode/)"},
    {"suggest-diff", 0, "D", CLI_MINER, true, "ask the pool for this share difficulty"},
    {"no-version-rolling", 0, NULL, CLI_MINER, false, "sha256d: do not negotiate BIP 310 version rolling; the benchmark hashes one version a nonce"},
    {"no-redirect", 0, NULL, CLI_MINER, false, "ignore the pool's client.reconnect"},
    {"allow-redirect-host", 0, NULL, CLI_MINER, false,
     "follow client.reconnect to another host too (it gets\n"
     "the pool's -u/-p); by default only to the same host"},
    {"failover-after", 0, "N", CLI_MINER, true, "failed connection attempts before the next pool (3)"},
    {"retries", 'r', "N", CLI_MINER, true, "cpuminer's and ccminer's name of --failover-after", "failover-after"},
    {"failover-return", 0, "S", CLI_MINER, true, "on a backup pool, try the first pool again this often (60)"},
    {"retry-pause", 'R', "S", CLI_MINER, true, "first pause before reconnecting; doubles up to 60 s (1)"},
    {"stall-timeout", 0, "S", CLI_MINER, true, "reconnect when a pool is silent this long (120)"},
    {"timeout", 'T', "S", CLI_MINER, true, "cpuminer's and ccminer's name of --stall-timeout", "stall-timeout"},
    {"log-interval", 0, "S", CLI_MINER, true, "seconds between hashrate lines (30; --benchmark: 5)"},
    {"config", 'c', "FILE", CLI_EVERY, false,
     "JSON options, keyed by long name: {\"threads\": 2, ...};\n"
     "pools as \"pools\": [{\"url\": ..., \"user\": ..., \"pass\": ...}]"},
    {"devices", 'd', "LIST", CLI_EVERY, false,
     "devices to use, e.g. cpu, cpu:0, cuda:1 (default: all;\n"
     "lode tf: the GPUs, or the CPU where there is none)"},
    {"threads", 't', "N", CLI_ALL, true, "CPU worker threads per device (default: one per core)"},
    {"threads", 't', "N", CLI_CHECK, true, "threads of the CPU reference (default: one per core)"},
    {"benchmark", 0, NULL, CLI_MINER, false, "hash a synthetic job and report the hashrate"},
    {"time-limit", 0, "S", CLI_MINER, true, "stop after S seconds"},
    {"variant", 0, "NAME", CLI_MINER, false, "force one implementation (see --list-devices)"},
    {"variant", 0, "NAME", CLI_CHECK, false, "check this implementation only (default: every one)"},
    {"jobs", 0, "N", CLI_CHECK, true, "random jobs per device x variant x algorithm (4)"},
    {"duration", 0, "TIME", CLI_CHECK, false,
     "run this long instead, at full load (a stability test):\n"
     "seconds, or with s, m or h (90, 5m, 2h)"},
    {"seed", 0, "S", CLI_CHECK, true, "the jobs' random seed (default: new each run, printed)"},
    {"json", 0, NULL, CLI_CHECK, false, "print the result as one JSON object"},
    {"list-devices", 0, NULL, CLI_MINER, false, "list every device of every backend"},
    {"selftest", 0, NULL, CLI_MINER, false, "run the known-answer vectors on the devices"},
    {"selftest", 0, NULL, CLI_TF, false, "every known factor on every device (not the short set)"},
    {"verify", 0, "FILE", CLI_TF, false,
     "check a proof file M<p>_<a>_<b>.proof (docs/TF-PROOF.md);\n"
     "needs no device: exit 0 when the proof holds, 1 when not"},
    {"worktodo", 'w', "FILE", CLI_TF, false,
     "assignments: Factor=[AID,]exponent,bit_min,bit_max;\n"
     "worktodo.add beside it is merged in at start, after\n"
     "each finished assignment and every --worktodo-add-delay;\n"
     "FILE.lock keeps a second lode tf off the same file"},
    {"results", 0, "FILE", CLI_TF, false, "PrimeNet JSON results (results.json.txt)"},
    {"legacy-results", 0, "FILE", CLI_TF, false, "also append the legacy lines here (e.g. results.txt)"},
    {"checkpoint-dir", 0, "DIR", CLI_TF, false, "where M<p>_<a>_<b>.ckp live (.)"},
    {"checkpoint-interval", 0, "S", CLI_TF, true, "seconds between checkpoints (60; 0 = every class)"},
    {"no-checkpoints", 0, NULL, CLI_TF, false,
     "no progress saves (a finished assignment's short-lived\n"
     "record against a second report is still written)"},
    {"progress-interval", 0, "S", CLI_TF, true, "seconds between progress lines (10)"},
    {"stages", 0, NULL, CLI_TF, false,
     "run an assignment of several bit levels one bit level at\n"
     "a time, a result each (mfaktc's Stages=1; default: whole)"},
    {"stop-after-factor", 0, "N", CLI_TF, true,
     "after a factor: 0 go on, 1 stop at the end of the bit\n"
     "level (of the range without --stages), 2 at the end of\n"
     "the class (a partial range, credited less) (1)"},
    {"worktodo-add-delay", 0, "S", CLI_TF, true,
     "merge worktodo.add this often while an assignment runs\n"
     "(600; 0 = after every class)"},
    {"user", 0, "NAME", CLI_TF, false,
     "put into the JSON results (UTF-8); with --primenet the\n"
     "PrimeNet user ID, at most 20 characters (ANONYMOUS)"},
    {"computer", 0, "NAME", CLI_TF, false,
     "put into the JSON results (UTF-8); with --primenet the\n"
     "computer's name, at most 20 characters (the host name)"},
    {"primenet", 0, NULL, CLI_TF, false,
     "fetch the assignments from PrimeNet, report progress and\n"
     "send each result (its v5 API; docs/GIMPS.md)"},
    {"work-pref", 0, "N", CLI_TF, true, "PrimeNet work: 2 trial factoring, 12 on a GPU (12)"},
    {"days-of-work", 0, "D", CLI_TF, true, "keep D days of work queued at the measured rate (1)"},
    {"primenet-url", 0, "URL", CLI_TF, false,
     "the PrimeNet server (https://v5.mersenne.org/v5server/);\n"
     "plain http:// only to a loopback address"},
    {"no-more-work", 0, NULL, CLI_TF, false, "finish the queued work, fetch nothing more, then exit"},
    {"unreserve", 0, "EXPONENT", CLI_TF, true,
     "give this exponent's assignments back to PrimeNet,\n"
     "remove their lines, exit"},
    {"unreserve-all", 0, NULL, CLI_TF, false, "give every PrimeNet assignment back, remove them, exit"},
    {"proxy", 'x', "URL", CLI_TF, false,
     "reach PrimeNet through a proxy, as -x for pools:\n"
     "socks5[h]://, socks4[a]:// or http://HOST:PORT"},
    {"class-log", 0, "FILE", CLI_TF, false, "append each class as it completes (for tests)"},
    {"max-temp", 0, "C", CLI_ALL, true,
     "pause a device above C degrees Celsius until it is 5 C\n"
     "below; per device ID=C or BACKEND=C (cuda:0=80,cpu=90),\n"
     "comma-separated, repeatable; in a config file also\n"
     "{\"cuda:0\": 80, ...}"},
    {"max-restarts", 0, "N", CLI_ALL, true,
     "reopen a device that fails or hangs at most N times an\n"
     "hour, then quarantine it (5; 0: at its first fault)"},
    {"hang-timeout", 0, "S", CLI_ALL, true,
     "a scan running S seconds and 10 times its expected\n"
     "length is hung: the device is reopened (60; 0: no watchdog)"},
    {"api-bind", 'b', "HOST:PORT", CLI_ALL, false,
     "serve the HTTP API, /metrics and the dashboard here\n"
     "(e.g. 127.0.0.1:4028; a PORT alone binds 127.0.0.1;\n"
     "port 0 = any free port; beyond loopback only with a token)"},
    {"api-listen", 0, NULL, CLI_ALL, false, "cgminer's: the API on 127.0.0.1:4028 (unless --api-bind)"},
    {"api-token", 0, "TOKEN", CLI_ALL, false,
     "the API's token: needed for control (pause, resume,\n"
     "next pool) and for every request beyond loopback;\n"
     "masked in ps, but --api-token-file or LODE_API_TOKEN\n"
     "keep it out of the shell's history too"},
    {"api-token-file", 0, "FILE", CLI_ALL, false, "read the API token from the first line of FILE"},
    {"api-allow-host", 0, "NAME", CLI_ALL, false,
     "also answer requests whose Host is NAME (a reverse proxy's;\n"
     "comma-separated, repeatable); others than the bound\n"
     "address and localhost get 403"},
    {"quiet", 'q', NULL, CLI_EVERY, false, "only warnings, errors, the API address and the summary"},
    {"no-color", 0, NULL, CLI_EVERY, false, "no colours in log lines (lode tf and lode check print none)"},
    {"log-file", 0, "FILE", CLI_ALL, false,
     "also append the log to FILE (moved away by logrotate:\n"
     "opened anew at the next line)"},
    {"syslog", 0, NULL, CLI_ALL, false, "also log to syslog (ident lode, facility daemon)"},
    {"log-format", 0, "FMT", CLI_ALL, false,
     "text (the default) or json: one JSON object a line,\n"
     "with events (shares, pools, blocks, devices, tf results)"},
    {"background", 'B', NULL, CLI_ALL, false,
     "detach from the terminal and run in the background\n"
     "(needs --log-file or --syslog; not under systemd)"},
    {"cpu-priority", 0, "N", CLI_ALL, true,
     "0 idle (nice 19, SCHED_IDLE), 1 low (nice 10, SCHED_BATCH),\n"
     "2 normal, 3-5 higher (nice -5, -10, -15: needs root)"},
    {"protocol-dump", 'P', NULL, CLI_MINER, false, "log every stratum line sent and received (passwords masked)"},
    {"shares-limit", 0, "N", CLI_MINER, true, "stop (exit 0) once the pools have accepted N shares"},
    {"scrypt", 0, NULL, CLI_MINER, false, "cgminer's name of -a scrypt"},
    /* Other miners' options lode ignores, each with a warning saying why
     * (compat_options.c); not in --help, listed in docs/OPERATIONS.md. */
    {"intensity", 'i', "N", CLI_MINER, true, NULL},
    {"statsavg", 'N', "N", CLI_MINER, true, NULL},
    {"debug", 'D', NULL, CLI_MINER, false, NULL},
    {"scantime", 's', "S", CLI_MINER, true, NULL},
    {"no-longpoll", 0, NULL, CLI_MINER, false, NULL},
    {"cpu-affinity", 0, "MASK", CLI_ALL, false, NULL},
    {"keepalive", 'k', NULL, CLI_MINER, false, NULL},
    {"api-allow", 0, "IP", CLI_ALL, false, NULL},
    {"header", 0, "HEX", CLI_MINER, false, NULL}, /* scan and hash: in the usage lines */
    {"target", 0, "HEX", CLI_MINER, false, NULL},
    {"versions", 0, "V,V,...", CLI_MINER, false, NULL},
    {"start", 0, "N", CLI_MINER, true, NULL},
    {"count", 0, "M", CLI_MINER, true, NULL},
    {"tf-class", 0, "P,A,B,C", CLI_MINER, false, NULL},
    {"version", 'V', NULL, CLI_EVERY, false,
     "print the version, the build, the backends and what they\n"
     "find here (runtimes, drivers, platforms, CPU paths), and\n"
     "the library versions"},
    {"help", 'h', NULL, CLI_EVERY, false, "this text"},
    {"help-env", 0, NULL, CLI_EVERY, false, "the LODE_* environment variables lode reads"},
    {0},
};

void cli_options_init(cli_options *o, int command)
{
    *o = (cli_options){.command = command};
    o->tf.results = "results.json.txt";
    o->tf.ckp_dir = ".";
    o->tf.ckp_interval = 60;
    o->tf.progress_interval = 10;
    o->tf.stop_after_factor = 1;
    o->tf.add_delay = 600;
    o->tf.work_pref = 12;
    o->tf.days_of_work = 1;
    o->cpu_priority = -1;
}

const char *cli_keep(cli_options *o, const char *s)
{
    char **grown = realloc(o->owned, (o->owned_count + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    o->owned = grown;
    char *copy = strdup(s);
    if (copy != NULL)
        o->owned[o->owned_count++] = copy;
    return copy;
}

static bool applies(const cli_option *opt, int command)
{
    return (opt->commands & (1u << command)) != 0;
}

const cli_option *cli_find_option(int command, const char *name)
{
    for (const cli_option *opt = cli_option_table; opt->name != NULL; opt++)
        if (applies(opt, command) && strcmp(opt->name, name) == 0)
            return opt;
    return NULL;
}

void cli_getopt_tables(int command, struct option *longs, size_t cap, char *shorts, size_t shorts_cap)
{
    size_t n = 0, s = 0;
    if (shorts_cap > 1)
        shorts[s++] = ':'; /* a missing value is ':', not '?' */
    for (const cli_option *opt = cli_option_table; opt->name != NULL; opt++) {
        if (!applies(opt, command))
            continue;
        if (n + 1 < cap)
            longs[n++] = (struct option){opt->name, opt->arg ? required_argument : no_argument, NULL,
                                         256 + (int)(opt - cli_option_table)};
        if (opt->short_name && s + 3 < shorts_cap) {
            shorts[s++] = opt->short_name;
            if (opt->arg)
                shorts[s++] = ':';
        }
    }
    if (cap > 0)
        longs[n] = (struct option){0};
    if (shorts_cap > 0)
        shorts[s] = '\0';
}

const cli_option *cli_option_of(int command, int c)
{
    size_t count = 0;
    while (cli_option_table[count].name != NULL)
        count++;
    if (c >= 256)
        return (size_t)(c - 256) < count ? &cli_option_table[c - 256] : NULL;
    for (const cli_option *opt = cli_option_table; opt->name != NULL; opt++)
        if (applies(opt, command) && opt->short_name != 0 && opt->short_name == c)
            return opt;
    return NULL;
}

void cli_print_options(FILE *out, int command)
{
    enum { COLUMN = 23 };
    for (const cli_option *opt = cli_option_table; opt->name != NULL; opt++) {
        bool algo = strcmp(opt->name, "algo") == 0;
        if (!applies(opt, command) || (opt->help == NULL && !algo))
            continue;
        char left[64];
        int n = snprintf(left, sizeof left, "  %c%c%c --%s%s%s", opt->short_name ? '-' : ' ',
                         opt->short_name ? opt->short_name : ' ', opt->short_name ? ',' : ' ', opt->name,
                         opt->arg ? " " : "", opt->arg ? opt->arg : "");
        fprintf(out, "%s%*s", left, n < COLUMN - 1 ? COLUMN - n : 2, "");
        const char *help = algo ? lode_algo_names() : opt->help;
        for (const char *line = help; *line;) {
            size_t len = strcspn(line, "\n");
            fprintf(out, "%s%.*s\n", line == help ? "" : "                       ", (int)len, line);
            line += len + (line[len] == '\n');
        }
    }
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

/* --api-allow-host NAME[,NAME...]: each name kept (cli_api_check checks them). */
static int add_allow_hosts(cli_options *o, const char *v, char *err, size_t err_len)
{
    char name[256];
    for (const char *p = v;; p++) {
        size_t n = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
        if (n >= sizeof name || n == 0)
            return fail(err, err_len, "--api-allow-host wants host names, comma-separated, not '%s'", v);
        if (o->api_allow_host_count == CLI_MAX_ALLOW_HOSTS)
            return fail(err, err_len, "--api-allow-host: at most %d names", CLI_MAX_ALLOW_HOSTS);
        if ((o->api_allow_hosts[o->api_allow_host_count++] = cli_keep(o, name)) == NULL)
            return fail(err, err_len, "out of memory");
        p += n;
        if (*p == '\0')
            return 0;
    }
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

/* Seconds from 0 to 10^9. */
static int parse_seconds(const char *text, double *out)
{
    if (text == NULL || *text == '\0')
        return -1;
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

/* A time: seconds, or a number followed by s, m or h; above 0, at most
 * 10^9 s. */
static int parse_duration(const char *text, double *out)
{
    if (text == NULL || *text == '\0')
        return -1;
    char number[64];
    size_t len = strlen(text);
    double unit = 1;
    if (len > 1 && strchr("smh", text[len - 1]) != NULL) {
        unit = text[len - 1] == 'h' ? 3600 : text[len - 1] == 'm' ? 60 : 1;
        len--;
    }
    if (len >= sizeof number)
        return -1;
    memcpy(number, text, len);
    number[len] = '\0';
    double v;
    if (parse_positive(number, &v) != 0 || v * unit > 1e9)
        return -1;
    *out = v * unit;
    return 0;
}

/* lode check's -a: names, comma-separated, added to those given before
 * (each once). */
static int parse_algo_list(cli_options *o, const char *v, char *err, size_t err_len)
{
    const char *p = v ? v : "";
    for (;;) {
        size_t len = strcspn(p, ",");
        char name[32];
        lode_algo algo;
        if (len == 0 || len >= sizeof name)
            return fail(err, err_len, "--algo wants names (%s), comma-separated, not '%s'", lode_algo_names(), v);
        memcpy(name, p, len);
        name[len] = '\0';
        if (lode_algo_parse(name, &algo) != 0)
            return fail(err, err_len, "unknown algorithm '%s' (known: %s)", name, lode_algo_names());
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

/* --max-temp: "C" for every device, or "ID=C" entries (a device id or a
 * backend name), comma-separated; added to those given before. */
static int parse_max_temps(cli_options *o, const char *v, char *err, size_t err_len)
{
    if (v == NULL || *v == '\0')
        return fail(err, err_len, "--max-temp wants C or ID=C[,ID=C...], not ''");
    const char *p = v;
    for (;;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        size_t id_len = eq ? (size_t)(eq - p) : 0;
        char number[32];
        size_t num_len = eq ? len - id_len - 1 : len;
        double c;
        if (o->max_temp_count == CLI_MAX_TEMPS)
            return fail(err, err_len, "--max-temp: at most %d limits", CLI_MAX_TEMPS);
        if ((eq && (id_len == 0 || id_len >= sizeof o->max_temps[0].device)) || num_len == 0 ||
            num_len >= sizeof number)
            return fail(err, err_len, "--max-temp wants C or ID=C (cuda:0=80), not '%.*s'", (int)len, p);
        memcpy(number, eq ? eq + 1 : p, num_len);
        number[num_len] = '\0';
        if (parse_positive(number, &c) != 0 || c > 150)
            return fail(err, err_len, "--max-temp wants degrees Celsius above 0 and at most 150, not '%s'",
                        number);
        snprintf(o->max_temps[o->max_temp_count].device, sizeof o->max_temps[0].device, "%.*s", (int)id_len,
                 p);
        o->max_temps[o->max_temp_count++].celsius = c;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* Text that goes into JSON as it is. */
static bool is_utf8(const char *text)
{
    json_t *s = json_string(text); /* NULL: not UTF-8 */
    json_decref(s);
    return s != NULL;
}

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
static int apply_url(cli_options *o, const char *v, char *err, size_t err_len)
{
    if (o->pool_count == CLI_MAX_POOLS)
        return fail(err, err_len, "at most %d pools (-o) are supported", CLI_MAX_POOLS);
    cli_pool pool = {0};
    if (is_node_url(v)) {
        const char *host = strstr(v, "://") + 3;
        if (memchr(host, '@', strcspn(host, "/")) != NULL)
            return fail(err, err_len, "give the node's credentials with -u/-p or --cookie, not in the URL");
        pool.url = cli_keep(o, v);
    } else {
        lode_stratum_url url;
        char why[256];
        if (lode_stratum_url_parse(v, &url, why, sizeof why) != 0)
            return fail(err, err_len, "%s", why);
        char clean[LODE_STRATUM_HOST_MAX + 32];
        lode_stratum_url_format(&url, clean, sizeof clean);
        pool.url = cli_keep(o, clean);
        if (url.has_user && (pool.user = cli_keep(o, url.user)) == NULL)
            return fail(err, err_len, "out of memory");
        if (url.has_pass && (pool.pass = cli_keep(o, url.pass)) == NULL)
            return fail(err, err_len, "out of memory");
        explicit_bzero(url.pass, sizeof url.pass);
    }
    if (pool.url == NULL)
        return fail(err, err_len, "out of memory");
    o->pools[o->pool_count++] = pool;
    return 0;
}

/* lode tf's own options: 0 applied, -1 refused (err), 1 not one of them. */
static int apply_tf_option(cli_options *o, const char *name, const char *v, char *err, size_t err_len)
{
    uint64_t n;
    if (o->command == CLI_CMD_TF && (strcmp(name, "user") == 0 || strcmp(name, "computer") == 0)) {
        if (v == NULL || !is_utf8(v))
            return fail(err, err_len, "--%s wants UTF-8 text", name);
        *(strcmp(name, "user") == 0 ? &o->tf.user : &o->tf.computer) = v;
    } else if (strcmp(name, "verify") == 0) {
        o->tf.verify = v;
    } else if (strcmp(name, "worktodo") == 0) {
        o->tf.worktodo = v;
    } else if (strcmp(name, "results") == 0) {
        o->tf.results = v;
    } else if (strcmp(name, "legacy-results") == 0) {
        o->tf.legacy = v;
    } else if (strcmp(name, "checkpoint-dir") == 0) {
        o->tf.ckp_dir = v;
    } else if (strcmp(name, "checkpoint-interval") == 0) {
        if (parse_seconds(v, &o->tf.ckp_interval) != 0)
            return fail(err, err_len, "--checkpoint-interval wants seconds, not '%s'", v);
    } else if (strcmp(name, "no-checkpoints") == 0) {
        o->tf.no_checkpoints = true;
    } else if (strcmp(name, "progress-interval") == 0) {
        if (parse_seconds(v, &o->tf.progress_interval) != 0)
            return fail(err, err_len, "--progress-interval wants seconds, not '%s'", v);
    } else if (strcmp(name, "class-log") == 0) {
        o->tf.class_log = v;
    } else if (strcmp(name, "stages") == 0) {
        o->tf.stages = true;
    } else if (strcmp(name, "stop-after-factor") == 0) {
        if (parse_u64(v, 2, &n) != 0)
            return fail(err, err_len, "--stop-after-factor wants 0, 1 or 2, not '%s'", v);
        o->tf.stop_after_factor = (unsigned)n;
    } else if (strcmp(name, "worktodo-add-delay") == 0) {
        if (parse_seconds(v, &o->tf.add_delay) != 0)
            return fail(err, err_len, "--worktodo-add-delay wants seconds, not '%s'", v);
    } else {
        return 1;
    }
    return 0;
}

/* lode tf's PrimeNet options: 0 applied, -1 refused (err), 1 not one of them. */
static int apply_primenet_option(cli_options *o, const char *name, const char *v, char *err, size_t err_len)
{
    uint64_t n;
    if (o->command != CLI_CMD_TF) {
        return 1;
    } else if (strcmp(name, "primenet") == 0) {
        o->tf.primenet = true;
    } else if (strcmp(name, "work-pref") == 0) {
        if (parse_u64(v, 99, &n) != 0 || (n != 2 && n != 12))
            return fail(err, err_len, "--work-pref wants 2 (trial factoring) or 12 (trial factoring on a GPU), "
                        "not '%s'", v);
        o->tf.work_pref = (unsigned)n;
    } else if (strcmp(name, "days-of-work") == 0) {
        if (parse_positive(v, &o->tf.days_of_work) != 0 || o->tf.days_of_work > 180)
            return fail(err, err_len, "--days-of-work wants days above 0, at most 180, not '%s'", v);
    } else if (strcmp(name, "primenet-url") == 0) {
        o->tf.primenet_url = v;
    } else if (strcmp(name, "no-more-work") == 0) {
        o->tf.no_more_work = true;
    } else if (strcmp(name, "unreserve") == 0) {
        if (parse_u64(v, UINT32_MAX, &n) != 0 || n == 0)
            return fail(err, err_len, "--unreserve wants an exponent, not '%s'", v);
        o->tf.unreserve = (uint32_t)n;
    } else if (strcmp(name, "unreserve-all") == 0) {
        o->tf.unreserve_all = true;
    } else {
        return 1;
    }
    return 0;
}

/* lode scan's and lode check's options: 0 applied, -1 refused (err), 1 not one of them. */
static int apply_scan_check_option(cli_options *o, const char *name, const char *v, char *err, size_t err_len)
{
    if (strcmp(name, "header") == 0) {
        o->header = v;
    } else if (strcmp(name, "target") == 0) {
        o->target = v;
    } else if (strcmp(name, "versions") == 0) {
        o->versions = v; /* cmd_scan parses it */
    } else if (strcmp(name, "start") == 0) {
        /* A nonce, or for tf an index n (below 2^52): cmd_scan checks the range. */
        if (parse_u64(v, (UINT64_C(1) << 52) - 1, &o->start) != 0)
            return fail(err, err_len, "--start wants a nonce from 0 to 4294967295 (tf: an index below 2^52), not '%s'", v);
        o->start_given = true;
    } else if (strcmp(name, "count") == 0) {
        if (parse_u64(v, UINT64_C(1) << 52, &o->count) != 0 || o->count == 0)
            return fail(err, err_len, "--count wants a number from 1 to 4294967296 (tf: to 2^52), not '%s'", v);
        o->count_given = true;
    } else if (strcmp(name, "tf-class") == 0) {
        o->tf_class = v;
    } else if (strcmp(name, "jobs") == 0) {
        if (parse_u64(v, 1000000000, &o->check.jobs) != 0 || o->check.jobs == 0)
            return fail(err, err_len, "--jobs wants a number from 1 to 1000000000, not '%s'", v);
    } else if (strcmp(name, "duration") == 0) {
        if (parse_duration(v, &o->check.duration) != 0)
            return fail(err, err_len, "--duration wants a time above 0: seconds, or 90s, 5m, 2h; not '%s'", v);
    } else if (strcmp(name, "seed") == 0) {
        /* Below 2^53: exact as a JSON number in any reader. */
        if (parse_u64(v, (UINT64_C(1) << 53) - 1, &o->check.seed) != 0)
            return fail(err, err_len, "--seed wants a number from 0 to %llu, not '%s'",
                        (unsigned long long)((UINT64_C(1) << 53) - 1), v);
        o->check.seed_given = true;
    } else if (strcmp(name, "json") == 0) {
        o->check.json = true;
    } else {
        return 1;
    }
    return 0;
}

/* The pools', the node's and the mining session's options: 0 applied, -1 refused (err), 1 not one of them. */
static int apply_pool_option(cli_options *o, const char *name, const char *v, char *err, size_t err_len)
{
    uint64_t n;
    if (strcmp(name, "url") == 0) {
        return apply_url(o, v, err, err_len);
    } else if (strcmp(name, "user") == 0) {
        credentials_target(o)->user = v;
    } else if (strcmp(name, "pass") == 0) {
        /* A copy: main.c masks the command line's. */
        if ((credentials_target(o)->pass = cli_keep(o, v)) == NULL)
            return fail(err, err_len, "out of memory");
    } else if (strcmp(name, "userpass") == 0) {
        const char *colon = strchr(v, ':');
        if (colon == NULL)
            return fail(err, err_len, "--userpass (-O) wants USER:PASS");
        char *both = (char *)cli_keep(o, v);
        if (both == NULL)
            return fail(err, err_len, "out of memory");
        both[colon - v] = '\0';
        credentials_target(o)->user = both;
        credentials_target(o)->pass = both + (colon - v) + 1;
    } else if (strcmp(name, "proxy") == 0) {
        if (lode_stratum_proxy_check(v, err, err_len) != 0)
            return -1;
        if ((o->proxy = cli_keep(o, v)) == NULL)
            return fail(err, err_len, "out of memory");
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
    } else if (strcmp(name, "failover-return") == 0) {
        if (parse_positive(v, &o->failover_return) != 0)
            return fail(err, err_len, "--failover-return wants seconds above 0, not '%s'", v);
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
        return 1;
    }
    return 0;
}

/* The API's, the log's and the process's options: 0 applied, -1 refused (err), 1 not one of them. */
static int apply_service_option(cli_options *o, const char *name, const char *v, char *err, size_t err_len)
{
    uint64_t n;
    if (strcmp(name, "api-bind") == 0) {
        o->api_bind = v;
    } else if (strcmp(name, "api-token") == 0) {
        /* A copy: main.c masks the command line's in place (ps). */
        if ((o->api_token = cli_keep(o, v)) == NULL)
            return fail(err, err_len, "out of memory");
    } else if (strcmp(name, "api-token-file") == 0) {
        o->api_token_file = v;
    } else if (strcmp(name, "api-allow-host") == 0) {
        if (add_allow_hosts(o, v, err, err_len) != 0)
            return -1;
    } else if (strcmp(name, "quiet") == 0) {
        o->quiet = true;
    } else if (strcmp(name, "no-color") == 0) {
        o->no_color = true;
    } else if (strcmp(name, "log-file") == 0) {
        if (*v == '\0')
            return fail(err, err_len, "--log-file wants a file name");
        o->log_file = v;
    } else if (strcmp(name, "syslog") == 0) {
        o->log_syslog = true;
    } else if (strcmp(name, "log-format") == 0) {
        if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0)
            return fail(err, err_len, "--log-format wants text or json, not '%s'", v);
        o->log_json = strcmp(v, "json") == 0;
    } else if (strcmp(name, "background") == 0) {
        o->background = true;
    } else if (strcmp(name, "cpu-priority") == 0) {
        if (parse_u64(v, 5, &n) != 0)
            return fail(err, err_len, "--cpu-priority wants a number from 0 (idle) to 5 (highest), not '%s'", v);
        o->cpu_priority = (int)n;
    } else {
        return 1;
    }
    return 0;
}

int cli_apply_option(cli_options *o, const char *name, const char *v, char *err, size_t err_len)
{
    uint64_t n;
    /* Another miner's spelling: apply the option it stands for. */
    const cli_option *named = cli_find_option(o->command, name);
    if (named != NULL && named->same_as != NULL)
        name = named->same_as;
    int compat = cli_apply_compat_option(o, name, v, err, err_len);
    if (compat <= 0)
        return compat;
    int (*const groups[])(cli_options *, const char *, const char *, char *, size_t) = {
        apply_tf_option, apply_primenet_option, apply_scan_check_option, apply_pool_option, apply_service_option};
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        int rc = groups[i](o, name, v, err, err_len);
        if (rc <= 0)
            return rc;
    }
    if (strcmp(name, "algo") == 0 && o->command == CLI_CMD_CHECK) {
        return parse_algo_list(o, v, err, err_len);
    } else if (strcmp(name, "algo") == 0) {
        if (lode_algo_parse(v, &o->algo) != 0 && strncmp(v, "scrypt:", 7) == 0)
            return fail(err, err_len, "-a %s: lode's scrypt is N=1024 (scrypt or scrypt:1024), not N=%s", v, v + 7);
        if (lode_algo_parse(v, &o->algo) != 0)
            return fail(err, err_len, "unknown algorithm '%s' (known: %s)", v, lode_algo_names());
        o->algo_given = true;
    } else if (strcmp(name, "devices") == 0) {
        /* An empty list is a script's empty variable, not "every device"
         * (leave -d out for that). */
        if (v == NULL || v[strspn(v, " \t")] == '\0')
            return fail(err, err_len, "--devices wants a list of devices (cpu, cuda:0, ...), not ''; "
                        "leave it out for every device");
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
    } else if (strcmp(name, "max-temp") == 0) {
        if (parse_max_temps(o, v, err, err_len) != 0)
            return -1;
    } else if (strcmp(name, "max-restarts") == 0) {
        if (parse_u64(v, 1000, &n) != 0)
            return fail(err, err_len, "--max-restarts wants a number from 0 to 1000, not '%s'", v);
        o->max_restarts = (unsigned)n;
        o->max_restarts_given = true;
    } else if (strcmp(name, "hang-timeout") == 0) {
        if (parse_seconds(v, &o->hang_timeout) != 0)
            return fail(err, err_len, "--hang-timeout wants seconds, not '%s'", v);
        o->hang_timeout_given = true;
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
