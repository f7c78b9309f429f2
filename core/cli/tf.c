/* `lode tf`: trial factoring of Mersenne numbers the way GIMPS users run
 * mfaktc.
 *
 *   lode tf EXPONENT BIT_MIN BIT_MAX [options]   one assignment
 *   lode tf [--worktodo FILE] [options]          every Factor= line, in order
 *   lode tf --selftest [-d LIST]                 every known factor, every device
 *
 * The command only: its options, the assignments (command line or the
 * locked worktodo file), the devices and the miner, and the exit status.
 * The files and the class driver are the library in core/tf/: worktodo.h
 * (the worktodo file, worktodo.add, the lock), checkpoint.h, results.h and
 * class_driver.h (the classes through the dispatcher, checkpoints, and the
 * ordered finishing steps that report each result exactly once). A result
 * that cannot be written stops lode (exit 1) with the checkpoint and the
 * worktodo line kept; the next run writes it. */
#include "core/cli/tf.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cli/cli.h"
#include "core/dispatch.h"
#include "core/log.h"
#include "core/status.h"
#include "core/tf/class_driver.h"
#include "core/tf/worktodo.h"
#include "core/tf_ref.h"
#include "core/tf_selftest.h"

typedef struct tf_options {
    const char *devices;
    unsigned threads;
    const char *worktodo, *results, *legacy, *ckp_dir, *class_log, *user, *computer;
    double ckp_interval, progress_interval;
    bool progress_ckp; /* false: --no-checkpoints (the finish record is still written) */
    bool selftest, quiet;
} tf_options;

static int run_selftest(const tf_options *o)
{
    lode_device_ref *devices;
    size_t count;
    char err[512];
    if (lode_registry_select(o->devices, LODE_ALGO_TF, &devices, &count, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    int failures = 0, runs = 0;
    for (size_t d = 0; d < count; d++) {
        const char *names[8];
        int k = lode_device_variants(&devices[d], LODE_ALGO_TF, names, 8);
        for (int v = 0; v < k; v++) {
            lode_open_params params = {.algo = LODE_ALGO_TF, .variant = names[v]};
            lode_handle h;
            char why[512] = "";
            int rc = lode_handle_open(&h, &devices[d], &params);
            if (rc == LODE_OK) {
                rc = lode_tf_selftest_handle(&h, false, why, sizeof why) == 0 ? LODE_OK : LODE_ERR_DEVICE;
                lode_handle_close(&h);
            } else {
                snprintf(why, sizeof why, "cannot open: %s", lode_status_str(rc));
            }
            printf("%-8s tf %-10s %zu known factors: %s%s\n", devices[d].id, names[v] ? names[v] : "default",
                   lode_tf_vector_count, rc == LODE_OK ? "ok" : "FAILED: ", rc == LODE_OK ? "" : why);
            runs++;
            failures += rc != LODE_OK;
        }
    }
    free(devices);
    printf("%d passed, %d failed\n", runs - failures, failures);
    return failures ? EXIT_RUNTIME : 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: lode tf EXPONENT BIT_MIN BIT_MAX [options]   trial-factor M(EXPONENT)\n"
            "       lode tf [--worktodo FILE] [options]          every Factor= line of worktodo.txt\n"
            "       lode tf --selftest [-d LIST]                 every known factor on every device\n"
            "\n"
            "  -d, --devices LIST        devices (cpu, cpu:0, cuda:1, ...; default: all that run tf)\n"
            "  -t, --threads N           CPU worker threads\n"
            "  -w, --worktodo FILE       assignments: Factor=[AID,]exponent,bit_min,bit_max;\n"
            "                            worktodo.add beside it is merged in at start and\n"
            "                            after each finished assignment; FILE.lock keeps a\n"
            "                            second lode tf off the same file\n"
            "      --results FILE        PrimeNet JSON results (results.json.txt)\n"
            "      --legacy-results FILE also append the legacy lines here (e.g. results.txt)\n"
            "      --checkpoint-dir DIR  where M<p>_<a>_<b>.ckp live (.)\n"
            "      --checkpoint-interval S  seconds between checkpoints (60; 0 = every class)\n"
            "      --no-checkpoints      no progress saves (a finished assignment's short-lived\n"
            "                            record against a second report is still written)\n"
            "      --progress-interval S seconds between progress lines (10)\n"
            "      --user NAME, --computer NAME  put into the JSON results\n"
            "      --class-log FILE      append each class as it completes (for tests)\n"
            "  -q, --quiet               only warnings and errors on stderr\n"
            "\n"
            "Exponents: primes from 100000 to 2^32-1; 1 <= BIT_MIN < BIT_MAX <= 95 and\n"
            "k < 2^63.9. Exactly the factors in [2^BIT_MIN, 2^BIT_MAX) are reported.\n");
}

static int parse_seconds(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= 0) || d > 1e9)
        return -1;
    *out = d;
    return 0;
}

