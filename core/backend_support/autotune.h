/* The GPU backends' autotuner, written once: where a handle's launch
 * parameters come from (the LODE_<BACKEND>_TUNE override, the tune cache of
 * tune_cache.h, the backend's defaults) and the measurement that picks the
 * fastest of a list of candidate shapes.
 *
 * A backend sees its parameters as an array of doubles, one per cache name
 * (the last is the measured rate, hashes per second); its spec says what
 * the names are, which of them the environment's short keys set, and which
 * values its kernels accept. Checking doubles before any cast keeps a
 * hostile cache or a typo away from a launch.
 *
 * Use: lode_autotune_load() when a handle opens; later, if the returned
 * mode asks for it (lode_autotune_wanted), lode_autotune_best() over the
 * backend's candidates with its timing callback, then lode_autotune_store()
 * with the winner. */
#ifndef LODE_BACKEND_SUPPORT_AUTOTUNE_H
#define LODE_BACKEND_SUPPORT_AUTOTUNE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/backend_support/tune_cache.h"
#include "core/base/settings.h"

/* At most this many values per backend (cache names, environment keys). */
#define LODE_AUTOTUNE_MAX_VALUES 8

typedef struct lode_autotune_spec {
    lode_setting_id setting;         /* LODE_SETTING_CUDA_TUNE, LODE_SETTING_OPENCL_TUNE */
    const char *const *cache_names;  /* the cache's names of the values; the last is the rate */
    size_t n_values;
    const char *const *env_names;    /* the environment's short keys */
    size_t n_env;
    /* The environment's values from the parameters' (before the override
     * is read) and back; NULL: env_names name the first n_env values, in
     * order. */
    void (*env_from_values)(const double *values, double *env);
    void (*env_to_values)(const double *env, double *values);
    bool (*values_ok)(const double *values);
    /* Logs why an override is ignored; called once per process. */
    void (*warn_env)(void);
    pthread_once_t *warn_once;
    /* A cached entry without a measured rate is not taken. */
    bool cache_needs_rate;
} lode_autotune_spec;

/* Fills values (the backend's defaults on entry) from the override or the
 * cache for key. Returns the mode; *tuned tells whether values now hold
 * user-given or measured parameters (nothing left to measure). An override
 * the spec rejects is warned about and read as LODE_TUNE_AUTO. */
lode_tune_mode lode_autotune_load(const lode_autotune_spec *spec, const lode_tune_key *key, double *values,
                                  bool *tuned);

/* Whether a handle in this state should measure. */
static inline bool lode_autotune_wanted(lode_tune_mode mode, bool tuned)
{
    return !tuned && mode != LODE_TUNE_OFF;
}

/* Times candidate `index`: sets *rate (hashes per second; 0 when the
 * candidate was skipped) and returns LODE_OK, or an error that ends the
 * measurement. */
typedef int (*lode_autotune_trial)(void *ctx, size_t index, double *rate);

/* The trials' time a tuning may take: a GPU's whole tuning is a few
 * seconds; a device too slow for trials sized to GPUs (a simulator, a
 * small integrated GPU) keeps the best shape timed by then instead of
 * tuning for hours. */
#define LODE_AUTOTUNE_BUDGET_S 20.0

/* Runs trial over candidates 0 .. n-1 until one fails or the trials have
 * taken budget_s (the first always runs), and keeps the first of the
 * fastest: *best its index and *best_rate its rate (0: none ran). Returns
 * the first error, or LODE_OK. */
int lode_autotune_best(void *ctx, size_t n, lode_autotune_trial trial, double budget_s, size_t *best,
                       double *best_rate);

/* Stores the winner's values for key unless tuning is off. */
void lode_autotune_store(const lode_autotune_spec *spec, const lode_tune_key *key, lode_tune_mode mode,
                         const double *values);

#endif
