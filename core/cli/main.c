/* lode's command line: parses options (cpuminer/ccminer conventions) and
 * runs one command. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/settings.h"
#include "core/cli/cli.h"
#include "core/cli/tf.h"
#include "core/dispatch.h"
#include "core/log.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    if (interrupted < 2)
        interrupted++;
}

bool cli_interrupted(void) { return interrupted != 0; }
bool cli_interrupted_twice(void) { return interrupted >= 2; }

void cli_install_signal_handlers(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A closed terminal or ssh session stops lode like Ctrl-C: summary,
     * queued shares sent, exit status 130. */
    sigaction(SIGHUP, &sa, NULL);
    /* A reader that went away (`lode ... | head -1`) must not kill lode
     * mid-run: writes fail with EPIPE instead, the logs are dropped, and a
     * result that cannot be written is an error (cli_finish_output). */
    struct sigaction ignore = {.sa_handler = SIG_IGN};
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, NULL);
}

int cli_finish_output(int status)
{
    int failed = fflush(stdout) != 0 ? errno : 0;
    if (failed != 0 || ferror(stdout)) {
        /* stderr may be closed as well; the exit status still tells. */
        fprintf(stderr, "lode: error: cannot write the output: %s\n",
                failed ? strerror(failed) : "a write to stdout failed");
        return status == 0 ? EXIT_RUNTIME : status;
    }
    return status;
}

int cli_wait_ready(lode_miner *m)
{
    int ready;
    while ((ready = lode_miner_wait_ready(m, 100)) < 0)
        if (cli_interrupted())
            return -1;
    return ready;
}

unsigned cli_workers_ready(lode_miner *m)
{
    unsigned ready = 0;
    for (size_t d = 0; d < lode_miner_device_count(m); d++) {
        lode_device_stats st;
        lode_miner_device_stats(m, d, &st);
        ready += st.workers_ready;
    }
    return ready;
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("lode: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_USAGE;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: lode -a ALGO -o URL [-u USER -p PASS] [-o BACKUP_URL ...] [options]\n"
            "       lode -a ALGO -o http://NODE:PORT (-u USER -p PASS | --cookie FILE)\n"
            "            --coinbase-addr ADDRESS [options]\n"
            "       lode -a ALGO --benchmark [-d LIST] [-t N] [--time-limit S]\n"
            "       lode --list-devices\n"
            "       lode --selftest [-a ALGO] [-d LIST]\n"
            "       lode scan -a ALGO --header HEX --target HEX --start N --count M [-d LIST]\n"
            "       lode hash -a ALGO HEADER_HEX\n"
            "       lode tf EXPONENT BIT_MIN BIT_MAX [-d LIST]  (Mersenne trial factoring:\n"
            "            lode tf --help)\n"
            "\n"
            "  -a, --algo ALGO      %s\n"
            "  -o, --url URL        stratum+tcp://HOST:PORT or stratum+ssl://HOST:PORT (a pool;\n"
            "                       repeat -o for backup pools, in priority order), or\n"
            "                       http://HOST:PORT (a node: solo mining with getblocktemplate)\n"
            "  -u, --user USER      pool user / worker, or node RPC user\n"
            "  -p, --pass PASS      its password (-u, -p and --cert-pin after an -o belong to\n"
            "                       that pool; before any -o, to every pool)\n"
            "      --cert-pin HEX   accept exactly the TLS certificate with this SHA-256\n"
            "                       fingerprint (pools with self-signed certificates)\n"
            "      --coinbase-addr A  solo: the address the block reward goes to\n"
            "      --cookie FILE    solo: the node's .cookie file instead of -u/-p\n"
            "      --coinbase-tag T solo: text put in the coinbase (default /lode/)\n"
            "      --suggest-diff D ask the pool for this share difficulty\n"
            "      --no-version-rolling  do not negotiate BIP 310 version rolling (sha256d)\n"
            "      --no-redirect    ignore the pool's client.reconnect\n"
            "      --allow-redirect-host  follow client.reconnect to another host too (it gets\n"
            "                       the pool's -u/-p); by default only to the same host\n"
            "      --failover-after N  failed connection attempts before the next pool (3)\n"
            "      --retry-pause S  first pause before reconnecting; doubles up to 60 s (1)\n"
            "      --stall-timeout S  reconnect when a pool is silent this long (120)\n"
            "      --log-interval S seconds between hashrate lines (30)\n"
            "  -c, --config FILE    JSON options: {\"algo\": \"scrypt\", \"pools\": [{\"url\": ...,\n"
            "                       \"user\": ..., \"pass\": ...}], \"threads\": 2, ...}\n"
            "  -d, --devices LIST   devices to use, e.g. cpu, cpu:0, cuda:1 (default: all)\n"
            "  -t, --threads N      CPU worker threads per device (default: one per core)\n"
            "      --benchmark      hash a synthetic job and report the hashrate\n"
            "      --time-limit S   stop after S seconds\n"
            "      --variant NAME   force one implementation (see --list-devices)\n"
            "      --list-devices   list every device of every backend\n"
            "      --selftest       run the known-answer vectors on the devices\n"
            "  -q, --quiet          only warnings, errors and the final summary on stderr\n"
            "      --no-color       no colours in log lines\n"
            "  -V, --version        print the version\n"
            "  -h, --help           this text\n"
            "      --help-env       the LODE_* environment variables lode reads\n"
            "\n"
            "scan prints every nonce in [N, N+M) whose PoW hash is at or below the target\n"
            "(64 hex digits, most significant first) as '<nonce> <hash>', sorted by nonce.\n"
            "hash prints the PoW hash of an 80-byte header. Hashes are in display order.\n"
            "\n"
            "Exit status: 0 success; 1 a failure at run time (no device passed its self-test,\n"
            "every device failed, a hardware error, output that could not be written); 2 bad\n"
            "input; 3 the pool or node refused the configuration (credentials, payout address,\n"
            "algorithm); 130 stopped by SIGINT, SIGTERM or SIGHUP (after the summary).\n",
            lode_algo_names());
}

