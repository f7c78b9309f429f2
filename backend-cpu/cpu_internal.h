/* The CPU backend's private parts: the handle cpu_backend.c opens and the
 * table of per-algorithm operations it opens it through, one
 * cpu_<name>_ops per algorithm of core/base/algos.def (cpu_<name>.c). */
#ifndef LODE_BACKEND_CPU_INTERNAL_H
#define LODE_BACKEND_CPU_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend-cpu/cpu_features.h"
#include "core/base/backend.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Whether this CPU has every CPU_FEATURE_* bit of needs. */
static inline bool cpu_usable(uint32_t needs) { return (cpu_features_detect() & needs) == needs; }

/* One algorithm on the CPU. The handle's state is the algorithm's own
 * (lode_device.state), made by open and freed by close. */
typedef struct cpu_algo_ops {
    /* The variants (SIMD paths) this CPU runs, best first. */
    int (*variants)(const char **names, int max);
    /* Whether variant (NULL: the best) runs here; asked before the worker
     * binds to its core. */
    bool (*supports)(const char *variant);
    /* Makes the state for variant, after the bind, so scratch memory lands
     * on the core's node. LODE_OK or LODE_ERR_NO_MEMORY. */
    int (*open)(const char *variant, void **state);
    void (*close)(void *state);
    int (*set_work)(void *state, const lode_work *work);
    int (*scan)(void *state, const lode_range *r, lode_hits *hits, uint64_t *done, const atomic_int *abort);
    /* A first guess of the indices a scan of target_ms takes. */
    uint64_t (*preferred_chunk)(double target_ms);
} cpu_algo_ops;

#define LODE_ALGO(ID, name, ...) extern const cpu_algo_ops cpu_##name##_ops;
#include "core/base/algos.def"
#undef LODE_ALGO

/* Calls of a path between two looks at the abort flag: well under a
 * millisecond of work on any path. */
#define POLL_CALLS 1024u

#endif
