/* The hashrate lines and the summary of a run (core/cli/report.c). */
#ifndef LODE_CLI_REPORT_H
#define LODE_CLI_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/algo.h"

struct lode_dispatcher;
struct lode_device_ref;

/* Hashrate lines per device and a total, every interval seconds, and the
 * summary at the end: shared by --benchmark and mining. */
typedef struct cli_rate_report {
    struct lode_dispatcher *miner;
    size_t devices;
    uint64_t *last;
    lode_algo algo;
    const char *unit; /* cli_rate_unit */
    double start, last_time, interval;
} cli_rate_report;
int cli_rate_report_init(cli_rate_report *r, struct lode_dispatcher *m, lode_algo algo, double interval);
/* Logs the rates if interval seconds have passed since the last lines:
 * each device's with its sensors and, where its energy is measured, its
 * energy per unit of work since it began (core/base/energy.h). */
void cli_rate_report_tick(cli_rate_report *r);
/* Stops the dispatcher's workers, waits (LODE_STOP_GRACE_MS at most) until
 * the scans they had in flight are counted and their hits re-checked, and logs the
 * summary: the rate is every hash hashed until the scans came back, not
 * only the whole scans counted before the stop (a GPU's scan of 2^31 nonces
 * is 2.4% of a 12-s benchmark). Returns the total hashrate, and *hw_errors
 * counts. */
double cli_rate_report_stop_and_summarise(cli_rate_report *r, uint64_t *hw_errors);
void cli_rate_report_free(cli_rate_report *r);
/* The device's sensors read now, as the hashrate lines show them: " 64C
 * 487W 1980MHz", "" when it has none (core/base/sensors.h). For
 * --list-devices: while a dispatcher runs, its monitor's reading
 * (lode_device_stats.sensors) is used instead. */
void cli_device_sensors_text(const struct lode_device_ref *ref, char *out, size_t len);
/* "H/s", or "sweeps/s" for Momentum (one index = one 2^26 search). */
const char *cli_rate_unit(lode_algo algo);

#endif
