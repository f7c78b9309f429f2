/* The end-of-run summary of `lode tf`, in the words of trial factoring
 * (docs/OPERATIONS.md, "Words"): what the run finished, then per device its
 * rate over the run, the candidates it tested, the proof entries and
 * factors it found, the hardware errors and its last sensor reading. */
#include <math.h>
#include <stdio.h>

#include "core/base/log.h"
#include "core/base/sensors.h"
#include "core/base/text.h"
#include "core/cli/tf_summary.h"
#include "core/dispatch/dispatch.h"
#include "core/dispatch/registry.h"
#include "core/tf/class_driver.h"
#include "core/tf/progress_line.h"

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void cli_tf_summary(lode_dispatcher *m, struct lode_tf_driver *driver, double elapsed)
{
    lode_tf_status st;
    lode_tf_driver_status(driver, &st);
    if (elapsed <= 0)
        elapsed = 1e-9;
    lode_log(LODE_LOG_NOTICE, "summary over %.1f s: %llu %s done, %llu %s found, %llu classes", elapsed,
             (unsigned long long)st.assignments_done, plural(st.assignments_done, "assignment", "assignments"),
             (unsigned long long)st.factors_found, plural(st.factors_found, "factor", "factors"),
             (unsigned long long)st.classes_done_total);
    double joules = 0, watts = lode_tf_run_watts(m, &joules);
    char energy[48];
    /* The last GHz-days/day at the devices' mean power since they began. */
    lode_energy_format_value(lode_energy_credit_per_kwh(st.ghz_days_per_day, watts), "GHz-days/kWh", energy,
                             sizeof energy);
    if (energy[0] != '\0')
        lode_log(LODE_LOG_NOTICE, "summary: energy: %s at %.2f GHz-days/day, %.0f W, %.1f kJ", energy,
                 st.ghz_days_per_day, watts, joules / 1000);
    for (size_t d = 0; d < lode_dispatcher_device_count(m); d++) {
        lode_device_stats ds;
        lode_dispatcher_device_stats(m, d, &ds);
        char rate[48], sensors[160], stopped[240] = "";
        lode_format_rate((double)ds.hashes / elapsed, "candidates/s", rate, sizeof rate);
        lode_sensors_format(&ds.sensors, sensors, sizeof sensors);
        if (ds.state == LODE_DEVICE_FAILED || ds.state == LODE_DEVICE_QUARANTINED)
            snprintf(stopped, sizeof stopped, "; %s%s%s", lode_device_state_name(ds.state),
                     ds.last_error[0] ? ": " : "", ds.last_error);
        uint64_t entries = d < LODE_TF_STATUS_DEVICES ? st.device_proof_entries[d] : 0;
        uint64_t factors = d < LODE_TF_STATUS_DEVICES ? st.device_factors[d] : 0;
        lode_log(LODE_LOG_NOTICE, "summary: %s: %s, %llu candidates, %llu proof entries, %llu %s, %llu hardware "
                 "errors%s%s%s", lode_dispatcher_device(m, d)->id, rate, (unsigned long long)ds.hashes,
                 (unsigned long long)entries, (unsigned long long)factors, plural(factors, "factor", "factors"),
                 (unsigned long long)ds.hw_errors, sensors[0] ? ";" : "", sensors, stopped);
    }
}
