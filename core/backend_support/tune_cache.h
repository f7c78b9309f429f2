/* Tuned launch parameters of the GPU backends: one on-disk cache for every
 * backend and the LODE_<BACKEND>_TUNE environment override.
 *
 * The cache is $XDG_CACHE_HOME/lode/tune.json (else ~/.cache/lode/tune.json):
 * a JSON array of entries
 *   {"backend": "cuda", "device": "...", "platform": "...", "algo": "sha256d",
 *    "variant": "...", "driver": "...", "lode": "0.1.0",
 *    "params": {"threads_per_block": 256, ...}}
 * An entry's slot is (backend, device, platform, algo, variant); it is
 * current only for the driver and lode version it names, and a stale one is
 * replaced by the next store of its slot. A file that is not such JSON (or is
 * implausibly large) is warned about and treated as empty.
 *
 * The environment variable (LODE_CUDA_TUNE, LODE_OPENCL_TUNE) reads:
 *   off                          no autotuning, no cache: built-in defaults
 *   retune                       ignore the cache and tune again
 *   sha256d:k=N,k=N;scrypt:k=N   fixed parameters for those algorithms, with
 *                                the backend's short keys; N a positive integer */
#ifndef LODE_BACKEND_SUPPORT_TUNE_CACHE_H
#define LODE_BACKEND_SUPPORT_TUNE_CACHE_H

#include "core/base/settings.h"

#include <stddef.h>

typedef struct lode_tune_key {
    const char *backend;  /* "cuda", "opencl" */
    const char *device;   /* device name */
    const char *platform; /* OpenCL platform; NULL where the backend has none */
    const char *driver;   /* driver version: an entry for another one is stale */
    const char *algo;
    const char *variant;
} lode_tune_key;

/* Loads key's current entry (driver and lode version equal): fills values[i]
 * for names[i]; 0 only if every name is present as a finite number, else -1
 * and values untouched. */
int lode_tune_load(const lode_tune_key *key, const char *const names[], double values[], size_t n);

/* Replaces the entry of key's slot (current or stale) with these values. The
 * file is written under a temporary name and renamed over the cache, so a
 * crash never leaves a torn file. 0, or -1 with a logged warning (the tuning
 * is then only lost, not wrong). */
int lode_tune_store(const lode_tune_key *key, const char *const names[], const double values[], size_t n);

typedef enum lode_tune_mode {
    LODE_TUNE_AUTO,   /* the cache, else tune */
    LODE_TUNE_OFF,    /* defaults only, no cache */
    LODE_TUNE_RETUNE, /* tune even when cached */
    LODE_TUNE_FIXED,  /* the environment gave this algorithm's parameters */
} lode_tune_mode;

/* Reads the environment variable setting (LODE_SETTING_CUDA_TUNE or
 * LODE_SETTING_OPENCL_TUNE) for algo. With LODE_TUNE_FIXED,
 * values[i] is overwritten for each names[i] (short keys) the text gives and
 * the others are untouched. Malformed text (an unknown key, a value not in
 * 1..2^24) is logged once per variable and read as AUTO. */
lode_tune_mode lode_tune_env(lode_setting_id setting, const char *algo, const char *const names[], double values[],
                             size_t n);

#endif
