/* The backend vtable: how the core drives a kind of device.
 *
 * A backend (cpu, cuda, opencl) is one `const lode_backend_ops` built with
 * designated initializers. The rest of the program reaches it only through
 * the wrappers in core/dispatch/registry.h, which supply the fallbacks for
 * optional operations and check the calls' contract once for every
 * backend, so a backend need not:
 * - set_work gets a work of the handle's algorithm, and for trial factoring
 *   a job that lode_tf_job_valid accepts (core/base/tf_ref.h);
 * - scan gets count >= 1, and for the nonce algorithms (nonce scan,
 *   collision search) a range within 32 bits: start <= UINT32_MAX and
 *   start + count <= 2^32.
 * A call that breaks it returns LODE_ERR_INVALID without reaching the
 * backend.
 *
 * Threading contract: the core opens one lode_device handle per worker
 * thread and makes every call on that handle (set_work, scan, close) from
 * that same thread, so a handle needs no locking and a backend may bind the
 * thread, allocate node-local memory or make a GPU context current in open.
 * probe, device_count, device_info and variants may be called from any
 * thread. */
#ifndef LODE_CORE_BACKEND_H
#define LODE_CORE_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/algo.h"
#include "core/base/work.h"

typedef struct lode_device lode_device; /* opaque, owned by the backend */

typedef struct lode_device_info {
    char name[128];        /* "AMD EPYC 9B14", "NVIDIA H100 80GB HBM3" */
    char bus_id[32];       /* PCI bus id "0000:41:00.0" for GPUs ("41:00.0" when the
                              domain is unknown); "" otherwise. The registry hides a
                              device whose bus id an earlier backend lists. */
    unsigned workers;      /* worker threads used by default (CPU: physical cores) */
    unsigned max_workers;  /* most worker threads the device can use */
    uint64_t memory_bytes; /* device (or NUMA-node) memory, 0 if unknown */
    uint32_t algo_mask;    /* bit (1u << algo) for every algorithm it runs */
    bool on_host_cpu;      /* computes on the host's cores (CPU backend, OpenCL on a CPU) */
    char details[256];     /* what a problem report needs beyond the above, one line
                              (OpenCL: architecture, wavefront, local memory, driver); "" if nothing */
    char uuid[96];         /* NVIDIA: NVML's "GPU-8f3c..."; "" otherwise */
    unsigned nvml_index;   /* NVIDIA: NVML's index of the GPU; meaningful when uuid[0] */
} lode_device_info;

typedef struct lode_open_params {
    lode_algo algo;
    unsigned worker;     /* 0 .. workers-1: which worker of the device this is */
    const char *variant; /* an implementation from variants(); NULL = the best */
    const char *id;      /* the device as the user names it ("opencl:0"), for
                            messages; NULL = unknown (the backend's index then) */
} lode_open_params;

#define LODE_WHY_LEN 256

/* A device's sensor readings. A field means something only when its bit is
 * in `present`: a sensor the device lacks is absent, never zero. */
enum {
    LODE_SENSOR_TEMP = 1u << 0,      /* temp_c: the hottest die sensor */
    LODE_SENSOR_POWER = 1u << 1,     /* power_w: board (GPU) or package (CPU) power */
    LODE_SENSOR_FAN = 1u << 2,       /* fan_percent */
    LODE_SENSOR_SM_CLOCK = 1u << 3,  /* sm_clock_mhz: GPU core / CPU core clock */
    LODE_SENSOR_MEM_CLOCK = 1u << 4, /* mem_clock_mhz */
    LODE_SENSOR_THROTTLE = 1u << 5,  /* throttle: why the clocks are held down */
    LODE_SENSOR_ENERGY = 1u << 6,    /* energy_j: the device's energy counter */
};

typedef struct lode_sensors {
    uint32_t present; /* LODE_SENSOR_* bits */
    double temp_c;
    double power_w;
    double fan_percent;
    double sm_clock_mhz;
    double mem_clock_mhz;
    char throttle[64]; /* "none", or reasons joined by ',': "thermal,power" */
    /* Joules from an origin the source chooses (NVML: the driver's load;
     * RAPL: lode's first reading), never decreasing but across a reset:
     * only differences mean something (core/base/energy.h). */
    double energy_j;
} lode_sensors;

typedef struct lode_backend_ops {
    const char *name; /* "cpu": the prefix in device ids such as cpu:0 */

    /* Is the driver/runtime usable? 0, or non-zero with a reason in why
     * (for --list-devices). Never fatal, never prints. */
    int (*probe)(char why[LODE_WHY_LEN]);
    int (*device_count)(void);
    int (*device_info)(int index, lode_device_info *out);

    /* Opens a worker's handle; see the threading contract above. */
    int (*open)(int index, const lode_open_params *params, lode_device **out);
    void (*close)(lode_device *dev);

    /* Installs a job: per-job precomputation (midstate, constants) goes here. */
    int (*set_work)(lode_device *dev, const lode_work *work);

    /* Scans one range of the installed job, blocking, and appends every hit
     * to hits. Polls *abort and returns early once it is non-zero. Sets *done
     * to the number of indices fully scanned from range->start on (all hits
     * among them reported), which is range->count unless aborted. */
    int (*scan)(lode_device *dev, const lode_range *range, lode_hits *hits, uint64_t *done,
                const atomic_int *abort);

    /* ---- optional: NULL (false) means the core's fallback ---- */

    /* Its SHA-256d scans take a job of LODE_VERSIONS_MAX versions in one
     * pass and label each hit with its version (core/base/work.h). Other
     * version counts, and backends without it, get the core's fallback:
     * the range scanned once per version. */
    bool rolls_versions;

    /* Lists implementation variants of an algorithm for tests and tuning
     * ("portable", "avx2", ...), best first. Returns how many were written
     * (at most max). Fallback: one unnamed default variant. */
    int (*variants)(int index, lode_algo algo, const char **names, int max);
    /* Indices a scan should cover to run about target_ms; the dispatcher
     * starts its chunk sizing there. Fallback: measured from the first scans. */
    uint64_t (*preferred_chunk)(lode_device *dev, double target_ms);
    /* Called once per handle after its self-test: tune launch parameters
     * towards target_ms per scan, or load a cached tuning. A failure is
     * logged and the defaults stay. Fallback: no tuning. */
    int (*tune)(lode_device *dev, double target_ms);
    /* Reads the device's sensors (any thread; cheap enough to call once a
     * second). Fills what the device has and sets its bits in present.
     * Fallback: no sensors (present = 0). */
    int (*read_sensors)(int index, lode_sensors *out);
    /* For `lode -V`: what this backend found at run time (runtime and
     * driver versions, platforms, the paths it would use, the libraries it
     * loaded), as lines "  key: value\n" into buf (len bytes, always
     * terminated). Any thread; never fails, never prints. Fallback:
     * nothing. */
    void (*describe)(char *buf, size_t len);
} lode_backend_ops;

#endif
