/* A stand-in for libnvidia-ml.so.1, so that CI runs lode's NVML code
 * (core/backend_support/nvml_sensors.c) on a machine without an NVIDIA
 * driver. It knows one GPU, at PCI 0000:41:00.0, with fixed readings, and
 * exports the entry points by NVML's names and its C ABI (int status, an
 * opaque device pointer). Built in variants (tests/CMakeLists.txt):
 *   FAKE_NVML_FULL        every entry point lode looks for; no fan (NOT_SUPPORTED);
 *                         an energy counter that grows 2.5 J a reading
 *   FAKE_NVML_MINIMAL     only init, the bus-id lookup and the temperature
 *   FAKE_NVML_NO_LOOKUP   no nvmlDeviceGetHandleByPciBusId_v2 (a required symbol)
 *   FAKE_NVML_INIT_FAILS  nvmlInit_v2 fails (NVML_ERROR_DRIVER_NOT_LOADED)
 * fake_nvml_init_calls() counts nvmlInit_v2 calls (lode must init once). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define OK 0
#define ERROR_INVALID_ARGUMENT 2
#define ERROR_NOT_SUPPORTED 3
#define ERROR_NOT_FOUND 6
#define ERROR_DRIVER_NOT_LOADED 9

static int the_gpu; /* its address is the handle */
static atomic_int init_calls;

int fake_nvml_init_calls(void);
int fake_nvml_init_calls(void) { return atomic_load(&init_calls); }

int nvmlInit_v2(void);
int nvmlInit_v2(void)
{
    atomic_fetch_add(&init_calls, 1);
#ifdef FAKE_NVML_INIT_FAILS
    return ERROR_DRIVER_NOT_LOADED;
#else
    return OK;
#endif
}

const char *nvmlErrorString(int rc);
const char *nvmlErrorString(int rc)
{
    return rc == ERROR_DRIVER_NOT_LOADED ? "Driver Not Loaded" : "Unknown Error";
}

#ifndef FAKE_NVML_NO_LOOKUP
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **device);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **device)
{
    unsigned domain, bus, dev, fn;
    char extra;
    if (bus_id == NULL || device == NULL)
        return ERROR_INVALID_ARGUMENT;
    /* NVML wants the domain: "41:00.0" alone is not found. */
    if (sscanf(bus_id, "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &extra) != 4)
        return ERROR_NOT_FOUND;
    if (domain != 0 || bus != 0x41 || dev != 0 || fn != 0)
        return ERROR_NOT_FOUND;
    *device = &the_gpu;
    return OK;
}
#endif

int nvmlDeviceGetTemperature(void *device, int sensor, unsigned *out);
int nvmlDeviceGetTemperature(void *device, int sensor, unsigned *out)
{
    if (device != &the_gpu || sensor != 0 /* NVML_TEMPERATURE_GPU */)
        return ERROR_INVALID_ARGUMENT;
    *out = 64;
    return OK;
}

#ifndef FAKE_NVML_MINIMAL
int nvmlSystemGetNVMLVersion(char *out, unsigned len);
int nvmlSystemGetNVMLVersion(char *out, unsigned len)
{
    snprintf(out, len, "12.999.1-fake");
    return OK;
}

int nvmlSystemGetDriverVersion(char *out, unsigned len);
int nvmlSystemGetDriverVersion(char *out, unsigned len)
{
    snprintf(out, len, "999.1-fake");
    return OK;
}

int nvmlDeviceGetPowerUsage(void *device, unsigned *milliwatts);
int nvmlDeviceGetPowerUsage(void *device, unsigned *milliwatts)
{
    if (device != &the_gpu)
        return ERROR_INVALID_ARGUMENT;
    *milliwatts = 487250;
    return OK;
}

/* Like an H100 SXM: no fan of its own. */
int nvmlDeviceGetFanSpeed(void *device, unsigned *percent);
int nvmlDeviceGetFanSpeed(void *device, unsigned *percent)
{
    (void)device;
    (void)percent;
    return ERROR_NOT_SUPPORTED;
}

int nvmlDeviceGetClockInfo(void *device, int type, unsigned *mhz);
int nvmlDeviceGetClockInfo(void *device, int type, unsigned *mhz)
{
    if (device != &the_gpu)
        return ERROR_INVALID_ARGUMENT;
    if (type == 1) /* NVML_CLOCK_SM */
        *mhz = 1980;
    else if (type == 2) /* NVML_CLOCK_MEM */
        *mhz = 2619;
    else
        return ERROR_INVALID_ARGUMENT;
    return OK;
}

/* Millijoules: 1 234 567.89 J at the first reading, 2.5 J more at each. */
static atomic_ullong energy_mj = 1234567890ull;
int nvmlDeviceGetTotalEnergyConsumption(void *device, unsigned long long *mj);
int nvmlDeviceGetTotalEnergyConsumption(void *device, unsigned long long *mj)
{
    if (device != &the_gpu || mj == NULL)
        return ERROR_INVALID_ARGUMENT;
    *mj = atomic_fetch_add(&energy_mj, 2500ull);
    return OK;
}

int nvmlDeviceGetUUID(void *device, char *out, unsigned len);
int nvmlDeviceGetUUID(void *device, char *out, unsigned len)
{
    if (device != &the_gpu || out == NULL)
        return ERROR_INVALID_ARGUMENT;
    snprintf(out, len, "GPU-0b9f3c1e-7d2a-4c55-9e01-5a6b7c8d9e0f");
    return OK;
}

int nvmlDeviceGetIndex(void *device, unsigned *index);
int nvmlDeviceGetIndex(void *device, unsigned *index)
{
    if (device != &the_gpu || index == NULL)
        return ERROR_INVALID_ARGUMENT;
    *index = 3;
    return OK;
}

/* SwPowerCap | HwThermalSlowdown | a bit NVML may add later. */
int nvmlDeviceGetCurrentClocksThrottleReasons(void *device, unsigned long long *reasons);
int nvmlDeviceGetCurrentClocksThrottleReasons(void *device, unsigned long long *reasons)
{
    if (device != &the_gpu)
        return ERROR_INVALID_ARGUMENT;
    *reasons = 0x4ull | 0x40ull | 0x10000ull;
    return OK;
}
#endif
