/* The SHA-256d job on the host (sha256d_job.h, sha256d_lanes.h): the
 * portable block function, the per-job midstate and precomputation, and
 * the exact digest that confirms a candidate. */
#include "core/backend_support/sha256d_job.h"
#include "core/backend_support/sha256d_lanes.h"

#include <string.h>

#include "core/backend_support/kernel_params.h"
#include "core/base/status.h"

#include "core/backend_support/sha256_rounds.h"

const uint32_t sha256_iv[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

_Alignas(64) const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

void sha256_compress_portable(uint32_t state[8], const uint8_t block[64])
{
    uint32_t w[64];
    for (unsigned t = 0; t < 16; t++)
        w[t] = load_be32(block + 4 * t);
    for (unsigned t = 16; t < 64; t++)
        w[t] = schedule_word(w, t);

    sha256_vars v = vars_from_state(state);
    for (unsigned t = 0; t < 64; t++)
        sha256_round(&v, sha256_k[t] + w[t]);

    state[0] += v.a;
    state[1] += v.b;
    state[2] += v.c;
    state[3] += v.d;
    state[4] += v.e;
    state[5] += v.f;
    state[6] += v.g;
    state[7] += v.h;
}

void sha256d_job_init(sha256d_job *job, const uint8_t header[80], uint32_t target_top)
{
    memcpy(job->midstate, sha256_iv, sizeof job->midstate);
    sha256_compress_portable(job->midstate, header);
    for (unsigned i = 0; i < 3; i++)
        job->tail[i] = (uint32_t)header[64 + 4 * i] << 24 | (uint32_t)header[65 + 4 * i] << 16 |
                       (uint32_t)header[66 + 4 * i] << 8 | header[67 + 4 * i];
    job->target_top = target_top;
}

void sha256d_digest(const sha256d_job *job, uint32_t nonce, uint8_t digest[32])
{
    /* Second block of the header: bytes 64..79, then padding for 640 bits. */
    uint8_t block[64] = {0};
    for (unsigned i = 0; i < 3; i++)
        store_be32(block + 4 * i, job->tail[i]);
    store_be32(block + 12, byteswap32(nonce)); /* the header stores it little-endian */
    block[16] = 0x80;
    store_be32(block + 60, 640);

    uint32_t state[8];
    memcpy(state, job->midstate, sizeof state);
    sha256_compress_portable(state, block);

    /* Outer hash: the 32-byte digest, padded for 256 bits. */
    memset(block, 0, sizeof block);
    for (unsigned i = 0; i < 8; i++)
        store_be32(block + 4 * i, state[i]);
    block[32] = 0x80;
    store_be32(block + 60, 256);

    memcpy(state, sha256_iv, sizeof state);
    sha256_compress_portable(state, block);
    for (unsigned i = 0; i < 8; i++)
        store_be32(digest + 4 * i, state[i]);
}

bool sha256d_meets_target(const sha256d_job *job, uint32_t nonce, const lode_u256 *target)
{
    uint8_t digest[32];
    sha256d_digest(job, nonce, digest);
    return lode_hash_meets_target(digest, target);
}

/* job->pre layout: sha256d_lanes.h. Rounds 0..2 of the header's second
 * block run once per job (W0..W2 come from the job, W3 is the nonce), round 3
 * is precomputed without W3, the early schedule words without their nonce
 * terms, and the outer hash's first round and constant schedule terms. */
void sha256d_prepare_lanes(sha256d_job *job)
{
    uint32_t *pre = job->pre;
    const uint32_t *w = job->tail;

    sha256_vars v = vars_from_state(job->midstate);
    for (unsigned t = 0; t < 3; t++)
        sha256_round(&v, sha256_k[t] + w[t]);
    pre[PRE_A3] = v.a;
    pre[PRE_B3] = v.b;
    pre[PRE_C3] = v.c;
    pre[PRE_E3] = v.e;
    pre[PRE_F3] = v.f;
    pre[PRE_G3] = v.g;
    /* Round 3 with W3 = 0. */
    sha256_round(&v, sha256_k[3]);
    pre[PRE_A4_LESS_W3] = v.a;
    pre[PRE_E4_LESS_W3] = v.e;

    uint32_t w16 = small_sigma0(w[1]) + w[0];
    uint32_t w17 = small_sigma1(HEADER_PAD_W15) + small_sigma0(w[2]) + w[1];
    pre[PRE_W16] = w16;
    pre[PRE_W17] = w17;
    pre[PRE_W18_LESS_NONCE] = small_sigma1(w16) + w[2];
    pre[PRE_W19_LESS_NONCE] = small_sigma1(w17) + small_sigma0(HEADER_PAD_W4);
    pre[PRE_W30_PART] = small_sigma0(HEADER_PAD_W15);
    pre[PRE_W31_PART] = small_sigma0(w16) + HEADER_PAD_W15;
    pre[PRE_W32_PART] = small_sigma0(w17) + w16;

    v = vars_from_state(sha256_iv);
    sha256_round(&v, sha256_k[0]);
    pre[PRE_OUTER_A1_LESS_W0] = v.a;
    pre[PRE_OUTER_E1_LESS_W0] = v.e;
    pre[PRE_OUTER_W17_PART] = small_sigma1(OUTER_PAD_W15);
    pre[PRE_OUTER_W23_PART] = small_sigma0(OUTER_PAD_W8);
    pre[PRE_OUTER_W30_PART] = small_sigma0(OUTER_PAD_W15);
}

_Static_assert(LODE_SHA256D_VERSIONS == LODE_VERSIONS_MAX, "the rolled kernels hash every version of a job");

void sha256d_versions_init(sha256d_version_set *set, const lode_header_job *work, uint32_t *params)
{
    uint8_t header[80];
    memcpy(header, work->header, 80);
    for (unsigned k = 0; k < LODE_VERSIONS_MAX; k++) {
        set->versions[k] = work->versions[k];
        for (int b = 0; b < 4; b++)
            header[b] = (uint8_t)(work->versions[k] >> (8 * b));
        sha256d_job *job = &set->job[k];
        sha256d_job_init(job, header, work->target.w[7]);
        sha256d_prepare_lanes(job);
        lode_sha256d_params_fill(params + k * LODE_SHA256D_PARAM_WORDS, job->midstate, job->pre, job->target_top);
    }
}

int sha256d_versions_push_hits(const sha256d_version_set *set, lode_hits *hits, const uint32_t *nonces, uint32_t n,
                               uint64_t start, uint64_t count, const lode_u256 *target)
{
    for (uint32_t i = 0; i < n; i++) {
        /* 32-bit difference: a launch may end at nonce 0xFFFFFFFF. */
        if ((uint32_t)(nonces[i] - (uint32_t)start) >= count)
            return LODE_ERR_DEVICE;
        for (unsigned k = 0; k < LODE_VERSIONS_MAX; k++)
            if (sha256d_meets_target(&set->job[k], nonces[i], target) &&
                lode_hits_push(hits, (lode_hit){.index = nonces[i], .version = set->versions[k]}) != 0)
                return LODE_ERR_NO_MEMORY;
    }
    return LODE_OK;
}
