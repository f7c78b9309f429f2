#include "core/backend_support/nvml_sensors.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/base/settings.h"
#include "core/base/text.h"

/* The part of NVML's C ABI lode calls, declared here so that lode builds
 * where nvml.h is not installed (the CUDA toolkit's nvml.h comes with its
 * cuda-nvml-dev part, which not every toolkit has). The values are NVML's
 * documented ABI; where nvml.h is found at configure time
 * (LODE_HAVE_NVML_H) the asserts below compare them with it. The versioned
 * entry points (_v2) are the ones nvml.h's macros select. */
typedef int nvml_return;        /* nvmlReturn_t */
typedef void *nvml_device;      /* nvmlDevice_t: an opaque handle */
enum {
    LNVML_OK = 0,                /* NVML_SUCCESS */
    LNVML_NOT_SUPPORTED = 3,     /* NVML_ERROR_NOT_SUPPORTED */
    LNVML_TEMP_GPU = 0,          /* NVML_TEMPERATURE_GPU */
    LNVML_CLOCK_SM_ID = 1,       /* NVML_CLOCK_SM */
    LNVML_CLOCK_MEM_ID = 2,      /* NVML_CLOCK_MEM */
    LNVML_VERSION_LEN = 80,      /* NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE */
    LNVML_DRIVER_LEN = 80,       /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */
    LNVML_UUID_LEN = 96,         /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
};

/* The clock throttle ("clock event") reasons, nvmlClocksThrottleReason*. */
static const struct {
    unsigned long long bit;
    const char *name;
} reasons[] = {
    {0x1ull, "idle"},         /* GpuIdle */
    {0x2ull, "app-clocks"},   /* ApplicationsClocksSetting */
    {0x4ull, "power"},        /* SwPowerCap */
    {0x8ull, "hw-slowdown"},  /* HwSlowdown */
    {0x10ull, "sync-boost"},  /* SyncBoost */
    {0x20ull, "sw-thermal"},  /* SwThermalSlowdown */
    {0x40ull, "thermal"},     /* HwThermalSlowdown */
    {0x80ull, "power-brake"}, /* HwPowerBrakeSlowdown */
    {0x100ull, "display"},    /* DisplayClockSetting */
};

#ifdef LODE_HAVE_NVML_H
#include <nvml.h>
_Static_assert((int)NVML_SUCCESS == (int)LNVML_OK, "nvml.h: NVML_SUCCESS");
_Static_assert((int)NVML_TEMPERATURE_GPU == (int)LNVML_TEMP_GPU, "nvml.h: NVML_TEMPERATURE_GPU");
_Static_assert((int)NVML_CLOCK_SM == (int)LNVML_CLOCK_SM_ID, "nvml.h: NVML_CLOCK_SM");
_Static_assert((int)NVML_CLOCK_MEM == (int)LNVML_CLOCK_MEM_ID, "nvml.h: NVML_CLOCK_MEM");
_Static_assert((int)NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE == (int)LNVML_VERSION_LEN, "nvml.h: version buffer");
_Static_assert((int)NVML_DEVICE_UUID_V2_BUFFER_SIZE == (int)LNVML_UUID_LEN, "nvml.h: UUID buffer");
_Static_assert(nvmlClocksThrottleReasonGpuIdle == 0x1ull, "nvml.h: GpuIdle");
_Static_assert(nvmlClocksThrottleReasonApplicationsClocksSetting == 0x2ull, "nvml.h: AppClocks");
_Static_assert(nvmlClocksThrottleReasonSwPowerCap == 0x4ull, "nvml.h: SwPowerCap");
_Static_assert(nvmlClocksThrottleReasonHwSlowdown == 0x8ull, "nvml.h: HwSlowdown");
_Static_assert(nvmlClocksThrottleReasonSyncBoost == 0x10ull, "nvml.h: SyncBoost");
_Static_assert(nvmlClocksThrottleReasonSwThermalSlowdown == 0x20ull, "nvml.h: SwThermal");
_Static_assert(nvmlClocksThrottleReasonHwThermalSlowdown == 0x40ull, "nvml.h: HwThermal");
_Static_assert(nvmlClocksThrottleReasonHwPowerBrakeSlowdown == 0x80ull, "nvml.h: PowerBrake");
_Static_assert(nvmlClocksThrottleReasonDisplayClockSetting == 0x100ull, "nvml.h: Display");
_Static_assert(sizeof(nvmlDevice_t) == sizeof(nvml_device), "nvml.h: nvmlDevice_t");
_Static_assert(sizeof(nvmlReturn_t) == sizeof(nvml_return), "nvml.h: nvmlReturn_t");
#endif

