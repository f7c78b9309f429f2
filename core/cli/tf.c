/* `lode tf`: trial factoring of Mersenne numbers the way GIMPS users run
 * mfaktc.
 *
 *   lode tf EXPONENT BIT_MIN BIT_MAX [options]   one assignment
 *   lode tf [--worktodo FILE] [options]          every Factor= line, in order
 *   lode tf --selftest [-d LIST]                 every known factor, every device
 *   lode tf --verify PROOF_FILE                  checks a proof file (no device)
 *
 * The command only: its options, the assignments (command line or the
 * locked worktodo file), the devices and the miner, and the exit status.
 * The files and the class driver are the library in core/tf/: worktodo.h
 * (the worktodo file, worktodo.add, the lock), checkpoint.h, results.h and
 * class_driver.h (the classes through the dispatcher, checkpoints, and the
 * ordered finishing steps that report each result exactly once). A result
 * that cannot be written stops lode (exit 1) with the checkpoint and the
 * worktodo line kept; the next run writes it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/api/api.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/status.h"
#include "core/base/tf_ref.h"
#include "core/cli/commands.h"
#include "core/cli/devices.h"
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/cli/run_api.h"
#include "core/cli/run_setup.h"
#include "core/cli/signals.h"
#include "core/cli/tf_primenet.h"
#include "core/cli/tf_summary.h"
#include "core/dispatch/dispatch.h"
#include "core/tf/class_driver.h"
#include "core/tf/proof.h"
#include "core/tf/worktodo.h"

void cmd_tf_usage(FILE *out)
{
    fprintf(out,
            "usage: lode tf EXPONENT BIT_MIN BIT_MAX [options]   trial factoring of M(EXPONENT)\n"
            "       lode tf [--worktodo FILE] [options]          every Factor= line of worktodo.txt\n"
            "       lode tf --selftest [-d LIST]                 every known factor on every device\n"
            "       lode tf --verify PROOF_FILE                  check a proof of a run (no device)\n"
            "\n");
    cli_print_options(out, CLI_CMD_TF);
    fprintf(out,
            "\n"
            "Exponents: primes from 100000 to 2^32-1; 1 <= BIT_MIN < BIT_MAX <= 95 and\n"
            "k < 2^63.9. Exactly the factors in [2^BIT_MIN, 2^BIT_MAX) are reported.\n"
            "\n"
            "--verify checks a proof file (docs/TF-PROOF.md): its header, every listed q\n"
            "(prime, 2kp + 1, +-1 mod 8, in the range, passing the residue test), the\n"
            "count, the SHA-256 and the count against the expected one; it prints each\n"
            "check and exits 0 when the proof holds, 1 when it does not.\n");
}

/* The assignments: from the command line, or the worktodo file (locked
 * into *lock_fd, worktodo.add merged first). -1 to go on, else the exit
 * status to end with (nothing to run, or bad input). */
static int load_assignments(const cli_options *opts, int argc, char **argv, lode_tf_assignment **list,
                            size_t *count, int *bad_lines, int *lock_fd)
{
    *list = NULL;
    *count = 0;
    *bad_lines = 0;
    *lock_fd = -1;
    const char *worktodo = opts->tf.worktodo;
    if (argc > 0) {
        if (argc != 3 || worktodo != NULL)
            return cli_usage_error("want EXPONENT BIT_MIN BIT_MAX (see lode tf --help)");
        char line[LODE_TF_LINE_MAX + 2], why[256];
        snprintf(line, sizeof line, "Factor=%s,%s,%s", argv[0], argv[1], argv[2]);
        *list = calloc(1, sizeof **list);
        if (*list == NULL)
            return EXIT_RUNTIME;
        if (lode_tf_worktodo_parse_line(line, strlen(line), *list, why, sizeof why) != 1) {
            free(*list);
            *list = NULL;
            return cli_usage_error("M%s %s..%s: %s", argv[0], argv[1], argv[2], why);
        }
        *count = 1;
        return -1;
    }
    if (worktodo == NULL)
        worktodo = "worktodo.txt";
    char why[512];
    int early = cli_tf_primenet_prepare(opts, worktodo); /* --unreserve ends here */
    if (early >= 0)
        return early;
    if (lode_tf_worktodo_check(worktodo, why, sizeof why) != 0)
        return cli_usage_error("%s", why);
    if ((*lock_fd = lode_tf_worktodo_lock(worktodo)) < 0)
        return EXIT_RUNTIME;
    if (lode_tf_worktodo_merge_add(worktodo) < 0)
        lode_log(LODE_LOG_ERROR, "cannot merge worktodo.add into %s: %s", worktodo, strerror(errno));
    if (lode_tf_worktodo_load(worktodo, list, count, bad_lines, true) != 0) {
        close(*lock_fd);
        *lock_fd = -1;
        return cli_usage_error("cannot read %s: %s", worktodo, strerror(errno));
    }
    lode_tf_checkpoint_remove_stale(opts->tf.ckp_dir, *list, *count);
    if (*count > 0 || opts->tf.primenet) /* PrimeNet fills an empty one */
        return -1;
    free(*list);
    *list = NULL;
    close(*lock_fd);
    *lock_fd = -1;
    if (*bad_lines)
        return EXIT_USAGE;
    lode_log(LODE_LOG_INFO, "%s has no assignments", worktodo);
    return 0;
}

