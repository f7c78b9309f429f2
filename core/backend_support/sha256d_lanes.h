/* What the CPU backend's portable, AVX2 and AVX-512 SHA-256d paths and the
 * GPU kernels share: the padding words of the two blocks they hash, and the
 * layout of job->pre that sha256d_prepare_lanes() fills for all of them (the
 * CPU's SHA-NI path has a layout of its own). The CUDA and OpenCL backends
 * take their kernels' per-job constants from this layout, so this
 * precomputation exists once. */
#ifndef LODE_BACKEND_SUPPORT_SHA256D_LANES_H
#define LODE_BACKEND_SUPPORT_SHA256D_LANES_H

#include "core/backend_support/kernel_params.h"
#include "core/backend_support/sha256d_job.h"

/* Padding of the header's second block (W4..W15) and of the outer hash's
 * block (W8..W15). */
#define HEADER_PAD_W4 0x80000000u
#define HEADER_PAD_W15 640u
#define OUTER_PAD_W8 0x80000000u
#define OUTER_PAD_W15 256u

/* The layout of job->pre (PRE_*) is shared with the GPU kernels, which
 * receive its first PRE_KERNEL_WORDS words: core/backend_support/kernel_params.h. */
_Static_assert(PRE_WORDS <= sizeof(((sha256d_job *)0)->pre) / sizeof(uint32_t),
               "job->pre is too small");

/* Fills job->pre: rounds 0..2 of the second block, the nonce-free parts of
 * the early schedule, and the outer hash's constant first round. */
void sha256d_prepare_lanes(sha256d_job *job);

#endif