/* X(name in lode, symbol, return type, parameters, required) */
#define NVML_FUNCTIONS(X)                                                                          \
    X(init, "nvmlInit_v2", nvml_return, (void), true)                                             \
    X(handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2", nvml_return, (const char *, nvml_device *), true) \
    X(error_string, "nvmlErrorString", const char *, (nvml_return), false)                         \
    X(nvml_version, "nvmlSystemGetNVMLVersion", nvml_return, (char *, unsigned), false)            \
    X(driver_version, "nvmlSystemGetDriverVersion", nvml_return, (char *, unsigned), false)        \
    X(temperature, "nvmlDeviceGetTemperature", nvml_return, (nvml_device, int, unsigned *), false) \
    X(power_usage, "nvmlDeviceGetPowerUsage", nvml_return, (nvml_device, unsigned *), false)       \
    X(fan_speed, "nvmlDeviceGetFanSpeed", nvml_return, (nvml_device, unsigned *), false)           \
    X(clock_info, "nvmlDeviceGetClockInfo", nvml_return, (nvml_device, int, unsigned *), false)    \
    X(throttle_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons", nvml_return,                  \
      (nvml_device, unsigned long long *), false)                                                  \
    X(event_reasons, "nvmlDeviceGetCurrentClocksEventReasons", nvml_return,                        \
      (nvml_device, unsigned long long *), false)                                                  \
    X(total_energy, "nvmlDeviceGetTotalEnergyConsumption", nvml_return, (nvml_device, unsigned long long *), \
      false)                                                                                       \
    X(uuid, "nvmlDeviceGetUUID", nvml_return, (nvml_device, char *, unsigned), false)              \
    X(device_index, "nvmlDeviceGetIndex", nvml_return, (nvml_device, unsigned *), false)

#define NVML_MEMBER(field, symbol, ret, args, required) ret(*field) args;
static struct {
    NVML_FUNCTIONS(NVML_MEMBER)
} nvml;
#undef NVML_MEMBER

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_why[256];

static const char *error_text(nvml_return rc, char buf[24])
{
    const char *s = nvml.error_string != NULL ? nvml.error_string(rc) : NULL;
    if (s != NULL)
        return s;
    snprintf(buf, 24, "NVML error %d", rc);
    return buf;
}

static void load_run(void)
{
    const char *file = lode_setting_text(LODE_SETTING_TEST_NVML_LIB);
    if (file == NULL)
        file = "libnvidia-ml.so.1";
    void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(load_why, sizeof load_why, "not loaded (%s)", e != NULL ? e : file);
        return;
    }
    /* dlsym gives void *; a union turns it into a function pointer without
     * an ISO C warning. */
#define NVML_LOAD(field, symbol, ret, args, required)                                              \
    {                                                                                              \
        union { void *obj; ret(*fn) args; } u_ = {.obj = dlsym(lib, symbol)};                      \
        nvml.field = u_.fn;                                                                        \
        if (nvml.field == NULL && (required)) {                                                    \
            snprintf(load_why, sizeof load_why, "not loaded (%s lacks %s)", file, symbol);         \
            dlclose(lib);                                                                          \
            memset(&nvml, 0, sizeof nvml);                                                         \
            return;                                                                                \
        }                                                                                          \
    }
    NVML_FUNCTIONS(NVML_LOAD)
