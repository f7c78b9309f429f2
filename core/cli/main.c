/* lode's command line: parses options (cpuminer/ccminer conventions) and
 * runs one command. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/cli/cli.h"
#include "core/dispatch/dispatch.h"

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

int cli_wait_ready(lode_dispatcher *m)
{
    int ready;
    while ((ready = lode_dispatcher_wait_ready(m, 100)) < 0)
        if (cli_interrupted())
            return -1;
    return ready;
}

size_t cli_devices_left(lode_dispatcher *m) { return lode_dispatcher_devices_left(m); }

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
            "            [--versions V,V,...]  (SHA-256d: each nonce under each version)\n"
            "       lode scan -a tf --tf-class P,BIT_MIN,BIT_MAX,CLASS --start N --count M [-d LIST]\n"
            "       lode hash -a ALGO HEADER_HEX\n"
            "       lode check [-a ALGO,...] [-d LIST] [--jobs N | --duration TIME] [--seed S]\n"
            "            (every device against the CPU reference: lode check --help)\n"
            "       lode tf EXPONENT BIT_MIN BIT_MAX [-d LIST]  (Mersenne trial factoring:\n"
            "            lode tf --help)\n"
            "\n");
    cli_print_options(out, CLI_CMD_MINER);
    fprintf(out,
            "\n"
            "scan prints every nonce in [N, N+M) whose PoW hash is at or below the target\n"
            "(64 hex digits, most significant first) as '<nonce> <hash>', sorted by nonce.\n"
            "With -a tf, scan prints every n in [N, N+M) of class CLASS (k = CLASS + 4620 n)\n"
            "of M(P) from 2^BIT_MIN to 2^BIT_MAX whose q = 2kP+1 divides M(P), as '<n> <k> <q>'.\n"
            "hash prints the PoW hash of an 80-byte header. Hashes are in display order.\n"
            "\n"
            "Exit status: 0 success; 1 a failure at run time (no device passed its self-test,\n"
            "every device failed or was quarantined, a hardware error, output that could not\n"
            "be written); 2 bad input; 3 the pool or node refused the configuration\n"
            "(credentials, payout address, algorithm); 130 stopped by SIGINT, SIGTERM or\n"
            "SIGHUP (after the summary).\n");
}

/* Secrets given on the command line (-p, -O, credentials in -o and -x
 * URLs), masked in argv once parsed so that ps and /proc/PID/cmdline do not
 * show them. The options hold copies (cli_keep). */
typedef struct secret_arg {
    char *text;   /* points into argv: getopt's optarg */
    bool url;     /* mask the password of USER:PASS@ only */
    bool userpass; /* mask what follows the first ':' */
} secret_arg;

static void mask_from(char *p, char *end)
{
    for (; p < end && *p != '\0'; p++)
        *p = '*';
}

static void mask_secret(const secret_arg *a)
{
    char *t = a->text;
    if (a->url) {
        char *sep = strstr(t, "://");
        char *host = sep ? sep + 3 : t;
        char *at = strrchr(host, '@');
        char *colon = at ? memchr(host, ':', (size_t)(at - host)) : NULL;
        if (colon != NULL)
            mask_from(colon + 1, at);
    } else if (a->userpass) {
        char *colon = strchr(t, ':');
        if (colon != NULL)
            mask_from(colon + 1, colon + strlen(colon));
    } else {
        mask_from(t, t + strlen(t));
    }
}

/* Lowers or raises the whole process before any thread starts: threads
 * inherit the nice value and the scheduling policy. As cpuminer's and
 * ccminer's --cpu-priority: 0 idle ... 5 highest. */
static void apply_cpu_priority(int level)
{
    static const int nice_of[] = {19, 10, 0, -5, -10, -15};
    if (setpriority(PRIO_PROCESS, 0, nice_of[level]) != 0)
        lode_log(LODE_LOG_WARN, "--cpu-priority %d: cannot set nice %d: %s%s", level, nice_of[level], strerror(errno),
                 nice_of[level] < 0 ? " (a negative nice needs root or CAP_SYS_NICE)" : "");
    if (level <= 1) {
        struct sched_param none = {.sched_priority = 0};
        int policy = level == 0 ? SCHED_IDLE : SCHED_BATCH;
        if (sched_setscheduler(0, policy, &none) != 0)
            lode_log(LODE_LOG_WARN, "--cpu-priority %d: cannot set %s: %s", level,
                     level == 0 ? "SCHED_IDLE" : "SCHED_BATCH", strerror(errno));
    }
}

/* Logging sinks, priority and --background: after the options are read and
 * before anything starts (threads, connections). Returns -1 to go on, or an
 * exit status. */
