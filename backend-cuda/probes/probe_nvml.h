/* What the energy probes share: NVML loaded at run time (energy counter,
 * SM clock, power), a monotonic clock, and a CUDA call check that exits.
 * Not part of lode: included by the energy probes beside it only. */
#ifndef LODE_PROBE_NVML_H
#define LODE_PROBE_NVML_H

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

namespace lode_probe {

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_handle_fn)(unsigned, void **);
typedef int (*nvml_energy_fn)(void *, unsigned long long *);
typedef int (*nvml_clock_fn)(void *, int, unsigned *);
typedef int (*nvml_power_fn)(void *, unsigned *);

struct nvml {
    void *dev = nullptr;
    nvml_energy_fn energy = nullptr; /* mJ since driver load */
    nvml_clock_fn clock = nullptr;   /* MHz */
    nvml_power_fn power = nullptr;   /* mW */
    bool open()
    {
        void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
        if (!lib)
            return false;
        auto init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2");
        auto handle = (nvml_handle_fn)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
        energy = (nvml_energy_fn)dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption");
        clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetClockInfo");
        power = (nvml_power_fn)dlsym(lib, "nvmlDeviceGetPowerUsage");
        return init && handle && energy && clock && power && init() == 0 && handle(0, &dev) == 0;
    }
};

inline double now_s()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

} // namespace lode_probe

#define PROBE_CHECK(call)                                                                          \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
