/* SHA-256d nonce search: the shared kernel (core/backend_support/kernels/
 * sha256d.h) in two instances, additions as IMADs (variant "imad", the
 * faster on sm_90: the integer pipe is left the SHF and LOP3 work) or as
 * IADD3s ("iadd3"). */
#include "backend-cuda/cuda_kernels.h"
#include "core/backend_support/kernels/sha256d.h"

namespace {

/* __grid_constant__: the kernel reads the parameter block where it lies
 * (constant bank 0, an operand of each instruction), through a pointer,
 * without a copy. */
template <bool Fma>
__global__ void __launch_bounds__(1024)
sha256d_search(const __grid_constant__ cuda_sha256d_params p, uint32_t start, uint32_t count, cuda_hits *hits)
{
    sha256d_scan(p.w, start, count, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x,
                 reinterpret_cast<u32 *>(hits), Fma);
}

} // namespace

extern "C" cudaError_t cuda_sha256d_launch(const cuda_sha256d_params *p, uint32_t start, uint32_t count,
                                           unsigned threads_per_block, unsigned nonces_per_thread, int fma_adds,
                                           cuda_hits *hits, cudaStream_t stream)
{
    /* The grid-stride offset must not wrap past 2^32 (it would never end):
     * count plus the stride stays below it for launches of 2^31 at most
     * (the backends' SHA256D_MAX_LAUNCH). */
    if (count > (1u << 31))
        return cudaErrorInvalidValue;
    uint64_t threads = ((uint64_t)count + nonces_per_thread - 1) / nonces_per_thread;
    uint64_t blocks = (threads + threads_per_block - 1) / threads_per_block;
    if (blocks == 0)
        blocks = 1;
    if (blocks > 0x7fffffffu)
        blocks = 0x7fffffffu;
    if (fma_adds)
        sha256d_search<true><<<(unsigned)blocks, threads_per_block, 0, stream>>>(*p, start, count, hits);
    else
        sha256d_search<false><<<(unsigned)blocks, threads_per_block, 0, stream>>>(*p, start, count, hits);
    return cudaGetLastError();
}
