/* lode's command line: parses options (cpuminer/ccminer conventions) and
 * runs one command. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/stuck_threads.h"
#include "core/cli/background.h"
#include "core/cli/commands.h"
#include "core/cli/compat_options.h"
#include "core/cli/config.h"
#include "core/cli/devices.h"
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/cli/signals.h"
#include "core/dispatch/dispatch.h"

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
 * before anything starts (threads, connections). runs_on: the command runs
 * until stopped (mining, --benchmark, lode tf's assignments), the only ones
 * --background is for. Returns -1 to go on, or an exit status. */
static int setup_service(const cli_options *o, bool runs_on)
{
    if (o->log_json)
        lode_log_set_format(LODE_LOG_FORMAT_JSON);
    if (o->background && !runs_on)
        return cli_usage_error("--background is for mining, --benchmark and lode tf's assignments: this "
                               "command's output would go to /dev/null");
    if (o->background && o->log_file == NULL && !o->log_syslog)
        return cli_usage_error("--background needs --log-file FILE or --syslog: its stderr goes nowhere");
    char err[512];
    if (o->log_file != NULL && lode_log_open_file(o->log_file, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    if (o->log_syslog)
        lode_log_open_syslog();
    if (o->background) {
        /* The parent returns here once the child runs (0) or has ended (its
         * status, its errors shown): core/cli/background.c. The working
         * directory stays: relative paths in the options (worktodo,
         * checkpoints, cookie) keep their meaning. */
        int parent = cli_background_start();
        if (parent >= 0)
            return parent;
        lode_log(LODE_LOG_NOTICE, "lode %s starting in the background, pid %ld", LODE_VERSION, (long)getpid());
    }
    if (o->cpu_priority >= 0)
        apply_cpu_priority(o->cpu_priority);
    return -1;
}

/* main's status, after the output is flushed. While a thread a stop gave
 * up on is still in a driver or library call, the process ends here, with
 * _exit: exit() would run the libraries' destructors under that thread
 * (a driver's can wait on it for ever). */
static int finish(int status)
{
    status = cli_finish_output(status);
    if (lode_stuck_threads() > 0) {
        fflush(NULL);
        _exit(status);
    }
    return status;
}

/* --log-format json makes every line of stderr JSON, errors about the
 * options before it included: a silent first pass over a copy of argv (as
 * getopt_long permutes what it reads) finds it. */
static bool json_log_wanted(int cmd, int argc, char **argv)
{
    struct option longs[128];
    char shorts[64];
    cli_getopt_tables(cmd, longs, sizeof longs / sizeof longs[0], shorts, sizeof shorts);
    char **copy = malloc(((size_t)argc + 1) * sizeof *copy);
    if (copy == NULL)
        return false;
    memcpy(copy, argv, ((size_t)argc + 1) * sizeof *copy);
    bool json = false;
    int c;
    optind = 0; /* 0: glibc starts afresh */
    opterr = 0;
    while ((c = getopt_long(argc, copy, shorts, longs, NULL)) != -1) {
        const cli_option *opt = c == ':' || c == '?' ? NULL : cli_option_of(cmd, c);
        if (opt != NULL && optarg != NULL && strcmp(opt->name, "log-format") == 0)
            json = strcmp(optarg, "json") == 0;
    }
    free(copy);
    return json;
}

/* Reads the command line into o: -1 to go on, or an exit status (a usage
 * error said, --help or --version printed). */
static int parse_options(int cmd, int argc, char **argv, cli_options *o)
{
    const char *see = cmd == CLI_CMD_TF ? "lode tf --help" : cmd == CLI_CMD_CHECK ? "lode check --help" : "lode --help";
    struct option longs[128];
    char shorts[64];
    cli_getopt_tables(cmd, longs, sizeof longs / sizeof longs[0], shorts, sizeof shorts);

    optind = 0; /* 0: glibc starts afresh (json_log_wanted scanned before) */
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
        int applied = 0;
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
        else if (strcmp(opt->name, "config") == 0)
            applied = cli_config_load(o, optarg, err, sizeof err); /* where it stands: later options override it */
        else
            applied = cli_apply_option(o, opt->name, optarg, err, sizeof err);
        if (o->log_json) /* a config file's "log-format": its own errors are JSON already */
            lode_log_set_format(LODE_LOG_FORMAT_JSON);
        if (applied != 0)
            status = cli_usage_error("%s", err);
    }
    /* Options are copied where they are kept: mask the secrets in place. */
    for (size_t i = 0; i < secret_count; i++)
        mask_secret(&secrets[i]);
    if (status < 0) {
        if (o->log_json)
            lode_log_set_format(LODE_LOG_FORMAT_JSON);
        cli_warn_ignored_options(o);
    }
    return status;
}

/* `lode` itself: one of mining, scan, hash, --benchmark, --list-devices,
 * --selftest. */
static int run_miner_command(const char *command, cli_options *o, int argc, char **argv)
{
    if (command != NULL && strcmp(command, "hash") == 0 && optind == argc - 1)
        o->operand = argv[optind++];
    if (optind < argc)
        return cli_usage_error("unexpected argument '%s' (see lode --help)", argv[optind]);
    lode_log_configure(o->quiet, !o->no_color);

    bool mining = o->pool_count > 0;
    int modes = (command != NULL) + o->benchmark + o->list_devices + o->selftest + mining;
    int status;
    if (modes > 1)
        return cli_usage_error("choose one of mining (-o), scan, hash, --benchmark, --list-devices, --selftest");
    if (modes == 0) {
        /* Bare `lode`, or `lode -a scrypt`: the error, and where to look. */
        status = cli_usage_error("nothing to do: give a pool or node (-o URL), --benchmark, --selftest, "
                                 "--list-devices, or a command (scan, hash, check, tf)");
        if (lode_log_get_format() == LODE_LOG_FORMAT_JSON)
            lode_log(LODE_LOG_NOTICE, "Try 'lode --help' for more information.");
        else
            fputs("Try 'lode --help' for more information.\n", stderr);
        return status;
    }
    if ((status = setup_service(o, command == NULL && !o->list_devices && !o->selftest)) >= 0)
        return status; /* a log file that cannot be opened, ...; or the parent of --background */
    if (command != NULL && strcmp(command, "scan") == 0)
        return cmd_scan(o);
    if (command != NULL)
        return cmd_hash(o);
    if (o->list_devices)
        return cmd_list_devices();
    if (o->selftest)
        return cmd_selftest(o);
    if (o->benchmark)
        return cmd_benchmark(o);
    return cmd_mine(o);
}

int main(int argc, char **argv)
{
    cli_install_signal_handlers(); /* first: --help | head -1 must not die of SIGPIPE either */
    const char *command = NULL;
    int cmd = CLI_CMD_MINER;
    bool known = true;
    if (argc > 1 && argv[1][0] != '-') {
        command = argv[1];
        if (strcmp(command, "tf") == 0)
            cmd = CLI_CMD_TF;
        else if (strcmp(command, "check") == 0)
            cmd = CLI_CMD_CHECK;
        else
            known = strcmp(command, "scan") == 0 || strcmp(command, "hash") == 0;
        argv++;
        argc--;
    }
    if (json_log_wanted(cmd, argc, argv))
        lode_log_set_format(LODE_LOG_FORMAT_JSON);
    if (!known)
        return cli_usage_error("unknown command '%s' (see lode --help)", command);
    cli_options o;
    cli_options_init(&o, cmd);
    int status = parse_options(cmd, argc, argv, &o);
    if (status < 0 && cmd == CLI_CMD_TF)
        status = setup_service(&o, !o.selftest && o.tf.verify == NULL);
    if (status < 0 && cmd == CLI_CMD_TF)
        status = cmd_tf(&o, argc - optind, argv + optind);
    else if (status < 0 && cmd == CLI_CMD_CHECK)
        status = cmd_check(&o, argc - optind, argv + optind);
    else if (status < 0)
        status = run_miner_command(command, &o, argc, argv);
    cli_options_free(&o);
    lode_log_close();
    return finish(status);
}
