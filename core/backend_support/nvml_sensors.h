/* NVIDIA GPU sensors through NVML, shared by the backends that drive NVIDIA
 * GPUs (CUDA, and OpenCL on NVIDIA's driver): no backend calls another.
 *
 * NVML is loaded at run time (dlopen of libnvidia-ml.so.1, or the file the
 * test hook LODE_TEST_NVML_LIB names) and initialised once, thread-safely,
 * on first use; lode does not link it, so a machine without the NVIDIA
 * driver runs as before. A GPU is found by its PCI bus id. A library,
 * symbol, device or reading that is missing leaves the reading absent:
 * never zero, never an error for the miner. */
#ifndef LODE_NVML_SENSORS_H
#define LODE_NVML_SENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/backend.h"

/* Loads and initialises NVML (once). 0, or -1 with the reason in why. */
int lode_nvml_load(char *why, size_t why_len);

/* The readings of the GPU at bus_id ("0000:41:00.0", or "41:00.0" for
 * domain 0): temperature, power (NVML's mW as W), fan, SM and memory
 * clocks, throttle reasons (lode_nvml_throttle_text), the energy counter
 * (NVML's millijoules since the driver loaded, as J). 0 when NVML knows the
 * GPU (out holds what it could read), -1 otherwise (out untouched). */
int lode_nvml_read(const char *bus_id, lode_sensors *out);

/* Sets info->uuid ("GPU-8f3c...") and info->nvml_index, NVML's index of the
 * GPU at info->bus_id: the `UUID` and `gpu` labels of NVIDIA's DCGM
 * exporter, so lode's metrics join its series. info->uuid = "" when NVML
 * does not know the GPU. */
void lode_nvml_identify(lode_device_info *info);

/* NVML's clock throttle (clock event) reason bits as short names joined by
 * ',' ("thermal,power"), "none" for 0; bits lode does not know are
 * "other". */
void lode_nvml_throttle_text(unsigned long long reasons, char *out, size_t len);

/* For `lode -V`: "NVML 12.575.51, driver 575.51.03", or why NVML is not
 * loaded. */
void lode_nvml_describe(char *out, size_t len);

#endif