#undef NVML_LOAD
    nvml_return rc = nvml.init();
    if (rc != LNVML_OK) {
        char buf[24];
        snprintf(load_why, sizeof load_why, "not initialised (nvmlInit: %s)", error_text(rc, buf));
        memset(&nvml, 0, sizeof nvml);
        /* The library stays loaded: strings it returned may still be held. */
        return;
    }
    loaded = true; /* nvmlShutdown is left to the process's end: any thread may read at any time */
}

int lode_nvml_load(char *why, size_t why_len)
{
    pthread_once(&load_once, load_run);
    if (!loaded && why != NULL && why_len > 0)
        snprintf(why, why_len, "%s", load_why);
    return loaded ? 0 : -1;
}

void lode_nvml_throttle_text(unsigned long long mask, char *out, size_t len)
{
    if (len == 0)
        return;
    out[0] = '\0';
    if (mask == 0) {
        snprintf(out, len, "none");
        return;
    }
    size_t used = 0;
    unsigned long long known = 0;
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        known |= reasons[i].bit;
        if (mask & reasons[i].bit)
            lode_appendf(out, len, &used, "%s%s", used ? "," : "", reasons[i].name);
    }
    if (mask & ~known)
        lode_appendf(out, len, &used, "%sother", used ? "," : "");
}

/* The handles found so far, by bus id, and whether each GPU has a fan
 * reading: the monitor reads every GPU every second, and a lookup by bus id
 * and a fan query a GPU answers NOT_SUPPORTED are host time for nothing.
 * A handle stays valid until nvmlShutdown (never called); a lookup that
 * fails is not kept, so a GPU that appears later is found then. */
typedef struct {
    char id[40];
    nvml_device dev;
    bool no_fan;
} known_gpu;
static known_gpu known[64];
static unsigned n_known;
static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;

/* The handle of GPU `id`, or NULL; *no_fan: its fan answered NOT_SUPPORTED. */
static nvml_device handle_of(const char *id, bool *no_fan)
{
    nvml_device dev = NULL;
    bool cached = false;
    *no_fan = false;
    pthread_mutex_lock(&known_lock);
    for (unsigned i = 0; i < n_known && !cached; i++)
        if (strcmp(known[i].id, id) == 0) {
            dev = known[i].dev;
            *no_fan = known[i].no_fan;
            cached = true;
        }
    if (!cached) {
        if (nvml.handle_by_bus_id(id, &dev) != LNVML_OK)
            dev = NULL;
        if (dev != NULL && n_known < sizeof known / sizeof known[0]) {
            known[n_known] = (known_gpu){.dev = dev, .no_fan = false};
            snprintf(known[n_known++].id, sizeof known[0].id, "%s", id);
        }
    }
    pthread_mutex_unlock(&known_lock);
    return dev;
}

static void mark_no_fan(const char *id)
{
    pthread_mutex_lock(&known_lock);
    for (unsigned i = 0; i < n_known; i++)
        if (strcmp(known[i].id, id) == 0)
            known[i].no_fan = true;
    pthread_mutex_unlock(&known_lock);
}

/* NVML takes "domain:bus:device.function"; a bus id without a domain is
 * domain 0. False when NVML is not loaded or bus_id is empty. */
static bool nvml_bus_id(const char *bus_id, char id[40])
{
    if (bus_id == NULL || bus_id[0] == '\0' || lode_nvml_load(NULL, 0) != 0)
        return false;
    const char *first = strchr(bus_id, ':');
    bool has_domain = first != NULL && strchr(first + 1, ':') != NULL;
    snprintf(id, 40, "%s%s", has_domain ? "" : "0000:", bus_id);
    return true;
}

void lode_nvml_identify(lode_device_info *info)
{
    char id[40];
    bool no_fan;
    nvml_device dev;
    info->uuid[0] = '\0';
    if (!nvml_bus_id(info->bus_id, id) || (dev = handle_of(id, &no_fan)) == NULL)
        return;
    char uuid[LNVML_UUID_LEN] = "";
    unsigned index = 0;
    if (nvml.uuid == NULL || nvml.uuid(dev, uuid, sizeof uuid) != LNVML_OK || nvml.device_index == NULL ||
        nvml.device_index(dev, &index) != LNVML_OK)
        return;
    uuid[sizeof uuid - 1] = '\0';
    snprintf(info->uuid, sizeof info->uuid, "%s", uuid);
    info->nvml_index = index;
}

