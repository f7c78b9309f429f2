/* Mersenne trial factoring on an OpenCL device (kernels/tf.cl): the same
 * pipeline as the CUDA backend's (backend-cuda/tf_kernels.h): a global bitmap
 * pass for the large sieve primes, local-memory segments for the small and
 * middle primes with a work-group prefix sum into a candidate list, and a
 * 3 x 32-bit Montgomery exponentiation that reads the list's length on the
 * device. One engine per worker handle; two launches in flight. */
#ifndef LODE_OCL_TF_H
#define LODE_OCL_TF_H

#include <stdbool.h>
#include <stdint.h>

#include "backend-opencl/ocl_api.h"
#include "backend-opencl/ocl_devices.h"
#include "core/backend_support/kernel_params.h" /* LODE_TF_FOUND_CAP, LODE_TF_TABLE_* */
#include "core/base/work.h"

typedef struct ocl_tf ocl_tf;

/* One sub-launch's factors: found[0 .. nfound) are offsets from n0. */
typedef struct ocl_tf_part {
    uint64_t n0;
    uint32_t count, nfound;
    const uint32_t *found;
} ocl_tf_part;

/* Sieve primes: 1 000 000 on GPUs, 20 000 on CPU devices (PoCL: the
 * per-prime work dominates there); sub-launches of 2^27 indices on GPUs,
 * 2^20 on CPUs (LODE_TF_SIEVE_PRIMES and LODE_TF_LAUNCH_BITS override both).
 * A launch is a batch of up to LODE_TF_BATCH sub-launches (32 on GPUs, 16 on
 * CPUs), queued alternately on two queues so one's sieve runs beside the
 * other's exponentiation, with one read-back and one wait for all. Each
 * sub-launch is two kernels (sieve, exponentiation); work-groups of the
 * exponentiation's own (one per compute unit, after the candidates' groups)
 * prepare the next sub-launch on its queue (the large primes' bits), so
 * only the first sub-launch on each queue has a preparation of its own. The
 * sieve tables are built on the device (kernel tf_tables) from the prime
 * list uploaded once; LODE_TF_CHECK_TABLES=1 compares them with the host's
 * (tf_sieve_tables_build) and fails the job on any difference. Returns a
 * lode status. */
int ocl_tf_new(const ocl_dev_desc *desc, cl_context ctx, cl_command_queue queue, const char *label,
               ocl_tf **out);
void ocl_tf_free(ocl_tf *f);
/* Most indices of one launch: the batch times 2^launch bits. */
uint64_t ocl_tf_launch_size(const ocl_tf *f);
unsigned ocl_tf_depth(const ocl_tf *f);
/* Installs a class (the prime tables are rebuilt when the exponent changes). */
int ocl_tf_set_job(ocl_tf *f, const lode_tf_job *job);
/* Queues the indices [n0, n0 + count), 1 <= count <= the launch size. */
int ocl_tf_enqueue(ocl_tf *f, uint64_t n0, uint64_t count);
/* Whether the oldest queued launch has finished, without waiting: 1 yes,
 * 0 not yet, else a lode status. */
int ocl_tf_ready(ocl_tf *f);
/* Waits for the oldest queued launch: its sub-launches in parts[0 ..
 * *nparts) (valid until the enqueue after next); *overflow when any had
 * more than LODE_TF_FOUND_CAP factors. */
int ocl_tf_finish(ocl_tf *f, uint64_t *n0, uint64_t *count, const ocl_tf_part **parts, unsigned *nparts,
                  bool *overflow);
/* Waits for every queued launch and drops their results. */
void ocl_tf_discard(ocl_tf *f);

#endif
