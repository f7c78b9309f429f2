/* Every layout the host and the GPU kernels must agree on, defined once:
 * included by host C (the CUDA and OpenCL backends, the CPU lane paths),
 * by CUDA (.cu) and by OpenCL C (.cl; EmbedKernels.cmake inlines it). The
 * shared part is plain #defines and enums; the host-only helpers below it
 * are hidden from OpenCL C.
 *
 * Layouts tuned for one backend stay with it: the scratchpad staging of
 * scrypt's romix kernels, the Momentum filter tables and the trial
 * factoring sieve segments (docs/ARCHITECTURE.md, "Kernels"). */
#ifndef LODE_KERNEL_PARAMS_H
#define LODE_KERNEL_PARAMS_H

/* ---- the hit buffer of the nonce searches (sha256d, scrypt) ---------------
 * Word LODE_HITS_COUNT counts the hits (bumped atomically by the kernels),
 * words LODE_HITS_NONCE0 .. + LODE_HITS_CAP - 1 hold the nonces; the
 * kernels write a nonce only while a slot is free, so a count above
 * LODE_HITS_CAP means some hits were dropped and the launch must be redone
 * in smaller pieces. The nonces start 16 bytes in (aligned copies). */
#define LODE_HITS_CAP 1024u
#define LODE_HITS_COUNT 0
#define LODE_HITS_NONCE0 4
#define LODE_HITS_WORDS (LODE_HITS_NONCE0 + LODE_HITS_CAP)

/* ---- SHA-256d ---------------------------------------------------------------
 * The per-job constants of the 80-byte header's second block and of the
 * outer hash: everything that does not depend on the nonce word W3. The CPU
 * lane paths keep them in job->pre (core/backend_support/sha256d_lanes.h fills it);
 * the GPU kernels read the first PRE_KERNEL_WORDS of them. */
enum {
    PRE_A3, /* a, b, c, e, f, g after rounds 0..2 */
    PRE_B3,
    PRE_C3,
    PRE_E3,
    PRE_F3,
    PRE_G3,
    PRE_A4_LESS_W3, /* a after round 3, minus W3 */
    PRE_E4_LESS_W3, /* e after round 3, minus W3 */
    PRE_W16,
    PRE_W17,
    PRE_W18_LESS_NONCE, /* W18 - sigma0(W3) */
    PRE_W19_LESS_NONCE, /* W19 - W3 */
    PRE_W31_PART,       /* sigma0(W16) + W15 */
    PRE_W32_PART,       /* sigma0(W17) + W16 */
    /* The GPU kernels read the words above; the CPU lane paths all. */
    PRE_W30_PART,         /* sigma0(W15) */
    PRE_OUTER_A1_LESS_W0, /* outer hash: a after round 0, minus W0 */
    PRE_OUTER_E1_LESS_W0, /* outer hash: e after round 0, minus W0 */
    PRE_OUTER_W17_PART,   /* sigma1(W15) */
    PRE_OUTER_W23_PART,   /* sigma0(W8) */
    PRE_OUTER_W30_PART,   /* sigma0(W15) */
    PRE_WORDS,
    PRE_KERNEL_WORDS = PRE_W32_PART + 1
};

/* The GPU kernels' parameter block (32-bit words; CUDA passes it as a
 * kernel parameter, OpenCL in a __constant buffer). */
#define LODE_SHA256D_P_MID 0         /* 8 words: the state after header bytes 0..63 */
#define LODE_SHA256D_P_PRE 8         /* PRE_KERNEL_WORDS words: pre[0 ..] */
#define LODE_SHA256D_P_TARGET_TOP 22 /* candidates: byteswap(H7) <= this */
#define LODE_SHA256D_P_ONE 23        /* 1: keeps CUDA's additions on the FMA pipe */
#define LODE_SHA256D_PARAM_WORDS 24
/* A word of pre inside the block. */
#define LODE_SHA256D_P(pre_index) (LODE_SHA256D_P_PRE + (pre_index))
/* The version-rolled search's blocks, one per version (LODE_VERSIONS_MAX of
 * core/base/work.h): LODE_SHA256D_VERSIONS * LODE_SHA256D_PARAM_WORDS words. */
#define LODE_SHA256D_VERSIONS 8
/* Nonces a thread (work-item) of the version-rolled search takes per
 * launch, whatever the plain search was tuned to: its 8 hashes a nonce
 * already pay for a thread's set-up, and more nonces a thread only lengthen
 * a launch's tail (H100, CUDA: 9.04 GH/s at 1, 8.73 at 8; OpenCL: 8.76 at 1,
 * 8.31 at 8; docs/PERFORMANCE.md). */
#define LODE_SHA256D_VERSIONS_NONCES_PER_THREAD 1

/* ---- scrypt (N = 1024, r = 1, p = 1) ------------------------------------- */
#define LODE_SCRYPT_N 1024u
/* Parameter block. */
#define LODE_SCRYPT_P_HEADER 0  /* 19 words: header bytes 0..75, big-endian */
#define LODE_SCRYPT_P_MID 19    /* 8 words: SHA-256 state after header bytes 0..63 */
#define LODE_SCRYPT_P_TARGET 27 /* 8 words: the target, word 0 least significant */
#define LODE_SCRYPT_PARAM_WORDS 35
/* A hash slot's state between the kernels: X (32 little-endian words, in
 * natural order), then the HMAC inner and outer pad states. */