int lode_nvml_read(const char *bus_id, lode_sensors *out)
{
    char id[40];
    if (!nvml_bus_id(bus_id, id))
        return -1;
    bool no_fan = false;
    nvml_device dev = handle_of(id, &no_fan);
    if (dev == NULL)
        return -1;
    lode_sensors s = {0};
    unsigned v;
    if (nvml.temperature != NULL && nvml.temperature(dev, LNVML_TEMP_GPU, &v) == LNVML_OK) {
        s.temp_c = v;
        s.present |= LODE_SENSOR_TEMP;
    }
    if (nvml.power_usage != NULL && nvml.power_usage(dev, &v) == LNVML_OK) {
        s.power_w = v / 1000.0; /* NVML says milliwatts */
        s.present |= LODE_SENSOR_POWER;
    }
    /* A GPU without a fan of its own (H100 SXM, most data-centre boards)
     * answers NVML_ERROR_NOT_SUPPORTED: absent. */
    nvml_return fan = no_fan || nvml.fan_speed == NULL ? LNVML_NOT_SUPPORTED : nvml.fan_speed(dev, &v);
    if (fan == LNVML_OK) {
        s.fan_percent = v;
        s.present |= LODE_SENSOR_FAN;
    } else if (fan == LNVML_NOT_SUPPORTED && !no_fan) {
        mark_no_fan(id);
    }
    if (nvml.clock_info != NULL && nvml.clock_info(dev, LNVML_CLOCK_SM_ID, &v) == LNVML_OK) {
        s.sm_clock_mhz = v;
        s.present |= LODE_SENSOR_SM_CLOCK;
    }
    if (nvml.clock_info != NULL && nvml.clock_info(dev, LNVML_CLOCK_MEM_ID, &v) == LNVML_OK) {
        s.mem_clock_mhz = v;
        s.present |= LODE_SENSOR_MEM_CLOCK;
    }
    /* Millijoules since the driver loaded (Volta and later): one counter
     * that integrates every instant, where sampled power misses peaks. */
    unsigned long long mj;
    if (nvml.total_energy != NULL && nvml.total_energy(dev, &mj) == LNVML_OK) {
        s.energy_j = (double)mj / 1000.0;
        s.present |= LODE_SENSOR_ENERGY;
    }
    unsigned long long mask = 0;
    /* The older name first; drivers that renamed it ("clock events") keep
     * both symbols for now. */
    if ((nvml.throttle_reasons != NULL && nvml.throttle_reasons(dev, &mask) == LNVML_OK) ||
        (nvml.event_reasons != NULL && nvml.event_reasons(dev, &mask) == LNVML_OK)) {
        lode_nvml_throttle_text(mask, s.throttle, sizeof s.throttle);
        s.present |= LODE_SENSOR_THROTTLE;
    }
    *out = s;
    return 0;
}

void lode_nvml_describe(char *out, size_t len)
{
    char why[256];
    if (lode_nvml_load(why, sizeof why) != 0) {
        snprintf(out, len, "NVML %s", why);
        return;
    }
    char version[LNVML_VERSION_LEN] = "", driver[LNVML_DRIVER_LEN] = "";
    if (nvml.nvml_version == NULL || nvml.nvml_version(version, sizeof version) != LNVML_OK)
        snprintf(version, sizeof version, "(version unknown)");
    if (nvml.driver_version == NULL || nvml.driver_version(driver, sizeof driver) != LNVML_OK)
        snprintf(driver, sizeof driver, "unknown");
    version[sizeof version - 1] = driver[sizeof driver - 1] = '\0';
    snprintf(out, len, "NVML %s, driver %s", version, driver);
}
