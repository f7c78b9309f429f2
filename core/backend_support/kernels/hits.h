/* Appending a nonce to the hit buffer (layout: core/backend_support/kernel_params.h). */
#ifndef LODE_KERNELS_HITS_H
#define LODE_KERNELS_HITS_H

#include "core/backend_support/kernels/lode_kernel.h"
#include "core/backend_support/kernel_params.h"

/* The hit buffer as the kernels see it. */
#ifdef LODE_KERNEL_CUDA
#define LODE_HITS_BUF u32 *
#else
#define LODE_HITS_BUF volatile __global uint *
#endif

/* A count above LODE_HITS_CAP tells the host some nonces were lost. */
LODE_DEVICE void lode_report_hit(LODE_HITS_BUF hits, u32 nonce)
{
    const u32 i = lode_atomic_inc(&hits[LODE_HITS_COUNT]);
    LODE_HITS_BUF nonces = hits + LODE_HITS_NONCE0; /* the offset folds into the store */
    if (i < LODE_HITS_CAP)
        nonces[i] = nonce;
}

#endif
