/* lode's command line: parses options (cpuminer/ccminer conventions) and
 * runs one command. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli/cli.h"
#include "core/dispatch.h"
#include "core/log.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

bool cli_interrupted(void) { return interrupted != 0; }

void cli_install_signal_handlers(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cli_wait_ready(lode_miner *m)
{
    int ready;
    while ((ready = lode_miner_wait_ready(m, 100)) < 0)
        if (cli_interrupted())
            return -1;
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
            "usage: lode -a ALGO --benchmark [-d LIST] [-t N] [--time-limit S]\n"
            "       lode --list-devices\n"
            "       lode --selftest [-a ALGO] [-d LIST]\n"
            "       lode scan -a ALGO --header HEX --target HEX --start N --count M [-d LIST]\n"
            "       lode hash -a ALGO HEADER_HEX\n"
            "\n"
            "  -a, --algo ALGO      %s\n"
            "  -d, --devices LIST   devices to use, e.g. cpu, cpu:0, cuda:1 (default: all)\n"
            "  -t, --threads N      CPU worker threads per device (default: one per core)\n"
            "      --benchmark      hash a synthetic job and report the hashrate\n"
            "      --time-limit S   stop after S seconds\n"
            "      --variant NAME   force one implementation (see --list-devices)\n"
            "      --list-devices   list every device of every backend\n"
            "      --selftest       run the known-answer vectors on the devices\n"
            "  -q, --quiet          only warnings and errors on stderr\n"
            "      --no-color       no colours in log lines\n"
            "  -V, --version        print the version\n"
            "  -h, --help           this text\n"
            "\n"
            "scan prints every nonce in [N, N+M) whose PoW hash is at or below the target\n"
            "(64 hex digits, most significant first) as '<nonce> <hash>', sorted by nonce.\n"
            "hash prints the PoW hash of an 80-byte header. Hashes are in display order.\n",
            lode_algo_names());
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

enum {
    OPT_BENCHMARK = 256,
    OPT_TIME_LIMIT,
    OPT_VARIANT,
    OPT_LIST_DEVICES,
    OPT_SELFTEST,
    OPT_NO_COLOR,
    OPT_HEADER,
    OPT_TARGET,
    OPT_START,
    OPT_COUNT,
};

int main(int argc, char **argv)
{
    static const struct option long_options[] = {
        {"algo", required_argument, NULL, 'a'},
        {"devices", required_argument, NULL, 'd'},
        {"threads", required_argument, NULL, 't'},
        {"benchmark", no_argument, NULL, OPT_BENCHMARK},
        {"time-limit", required_argument, NULL, OPT_TIME_LIMIT},
        {"variant", required_argument, NULL, OPT_VARIANT},
        {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
        {"selftest", no_argument, NULL, OPT_SELFTEST},
        {"quiet", no_argument, NULL, 'q'},
        {"no-color", no_argument, NULL, OPT_NO_COLOR},
        {"header", required_argument, NULL, OPT_HEADER},
        {"target", required_argument, NULL, OPT_TARGET},
        {"start", required_argument, NULL, OPT_START},
        {"count", required_argument, NULL, OPT_COUNT},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    cli_options o = {0};
    bool benchmark = false, list_devices = false, selftest = false, quiet = false, color = true;
    const char *command = NULL;
    if (argc > 1 && argv[1][0] != '-') {
        command = argv[1];
        if (strcmp(command, "scan") != 0 && strcmp(command, "hash") != 0)
            return cli_usage_error("unknown command '%s' (see lode --help)", command);
        argv++;
        argc--;
    }

    opterr = 0;
    int c;
    uint64_t n;
    while ((c = getopt_long(argc, argv, ":a:d:t:qVh", long_options, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (lode_algo_parse(optarg, &o.algo) != 0)
                return cli_usage_error("unknown algorithm '%s' (known: %s)", optarg,
                                       lode_algo_names());
            o.algo_given = true;
            break;
        case 'd':
            o.devices = optarg;
            break;
        case 't':
            if (parse_u64(optarg, 4096, &n) != 0 || n == 0)
                return cli_usage_error("--threads wants a number from 1 to 4096, not '%s'", optarg);
            o.threads = (unsigned)n;
            break;
        case OPT_BENCHMARK: benchmark = true; break;
        case OPT_TIME_LIMIT: {
            char *end;
            errno = 0;
            o.time_limit = strtod(optarg, &end);
            if (errno != 0 || *end != '\0' || !(o.time_limit > 0) || !isfinite(o.time_limit))
                return cli_usage_error("--time-limit wants a number of seconds above 0, not '%s'",
                                       optarg);
            break;
        }
        case OPT_VARIANT: o.variant = optarg; break;
        case OPT_LIST_DEVICES: list_devices = true; break;
        case OPT_SELFTEST: selftest = true; break;
        case 'q': quiet = true; break;
        case OPT_NO_COLOR: color = false; break;
        case OPT_HEADER: o.header = optarg; break;
        case OPT_TARGET: o.target = optarg; break;
        case OPT_START:
            if (parse_u64(optarg, UINT32_MAX, &o.start) != 0)
                return cli_usage_error("--start wants a nonce from 0 to 4294967295, not '%s'", optarg);
            o.start_given = true;
            break;
        case OPT_COUNT:
            if (parse_u64(optarg, UINT64_C(1) << 32, &o.count) != 0 || o.count == 0)
                return cli_usage_error("--count wants a number from 1 to 4294967296, not '%s'", optarg);
            o.count_given = true;
            break;
        case 'V': printf("lode %s\n", LODE_VERSION); return 0;
        case 'h': usage(stdout); return 0;
        case ':': return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("unknown option '%s' (see lode --help)", argv[optind - 1]);
        }
    }
    if (command != NULL && strcmp(command, "hash") == 0 && optind == argc - 1)
        o.operand = argv[optind++];
    if (optind < argc)
        return cli_usage_error("unexpected argument '%s' (see lode --help)", argv[optind]);
    lode_log_configure(quiet, color);
    cli_install_signal_handlers();

    int modes = (command != NULL) + benchmark + list_devices + selftest;
    if (modes > 1)
        return cli_usage_error("choose one of scan, hash, --benchmark, --list-devices, --selftest");
    if (command != NULL && strcmp(command, "scan") == 0)
        return cmd_scan(&o);
    if (command != NULL)
        return cmd_hash(&o);
    if (list_devices)
        return cmd_list_devices();
    if (selftest)
        return cmd_selftest(&o);
    if (benchmark)
        return cmd_benchmark(&o);
    usage(stderr);
    return EXIT_USAGE;
}
