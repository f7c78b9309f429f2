/* Sensor readings as text: the short form of the hashrate lines
 * ("64C 487W fan 40% 1980MHz"), and the line format of the fake sensor
 * source of the tests (LODE_TEST_SENSORS, core/dispatch/registry.c). */
#ifndef LODE_BASE_SENSORS_H
#define LODE_BASE_SENSORS_H

#include <stddef.h>

#include "core/base/backend.h"

/* What is present, each reading after a space: " 64C 487W fan 40% 1980MHz
 * mem 2619MHz throttle thermal,power". Nothing at all (out = "") when no
 * sensor is present; a throttle of "none" is left out. */
void lode_sensors_format(const lode_sensors *s, char *out, size_t len);

/* Reads "temp=85 power=120.5 fan=40 sm=1980 mem=2619 throttle=thermal
 * energy=5400.5"
 * (any of them, any order, separated by blanks) into s, setting the bit of
 * each one read. A word that is not KEY=VALUE, an unknown key or a value
 * that is not a finite number is skipped and counted; returns that count
 * (0: every word was understood). */
int lode_sensors_parse(const char *text, lode_sensors *s);

#endif
