/* Launch parameters of the CUDA kernels: the on-disk cache of tuned values
 * and the LODE_CUDA_TUNE environment override.
 *
 * The cache is $XDG_CACHE_HOME/lode/cuda-tune.json (else
 * ~/.cache/lode/cuda-tune.json): a JSON array with one object per line,
 * keyed by device name, driver version, lode version, algorithm and
 * variant. An entry whose driver or lode version differs is stale: the
 * device is tuned again and the entry replaced.
 *
 * LODE_CUDA_TUNE:
 *   off                          no autotuning, no cache: built-in defaults
 *   retune                       ignore the cache and tune again
 *   sha256d:tpb=256,npt=32;scrypt:tpb=128,waves=2
 *                                fixed parameters for those algorithms
 *                                (keys: tpb, npt, waves; others untouched) */
#ifndef LODE_CUDA_TUNE_H
#define LODE_CUDA_TUNE_H

#include <stdbool.h>

typedef struct cuda_tune_params {
    unsigned threads_per_block;
    unsigned nonces_per_thread; /* sha256d: nonces per thread and launch;
                                   scrypt: hashes per group of 4 threads (1, 2) */
    unsigned waves;             /* scrypt: batch = waves x resident hash slots */
    double rate;                /* measured hashes per second, 0 if unknown */
} cuda_tune_params;

typedef struct cuda_tune_key {
    char device[128];
    char driver[64];
    const char *algo;
    const char *variant;
} cuda_tune_key;

/* Fills key->driver from the kernel module's version string, or else the
 * CUDA driver API version. */
void cuda_tune_driver_version(char *out, unsigned len);

/* 0 and *out if the cache holds a current entry for key, else -1. */
int cuda_tune_load(const cuda_tune_key *key, cuda_tune_params *out);
/* Replaces key's entry (current or stale) in the cache. 0, or -1 with the
 * reason logged as a warning (the tuning is then only lost, not wrong). */
int cuda_tune_store(const cuda_tune_key *key, const cuda_tune_params *p);

typedef enum cuda_tune_mode {
    CUDA_TUNE_AUTO,   /* cache, else tune */
    CUDA_TUNE_OFF,    /* defaults only */
    CUDA_TUNE_RETUNE, /* tune even when cached */
    CUDA_TUNE_FIXED,  /* the environment gave parameters for this algorithm */
} cuda_tune_mode;

/* Reads LODE_CUDA_TUNE for algo; with CUDA_TUNE_FIXED the named fields of
 * *p are overwritten. Malformed text is logged once and ignored. */
cuda_tune_mode cuda_tune_env(const char *algo, cuda_tune_params *p);

#endif
