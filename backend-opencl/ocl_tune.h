/* Launch parameters of the OpenCL kernels: the on-disk cache of tuned
 * values and the LODE_OPENCL_TUNE environment override (the OpenCL
 * counterpart of backend-cuda/cuda_tune.h).
 *
 * The cache is $XDG_CACHE_HOME/lode/opencl-tune.json (else
 * ~/.cache/lode/opencl-tune.json): a JSON array, one object per line, keyed
 * by device, platform, algorithm and variant, and valid for one driver
 * version and lode version; a stale entry is tuned again and replaced.
 *
 * LODE_OPENCL_TUNE:
 *   off        no autotuning, no cache: built-in defaults
 *   retune     ignore the cache and tune again
 *   sha256d:ls=256,npt=32;scrypt:ls=64,il=2,batch=8192
 *              fixed parameters for those algorithms (ls: work-group size;
 *              npt: sha256d nonces per work-item; il: scrypt hashes per four
 *              work-items; batch: scrypt hashes per kernel launch) */
#ifndef LODE_OCL_TUNE_H
#define LODE_OCL_TUNE_H

typedef struct ocl_tune_params {
    unsigned local_size; /* work-group size of the main kernel */
    unsigned per_item;   /* sha256d: nonces per work-item; scrypt: hashes per quad (1, 2) */
    unsigned batch;      /* scrypt: hash slots per romix launch; 0 = all allocated */
    double rate;         /* measured hashes per second, 0 if unknown */
} ocl_tune_params;

typedef struct ocl_tune_key {
    const char *device, *platform, *driver, *algo, *variant;
} ocl_tune_key;

/* 0 and *out if the cache holds a current entry for key, else -1. */
int ocl_tune_load(const ocl_tune_key *key, ocl_tune_params *out);
/* Replaces key's entry; 0, or -1 with a warning (the tuning is then only
 * lost, not wrong). */
int ocl_tune_store(const ocl_tune_key *key, const ocl_tune_params *p);

typedef enum ocl_tune_mode {
    OCL_TUNE_AUTO,   /* the cache, else tune */
    OCL_TUNE_OFF,    /* defaults only */
    OCL_TUNE_RETUNE, /* tune even when cached */
    OCL_TUNE_FIXED,  /* the environment gave this algorithm's parameters */
} ocl_tune_mode;

/* Reads LODE_OPENCL_TUNE for algo; with OCL_TUNE_FIXED the named fields of
 * *p are overwritten. Malformed text is logged once and ignored. */
ocl_tune_mode ocl_tune_env(const char *algo, ocl_tune_params *p);

#endif