int main(int argc, char **argv)
{
    cli_install_signal_handlers(); /* first: --help | head -1 must not die of SIGPIPE either */
    if (argc > 1 && strcmp(argv[1], "tf") == 0) /* its own options: lode tf --help */
        return cli_finish_output(cmd_tf(argc - 1, argv + 1));
    cli_options o = {0};
    const char *command = NULL;
    if (argc > 1 && argv[1][0] != '-') {
        command = argv[1];
        if (strcmp(command, "scan") != 0 && strcmp(command, "hash") != 0)
            return cli_usage_error("unknown command '%s' (see lode --help)", command);
        argv++;
        argc--;
    }

    opterr = 0;
    int c, index;
    char err[512];
    int status = -1;
    while (status < 0 && (c = getopt_long(argc, argv, cli_short_options, cli_long_options, &index)) != -1) {
        const char *name = NULL;
        switch (c) {
        case 'V': printf("lode %s\n", LODE_VERSION); status = 0; break;
        case 'h': usage(stdout); status = 0; break;
        case 'E': lode_settings_print(stdout); status = 0; break;
        case ':': status = cli_usage_error("option '%s' needs a value", argv[optind - 1]); break;
        case '?': status = cli_usage_error("unknown option '%s' (see lode --help)", argv[optind - 1]); break;
        case 'c':
            /* Read where it stands: later options override the file's. */
            if (cli_config_load(&o, optarg, err, sizeof err) != 0)
                status = cli_usage_error("%s", err);
            break;
        case 0: name = cli_long_options[index].name; break;
        default:
            for (const struct option *opt = cli_long_options; opt->name != NULL; opt++)
                if (opt->val == c)
                    name = opt->name;
        }
        if (name != NULL && cli_apply_option(&o, name, optarg, err, sizeof err) != 0)
            status = cli_usage_error("%s", err);
    }
    if (status >= 0) {
        cli_options_free(&o);
        return cli_finish_output(status);
    }
    if (command != NULL && strcmp(command, "hash") == 0 && optind == argc - 1)
        o.operand = argv[optind++];
    if (optind < argc) {
        cli_options_free(&o);
        return cli_usage_error("unexpected argument '%s' (see lode --help)", argv[optind]);
    }
    lode_log_configure(o.quiet, !o.no_color);

    bool mining = o.pool_count > 0;
    int modes = (command != NULL) + o.benchmark + o.list_devices + o.selftest + mining;
    if (modes > 1)
        status = cli_usage_error("choose one of mining (-o), scan, hash, --benchmark, --list-devices, --selftest");
    else if (command != NULL && strcmp(command, "scan") == 0)
        status = cmd_scan(&o);
    else if (command != NULL)
        status = cmd_hash(&o);
    else if (o.list_devices)
        status = cmd_list_devices();
    else if (o.selftest)
        status = cmd_selftest(&o);
    else if (o.benchmark)
        status = cmd_benchmark(&o);
    else if (mining)
        status = cmd_mine(&o);
    else {
        usage(stderr);
        status = EXIT_USAGE;
    }
    cli_options_free(&o);
    return cli_finish_output(status);
}
