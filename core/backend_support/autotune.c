/* The GPU backends' autotuner (autotune.h). */
#include "core/backend_support/autotune.h"

#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/status.h"

/* The override's values, if it gives this algorithm's and the spec takes
 * them; values is left alone otherwise. */
static lode_tune_mode read_override(const lode_autotune_spec *spec, const char *algo, double *values)
{
    double env[LODE_AUTOTUNE_MAX_VALUES], fixed[LODE_AUTOTUNE_MAX_VALUES];
    memcpy(fixed, values, spec->n_values * sizeof *values);
    if (spec->env_from_values != NULL)
        spec->env_from_values(values, env);
    else
        memcpy(env, values, spec->n_env * sizeof *values);
    lode_tune_mode mode = lode_tune_env(spec->setting, algo, spec->env_names, env, spec->n_env);
    if (mode != LODE_TUNE_FIXED)
        return mode;
    if (spec->env_to_values != NULL)
        spec->env_to_values(env, fixed);
    else
        memcpy(fixed, env, spec->n_env * sizeof *env);
    if (!spec->values_ok(fixed)) {
        pthread_once(spec->warn_once, spec->warn_env);
        return LODE_TUNE_AUTO;
    }
    memcpy(values, fixed, spec->n_values * sizeof *values);
    return LODE_TUNE_FIXED;
}

lode_tune_mode lode_autotune_load(const lode_autotune_spec *spec, const lode_tune_key *key, double *values,
                                  bool *tuned)
{
    lode_tune_mode mode = read_override(spec, key->algo, values);
    *tuned = mode == LODE_TUNE_FIXED;
    if (mode != LODE_TUNE_AUTO)
        return mode;
    double cached[LODE_AUTOTUNE_MAX_VALUES];
    if (lode_tune_load(key, spec->cache_names, cached, spec->n_values) == 0 && spec->values_ok(cached) &&
        (!spec->cache_needs_rate || cached[spec->n_values - 1] > 0)) {
        memcpy(values, cached, spec->n_values * sizeof *values);
        *tuned = true;
    }
    return mode;
}

int lode_autotune_best(void *ctx, size_t n, lode_autotune_trial trial, double budget_s, size_t *best,
                       double *best_rate)
{
    *best = 0;
    *best_rate = 0;
    int rc = LODE_OK;
    const double t0 = lode_clock_s();
    for (size_t i = 0; i < n && rc == LODE_OK; i++) {
        const double spent = lode_clock_s() - t0;
        if (i > 0 && spent > budget_s) {
            lode_log(LODE_LOG_WARN, "tuning stopped after %zu of %zu shapes: the trials took %.0f s (a slow device)",
                     i, n, spent);
            break;
        }
        double rate = 0;
        rc = trial(ctx, i, &rate);
        if (rc == LODE_OK && rate > *best_rate) {
            *best = i;
            *best_rate = rate;
        }
    }
    return rc;
}

void lode_autotune_store(const lode_autotune_spec *spec, const lode_tune_key *key, lode_tune_mode mode,
                         const double *values)
{
    if (mode != LODE_TUNE_OFF)
        lode_tune_store(key, spec->cache_names, values, spec->n_values);
}
