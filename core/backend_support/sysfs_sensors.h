/* Sensors from Linux sysfs, shared by the backends that need them: the
 * amdgpu hwmon files of an AMD GPU (found from its PCI bus id; the OpenCL
 * backend) and a CPU package's temperature (hwmon coretemp or k10temp),
 * power (RAPL energy counters) and clock (cpufreq, else /proc/cpuinfo; the
 * CPU backend).
 *
 * Every path read is an absolute /sys or /proc path under one root, "/"
 * unless the test hook LODE_TEST_SYSFS_ROOT (core/base/settings.h) names a
 * fake tree. A file that is missing, unreadable, empty, not a regular file
 * or not a number leaves its reading absent: never zero, never an error. */
#ifndef LODE_SYSFS_SENSORS_H
#define LODE_SYSFS_SENSORS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/base/backend.h"

/* The integer in the file at root + path (leading/trailing blanks allowed);
 * false if there is none. */
bool lode_sysfs_read_int(const char *path, long long *out);
/* The file's first line without its newline; false if unreadable or empty. */
bool lode_sysfs_read_line(const char *path, char *out, size_t len);

/* The amdgpu hwmon of the GPU at bus_id ("0000:03:00.0", or "03:00.0"
 * meaning domain 0): temperature (the hotter of edge and junction), power
 * (power1_average, else power1_input), fan (pwm1 of pwm1_max, else
 * fan1_input of fan1_max), sclk (freq1_input) and mclk (freq2_input).
 * Returns 0 when the device has an amdgpu hwmon (out may still be empty),
 * -1 otherwise (out untouched). */
int lode_sysfs_amdgpu_read(const char *bus_id, lode_sensors *out);

/* CPU package `package` (its physical id): temperature from coretemp's
 * "Package id N" (or k10temp's Tdie, else Tctl, the N-th k10temp), package
 * power from intel-rapl:N's energy_uj over the time since this package's
 * previous reading (absent on the first one and where energy_uj is not
 * readable, as it is root-only on most kernels), the mean current clock of
 * its CPUs. Thread-safe. */
void lode_sysfs_cpu_read(unsigned package, lode_sensors *out);
/* The same at a given monotonic time in seconds (tests drive the clock). */
void lode_sysfs_cpu_read_at(unsigned package, double now, lode_sensors *out);

#endif
