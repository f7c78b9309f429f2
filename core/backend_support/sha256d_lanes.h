/* What the CPU backend's portable, AVX2 and AVX-512 SHA-256d paths and the
 * GPU kernels share: the padding words of the two blocks they hash, and the
 * layout of job->pre that sha256d_prepare_lanes() fills for all of them (the
 * CPU's SHA-NI path has a layout of its own). The CUDA and OpenCL backends
 * take their kernels' per-job constants from this layout, so this
 * precomputation exists once. */
#ifndef LODE_BACKEND_SUPPORT_SHA256D_LANES_H
#define LODE_BACKEND_SUPPORT_SHA256D_LANES_H

#include "core/backend_support/sha256d_job.h"

/* Padding of the header's second block (W4..W15) and of the outer hash's
 * block (W8..W15). */
#define HEADER_PAD_W4 0x80000000u
#define HEADER_PAD_W15 640u
#define OUTER_PAD_W8 0x80000000u
#define OUTER_PAD_W15 256u

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
    PRE_W30_PART,       /* sigma0(W15) */
    PRE_W31_PART,       /* sigma0(W16) + W15 */
    PRE_W32_PART,       /* sigma0(W17) + W16 */
    PRE_OUTER_A1_LESS_W0, /* outer hash: a after round 0, minus W0 */
    PRE_OUTER_E1_LESS_W0, /* outer hash: e after round 0, minus W0 */
    PRE_OUTER_W17_PART,   /* sigma1(W15) */
    PRE_OUTER_W23_PART,   /* sigma0(W8) */
    PRE_OUTER_W30_PART,   /* sigma0(W15) */
    PRE_WORDS
};
_Static_assert(PRE_WORDS <= sizeof(((sha256d_job *)0)->pre) / sizeof(uint32_t),
               "job->pre is too small");

/* Fills job->pre: rounds 0..2 of the second block, the nonce-free parts of
 * the early schedule, and the outer hash's constant first round. */
void sha256d_prepare_lanes(sha256d_job *job);

#endif
