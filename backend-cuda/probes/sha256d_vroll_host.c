/* The host half of sha256d_vroll_probe (sha256d_vroll.cu): the shipped
 * per-job precomputation and the exact digest, in C (their headers are C11
 * and name the host's round constants as the kernels name theirs). */
#include <stdint.h>

#include "core/backend_support/kernel_params.h"
#include "core/backend_support/sha256d_job.h"
#include "core/backend_support/sha256d_lanes.h"

void vroll_host_params(const uint8_t header[80], uint32_t target_top, uint32_t params[LODE_SHA256D_PARAM_WORDS]);
uint32_t vroll_host_top(const uint8_t header[80], uint32_t nonce);

/* The kernel parameter block of an 80-byte header, as cuda_backend.c fills it. */
void vroll_host_params(const uint8_t header[80], uint32_t target_top, uint32_t params[LODE_SHA256D_PARAM_WORDS])
{
    sha256d_job job;
    sha256d_job_init(&job, header, target_top);
    sha256d_prepare_lanes(&job);
    lode_sha256d_params_fill(params, job.midstate, job.pre, target_top);
}

/* The digest's most significant 32 bits (what byteswap(H7) is compared with). */
uint32_t vroll_host_top(const uint8_t header[80], uint32_t nonce)
{
    sha256d_job job;
    sha256d_job_init(&job, header, 0);
    uint8_t digest[32];
    sha256d_digest(&job, nonce, digest);
    return (uint32_t)digest[31] << 24 | (uint32_t)digest[30] << 16 | (uint32_t)digest[29] << 8 | digest[28];
}
