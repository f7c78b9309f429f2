#include "core/base/energy.h"

#include <math.h>
#include <stdio.h>

static void start(lode_energy_meter *m, const lode_sensors *s, double now, uint64_t work)
{
    *m = (lode_energy_meter){.started = true, .first_at = now, .last_at = now, .last_power_w = -1,
                             .first_work = work, .last_work = work};
    m->from_counter = (s->present & LODE_SENSOR_ENERGY) != 0;
    if (m->from_counter)
        m->last_counter_j = s->energy_j;
    if (s->present & LODE_SENSOR_POWER)
        m->last_power_w = s->power_w;
}

/* The joules of the interval dt ending with reading s, or NAN when s lacks
 * what the meter uses. */
static double interval_joules(lode_energy_meter *m, const lode_sensors *s, double dt)
{
    const bool has_power = (s->present & LODE_SENSOR_POWER) && isfinite(s->power_w) && s->power_w >= 0;
    if (m->from_counter) {
        if (!(s->present & LODE_SENSOR_ENERGY) || !isfinite(s->energy_j))
            return NAN;
        double step = s->energy_j - m->last_counter_j;
        m->last_counter_j = s->energy_j;
        if (step >= 0 && step <= LODE_ENERGY_MAX_W * dt)
            return step;
        /* A reset or a wild step: this interval at its power, else nothing. */
        return has_power ? s->power_w * dt : 0;
    }
    if (!has_power)
        return NAN;
    double j = m->last_power_w >= 0 ? 0.5 * (m->last_power_w + s->power_w) * dt : s->power_w * dt;
    m->last_power_w = s->power_w;
    return j;
}

void lode_energy_meter_add(lode_energy_meter *m, const lode_sensors *s, double now, uint64_t work)
{
    if (!m->started) {
        if (s->present & (LODE_SENSOR_ENERGY | LODE_SENSOR_POWER))
            start(m, s, now, work);
        return;
    }
    const double dt = now - m->last_at;
    if (!(dt > 0) || work < m->last_work)
        return;
    /* A device whose counter appears later (a driver that answers late)
     * keeps integrating its power: two sources would not add up. */
    double j = interval_joules(m, s, dt);
    if (isnan(j))
        return;
    m->joules += j;
    m->last_at = now;
    m->last_work = work;
}

lode_energy_reading lode_energy_meter_read(const lode_energy_meter *m)
{
    lode_energy_reading r = {0};
    if (!m->started || !(m->last_at > m->first_at))
        return r;
    r = (lode_energy_reading){.measured = true, .from_counter = m->from_counter, .joules = m->joules,
                              .span_s = m->last_at - m->first_at, .work = m->last_work - m->first_work};
    return r;
}

double lode_energy_credit_per_kwh(double ghz_days_per_day, double watts)
{
    /* A day at `watts` is 24 * watts / 1000 kWh. */
    return ghz_days_per_day > 0 && watts > 0 ? ghz_days_per_day / (24.0 * watts / 1000.0) : NAN;
}

double lode_energy_mean_watts(const lode_energy_reading *r)
{
    return r->measured && r->span_s > 0 ? r->joules / r->span_s : NAN;
}

double lode_energy_per_unit(lode_algo algo, const lode_energy_reading *r, double ghz_days_per_day,
                            const char **unit)
{
    const lode_algo_info *info = lode_algo_get(algo);
    if (unit != NULL)
        *unit = info != NULL ? info->energy_unit : "";
    if (info == NULL || !r->measured || !(r->joules > 0))
        return NAN;
    if (info->energy_work_per_unit == 0)
        return lode_energy_credit_per_kwh(ghz_days_per_day, lode_energy_mean_watts(r));
    return r->work > 0 ? r->joules / ((double)r->work / info->energy_work_per_unit) : NAN;
}

void lode_energy_format_value(double v, const char *unit, char *out, size_t len)
{
    if (len == 0)
        return;
    out[0] = '\0';
    if (!isfinite(v))
        return;
    const double a = fabs(v);
    int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : a >= 0.1 ? 3 : a >= 0.01 ? 4 : a >= 0.001 ? 5 : 8;
    snprintf(out, len, "%.*f %s", decimals, v, unit);
}

void lode_energy_format(lode_algo algo, const lode_energy_reading *r, double ghz_days_per_day, char *out,
                        size_t len)
{
    const char *unit = "";
    const double v = lode_energy_per_unit(algo, r, ghz_days_per_day, &unit); /* sets unit first */
    lode_energy_format_value(v, unit, out, len);
}
