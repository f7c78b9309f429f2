/* The C interface of scrypt.cu: scrypt's parameter block, romix shapes
 * and launch wrapper (cuda_scrypt.c is the host side). */
#ifndef LODE_CUDA_SCRYPT_KERNELS_H
#define LODE_CUDA_SCRYPT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "backend-cuda/cuda_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* scrypt(N=1024, r=1, p=1) of the 80-byte header: words LODE_SCRYPT_P_*. */
typedef struct cuda_scrypt_params {
    uint32_t w[LODE_SCRYPT_PARAM_WORDS];
} cuda_scrypt_params;

/* Per-slot device memory besides the scratchpad (state between kernels). */
#define CUDA_SCRYPT_STATE_BYTES (LODE_SCRYPT_STATE_WORDS * 4u)

/* How romix runs (see scrypt.cu):
 *   quad: four threads per hash, Salsa20/8 transposed by warp shuffles;
 *         `interleave` hashes per group of four (1, 2); `gap` is the lookup
 *         gap (1, 2, 4: every gap-th entry stored, the others recomputed).
 *   thread: a hash per thread, the scratchpad staged through shared memory;
 *         `gap` 0 stores every entry, 2, 4 or 8 leave out every gap-th one. */
typedef enum { CUDA_SCRYPT_QUAD, CUDA_SCRYPT_THREAD } cuda_scrypt_layout;
typedef struct cuda_scrypt_shape {
    cuda_scrypt_layout layout;
    unsigned gap;
    unsigned interleave; /* quad only */
    unsigned threads_per_block;
} cuda_scrypt_shape;

/* Scratchpad bytes of one hash slot. */
size_t cuda_scrypt_pad_bytes(const cuda_scrypt_shape *shape);
/* Hash slots of one block; 0 if the shape is not supported. */
unsigned cuda_scrypt_hashes_per_block(const cuda_scrypt_shape *shape);
/* Hash slots resident at once on the current device; 0 on error. */
unsigned cuda_scrypt_resident_slots(const cuda_scrypt_shape *shape);

/* Hashes nonces start .. start+count-1 with `slots` hash slots of scratch
 * and state (slots >= count rounded up to the hashes of a block), and
 * appends every nonce whose hash is <= target to hits. */
cudaError_t cuda_scrypt_launch(const cuda_scrypt_params *p, uint32_t start, uint32_t count,
                               unsigned slots, const cuda_scrypt_shape *shape, void *state,
                               void *scratch, cuda_hits *hits, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
