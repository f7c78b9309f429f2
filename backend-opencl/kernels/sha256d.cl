/* SHA-256d nonce search: the shared kernel (core/backend_support/kernels/
 * sha256d.h) in two instances, as CUDA's: additions as multiply-adds by a
 * run-time one (variant "imad": IMADs on NVIDIA's FMA pipe, which leaves
 * the integer pipe to the rotates and LOP3s) or plain ("iadd3").
 *
 * p: the block LODE_SHA256D_P_* of core/backend_support/kernel_params.h,
 * set by value at each launch. count <= 2^31 per launch (the host's
 * SHA256D_MAX_LAUNCH), so the grid-stride offset cannot wrap. */
#include "core/backend_support/kernels/sha256d.h"

typedef struct sha256d_params {
    uint w[LODE_SHA256D_PARAM_WORDS];
} sha256d_params;

__kernel void sha256d_search_imad(const sha256d_params p, uint start, uint count, volatile __global uint *hits)
{
    sha256d_scan(p.w, start, count, (uint)get_global_id(0), (uint)get_global_size(0), hits, true);
}

__kernel void sha256d_search_iadd3(const sha256d_params p, uint start, uint count, volatile __global uint *hits)
{
    sha256d_scan(p.w, start, count, (uint)get_global_id(0), (uint)get_global_size(0), hits, false);
}

/* The version-rolled search (sha256d_scan_versions): one block per version,
 * LODE_SHA256D_VERSIONS of them, by value as above. */
typedef struct sha256d_versions_params {
    uint w[LODE_SHA256D_VERSIONS * LODE_SHA256D_PARAM_WORDS];
} sha256d_versions_params;

__kernel void sha256d_search_versions_imad(const sha256d_versions_params p, uint start, uint count,
                                           volatile __global uint *hits)
{
    sha256d_scan_versions(p.w, start, count, (uint)get_global_id(0), (uint)get_global_size(0), hits, true);
}

__kernel void sha256d_search_versions_iadd3(const sha256d_versions_params p, uint start, uint count,
                                            volatile __global uint *hits)
{
    sha256d_scan_versions(p.w, start, count, (uint)get_global_id(0), (uint)get_global_size(0), hits, false);
}
