/* Momentum on an OpenCL device (kernels/momentum.cl): the same atomic
 * filter as CUDA's "filter" variant. One engine per worker handle. */
#ifndef LODE_OCL_MOMENTUM_H
#define LODE_OCL_MOMENTUM_H

#include "backend-cpu/momentum_cpu.h"
#include "backend-opencl/ocl_api.h"
#include "backend-opencl/ocl_devices.h"

typedef struct ocl_momentum ocl_momentum;

/* Builds the program and allocates the buffers in ctx (the first table:
 * 2^30 counters, fewer where memory or the largest buffer is short;
 * LODE_MOMENTUM_TABLE_BITS overrides). Returns a lode status. */
int ocl_momentum_new(const ocl_dev_desc *desc, cl_context ctx, cl_command_queue queue,
                     const char *label, ocl_momentum **out);
void ocl_momentum_free(ocl_momentum *m);
/* One sweep of job c; *list (valid until the next sweep) holds every
 * colliding nonce among its candidates. */
int ocl_momentum_sweep(ocl_momentum *m, const momentum_consts *c, momentum_entry **list, size_t *count);

#endif