int cmd_tf(int argc, char **argv)
{
    static const struct option longs[] = {
        {"devices", required_argument, NULL, 'd'}, {"threads", required_argument, NULL, 't'},
        {"worktodo", required_argument, NULL, 'w'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'}, {"results", required_argument, NULL, 1},
        {"legacy-results", required_argument, NULL, 2}, {"checkpoint-dir", required_argument, NULL, 3},
        {"checkpoint-interval", required_argument, NULL, 4}, {"no-checkpoints", no_argument, NULL, 5},
        {"progress-interval", required_argument, NULL, 6}, {"user", required_argument, NULL, 7},
        {"computer", required_argument, NULL, 8}, {"class-log", required_argument, NULL, 9},
        {"selftest", no_argument, NULL, 10}, {0}};
    tf_options o = {.results = "results.json.txt", .ckp_dir = ".", .ckp_interval = 60,
                    .progress_interval = 10, .progress_ckp = true};
    bool no_ckp = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":d:t:w:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'd': o.devices = optarg; break;
        case 't': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 4096)
                return cli_usage_error("--threads wants a number from 1 to 4096, not '%s'", optarg);
            o.threads = (unsigned)n;
            break;
        }
        case 'w': o.worktodo = optarg; break;
        case 'q': o.quiet = true; break;
        case 'h': usage(stdout); return 0;
        case 1: o.results = optarg; break;
        case 2: o.legacy = optarg; break;
        case 3: o.ckp_dir = optarg; break;
        case 4:
            if (parse_seconds(optarg, &o.ckp_interval) != 0)
                return cli_usage_error("--checkpoint-interval wants seconds, not '%s'", optarg);
            break;
        case 5: no_ckp = true; break;
        case 6:
            if (parse_seconds(optarg, &o.progress_interval) != 0)
                return cli_usage_error("--progress-interval wants seconds, not '%s'", optarg);
            break;
        case 7:
        case 8: {
            json_t *s = json_string(optarg); /* NULL: not UTF-8 */
            if (s == NULL)
                return cli_usage_error("--%s wants UTF-8 text", c == 7 ? "user" : "computer");
            json_decref(s);
            *(c == 7 ? &o.user : &o.computer) = optarg;
            break;
        }
        case 9: o.class_log = optarg; break;
        case 10: o.selftest = true; break;
        case ':': return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("unknown option '%s' (see lode tf --help)", argv[optind - 1]);
        }
    }
    if (no_ckp)
        o.progress_ckp = false;
    lode_log_configure(o.quiet, false);
    cli_install_signal_handlers();
    if (o.selftest)
        return optind == argc ? run_selftest(&o) : cli_usage_error("--selftest takes no assignment");

    /* The assignments: from the command line, or the worktodo file. */
    int lock_fd = -1;
    lode_tf_assignment *list = NULL;
    size_t count = 0;
    int bad_lines = 0;
    if (optind < argc) {
        if (argc - optind != 3 || o.worktodo != NULL)
            return cli_usage_error("want EXPONENT BIT_MIN BIT_MAX (see lode tf --help)");
        char line[LODE_TF_LINE_MAX + 2], why[256];
        snprintf(line, sizeof line, "Factor=%s,%s,%s", argv[optind], argv[optind + 1], argv[optind + 2]);
        list = calloc(1, sizeof *list);
        if (list == NULL)
            return EXIT_RUNTIME;
        if (lode_tf_worktodo_parse_line(line, strlen(line), list, why, sizeof why) != 1) {
            free(list);
            return cli_usage_error("M%s %s..%s: %s", argv[optind], argv[optind + 1], argv[optind + 2], why);
        }
        count = 1;
    } else {
        if (o.worktodo == NULL)
            o.worktodo = "worktodo.txt";
        struct stat st;
        if (stat(o.worktodo, &st) == 0 && !S_ISREG(st.st_mode))
            return cli_usage_error("cannot read %s: %s", o.worktodo,
                                   S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
        if ((lock_fd = lode_tf_worktodo_lock(o.worktodo)) < 0)
            return EXIT_RUNTIME;
        if (lode_tf_worktodo_merge_add(o.worktodo) < 0)
            lode_log(LODE_LOG_ERROR, "cannot merge worktodo.add into %s: %s", o.worktodo, strerror(errno));
        if (lode_tf_worktodo_load(o.worktodo, &list, &count, &bad_lines, true) != 0) {
            close(lock_fd);
            return cli_usage_error("cannot read %s: %s", o.worktodo, strerror(errno));
        }
        lode_tf_checkpoint_remove_stale(o.ckp_dir, list, count);
        if (count == 0) {
            free(list);
            close(lock_fd);
            if (bad_lines)
                return EXIT_USAGE;
            lode_log(LODE_LOG_INFO, "%s has no assignments", o.worktodo);
            return 0;
        }
    }

    lode_device_ref *devices;
    size_t ndev;
    char err[512];
    if (lode_registry_select(o.devices, LODE_ALGO_TF, &devices, &ndev, err, sizeof err) != 0) {
        free(list);
        if (lock_fd >= 0)
            close(lock_fd);
        return cli_usage_error("%s", err);
    }
    /* The kernel and details of the result lines: each device's backend and
     * variant, and its name. */
    char kernel[128] = "", details[256] = "";
    for (size_t d = 0; d < ndev; d++) {
        const char *names[1];
        int k = lode_device_variants(&devices[d], LODE_ALGO_TF, names, 1);
        size_t kl = strlen(kernel), dl = strlen(details);
        snprintf(kernel + kl, sizeof kernel - kl, "%s%s_%s", d ? "+" : "", devices[d].backend->name,
                 k > 0 && names[0] ? names[0] : "default");
        snprintf(details + dl, sizeof details - dl, "%s%s", d ? ", " : "", devices[d].info.name);
    }
    for (char *s = kernel; *s; s++) /* printable ASCII: the JSON line and its checksum agree */
        *s = *s >= 0x20 && *s < 0x7f ? *s : '?';
    for (char *s = details; *s; s++)
        *s = *s >= 0x20 && *s < 0x7f ? *s : '?';

    lode_tf_driver driver;
    lode_tf_driver_init(&driver);
    driver.worktodo = o.worktodo;
    driver.results = o.results;
    driver.legacy = o.legacy;
    driver.ckp_dir = o.ckp_dir;
    driver.class_log = o.class_log;
    driver.ckp_interval = o.ckp_interval;
    driver.progress_interval = o.progress_interval;
    driver.progress_ckp = o.progress_ckp;
    driver.info = (lode_tf_report_info){.version = LODE_VERSION, .kernel = kernel, .details = details,
                                        .user = o.user, .computer = o.computer};
    driver.stop = cli_interrupted;
    driver.stop_now = cli_interrupted_twice;
    lode_miner_config cfg = {.algo = LODE_ALGO_TF, .devices = devices, .device_count = ndev,
                             .threads = o.threads, .chunk_ms = 100,
                             .callbacks = {.user = &driver, .found = lode_tf_driver_on_found}};
    lode_miner *m = lode_miner_start(&cfg, err, sizeof err);
    free(devices);
    if (m == NULL) {
        lode_tf_driver_destroy(&driver);
        free(list);
        if (lock_fd >= 0)
            close(lock_fd);
        lode_log(LODE_LOG_ERROR, "%s", err);
        return EXIT_RUNTIME;
    }
    driver.miner = m;
    int status = 0;
    int ready = cli_wait_ready(m);
    if (ready <= 0) {
        lode_log(LODE_LOG_ERROR, ready < 0 ? "interrupted" : "no device passed its self-test");
        status = ready < 0 ? EXIT_INTERRUPTED : EXIT_RUNTIME;
    }
    if (status == 0) {
        int r = lode_tf_driver_run_list(&driver, &list, &count);
        status = r == LODE_TF_DONE ? 0 : r == LODE_TF_STOPPED ? EXIT_INTERRUPTED : EXIT_RUNTIME;
    }
    lode_miner_free(m);
    lode_tf_driver_destroy(&driver);
    free(list);
    if (lock_fd >= 0)
        close(lock_fd); /* after the last write to the worktodo */
    if (status == 0 && bad_lines)
        status = EXIT_USAGE;
    return status;
}