static int setup_service(const cli_options *o)
{
    if (o->log_json)
        lode_log_set_format(LODE_LOG_FORMAT_JSON);
    if (o->background && o->log_file == NULL && !o->log_syslog)
        return cli_usage_error("--background needs --log-file FILE or --syslog: its stderr goes nowhere");
    char err[512];
    if (o->log_file != NULL && lode_log_open_file(o->log_file, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    if (o->log_syslog)
        lode_log_open_syslog();
    if (o->background) {
        fflush(NULL);
        /* daemon(3): fork (the parent exits 0 at once), setsid, stdin,
         * stdout and stderr on /dev/null. nochdir: relative paths in the
         * options (worktodo, checkpoints, cookie) keep their meaning. */
        if (daemon(1, 0) != 0) {
            fprintf(stderr, "lode: error: cannot go to the background: %s\n", strerror(errno));
            return EXIT_RUNTIME;
        }
        lode_log_set_stderr(false);
        lode_log(LODE_LOG_NOTICE, "lode %s in the background, pid %ld", LODE_VERSION, (long)getpid());
    }
    if (o->cpu_priority >= 0)
        apply_cpu_priority(o->cpu_priority);
    return -1;
}

int main(int argc, char **argv)
{
    cli_install_signal_handlers(); /* first: --help | head -1 must not die of SIGPIPE either */
    const char *command = NULL;
    int cmd = CLI_CMD_MINER;
    if (argc > 1 && argv[1][0] != '-') {
        command = argv[1];
        if (strcmp(command, "tf") == 0)
            cmd = CLI_CMD_TF;
        else if (strcmp(command, "check") == 0)
            cmd = CLI_CMD_CHECK;
        else if (strcmp(command, "scan") != 0 && strcmp(command, "hash") != 0)
            return cli_usage_error("unknown command '%s' (see lode --help)", command);
        argv++;
        argc--;
    }
    const char *see = cmd == CLI_CMD_TF ? "lode tf --help" : cmd == CLI_CMD_CHECK ? "lode check --help" : "lode --help";
    cli_options o;
    cli_options_init(&o, cmd);
    struct option longs[128];
    char shorts[64];
    cli_getopt_tables(cmd, longs, sizeof longs / sizeof longs[0], shorts, sizeof shorts);

    optind = 1;
    opterr = 0;
    int c;
    char err[512];
    int status = -1;
    secret_arg secrets[64];
    size_t secret_count = 0;
    while (status < 0 && (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        const cli_option *opt = c == ':' || c == '?' ? NULL : cli_option_of(cmd, c);
        if (opt != NULL && optarg != NULL && secret_count < sizeof secrets / sizeof secrets[0]) {
            bool url = strcmp(opt->name, "url") == 0 || strcmp(opt->name, "proxy") == 0;
            bool userpass = strcmp(opt->name, "userpass") == 0;
            if (url || userpass || strcmp(opt->name, "pass") == 0 || strcmp(opt->name, "api-token") == 0)
                secrets[secret_count++] = (secret_arg){.text = optarg, .url = url, .userpass = userpass};
        }
        if (c == ':')
            status = cli_usage_error("option '%s' needs a value", argv[optind - 1]);
        else if (opt == NULL)
            status = cli_usage_error("unknown option '%s' (see %s)", argv[optind - 1], see);
        else if (strcmp(opt->name, "version") == 0)
            status = cmd_version();
        else if (strcmp(opt->name, "help") == 0)
            status = (cmd == CLI_CMD_TF ? cmd_tf_usage(stdout) : cmd == CLI_CMD_CHECK ? cmd_check_usage(stdout)
                                                                       : usage(stdout), 0);
        else if (strcmp(opt->name, "help-env") == 0)
            status = (lode_settings_print(stdout), 0);
        else if (strcmp(opt->name, "config") == 0) {
            /* Read where it stands: later options override the file's. */
            if (cli_config_load(&o, optarg, err, sizeof err) != 0)
                status = cli_usage_error("%s", err);
        } else if (cli_apply_option(&o, opt->name, optarg, err, sizeof err) != 0)
            status = cli_usage_error("%s", err);
    }
    /* Options are copied where they are kept: mask the secrets in place. */
    for (size_t i = 0; i < secret_count; i++)
        mask_secret(&secrets[i]);
    if (status < 0) {
        if (o.log_json)
            lode_log_set_format(LODE_LOG_FORMAT_JSON);
        cli_warn_ignored_options(&o);
    }
    if (status < 0 && cmd == CLI_CMD_TF)
        status = setup_service(&o);
    if (status >= 0) {
        cli_options_free(&o);
        lode_log_close();
        return cli_finish_output(status);
    }
    if (cmd == CLI_CMD_TF || cmd == CLI_CMD_CHECK) {
        status = cmd == CLI_CMD_TF ? cmd_tf(&o, argc - optind, argv + optind)
                                   : cmd_check(&o, argc - optind, argv + optind);
        cli_options_free(&o);
        lode_log_close();
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
    if (modes > 1) {
        status = cli_usage_error("choose one of mining (-o), scan, hash, --benchmark, --list-devices, --selftest");
    } else if ((status = setup_service(&o)) >= 0) {
        /* a log file that cannot be opened, ...: an error before anything starts */
    } else if (command != NULL && strcmp(command, "scan") == 0)
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
    lode_log_close();
    return cli_finish_output(status);
}
