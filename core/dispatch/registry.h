/* The device registry: every compiled-in backend, every device they find,
 * the --devices selection, and the wrappers through which the rest of the
 * program calls a backend (never through the vtable directly).
 *
 * Alias devices: a GPU that two backends drive (CUDA and OpenCL on an
 * NVIDIA GPU) is listed once, by the backend listed first (CUDA): a device
 * whose PCI bus id equals that of a device of an earlier backend is hidden.
 * LODE_<BACKEND>_SHOW_ALL=1 (LODE_OPENCL_SHOW_ALL=1) lists that backend's
 * aliases too. Device ids number the devices a backend shows ("opencl:0"
 * is its first device not hidden); every listing, -d and the dispatcher use
 * these ids, and only the registry maps them to the backend's own index. */
#ifndef LODE_CORE_REGISTRY_H
#define LODE_CORE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/base/backend.h"

/* A device of some backend, as the user names it: "cpu:0", "cuda:1". */
typedef struct lode_device_ref {
    const lode_backend_ops *backend;
    int index;   /* the backend's own device index */
    char id[32]; /* "<backend>:<n>": the number counts the devices listed, aliases left out */
    lode_device_info info;
} lode_device_ref;

/* Backends compiled into this binary, preferred first (GPU before CPU). */
size_t lode_backend_count(void);
/* Name of backend i ("cuda"), the prefix of its device ids; NULL past the end. */
const char *lode_backend_name(size_t i);
/* Is backend i usable? 0, or -1 with the reason in why: its driver or
 * runtime is unusable (the backend's probe), or every device it has is an
 * alias of an earlier backend's device. */
int lode_backend_probe(size_t i, char why[LODE_WHY_LEN]);

/* Every device of every usable backend, aliases left out, in backend order.
 * Returns 0, or -1 if memory ran out; *devices is freed with free(). */
int lode_registry_enumerate(lode_device_ref **devices, size_t *count);

/* Selects devices by a comma-separated list of backend names ("cpu": all
 * its devices) and device ids ("cuda:1"). NULL or "" selects every device
 * that runs algo, except that the cpu backend alone computes on the host's
 * cores (an OpenCL CPU driver would only compete with it; name it to use
 * it). On error returns -1 with one line in err. */
int lode_registry_select(const char *spec, lode_algo algo, lode_device_ref **devices,
                         size_t *count, char *err, size_t err_len);

/* lode_registry_select, except that NULL or "" selects only the devices
 * that run algo off the host's cores (the GPUs: CUDA's, OpenCL's GPU
 * devices) when there are any; *host_left_out (NULL: not wanted) says
 * whether the default would have taken host-CPU devices too (the cpu
 * backend's). With no such device it selects as lode_registry_select.
 * Trial factoring: a CPU thread adds little beside a GPU, and GIMPS users
 * run Prime95 on their cores. */
int lode_registry_select_gpus(const char *spec, lode_algo algo, lode_device_ref **devices, size_t *count,
                              bool *host_left_out, char *err, size_t err_len);

/* The same for every algorithm at once (lode check): a backend name
 * selects all its devices, and NULL or "" every device listed, those on the
 * host's cores included (each implementation is worth checking). */
int lode_registry_select_all(const char *spec, lode_device_ref **devices, size_t *count, char *err,
                             size_t err_len);

/* Name of the device's backend ("opencl"). */
const char *lode_device_backend_name(const lode_device_ref *ref);

/* Implementation variants of algo on the device, best first; a backend
 * without variants() has one unnamed variant, reported as NULL. */
int lode_device_variants(const lode_device_ref *ref, lode_algo algo, const char **names, int max);

/* The device's sensor readings (any thread). A backend without sensors, or
 * a device whose sensors cannot be read, gives present = 0 and LODE_OK;
 * only what is in present may be shown. */
int lode_device_read_sensors(const lode_device_ref *ref, lode_sensors *out);
/* With LODE_TEST_SENSORS=FILE (a test hook, core/base/settings.h) every
 * device's readings come from FILE instead of its backend, read again on
 * each call: one line per device, "<id> temp=85 power=120.5 fan=40 sm=1980
 * mem=2619 throttle=thermal" (lode_sensors_parse, core/base/sensors.h),
 * '#' starts a comment; a device not listed, or no file, has no sensors. */

/* For `lode -V`: what backend i found at run time (lines "  key: value"),
 * "" for a backend that says nothing; buf is always terminated. */
void lode_backend_describe(size_t i, char *buf, size_t len);

/* One worker's open device. Every call of a handle happens on one thread. */
typedef struct lode_handle {
    const lode_device_ref *ref;
    lode_device *dev;
    lode_algo algo;
    /* A version-rolled job the backend cannot hash in one pass (it lacks
     * rolls_versions, or the job has fewer than LODE_VERSIONS_MAX versions):
     * kept here, and each scan installs and scans every version in turn. */
    bool per_version;
    lode_work rolled;
} lode_handle;

int lode_handle_open(lode_handle *h, const lode_device_ref *ref, const lode_open_params *params);
int lode_handle_set_work(lode_handle *h, const lode_work *work);
int lode_handle_scan(lode_handle *h, const lode_range *range, lode_hits *hits, uint64_t *done,
                     const atomic_int *abort);
/* Lets the backend tune its launches (or load its cached tuning) once the
 * handle passed its self-test; a backend without tune() needs none. */
int lode_handle_tune(lode_handle *h, double target_ms);
/* Indices for about target_ms per scan, or 0 if the backend has no idea. */
uint64_t lode_handle_preferred_chunk(lode_handle *h, double target_ms);
void lode_handle_close(lode_handle *h);

/* For tests: the registry uses these backends instead of the compiled-in
 * ones (n of them, preferred first); NULL restores the compiled-in list.
 * Not thread-safe: call it while no other thread uses the registry. */
void lode_registry_use_backends(const lode_backend_ops *const *backends, size_t n);

#endif
