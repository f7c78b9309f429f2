/* A device's energy over a run, from its sensor readings, and the work
 * done over the same span, so that energy per unit of work never divides
 * one interval's joules by another's work.
 *
 * Joules come from the difference of the device's energy counter
 * (LODE_SENSOR_ENERGY: NVML's total energy, RAPL's energy_uj, a hwmon
 * energy input) where it has one, which integrates every instant the
 * board drew power; else from its power readings, integrated over their
 * times (trapezoids). A reading without what the meter uses is skipped:
 * the next one spans both intervals. A counter that goes back (a driver
 * reload) or jumps past LODE_ENERGY_MAX_W restarts from there, the
 * interval taken at the power reading when there is one. */
#ifndef LODE_BASE_ENERGY_H
#define LODE_BASE_ENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/algo.h"
#include "core/base/backend.h"

/* More than any one board or package draws: a counter step above it is a
 * reset or a wild reading, not energy. */
#define LODE_ENERGY_MAX_W 5000.0

typedef struct lode_energy_meter {
    bool started;          /* a first usable reading was taken */
    bool from_counter;     /* joules from the energy counter, else integrated power */
    double first_at, last_at; /* the readings' times, seconds (lode_clock_s) */
    double last_counter_j; /* the counter at last_at */
    double last_power_w;   /* the power at last_at (integration), < 0 none */
    double joules;         /* between first_at and last_at */
    uint64_t first_work, last_work; /* the work counter at first_at and last_at */
} lode_energy_meter;

/* Takes a reading s made at time now (seconds), with work the device's work
 * counter (hashes, sweeps, candidates) at that time. */
void lode_energy_meter_add(lode_energy_meter *m, const lode_sensors *s, double now, uint64_t work);

/* What a meter has measured: joules and work over span_s seconds;
 * measured is false (and the rest 0) before two usable readings. */
typedef struct lode_energy_reading {
    bool measured;
    bool from_counter;
    double joules, span_s;
    uint64_t work;
} lode_energy_reading;

lode_energy_reading lode_energy_meter_read(const lode_energy_meter *m);

/* Energy per unit of work as users of each algorithm quote it, e.g.
 * "53.2 J/GH" (SHA-256d), "67.1 J/MH" (scrypt), "1.41 J/sweep" (Momentum);
 * for trial factoring the GHz-days of credit per kWh, from the run's
 * GHz-days/day (ghz_days_per_day, < 0 unknown): "672 GHz-days/kWh". ""
 * when nothing is measured or the work is 0. */
void lode_energy_format(lode_algo algo, const lode_energy_reading *r, double ghz_days_per_day, char *out,
                        size_t len);

/* Trial factoring's figure: GHz-days of credit per kWh at ghz_days_per_day
 * and watts (NAN when either is unknown or not above 0). */
double lode_energy_credit_per_kwh(double ghz_days_per_day, double watts);

/* The mean power over a reading's span, NAN when not measured. */
double lode_energy_mean_watts(const lode_energy_reading *r);

/* Three significant digits and the unit, no e-notation ("53.2 J/GH",
 * "0.00141 J/sweep"); "" for a value that is not finite. */
void lode_energy_format_value(double v, const char *unit, char *out, size_t len);

/* The figure lode_energy_format writes, as a number, and its unit ("J/GH",
 * "GHz-days/kWh"); NAN when there is none. */
double lode_energy_per_unit(lode_algo algo, const lode_energy_reading *r, double ghz_days_per_day,
                            const char **unit);

#endif
