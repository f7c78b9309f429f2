/* What the CUDA kernels of every nonce-scanning algorithm share with the
 * host side: the hit buffer. Each algorithm's kernel file (<name>.cu) has
 * its launch wrappers in <name>_kernels.h.
 *
 * Everything a kernel needs per job travels as a kernel parameter (constant
 * bank on the device), so installing a job costs no copy and no sync. */
#ifndef LODE_CUDA_KERNELS_H
#define LODE_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/backend_support/kernel_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hits of one launch, laid out as LODE_HITS_* (kernel_params.h) says. */
typedef struct cuda_hits {
    uint32_t count;
    uint32_t pad[LODE_HITS_NONCE0 - 1];
    uint32_t nonce[LODE_HITS_CAP];
} cuda_hits;
#ifndef __cplusplus
_Static_assert(offsetof(cuda_hits, nonce) == LODE_HITS_NONCE0 * sizeof(uint32_t), "hit buffer layout");
#endif

#ifdef __cplusplus
}
#endif

#endif
