/* Momentum on an OpenCL device (kernels/momentum.cl): the same methods as
 * CUDA's "bucket" (the default) and "filter" variants. One engine per
 * worker handle. */
#ifndef LODE_OCL_MOMENTUM_H
#define LODE_OCL_MOMENTUM_H

#include <stdbool.h>

#include "backend-opencl/ocl_api.h"
#include "backend-opencl/ocl_devices.h"
#include "core/backend_support/momentum_common.h"

typedef struct ocl_momentum ocl_momentum;

/* Builds the program and allocates the buffers in ctx: the bucket method
 * where bucket is set and the device has the local memory for it
 * (ocl_momentum_bucket_fits), else the filter (first table: 2^27 counters,
 * fewer where memory or the largest buffer is short;
 * LODE_MOMENTUM_TABLE_BITS overrides). Returns a lode status. */
int ocl_momentum_new(const ocl_dev_desc *desc, cl_context ctx, cl_command_queue queue,
                     const char *label, bool bucket, ocl_momentum **out);
/* Whether the bucket method runs on this device (41 KB of local memory). */
bool ocl_momentum_bucket_fits(const ocl_dev_desc *desc);
void ocl_momentum_free(ocl_momentum *m);
/* The most sweeps one launch takes (LODE_MOMENTUM_BATCH's bound). */
#define OCL_MOMENTUM_BATCH_MAX 64u
/* Sweeps per launch: LODE_MOMENTUM_BATCH (8) for the bucket method, whose
 * launch is its sweeps queued back to back with one read-back and one wait;
 * 1 for the filter. */
unsigned ocl_momentum_batch(const ocl_momentum *m);
/* Queues a launch of n sweeps (1 <= n <= ocl_momentum_batch()), sweep j of
 * job c[j]; up to ocl_momentum_depth() launches may be queued before the
 * first is finished (2 for the bucket method, whose launches run while the
 * host pairs the last one's; the filter runs in ocl_momentum_sweep). */
int ocl_momentum_enqueue(ocl_momentum *m, const momentum_consts *c, unsigned n);
unsigned ocl_momentum_depth(const ocl_momentum *m);
/* Whether the oldest queued launch has finished, without waiting: 1 yes,
 * 0 not yet (the filter runs later: always 1), else a lode status. */
int ocl_momentum_ready(ocl_momentum *m);
/* Waits for the oldest queued launch; *n: its sweeps, whose results
 * ocl_momentum_sweep then gives (until the next enqueue). */
int ocl_momentum_finish(ocl_momentum *m, unsigned *n);
/* Sweep j of the launch last finished: *list (valid until the next call or
 * the enqueue after next) holds every colliding nonce among its candidates.
 * A bucket sweep that overflowed is redone here with the filter. */
int ocl_momentum_sweep(ocl_momentum *m, unsigned j, momentum_entry **list, size_t *count);
/* Waits for every queued launch and drops their results. */
void ocl_momentum_discard(ocl_momentum *m);

#endif