/* The devices: -d's, or by default the GPUs, or the CPU when there is no
 * GPU. 0, or -1 (the error printed). */
static int select_devices(const cli_options *opts, lode_device_ref **devices, size_t *ndev)
{
    char err[512];
    bool host_left_out;
    if (lode_registry_select_gpus(opts->devices, LODE_ALGO_TF, devices, ndev, &host_left_out, err,
                                  sizeof err) != 0) {
        cli_usage_error("%s", err);
        return -1;
    }
    if (host_left_out) {
        char ids[256] = "";
        for (size_t i = 0, at = 0; i < *ndev && at < sizeof ids - 40; i++)
            at += (size_t)snprintf(ids + at, sizeof ids - at, "%s%s", i ? "," : "", (*devices)[i].id);
        lode_log(LODE_LOG_INFO, "trial factoring on the GPUs only (%s): a CPU thread adds little beside a GPU; "
                 "-d cpu,%s adds the CPU", ids, ids);
    }
    return 0;
}

/* The kernel and details of the result lines: each device's backend and
 * variant, and its name, in printable ASCII (the JSON line and its
 * checksum agree). */
static void describe_devices(const lode_device_ref *devices, size_t ndev, char *kernel, size_t kernel_len,
                             char *details, size_t details_len)
{
    kernel[0] = details[0] = '\0';
    for (size_t d = 0; d < ndev; d++) {
        const char *names[1];
        int k = lode_device_variants(&devices[d], LODE_ALGO_TF, names, 1);
        size_t kl = strlen(kernel), dl = strlen(details);
        snprintf(kernel + kl, kernel_len - kl, "%s%s_%s", d ? "+" : "", lode_device_backend_name(&devices[d]),
                 k > 0 && names[0] ? names[0] : "default");
        snprintf(details + dl, details_len - dl, "%s%s", d ? ", " : "", devices[d].info.name);
    }
    for (char *s = kernel; *s; s++)
        *s = *s >= 0x20 && *s < 0x7f ? *s : '?';
    for (char *s = details; *s; s++)
        *s = *s >= 0x20 && *s < 0x7f ? *s : '?';
}

static void setup_driver(lode_tf_driver *driver, const cli_options *opts, const char *worktodo,
                         const char *kernel, const char *details)
{
    lode_tf_driver_init(driver);
    driver->worktodo = worktodo;
    driver->results = opts->tf.results;
    driver->legacy = opts->tf.legacy;
    driver->ckp_dir = opts->tf.ckp_dir;
    driver->class_log = opts->tf.class_log;
    driver->ckp_interval = opts->tf.ckp_interval;
    driver->progress_interval = opts->tf.progress_interval;
    driver->progress_ckp = !opts->tf.no_checkpoints;
    driver->stages = opts->tf.stages;
    driver->stop_after_factor = (int)opts->tf.stop_after_factor;
    driver->add_delay = opts->tf.add_delay;
    driver->info = (lode_tf_report_info){.version = LODE_VERSION, .kernel = kernel, .details = details,
                                         .user = opts->tf.user, .computer = opts->tf.computer};
    driver->stop = opts->tf.primenet ? cli_tf_primenet_stop_asked : cli_interrupted;
    driver->stop_now = cli_interrupted_twice;
    if (opts->tf.stop_after_factor == 2)
        lode_log(LODE_LOG_WARN, "--stop-after-factor 2 is discouraged: it stops at the end of the class with the "
                 "factor, and the bit level left partial is credited less by PrimeNet; 1 (the default) finishes "
                 "the bit level");
}