#define LODE_SCRYPT_STATE_X 0
#define LODE_SCRYPT_STATE_IPAD 32
#define LODE_SCRYPT_STATE_OPAD 40
#define LODE_SCRYPT_STATE_WORDS 48

/* ---- Momentum ----------------------------------------------------------------
 * 2^26 nonces = 2^23 SHA-512 bases of 8 birthdays of 50 bits. The bucket
 * method appends each birthday to one of 2^14 buckets by its top bits as
 * (low LODE_MOM_BK_RBITS bits << 26 | nonce); its output entries are
 * (birthday, nonce) pairs of 16 bytes (momentum_entry). */
#ifndef LODE_MOM_NBASES /* a build option may shrink it for the kernels alone (tests/test_oclgrind_momentum.c) */
#define LODE_MOM_NBASES (1u << 23)
#endif
#define LODE_MOM_NONCES (LODE_MOM_NBASES * 8u)
#define LODE_MOM_BK_BITS 14
#define LODE_MOM_NBUCKETS (1u << LODE_MOM_BK_BITS)
#define LODE_MOM_BK_CAP 4864u /* slots per bucket (mean 4096, sd 64) */
#define LODE_MOM_BK_RBITS (50 - LODE_MOM_BK_BITS)
#define LODE_MOM_BK_OUT_CAP (1u << 20) /* colliding entries per sweep */

/* ---- trial factoring ---------------------------------------------------------
 * counts[LODE_TF_COUNT_CAND] survivors of the sieve, counts[LODE_TF_COUNT_FOUND]
 * factors, whose offsets go to found[0 .. LODE_TF_FOUND_CAP - 1]. */
#define LODE_TF_COUNT_CAND 0
#define LODE_TF_COUNT_FOUND 1
#define LODE_TF_FOUND_CAP 256u
/* The OpenCL sieve's segment: bits one work-group sieves in local memory
 * (32 KiB: primes below it are sieved there, as CUDA's 2^18; H100, 3.6%
 * faster than 2^17), and its work-group size. */
#define LODE_TF_OCL_SEG_BITS 262144u
#define LODE_TF_OCL_SIEVE_LOCAL 256u
/* The OpenCL sieve tables' buffer: table LODE_TF_TABLE_x at x * stride
 * words (one kernel argument for the five: NVIDIA's enqueue cost grows with
 * the buffer arguments). The order is tf_sieve_tables_verify's. */
#define LODE_TF_TABLE_PRIME 0u
#define LODE_TF_TABLE_INV 1u
#define LODE_TF_TABLE_PMOD 2u
#define LODE_TF_TABLE_SMOD 3u
#define LODE_TF_TABLE_MINV 4u
#define LODE_TF_TABLES 5u

#if !defined(__OPENCL_C_VERSION__) && !defined(__OPENCL_VERSION__)
/* ---- host helpers ------------------------------------------------------------ */
#include <stdint.h>
#include <string.h>

/* The SHA-256d parameter block from a job's midstate, pre words and target. */
static inline void lode_sha256d_params_fill(uint32_t p[LODE_SHA256D_PARAM_WORDS], const uint32_t midstate[8],
                                            const uint32_t *pre, uint32_t target_top)
{
    memcpy(p + LODE_SHA256D_P_MID, midstate, 8 * sizeof(uint32_t));
    memcpy(p + LODE_SHA256D_P_PRE, pre, PRE_KERNEL_WORDS * sizeof(uint32_t));
    p[LODE_SHA256D_P_TARGET_TOP] = target_top;
    p[LODE_SHA256D_P_ONE] = 1;
}

/* The scrypt parameter block from the 80-byte header, the SHA-256 state
 * after its first 64 bytes and the 256-bit target (word 0 least
 * significant). */
static inline void lode_scrypt_params_fill(uint32_t p[LODE_SCRYPT_PARAM_WORDS], const uint8_t header[80],
                                           const uint32_t midstate[8], const uint32_t target[8])
{
    for (int i = 0; i < 19; i++)
        p[LODE_SCRYPT_P_HEADER + i] = (uint32_t)header[4 * i] << 24 | (uint32_t)header[4 * i + 1] << 16 |
                                      (uint32_t)header[4 * i + 2] << 8 | header[4 * i + 3];
    memcpy(p + LODE_SCRYPT_P_MID, midstate, 8 * sizeof(uint32_t));
    memcpy(p + LODE_SCRYPT_P_TARGET, target, 8 * sizeof(uint32_t));
}

#ifndef __cplusplus
_Static_assert(LODE_SHA256D_P_PRE + PRE_KERNEL_WORDS == LODE_SHA256D_P_TARGET_TOP, "sha256d block");
_Static_assert(LODE_SHA256D_P_ONE + 1 == LODE_SHA256D_PARAM_WORDS, "sha256d block");
_Static_assert(LODE_SCRYPT_P_TARGET + 8 == LODE_SCRYPT_PARAM_WORDS, "scrypt block");
#endif
#endif /* not OpenCL C */

#endif
