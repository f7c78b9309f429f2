/* The energy meter (core/base/energy.c): joules from an energy counter or
 * from integrated power, the work of the same span, resets and missing
 * readings, and the figures per unit of work, against values worked out
 * by hand from the readings given. */
#include <math.h>
#include <string.h>

#include "core/base/energy.h"
#include "tests/test_util.h"

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1); }

static lode_sensors reading(uint32_t present, double power_w, double energy_j)
{
    return (lode_sensors){.present = present, .power_w = power_w, .energy_j = energy_j};
}

#define BOTH (LODE_SENSOR_POWER | LODE_SENSOR_ENERGY)

static void test_counter(void)
{
    lode_energy_meter m = {0};
    lode_energy_reading r = lode_energy_meter_read(&m);
    CHECK(!r.measured, "nothing before a reading");
    lode_sensors s = reading(LODE_SENSOR_TEMP, 0, 0);
    lode_energy_meter_add(&m, &s, 10.0, 0);
    CHECK(!m.started, "a reading without power or energy does not start the meter");
    s = reading(BOTH, 300, 1000.0);
    lode_energy_meter_add(&m, &s, 10.0, 5000);
    CHECK(!lode_energy_meter_read(&m).measured, "one reading measures nothing");
    s = reading(BOTH, 999 /* the counter wins */, 1400.0);
    lode_energy_meter_add(&m, &s, 11.0, 6000);
    s = reading(LODE_SENSOR_POWER, 350, 0); /* the counter missing: skipped */
    lode_energy_meter_add(&m, &s, 12.0, 7000);
    s = reading(BOTH, 350, 2100.0); /* spans 11..13 s */
    lode_energy_meter_add(&m, &s, 13.0, 8000);
    r = lode_energy_meter_read(&m);
    CHECK(r.measured && r.from_counter && near(r.joules, 1100) && near(r.span_s, 3) && r.work == 3000,
          "counter: %g J over %g s, work %llu", r.joules, r.span_s, (unsigned long long)r.work);
    /* A driver reload: the counter starts again near 0; the interval is
     * taken at its power reading (2 s at 320 W), then counting goes on. */
    s = reading(BOTH, 320, 5.0);
    lode_energy_meter_add(&m, &s, 15.0, 9000);
    s = reading(BOTH, 320, 325.0);
    lode_energy_meter_add(&m, &s, 16.0, 10000);
    r = lode_energy_meter_read(&m);
    CHECK(near(r.joules, 1100 + 640 + 320) && r.work == 5000, "after a reset: %g J", r.joules);
    /* A wild step (more than LODE_ENERGY_MAX_W) without power: nothing. */
    s = reading(LODE_SENSOR_ENERGY, 0, 325.0 + 1e7);
    lode_energy_meter_add(&m, &s, 17.0, 11000);
    r = lode_energy_meter_read(&m);
    CHECK(near(r.joules, 2060) && r.work == 6000 && near(r.span_s, 7), "a wild step adds nothing: %g J", r.joules);
    /* Time that does not advance, and work that goes back, are skipped. */
    lode_energy_meter_add(&m, &s, 17.0, 12000);
    s = reading(LODE_SENSOR_ENERGY, 0, 325.0 + 1e7 + 100);
    lode_energy_meter_add(&m, &s, 18.0, 100);
    r = lode_energy_meter_read(&m);
    CHECK(near(r.joules, 2060) && r.work == 6000, "skipped: %g J, work %llu", r.joules, (unsigned long long)r.work);
}

static void test_power(void)
{
    lode_energy_meter m = {0};
    lode_sensors s = reading(LODE_SENSOR_POWER, 100, 0);
    lode_energy_meter_add(&m, &s, 0.0, 0);
    s = reading(LODE_SENSOR_POWER, 200, 0);
    lode_energy_meter_add(&m, &s, 2.0, 1000); /* (100 + 200) / 2 x 2 s */
    s = reading(0, 0, 0);
    lode_energy_meter_add(&m, &s, 3.0, 1500); /* no power: skipped */
    s = reading(LODE_SENSOR_POWER | LODE_SENSOR_ENERGY, 200, 50.0); /* a counter later: still power */
    lode_energy_meter_add(&m, &s, 4.0, 2000); /* 200 x 2 s */
    lode_energy_reading r = lode_energy_meter_read(&m);
    CHECK(r.measured && !r.from_counter && near(r.joules, 300 + 400) && near(r.span_s, 4) && r.work == 2000,
          "power: %g J over %g s, work %llu", r.joules, r.span_s, (unsigned long long)r.work);
    CHECK(near(lode_energy_mean_watts(&r), 175), "mean %g W", lode_energy_mean_watts(&r));
}

static void test_figures(void)
{
    char text[64];
    /* 480 J for 9e9 hashes: 53.33 J/GH; scrypt 700 J for 1e7 hashes: 70 J/MH. */
    lode_energy_reading r = {.measured = true, .joules = 480, .span_s = 1, .work = 9000000000ull};
    lode_energy_format(LODE_ALGO_SHA256D, &r, -1, text, sizeof text);
    CHECK(strcmp(text, "53.3 J/GH") == 0, "sha256d: '%s'", text);
    r = (lode_energy_reading){.measured = true, .joules = 700, .span_s = 1, .work = 10000000};
    lode_energy_format(LODE_ALGO_SCRYPT, &r, -1, text, sizeof text);
    CHECK(strcmp(text, "70.0 J/MH") == 0, "scrypt: '%s'", text);
    /* Momentum: 563 J for 400 sweeps. */
    r = (lode_energy_reading){.measured = true, .joules = 563, .span_s = 1, .work = 400};
    lode_energy_format(LODE_ALGO_MOMENTUM, &r, -1, text, sizeof text);
    CHECK(strcmp(text, "1.41 J/sweep") == 0, "momentum: '%s'", text);
    /* Trial factoring: 14 400 GHz-days/day at 500 W is 14 400 / 12 kWh a day. */
    r = (lode_energy_reading){.measured = true, .joules = 5000, .span_s = 10, .work = 1};
    lode_energy_format(LODE_ALGO_TF, &r, 14400, text, sizeof text);
    CHECK(strcmp(text, "1200 GHz-days/kWh") == 0, "tf: '%s'", text);
    const char *unit = NULL;
    CHECK(isnan(lode_energy_per_unit(LODE_ALGO_TF, &r, -1, &unit)) && strcmp(unit, "GHz-days/kWh") == 0,
          "tf without a rate: none");
    lode_energy_format(LODE_ALGO_TF, &r, -1, text, sizeof text);
    CHECK(text[0] == '\0', "tf without a rate prints nothing: '%s'", text);
    r.work = 0;
    lode_energy_format(LODE_ALGO_SHA256D, &r, -1, text, sizeof text);
    CHECK(text[0] == '\0', "no work: nothing ('%s')", text);
    r = (lode_energy_reading){0};
    lode_energy_format(LODE_ALGO_SHA256D, &r, -1, text, sizeof text);
    CHECK(text[0] == '\0', "not measured: nothing ('%s')", text);
    lode_energy_format_value(0.0012345, "J/sweep", text, sizeof text);
    CHECK(strcmp(text, "0.00123 J/sweep") == 0, "small: '%s'", text);
    char small[5];
    lode_energy_format_value(53.25, "J/GH", small, sizeof small);
    CHECK(strlen(small) == 4, "cut, never overflowed: '%s'", small);
}

int main(void)
{
    test_counter();
    test_power();
    test_figures();
    return test_summary();
}
