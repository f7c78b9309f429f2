/* One way to set up a run: what lode tf, mining, --benchmark and lode
 * check build around their own work (the devices, the dispatcher with its
 * health settings, the HTTP API, the systemd notifier, the rate lines), and
 * the one teardown that frees whatever of it was built, in order. A
 * command fills a cli_run step by step and calls cli_run_end once, at its
 * single exit. */
#ifndef LODE_CLI_RUN_SETUP_H
#define LODE_CLI_RUN_SETUP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/base/algo.h"
#include "core/cli/notify.h"
#include "core/cli/options.h"
#include "core/cli/report.h"
#include "core/cli/run_api.h"

struct lode_dispatcher_config;
struct lode_mining;
struct lode_mining_config;

struct lode_device_ref;
struct lode_dispatcher;

/* Waits for the dispatcher's self-tests like lode_dispatcher_wait_ready,
 * but gives up (-1) as soon as the user presses Ctrl-C. */
int cli_wait_ready(struct lode_dispatcher *m);
/* Devices mining or that may again (restarting, paused); 0: every device
 * failed or is quarantined, nothing is left to mine. */
size_t cli_devices_left(struct lode_dispatcher *m);

typedef struct cli_run {
    struct lode_device_ref *devices; /* freed by cli_run_end */
    size_t device_count;
    struct lode_dispatcher *miner;   /* the dispatcher (mining: the one lode_mining runs) */
    struct lode_mining *mining;      /* NULL unless mining on pools or a node */
    cli_api_source api_source;       /* what the API shows: the command fills it before cli_run_start_api */
    struct lode_api *api;
    cli_notify *notify;
    cli_rate_report report;
    bool report_started;
} cli_run;

/* The devices -d selects for algo, checked against --variant. 0, or
 * EXIT_USAGE (said). */
int cli_run_select(cli_run *run, const cli_options *o, lode_algo algo);
/* The devices -d selects for every algorithm (lode check). 0, or EXIT_USAGE (said). */
int cli_run_select_all(cli_run *run, const cli_options *o);
/* Starts the dispatcher of config (its devices set) with the health
 * options. 0, or an exit status (logged). */
int cli_run_start_dispatcher(cli_run *run, const cli_options *o, struct lode_dispatcher_config *config);
/* The same for a mining session: the dispatcher is config->miner's. */
int cli_run_start_mining(cli_run *run, const cli_options *o, struct lode_mining_config *config);
/* Starts the API (if --api-bind was given) on run->api_source, whose miner
 * is set here. 0, or EXIT_RUNTIME (logged). */
int cli_run_start_api(cli_run *run, const cli_options *o);
/* Waits for the devices' self-tests: 0, EXIT_RUNTIME when no device passed
 * (logged), EXIT_INTERRUPTED on Ctrl-C (not logged). */
int cli_run_wait_ready(cli_run *run);
/* Starts the hashrate lines (cli_rate_report) every interval seconds.
 * 0, or EXIT_RUNTIME (logged). */
int cli_run_start_report(cli_run *run, lode_algo algo, double interval);
/* The work has started: tells --background's parent and systemd
 * (cli_notify_ready's arguments). */
void cli_run_running(cli_run *run, const char *what, const char *unit, cli_status_extra extra, void *user);
/* systemd's STOPPING=1, where the command's work ends (and nothing later). */
void cli_run_stopping(cli_run *run);
/* Frees what was built, the API before what it reads; run may be partly
 * set up (zeroed at the start). */
void cli_run_end(cli_run *run);

#endif
