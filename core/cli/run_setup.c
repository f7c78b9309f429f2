/* The pieces every run of a command builds the same way (run_setup.h). */
#include <stdlib.h>

#include "core/base/log.h"
#include "core/cli/background.h"
#include "core/cli/devices.h"
#include "core/cli/health.h"
#include "core/cli/messages.h"
#include "core/cli/notify.h"
#include "core/cli/options.h"
#include "core/cli/report.h"
#include "core/cli/run_api.h"
#include "core/cli/run_setup.h"
#include "core/cli/signals.h"
#include "core/dispatch/dispatch.h"
#include "core/dispatch/registry.h"
#include "core/mining/mining.h"

int cli_wait_ready(lode_dispatcher *m)
{
    int ready;
    while ((ready = lode_dispatcher_wait_ready(m, 100)) < 0)
        if (cli_interrupted())
            return -1;
    return ready;
}

size_t cli_devices_left(lode_dispatcher *m) { return lode_dispatcher_devices_left(m); }

int cli_run_select(cli_run *run, const cli_options *o, lode_algo algo)
{
    char err[512];
    if (lode_registry_select(o->devices, algo, &run->devices, &run->device_count, err, sizeof err) != 0) {
        run->devices = NULL;
        return cli_usage_error("%s", err);
    }
    return cli_check_variant(o, algo, run->devices, run->device_count) != 0 ? EXIT_USAGE : 0;
}

int cli_run_select_all(cli_run *run, const cli_options *o)
{
    char err[512];
    if (lode_registry_select_all(o->devices, &run->devices, &run->device_count, err, sizeof err) != 0) {
        run->devices = NULL;
        return cli_usage_error("%s", err);
    }
    return 0;
}

int cli_run_start_dispatcher(cli_run *run, const cli_options *o, lode_dispatcher_config *config)
{
    char err[512];
    double *temps;
    int health = cli_health_config(o, config, &temps);
    if (health == 0)
        run->miner = lode_dispatcher_start(config, err, sizeof err);
    free(temps); /* the dispatcher copied them */
    if (health != 0)
        return health;
    if (run->miner == NULL) {
        lode_log(LODE_LOG_ERROR, "%s", err);
        return EXIT_RUNTIME;
    }
    return 0;
}

int cli_run_start_mining(cli_run *run, const cli_options *o, lode_mining_config *config)
{
    char err[512];
    double *temps;
    int health = cli_health_config(o, &config->miner, &temps);
    if (health == 0)
        run->mining = lode_mining_start(config, err, sizeof err);
    free(temps);
    if (health != 0)
        return health;
    if (run->mining == NULL) {
        lode_log(LODE_LOG_ERROR, "%s", err);
        return EXIT_RUNTIME;
    }
    run->miner = lode_mining_miner(run->mining);
    return 0;
}

int cli_run_start_api(cli_run *run, const cli_options *o)
{
    run->api_source.miner = run->miner;
    return cli_api_start(o, &run->api_source, &run->api) != 0 ? EXIT_RUNTIME : 0;
}

int cli_run_wait_ready(cli_run *run)
{
    int ready = cli_wait_ready(run->miner);
    if (ready == 0)
        lode_log(LODE_LOG_ERROR, "no device passed its self-test");
    return ready > 0 ? 0 : ready == 0 ? EXIT_RUNTIME : EXIT_INTERRUPTED;
}

int cli_run_start_report(cli_run *run, lode_algo algo, double interval)
{
    if (cli_rate_report_init(&run->report, run->miner, algo, interval) != 0) {
        lode_log(LODE_LOG_ERROR, "out of memory");
        return EXIT_RUNTIME;
    }
    run->report_started = true;
    return 0;
}

void cli_run_running(cli_run *run, const char *what, const char *unit, cli_status_extra extra, void *user)
{
    cli_background_running();
    run->notify = cli_notify_ready(run->miner, what, unit, extra, user);
}

void cli_run_stopping(cli_run *run)
{
    cli_notify_stop(run->notify);
    run->notify = NULL;
}

void cli_run_end(cli_run *run)
{
    cli_run_stopping(run);
    if (run->report_started)
        cli_rate_report_free(&run->report);
    run->report_started = false;
    cli_api_stop(run->api); /* before what it reads goes */
    run->api = NULL;
    if (run->mining != NULL)
        lode_mining_free(run->mining);
    else if (run->miner != NULL)
        lode_dispatcher_free(run->miner);
    run->mining = NULL;
    run->miner = NULL;
    free(run->devices);
    run->devices = NULL;
}