/* The dispatcher, the API and the run: the exit status. */
static int run_driver(const cli_options *opts, cli_run *run, lode_tf_driver *driver, lode_dispatcher_config *cfg,
                      const char *where, lode_tf_assignment **list, size_t *count)
{
    int status = cli_run_start_dispatcher(run, opts, cfg);
    if (status != 0)
        return status;
    driver->miner = run->miner;
    /* The client first (it registers and fetches while the devices test
     * themselves): the API then shows its state from the start. */
    cli_tf_primenet *primenet = NULL;
    if (opts->tf.primenet && (primenet = cli_tf_primenet_start(opts, driver, driver->info.details)) == NULL)
        status = EXIT_RUNTIME;
    run->api_source = (cli_api_source){.algo = LODE_ALGO_TF, .kind = "tf", .where = where, .tf = driver,
                                       .unit = "candidates/s",
                                       .primenet = primenet ? cli_tf_primenet_api_status : NULL,
                                       .primenet_user = primenet};
    if (status == 0)
        status = cli_run_start_api(run, opts);
    if (status == 0 && (status = cli_run_wait_ready(run)) == EXIT_INTERRUPTED)
        lode_log(LODE_LOG_ERROR, "interrupted");
    if (status == 0) {
        cli_run_running(run, "tf", "candidates/s", NULL, NULL);
        double started = lode_clock_s();
        int r = primenet != NULL ? cli_tf_primenet_run(primenet, driver, list, count)
                                 : lode_tf_driver_run_list(driver, list, count);
        cli_run_stopping(run);
        cli_tf_summary(run->miner, driver, lode_clock_s() - started);
        status = r == LODE_TF_DONE ? 0 : r == LODE_TF_STOPPED ? EXIT_INTERRUPTED : EXIT_RUNTIME;
    }
    return cli_tf_primenet_end(primenet, status);
}

int cmd_tf(const cli_options *opts, int argc, char **argv)
{
    lode_log_configure(opts->quiet, false);
    if (opts->tf.verify != NULL) {
        if (argc != 0 || opts->selftest)
            return cli_usage_error("--verify takes one proof file and no assignment");
        return lode_tf_proof_verify(opts->tf.verify, stdout) == 0 ? 0 : EXIT_RUNTIME;
    }
    if (opts->selftest) {
        if (argc != 0)
            return cli_usage_error("--selftest takes no assignment");
        cli_options st = *opts; /* every device's tf variants, the whole known-factor set */
        st.algo = LODE_ALGO_TF;
        st.algo_given = true;
        return cmd_selftest(&st);
    }
    if (cli_api_check(opts) != 0 || cli_tf_primenet_check(opts, argc) != 0)
        return EXIT_USAGE;
    lode_tf_assignment *list;
    size_t count;
    int bad_lines, lock_fd;
    int status = load_assignments(opts, argc, argv, &list, &count, &bad_lines, &lock_fd);
    if (status >= 0)
        return status;
    const char *worktodo = argc > 0 ? NULL : opts->tf.worktodo ? opts->tf.worktodo : "worktodo.txt";
    cli_run run = {0};
    char kernel[128], details[256], where[300];
    status = select_devices(opts, &run.devices, &run.device_count) != 0 ? EXIT_USAGE : 0;
    if (status == 0) {
        describe_devices(run.devices, run.device_count, kernel, sizeof kernel, details, sizeof details);
        lode_tf_driver driver;
        setup_driver(&driver, opts, worktodo, kernel, details);
        lode_dispatcher_config cfg = {.algo = LODE_ALGO_TF, .devices = run.devices,
                                      .device_count = run.device_count, .threads = opts->threads, .chunk_ms = 100,
                                      .callbacks = {.user = &driver, .found = lode_tf_driver_on_found}};
        snprintf(where, sizeof where, "%s", worktodo != NULL ? worktodo : "command line");
        status = run_driver(opts, &run, &driver, &cfg, where, &list, &count);
        cli_run_end(&run); /* the dispatcher before the driver it calls */
        lode_tf_driver_destroy(&driver);
    }
    free(list);
    if (lock_fd >= 0)
        close(lock_fd); /* after the last write to the worktodo */
    if (status == 0 && bad_lines)
        status = EXIT_USAGE;
    return status;
}
