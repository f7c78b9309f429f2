/* Hashrate lines and the end-of-run summary, cpuminer style: one line per
 * device and a total. Used by --benchmark and by mining. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/sensors.h"
#include "core/base/text.h"
#include "core/cli/report.h"
#include "core/dispatch/dispatch.h"
#include "core/dispatch/registry.h"


const char *cli_rate_unit(lode_algo algo)
{
    /* A Momentum index is a whole 2^26-nonce birthday search. */
    return lode_algo_get(algo)->kind == LODE_WORK_COLLISION_SEARCH ? "sweeps/s" : "H/s";
}

int cli_rate_report_init(cli_rate_report *r, lode_dispatcher *m, lode_algo algo, double interval)
{
    *r = (cli_rate_report){.miner = m, .devices = lode_dispatcher_device_count(m), .algo = algo,
                           .unit = cli_rate_unit(algo), .interval = interval};
    r->last = calloc(r->devices ? r->devices : 1, sizeof *r->last);
    if (r->last == NULL)
        return -1;
    r->start = r->last_time = lode_clock_s();
    return 0;
}

void cli_device_sensors_text(const lode_device_ref *ref, char *out, size_t len)
{
    lode_sensors s;
    lode_device_read_sensors(ref, &s);
    lode_sensors_format(&s, out, len);
}

void cli_rate_report_tick(cli_rate_report *r)
{
    double t = lode_clock_s();
    if (t - r->last_time < r->interval)
        return;
    char rate[32];
    uint64_t delta_sum = 0;
    for (size_t d = 0; d < r->devices; d++) {
        lode_device_stats st;
        lode_dispatcher_device_stats(r->miner, d, &st);
        lode_format_rate((double)(st.hashes - r->last[d]) / (t - r->last_time), r->unit, rate, sizeof rate);
        const lode_device_ref *ref = lode_dispatcher_device(r->miner, d);
        char sensors[160], energy[48];
        lode_sensors_format(&st.sensors, sensors, sizeof sensors); /* the monitor's reading */
        lode_energy_format(r->algo, &st.energy, -1, energy, sizeof energy);
        lode_log(LODE_LOG_INFO, "%s: %s%s%s%s", ref->id, rate, sensors, energy[0] ? " " : "", energy);
        delta_sum += st.hashes - r->last[d];
        r->last[d] = st.hashes;
    }
    lode_format_rate((double)delta_sum / (t - r->last_time), r->unit, rate, sizeof rate);
    lode_log(LODE_LOG_INFO, "total: %s", rate);
    r->last_time = t;
}

/* "; 53.2 J/GH, 640 J over 12.0 s (counter)" or "" when not measured. */
static void summary_energy(lode_algo algo, const lode_energy_reading *e, char *out, size_t len)
{
    char per_unit[48];
    lode_energy_format(algo, e, -1, per_unit, sizeof per_unit);
    if (per_unit[0] != '\0')
        snprintf(out, len, "; %s, %.0f J over %.1f s (%s)", per_unit, e->joules, e->span_s,
                 e->from_counter ? "energy counter" : "power readings");
}

/* How long the summary waits for the re-check of hits already back. */
#define SUMMARY_VERIFY_WAIT_MS 30000

double cli_rate_report_stop_and_summarise(cli_rate_report *r, uint64_t *hw_errors)
{
    const double stop = lode_clock_s();
    lode_dispatcher_request_stop(r->miner);
    /* Aborted scans come back within a launch; one that does not is left
     * (lode_dispatcher_free names it). */
    bool counted = lode_dispatcher_wait_scans_counted(r->miner, LODE_STOP_GRACE_MS) != 0;
    /* The hits of the scans that came back may still wait for their CPU
     * re-check (a loaded CPU, a low target): that queue always drains, and
     * the summary's hits must be all of them. */
    if (!counted && lode_dispatcher_wait_verified(r->miner, SUMMARY_VERIFY_WAIT_MS))
        counted = lode_dispatcher_wait_scans_counted(r->miner, 0) != 0;
    if (!counted)
        lode_log(LODE_LOG_WARN, "a scan in flight did not return within %d s; the summary counts without it",
                 LODE_STOP_GRACE_MS / 1000);
    /* Every hash counted was hashed by now (a launch in flight at the stop
     * ends after it): the rate is never above what was hashed, at most a
     * launch's time below. Without the stuck scan, the run ends at the stop. */
    double elapsed = (counted ? lode_clock_s() : stop) - r->start;
    if (elapsed <= 0)
        elapsed = 1e-9;
    char rate[32];
    uint64_t sum = 0;
    *hw_errors = 0;
    lode_log(LODE_LOG_NOTICE, "summary over %.1f s:", elapsed);
    for (size_t d = 0; d < r->devices; d++) {
        lode_device_stats st;
        lode_dispatcher_device_stats(r->miner, d, &st);
        lode_format_rate((double)st.hashes / elapsed, r->unit, rate, sizeof rate);
        const lode_device_ref *ref = lode_dispatcher_device(r->miner, d);
        char sensors[160], stopped[240] = "", energy[96] = "";
        lode_sensors_format(&st.sensors, sensors, sizeof sensors); /* the monitor's reading */
        summary_energy(r->algo, &st.energy, energy, sizeof energy);
        /* A device that stopped says so, and why: on a rig of several GPUs
         * the summary is where a user sees which one dropped out. */
        if (st.state == LODE_DEVICE_FAILED || st.state == LODE_DEVICE_QUARANTINED)
            snprintf(stopped, sizeof stopped, "; %s%s%s", lode_device_state_name(st.state),
                     st.last_error[0] ? ": " : "", st.last_error);
        /* Nonce scans: the hits found (checked, and dropped unchecked when
         * their job had ended) beside what the hashes counted should have
         * given at the same target, so hashes never searched would show. */
        char found[160];
        if (st.hits_expected > 0)
            snprintf(found, sizeof found, "%llu hits + %llu dropped (job ended) = %llu of %.*f expected",
                     (unsigned long long)st.hits, (unsigned long long)st.hits_dropped,
                     (unsigned long long)(st.hits + st.hits_dropped), st.hits_expected < 1 ? 3 : 1, st.hits_expected);
        else
            snprintf(found, sizeof found, "%llu hits", (unsigned long long)st.hits);
        lode_log(LODE_LOG_NOTICE, "summary: %s: %s, %llu hashes, %s, %llu hardware errors%s%s%s%s", ref->id,
                 rate, (unsigned long long)st.hashes, found, (unsigned long long)st.hw_errors,
                 sensors[0] ? ";" : "", sensors, energy, stopped);
        sum += st.hashes;
        *hw_errors += st.hw_errors;
    }
    lode_format_rate((double)sum / elapsed, r->unit, rate, sizeof rate);
    lode_log(LODE_LOG_NOTICE, "summary: total: %s", rate);
    return (double)sum / elapsed;
}

void cli_rate_report_free(cli_rate_report *r)
{
    free(r->last);
    r->last = NULL;
}
