#include "core/tf/progress_line.h"

#include <math.h>

#include "core/base/energy.h"
#include "core/base/sensors.h"
#include "core/base/text.h"
#include "core/dispatch/registry.h"
#include "core/tf/class_driver.h"

/* "; cuda:0 64C 487W 1980MHz; cuda:1 ..." for the devices with sensors. */
static void append_sensors(lode_dispatcher *m, char *out, size_t len, size_t *used)
{
    for (size_t i = 0; i < lode_dispatcher_device_count(m); i++) {
        const lode_device_ref *ref = lode_dispatcher_device(m, i);
        lode_device_stats st;
        char text[160];
        lode_dispatcher_device_stats(m, i, &st); /* the monitor's last reading */
        lode_sensors_format(&st.sensors, text, sizeof text);
        if (text[0] != '\0')
            lode_appendf(out, len, used, "; %s%s", ref->id, text);
    }
}

double lode_tf_run_watts(lode_dispatcher *m, double *joules)
{
    double watts = 0, sum_j = 0;
    for (size_t i = 0; i < lode_dispatcher_device_count(m); i++) {
        lode_device_stats st;
        lode_dispatcher_device_stats(m, i, &st);
        if (st.hashes == 0)
            continue; /* a device that tested nothing adds no credit and is not metered */
        if (!st.energy.measured)
            return NAN; /* a part of the run's power unknown: no figure rather than a wrong one */
        watts += lode_energy_mean_watts(&st.energy);
        sum_j += st.energy.joules;
    }
    if (joules != NULL)
        *joules = sum_j;
    return watts > 0 ? watts : NAN;
}

void lode_tf_progress_line(const lode_tf_progress_figures *f, lode_dispatcher *m, char *out, size_t len)
{
    const lode_tf_assignment *a = f->assignment;
    char rate[48], eta[48];
    lode_format_rate(f->candidates_per_s, "candidates/s", rate, sizeof rate);
    lode_tf_format_eta(f->eta_s, eta, sizeof eta);
    size_t used = 0;
    out[0] = '\0';
    lode_appendf(out, len, &used, "M%u %u-%u class %4u: %5.1f%%, %s, %.2f GHz-days/day, ETA %s", a->p,
                 a->bit_min, a->bit_max, f->class_index, f->percent, rate, f->ghz_days_per_day, eta);
    if (m == NULL)
        return;
    char energy[48];
    lode_energy_format_value(lode_energy_credit_per_kwh(f->ghz_days_per_day, lode_tf_run_watts(m, NULL)),
                             "GHz-days/kWh", energy, sizeof energy);
    if (energy[0] != '\0')
        lode_appendf(out, len, &used, ", %s", energy);
    append_sensors(m, out, len, &used);
}
