/* SHA-256d nonce search: the shared kernels (core/backend_support/kernels/
 * sha256d.h), the plain one and the version-rolled one, each in two
 * instances, additions as IMADs (variant "imad", the faster on sm_90: the
 * integer pipe is left the SHF and LOP3 work) or as IADD3s ("iadd3"). */
#include "backend-cuda/sha256d_kernels.h"
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

/* The version-rolled search keeps the nonce's whole schedule (48 words)
 * for every version. Bounded at 256 threads a block and three blocks an
 * SM, ptxas fits it in 80 registers without spills (24 warps an SM):
 * faster than a bound of 512 threads, where it takes 128 registers (16
 * warps), or than (128, 5) at 96 registers (docs/PERFORMANCE.md has the
 * figures). */
#define VERSIONS_MAX_TPB 256
template <bool Fma>
__global__ void __launch_bounds__(VERSIONS_MAX_TPB, 3)
sha256d_search_versions(const __grid_constant__ cuda_sha256d_versions_params p, uint32_t start, uint32_t count,
                        cuda_hits *hits)
{
    sha256d_scan_versions(p.w, start, count, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x,
                          reinterpret_cast<u32 *>(hits), Fma);
}

/* Blocks for count nonces, about nonces_per_thread a thread; 0 = a count the
 * kernels refuse. The grid-stride offset must not wrap past 2^32 (it would
 * never end): count plus the stride stays below it for launches of 2^31 at
 * most (the backends' SHA256D_MAX_LAUNCH). */
unsigned grid_blocks(uint32_t count, unsigned threads_per_block, unsigned nonces_per_thread)
{
    if (count > (1u << 31))
        return 0;
    uint64_t threads = ((uint64_t)count + nonces_per_thread - 1) / nonces_per_thread;
    uint64_t blocks = (threads + threads_per_block - 1) / threads_per_block;
    return blocks == 0 ? 1 : blocks > 0x7fffffffu ? 0x7fffffffu : (unsigned)blocks;
}

} // namespace

extern "C" cudaError_t cuda_sha256d_launch(const cuda_sha256d_params *p, uint32_t start, uint32_t count,
                                           unsigned threads_per_block, unsigned nonces_per_thread, int fma_adds,
                                           cuda_hits *hits, cudaStream_t stream)
{
    const unsigned blocks = grid_blocks(count, threads_per_block, nonces_per_thread);
    if (blocks == 0)
        return cudaErrorInvalidValue;
    if (fma_adds)
        sha256d_search<true><<<blocks, threads_per_block, 0, stream>>>(*p, start, count, hits);
    else
        sha256d_search<false><<<blocks, threads_per_block, 0, stream>>>(*p, start, count, hits);
    return cudaGetLastError();
}

extern "C" cudaError_t cuda_sha256d_versions_launch(const cuda_sha256d_versions_params *p, uint32_t start,
                                                    uint32_t count, unsigned threads_per_block,
                                                    unsigned nonces_per_thread, int fma_adds, cuda_hits *hits,
                                                    cudaStream_t stream)
{
    if (threads_per_block > VERSIONS_MAX_TPB)
        threads_per_block = VERSIONS_MAX_TPB; /* the shape tuned on the plain search may be wider */
    const unsigned blocks = grid_blocks(count, threads_per_block, nonces_per_thread);
    if (blocks == 0)
        return cudaErrorInvalidValue;
    if (fma_adds)
        sha256d_search_versions<true><<<blocks, threads_per_block, 0, stream>>>(*p, start, count, hits);
    else
        sha256d_search_versions<false><<<blocks, threads_per_block, 0, stream>>>(*p, start, count, hits);
    return cudaGetLastError();
}
