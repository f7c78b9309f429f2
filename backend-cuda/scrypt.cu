/* scrypt(N=1024, r=1, p=1) nonce search in three kernels per batch:
 *
 *   pbkdf2_in   one thread per hash: HMAC key, inner/outer pad states and
 *               PBKDF2-HMAC-SHA256(header, header, 1, 128) -> X
 *   romix       the two Salsa20/8 BlockMix passes over the scratchpad, in
 *               one of two layouts (cuda_scrypt_shape): a hash per thread
 *               (romix_thread, the default) or four threads per hash (romix)
 *   pbkdf2_out  one thread per hash: PBKDF2-HMAC-SHA256(header, X, 1, 32),
 *               the exact 256-bit target comparison, and the hit buffer
 *
 * The state between them (X and the two HMAC pad states, 192 bytes per
 * hash) stays in device memory; only hits come back to the host.
 *
 * The four-thread layout (romix). A hash's four threads (lanes 4k..4k+3 of a warp) each own
 * one diagonal of the 4x4 Salsa matrix of both 64-byte halves: thread t
 * holds x[5t], x[5t+4], x[5t+8], x[5t+12] (indices mod 16) as a uint4, so
 * the column round is thread-local; three shuffles rotate the b/c/d words
 * so that the row round is thread-local too, and three rotate them back.
 * A scratchpad entry is 128 bytes: the four threads' X0 uint4s, then their
 * X1 uint4s, so every access is a 16-byte load or store coalesced over a
 * 64-byte run. Entries are interleaved across hashes (entry i of all hashes
 * of a batch, then entry i+1), so the first pass writes whole lines.
 *
 * Lookup gap LG: only every LG-th entry is stored; the second pass
 * recomputes the others from the stored one below, trading scratchpad
 * bandwidth and size for Salsa work.
 *
 * The thread layout (romix_thread) needs no shuffles at all: the shuffles
 * are a large share of the four-thread layout's instructions, and at a
 * GPU's power limit instructions are what costs (docs/PERFORMANCE.md). */
#include "backend-cuda/scrypt_kernels.h"
#include "core/backend_support/kernels/hits.h"
#include "core/backend_support/kernels/pbkdf2.h"
#include "core/backend_support/kernels/salsa.h"

namespace {

/* ---- PBKDF2-HMAC-SHA256 ------------------------------------------------ */

/* The HMAC pad states of the hash of nonce_be (pbkdf2.h). */
__device__ __forceinline__ void hmac_pads(const cuda_scrypt_params &p, uint32_t nonce_be,
                                          uint32_t (&ipad)[8], uint32_t (&opad)[8])
{
    uint32_t key[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        key[i] = p.w[LODE_SCRYPT_P_MID + i];
    pbkdf2_hmac_pads(key, p.w[LODE_SCRYPT_P_HEADER + 16], p.w[LODE_SCRYPT_P_HEADER + 17],
                     p.w[LODE_SCRYPT_P_HEADER + 18], nonce_be, ipad, opad);
}

__device__ __forceinline__ uint32_t nonce_of(uint32_t start, uint32_t slot) { return start + slot; }

/* The state buffer: per slot, X as 32 little-endian words in natural order,
 * then ipad and opad. */
struct slot_state {
    uint32_t x[32];
    uint32_t ipad[8], opad[8];
};
static_assert(sizeof(slot_state) == CUDA_SCRYPT_STATE_BYTES, "state layout");
static_assert(offsetof(slot_state, x) == LODE_SCRYPT_STATE_X * 4 &&
                  offsetof(slot_state, ipad) == LODE_SCRYPT_STATE_IPAD * 4 &&
                  offsetof(slot_state, opad) == LODE_SCRYPT_STATE_OPAD * 4,
              "state layout");

__global__ void __launch_bounds__(128)
pbkdf2_in(const cuda_scrypt_params p, uint32_t start, uint32_t slots, slot_state *state)
{
    const uint32_t slot = blockIdx.x * blockDim.x + threadIdx.x;
    if (slot >= slots)
        return;
    /* Slots past the range's count hash nonces beyond it: their results are
     * never compared, and romix needs every slot of a warp filled. */
    const uint32_t nonce_be = lode_bswap32(nonce_of(start, slot));
    uint32_t ipad[8], opad[8];
    hmac_pads(p, nonce_be, ipad, opad);

    /* Inner hash over ipad || header || INT(i): the first header block is
     * shared by the four output blocks. */
    uint32_t inner[8], m[16];
#pragma unroll
    for (int i = 0; i < 8; i++)
        inner[i] = ipad[i];
#pragma unroll
    for (int i = 0; i < 16; i++)
        m[i] = p.w[LODE_SCRYPT_P_HEADER + i];
    sha256_compress(inner, m);

    slot_state *s = &state[slot];
#pragma unroll 1
    for (uint32_t i = 1; i <= 4; i++) {
        uint32_t d[8], b[16];
#pragma unroll
        for (int k = 0; k < 8; k++)
            d[k] = inner[k];
        b[0] = p.w[LODE_SCRYPT_P_HEADER + 16];
        b[1] = p.w[LODE_SCRYPT_P_HEADER + 17];
        b[2] = p.w[LODE_SCRYPT_P_HEADER + 18];
        b[3] = nonce_be;
        b[4] = i;
        b[5] = 0x80000000u;
#pragma unroll
        for (int k = 6; k < 15; k++)
            b[k] = 0;
        b[15] = (64 + 80 + 4) * 8;
        sha256_compress(d, b);
        pbkdf2_hmac_outer(opad, d);
        /* Salsa works on little-endian words of the derived bytes. */
#pragma unroll
        for (int k = 0; k < 8; k++)
            s->x[8 * (i - 1) + k] = lode_bswap32(d[k]);
    }
#pragma unroll
    for (int k = 0; k < 8; k++) {
        s->ipad[k] = ipad[k];
        s->opad[k] = opad[k];
    }
}

__global__ void __launch_bounds__(128)
pbkdf2_out(const cuda_scrypt_params p, uint32_t start, uint32_t count, const slot_state *state,
           cuda_hits *hits)
{
    const uint32_t slot = blockIdx.x * blockDim.x + threadIdx.x;
    if (slot >= count)
        return;
    const slot_state *s = &state[slot];
    uint32_t d[8], m[16];
#pragma unroll
    for (int k = 0; k < 8; k++)
        d[k] = s->ipad[k];
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const uint4 *x4 = reinterpret_cast<const uint4 *>(s->x + 16 * half);
#pragma unroll
        for (int q = 0; q < 4; q++) {
            uint4 v = x4[q];
            m[4 * q + 0] = lode_bswap32(v.x);
            m[4 * q + 1] = lode_bswap32(v.y);
            m[4 * q + 2] = lode_bswap32(v.z);
            m[4 * q + 3] = lode_bswap32(v.w);
        }
        sha256_compress(d, m);
    }
    m[0] = 1; /* INT(1) */
    m[1] = 0x80000000u;
#pragma unroll
    for (int k = 2; k < 15; k++)
        m[k] = 0;
    m[15] = (64 + 128 + 4) * 8;
    sha256_compress(d, m);
    uint32_t opad[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        opad[k] = s->opad[k];
    pbkdf2_hmac_outer(opad, d);

    /* The PoW hash is the digest read as a little-endian 256-bit integer:
     * word k of it is byteswap(d[k]); compare from the top word down. */
    bool hit = true;
#pragma unroll
    for (int k = 7; k >= 0; k--) {
        uint32_t h = lode_bswap32(d[k]);
        if (h != p.w[LODE_SCRYPT_P_TARGET + k]) {
            hit = h < p.w[LODE_SCRYPT_P_TARGET + k];
            break;
        }
    }
    if (hit)
        lode_report_hit(reinterpret_cast<u32 *>(hits), nonce_of(start, slot));
}

/* ---- ROMix --------------------------------------------------------------- */

/* Largest romix block, both layouts (their __launch_bounds__). */
constexpr unsigned kRomixMaxBlock = 256;

__device__ __forceinline__ uint4 operator^(uint4 a, uint4 b)
{
    return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

__device__ __forceinline__ uint4 operator&(uint4 a, uint32_t m)
{
    return make_uint4(a.x & m, a.y & m, a.z & m, a.w & m);
}

/* The four threads of a hash: lane groups of 4 inside the warp. Every
 * shuffle names the whole warp: the warp never diverges inside romix (see
 * the lookup-gap loop), and a partial mask costs a WARPSYNC per shuffle. */
#define FULL_WARP 0xffffffffu
struct quad {
    int next, prev, across; /* t+1, t-1, t+2 within the group (width 4) */
};

/* b[h] = Salsa20/8(b[h]) + b[h] for H independent hashes, one diagonal of
 * each per thread. The H chains interleave: while one waits for a shuffle
 * or an add, the others issue. */
template <int H> __device__ __forceinline__ void salsa8(uint4 (&b)[H], const quad &q)
{
    uint32_t a[H], x1[H], x2[H], x3[H];
#pragma unroll
    for (int h = 0; h < H; h++)
        a[h] = b[h].x, x1[h] = b[h].y, x2[h] = b[h].z, x3[h] = b[h].w;
#pragma unroll
    for (int i = 0; i < 4; i++) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            /* First a column round, (a, x1, x2, x3) being one column; then a
             * row round of the same shape on one row. */
#pragma unroll
            for (int h = 0; h < H; h++) {
                x1[h] = salsa_qr(x1[h], a[h], x3[h], 7);
                x2[h] = salsa_qr(x2[h], x1[h], a[h], 9);
                x3[h] = salsa_qr(x3[h], x2[h], x1[h], 13);
                a[h] = salsa_qr(a[h], x3[h], x2[h], 18);
            }
            /* Columns -> rows, and back after the row round: both are b <- d
             * of t+1, c <- c of t+2, d <- b of t-1. */
#pragma unroll
            for (int h = 0; h < H; h++) {
                uint32_t nb = lode_shfl4(x3[h], q.next);
                uint32_t nc = lode_shfl4(x2[h], q.across);
                uint32_t nd = lode_shfl4(x1[h], q.prev);
                x1[h] = nb, x2[h] = nc, x3[h] = nd;
            }
        }
    }
#pragma unroll
    for (int h = 0; h < H; h++)
        b[h] = make_uint4(b[h].x + a[h], b[h].y + x1[h], b[h].z + x2[h], b[h].w + x3[h]);
}

/* BlockMix for r = 1 on H hashes. */
template <int H> __device__ __forceinline__ void block_mix(uint4 (&x0)[H], uint4 (&x1)[H], const quad &q)
{
#pragma unroll
    for (int h = 0; h < H; h++)
        x0[h] = x0[h] ^ x1[h];
    salsa8<H>(x0, q);
#pragma unroll
    for (int h = 0; h < H; h++)
        x1[h] = x1[h] ^ x0[h];
    salsa8<H>(x1, q);
}

/* Hash slot0 + h's X, this thread's quarter of it (the shuffle layout). */
template <int H>
__device__ __forceinline__ void quad_load(const slot_state *state, uint32_t slot0, int t, uint4 (&x0)[H],
                                          uint4 (&x1)[H])
{
#pragma unroll
    for (int h = 0; h < H; h++) {
        const uint32_t *xs = state[slot0 + h].x;
        x0[h] = make_uint4(xs[(5 * t) & 15], xs[(5 * t + 4) & 15], xs[(5 * t + 8) & 15],
                           xs[(5 * t + 12) & 15]);
        x1[h] = make_uint4(xs[16 + ((5 * t) & 15)], xs[16 + ((5 * t + 4) & 15)],
                           xs[16 + ((5 * t + 8) & 15)], xs[16 + ((5 * t + 12) & 15)]);
    }
}

template <int H>
__device__ __forceinline__ void quad_store(slot_state *state, uint32_t slot0, int t, const uint4 (&x0)[H],
                                           const uint4 (&x1)[H])
{
#pragma unroll
    for (int h = 0; h < H; h++) {
        uint32_t *xs = state[slot0 + h].x;
        xs[(5 * t) & 15] = x0[h].x;
        xs[(5 * t + 4) & 15] = x0[h].y;
        xs[(5 * t + 8) & 15] = x0[h].z;
        xs[(5 * t + 12) & 15] = x0[h].w;
        xs[16 + ((5 * t) & 15)] = x1[h].x;
        xs[16 + ((5 * t + 4) & 15)] = x1[h].y;
        xs[16 + ((5 * t + 8) & 15)] = x1[h].z;
        xs[16 + ((5 * t + 12) & 15)] = x1[h].w;
    }
}

/* One group of four threads runs H hashes (slots group*H .. group*H+H-1). */
template <unsigned LG, int H>
__global__ void __launch_bounds__(kRomixMaxBlock)
romix(slot_state *state, uint4 *pad, uint32_t slots)
{
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t slot0 = (gid >> 2) * H;
    const int t = threadIdx.x & 3;
    /* slots is a multiple of the hashes per block, so whole warps exit. */
    if (slot0 >= slots)
        return;
    quad q;
    q.next = (t + 1) & 3;
    q.prev = (t + 3) & 3;
    q.across = t ^ 2;

    uint4 x0[H], x1[H];
    quad_load<H>(state, slot0, t, x0, x1);

    /* Entry e of hash slot s: pad[(e * slots + s) * 8 + t] (X0 part) and
     * + 4 (X1 part). */
    uint4 *mine = pad + (size_t)slot0 * 8 + t;
    const size_t entry_stride = (size_t)slots * 8;

#pragma unroll 1
    for (uint32_t i = 0; i < LODE_SCRYPT_N; i += LG) {
        uint4 *e = mine + (i / LG) * entry_stride;
#pragma unroll
        for (int h = 0; h < H; h++) {
            e[8 * h] = x0[h];
            e[8 * h + 4] = x1[h];
        }
#pragma unroll
        for (unsigned k = 0; k < LG; k++)
            block_mix<H>(x0, x1, q);
    }

#pragma unroll 1
    for (uint32_t i = 0; i < LODE_SCRYPT_N; i++) {
        uint4 y0[H], y1[H];
        uint32_t need[H];
#pragma unroll
        for (int h = 0; h < H; h++) {
            /* Integerify: word 16 of X is x[0] of X1, held by thread 0. */
            const uint32_t j = lode_shfl4(x1[h].x, 0) & (LODE_SCRYPT_N - 1);
            const uint4 *e = mine + 8 * h + (j / LG) * entry_stride;
            y0[h] = __ldcg(e); /* no reuse: skip L1 */
            y1[h] = __ldcg(e + 4);
            need[h] = j % LG;
        }
        if (LG > 1) {
            /* Recompute entry j from the stored one below it. Every hash runs
             * LG - 1 steps and keeps those it needs: no divergence, and with
             * 8 hashes a warp would almost always need the most steps anyway. */
#pragma unroll
            for (uint32_t k = 0; k + 1 < LG; k++) {
                uint4 z0[H], z1[H];
#pragma unroll
                for (int h = 0; h < H; h++)
                    z0[h] = y0[h], z1[h] = y1[h];
                block_mix<H>(z0, z1, q);
#pragma unroll
                for (int h = 0; h < H; h++)
                    if (k < need[h])
                        y0[h] = z0[h], y1[h] = z1[h];
            }
        }
#pragma unroll
        for (int h = 0; h < H; h++) {
            x0[h] = x0[h] ^ y0[h];
            x1[h] = x1[h] ^ y1[h];
        }
        block_mix<H>(x0, x1, q);
    }

    quad_store<H>(state, slot0, t, x0, x1);
}

/* ---- ROMix, one thread per hash ------------------------------------------ */

/* Shared-memory staging of one warp's 32 scratchpad entries: a row of 144
 * bytes per lane (128 + 16 of padding, so that both a lane reading its own
 * row and eight lanes reading one row hit distinct banks). */
constexpr int kRowWords = 9; /* uint4 per row */
/* The row of the hash that lane `lane` carries in transfer step 0 (step k:
 * + 4k rows): its piece is uint4 lane % 8 of the row. */
__device__ __forceinline__ uint4 *carried_row(uint4 *rows, unsigned lane)
{
    return rows + (lane >> 3) * kRowWords;
}
constexpr size_t thread_romix_smem(unsigned threads_per_block)
{
    return (size_t)threads_per_block * kRowWords * sizeof(uint4);
}

/* The offsets the 32 hashes of a warp post for the second pass's transfer
 * sit in the padding of rows 0-7, ordered so that the lanes carrying hashes
 * q, q+4, ..., q+28 read all eight with two 16-byte loads (rows 2q and
 * 2q+1) and the 32 posts hit 32 distinct banks. Hash h = 4k + q is word
 * k % 4 of row 2q + k / 4. */
__device__ __forceinline__ uint32_t *posted_word(uint4 *rows, unsigned hash)
{
    const unsigned k = hash >> 2, q = hash & 3;
    return reinterpret_cast<uint32_t *>(rows + (2 * q + (k >> 2)) * kRowWords + 8) + (k & 3);
}
/* The first of the two rows whose padding lane `lane` reads (the second is
 * kRowWords uint4 further). */
__device__ __forceinline__ uint4 *posted_pair(uint4 *rows, unsigned lane)
{
    return rows + 2 * (lane >> 3) * kRowWords + 8;
}

__device__ __forceinline__ void copies_done()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
    __syncwarp();
}

/* Words 4c..4c+3 of a 16-word half as one 16-byte piece, and back. */
__device__ __forceinline__ uint4 piece(const uint32_t (&x)[16], int c)
{
    return make_uint4(x[4 * c], x[4 * c + 1], x[4 * c + 2], x[4 * c + 3]);
}

__device__ __forceinline__ void set_piece(uint32_t (&x)[16], int c, uint4 v)
{
    x[4 * c] = v.x, x[4 * c + 1] = v.y, x[4 * c + 2] = v.z, x[4 * c + 3] = v.w;
}

/* X (32 words, natural order) as 8 pieces: X0's four, then X1's. */
__device__ __forceinline__ void store_x(uint4 *xs, const uint32_t (&x0)[16], const uint32_t (&x1)[16])
{
#pragma unroll
    for (int c = 0; c < 4; c++)
        xs[c] = piece(x0, c), xs[4 + c] = piece(x1, c);
}

__device__ __forceinline__ void load_x(const uint4 *xs, uint32_t (&x0)[16], uint32_t (&x1)[16])
{
#pragma unroll
    for (int c = 0; c < 4; c++)
        set_piece(x0, c, xs[c]), set_piece(x1, c, xs[4 + c]);
}

/* Where entry i sits when every SKIP-th one is left out (SKIP 0: all kept). */
template <unsigned SKIP> __device__ __forceinline__ uint32_t stored_index(uint32_t i)
{
    return SKIP ? i - i / SKIP : i;
}

/* Posted for a hash that loads no entry this step. */
constexpr uint32_t kNoEntry = 0xffffffffu;

/* The second pass's transfer: the eight steps of 16-byte copies of the
 * entries the warp's lanes posted (kNoEntry: none; only a skipping kernel
 * posts it). The addresses are derived from the thread index here, inside
 * the loop, and the steps are written out in PTX: left to itself, the
 * compiler keeps neither the bases nor the immediate offsets live across
 * the Salsa rounds and rebuilds each step's address from scratch. */
template <bool kMayPostNone>
__device__ __forceinline__ void fetch_posted_entries(uint4 *rows, const uint4 *pad)
{
    unsigned tid;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
    const unsigned lane = tid & 31;
    const uint4 *lane_pad = pad + (size_t)(blockIdx.x * blockDim.x + (tid & ~31u)) * 8 + lane;
#if __CUDA_ARCH__ >= 800
    const unsigned posted_s = (unsigned)__cvta_generic_to_shared(posted_pair(rows, lane));
    const unsigned carried_s = (unsigned)__cvta_generic_to_shared(carried_row(rows, lane) + (lane & 7));
    /* Step k's copy is at lane_pad + 512k bytes; the base sits 2 KiB in so
     * that every k's offset fits the copy's immediate (-2048..2047). */
    const uint4 *centre = lane_pad + 128;
    /* All addresses first, then the eight copies back to back: ptxas pads
     * an LDGSTS that follows other instructions with three never-executed
     * loads, once per run of copies instead of once per copy. */
#define LODE_FETCH_ADDR(k) "mad.wide.u32 a" #k ", e" #k ", 128, %2;\n\t"
#define LODE_FETCH_COPY(k) "cp.async.cg.shared.global [%1+" #k "*576], [a" #k "+" #k "*512-2048], 16;\n\t"
#define LODE_FETCH_GUARDED(k)                                                                      \
    "setp.ne.u32 p" #k ", e" #k ", -1;\n\t"                                                        \
    "@p" #k " cp.async.cg.shared.global [%1+" #k "*576], [a" #k "+" #k "*512-2048], 16;\n\t"
#define LODE_FETCH_LOAD                                                                            \
    "ld.shared.v4.u32 {e0, e1, e2, e3}, [%0];\n\t"                                                \
    "ld.shared.v4.u32 {e4, e5, e6, e7}, [%0+144];\n\t"
#define LODE_FETCH_8(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7)
    if (kMayPostNone)
        asm volatile("{\n\t.reg .u32 e<8>;\n\t.reg .u64 a<8>;\n\t.reg .pred p<8>;\n\t" LODE_FETCH_LOAD
                         LODE_FETCH_8(LODE_FETCH_ADDR) LODE_FETCH_8(LODE_FETCH_GUARDED) "}\n" ::"r"(posted_s),
                     "r"(carried_s), "l"(centre)
                     : "memory");
    else
        asm volatile("{\n\t.reg .u32 e<8>;\n\t.reg .u64 a<8>;\n\t" LODE_FETCH_LOAD LODE_FETCH_8(
                         LODE_FETCH_ADDR) LODE_FETCH_8(LODE_FETCH_COPY) "}\n" ::"r"(posted_s),
                     "r"(carried_s), "l"(centre)
                     : "memory");
#undef LODE_FETCH_8
#undef LODE_FETCH_LOAD
#undef LODE_FETCH_GUARDED
#undef LODE_FETCH_COPY
#undef LODE_FETCH_ADDR
#else
    const uint32_t *posted = reinterpret_cast<const uint32_t *>(posted_pair(rows, lane));
    uint4 *carried = carried_row(rows, lane) + (lane & 7);
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const uint32_t e = posted[(k >> 2) * 4 * kRowWords + (k & 3)];
        if (!kMayPostNone || e != kNoEntry)
            carried[4 * kRowWords * k] = __ldcg(lane_pad + (size_t)e * 8 + 32 * k);
    }
#endif
}

/* First pass: X out to the warp's entry at e (lane_pad + the entry's
 * index * slots * 8), through the lane's own row. */
__device__ __forceinline__ void store_entry(uint4 *own, const uint4 *carried, uint4 *e,
                                            const uint32_t (&x0)[16], const uint32_t (&x1)[16])
{
    store_x(own, x0, x1);
    __syncwarp();
#pragma unroll
    for (int k = 0; k < 8; k++)
        __stcg(e + 32 * k, carried[4 * kRowWords * k]);
    __syncwarp(); /* the rows are rewritten next step */
}

/* Second pass: posts this lane's entry offset (in 128-byte units, or
 * kNoEntry) and brings every posted entry of the warp into its hash's row. */
template <bool kMayPostNone>
__device__ __forceinline__ void load_entries(uint4 *rows, unsigned lane, const uint4 *pad, uint32_t entry)
{
    *posted_word(rows, lane) = entry;
    __syncwarp();
    fetch_posted_entries<kMayPostNone>(rows, pad);
    copies_done();
}

/* One thread per hash: Salsa20/8 needs no shuffles, and the scratchpad
 * moves through shared memory so that global accesses stay coalesced. Entry
 * e of slot s is pad[(e * slots + s) * 8 ..+8], X0 then X1 in natural word
 * order; the 32 slots of a warp are adjacent, so entry e of a warp is 4 KiB
 * contiguous. Transfer step k moves hashes 4k..4k+3 of the warp: lane l
 * carries 16-byte chunk l % 8 of hash 4k + l / 8.
 *
 * SKIP = G > 0 leaves out every V_i with i % G == G - 1 (a G-th of the
 * scratchpad traffic and size). A read of such a V_j loads V_{j-1} and
 * spends one step computing V_j = BlockMix(V_{j-1}) while X waits in the
 * lane's shared row; each lane runs its own sequence of steps, so the
 * lanes of a warp never wait for each other's recomputation until the
 * last step (a lookup gap in the usual form stalls the whole warp whenever
 * any of its 32 hashes needs one). */
template <unsigned SKIP>
__global__ void __launch_bounds__(kRomixMaxBlock, 4)
romix_thread(slot_state *state, uint4 *pad, uint32_t slots)
{
    extern __shared__ uint4 stage[]; /* thread_romix_smem(blockDim.x) bytes */
    const uint32_t slot = blockIdx.x * blockDim.x + threadIdx.x;
    if (slot >= slots)
        return; /* slots is a multiple of the block: whole blocks exit */
    const unsigned lane = threadIdx.x & 31;
    uint4 *rows = stage + (threadIdx.x >> 5) * 32 * kRowWords;
    uint4 *own = rows + lane * kRowWords;
    const uint4 *carried = carried_row(rows, lane) + (lane & 7); /* step k: + 4k rows */
    uint4 *lane_pad = pad + (size_t)(slot & ~31u) * 8 + lane; /* step k: + 32k */

    uint4 *x_state = reinterpret_cast<uint4 *>(state[slot].x);
    uint32_t x0[16], x1[16];
    load_x(x_state, x0, x1);

    const size_t entry_stride = (size_t)slots * 8;
#pragma unroll 1
    for (uint32_t i = 0; i < LODE_SCRYPT_N; i++) {
        if (SKIP == 0 || i % SKIP != SKIP - 1)
            store_entry(own, carried, lane_pad + stored_index<SKIP>(i) * entry_stride, x0, x1);
        salsa_block_mix(x0, x1); /* no shuffles: a hash per thread */
    }

    /* Second pass: `left` main steps to go; `parked` when the previous step
     * computed a skipped V_j into x0/x1 and X waits in the row. */
    uint32_t left = LODE_SCRYPT_N;
    bool parked = false;
#pragma unroll 1
    do {
        /* Integerify: word 16 of X. Each lane posts its entry's offset (in
         * 128-byte units; slots * N < 2^32) in shared memory (posted_word),
         * where the lanes carrying that hash read it: two broadcast loads,
         * cheaper than eight shuffles with their lane indices. */
        const uint32_t j = x1[0] & (LODE_SCRYPT_N - 1);
        const bool recompute = SKIP && !parked && left > 0 && j % SKIP == SKIP - 1;
        uint32_t entry = kNoEntry;
        if (!parked && left > 0) {
            const uint32_t want = recompute ? j - 1 : j;
            entry = stored_index<SKIP>(want) * slots;
        }
        load_entries<SKIP != 0>(rows, lane, pad, entry);
        /* Main step: X ^= V_j (loaded, or computed last step while X was
         * parked). Recompute step: swap X into the row and V_{j-1} out. */
        const uint32_t keep = recompute ? 0u : ~0u;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const uint4 v = own[c], w = own[4 + c];
            if (SKIP && recompute)
                own[c] = piece(x0, c), own[4 + c] = piece(x1, c);
            set_piece(x0, c, (piece(x0, c) & keep) ^ v);
            set_piece(x1, c, (piece(x1, c) & keep) ^ w);
        }
        __syncwarp();
        salsa_block_mix(x0, x1);
        if (left > 0 && !recompute && --left == 0 && SKIP)
            store_x(x_state, x0, x1); /* later steps of the warp only churn x0/x1 */
        parked = recompute;
    } while (__any_sync(FULL_WARP, left > 0));
    if (!SKIP)
        store_x(x_state, x0, x1);
}

/* The romix instance of a shape, or NULL. */
typedef void (*romix_fn)(slot_state *, uint4 *, uint32_t);
romix_fn romix_for(const cuda_scrypt_shape &shape)
{
    const unsigned g = shape.gap;
    /* Whole warps, within both kernels' __launch_bounds__. */
    if (shape.threads_per_block == 0 || shape.threads_per_block > kRomixMaxBlock ||
        shape.threads_per_block % 32)
        return NULL;
    if (shape.layout == CUDA_SCRYPT_THREAD)
        return g == 0 ? romix_thread<0>
               : g == 2 ? romix_thread<2>
               : g == 4 ? romix_thread<4>
               : g == 8 ? romix_thread<8>
                        : NULL;
    if (shape.interleave == 2)
        return g == 1 ? romix<1, 2> : g == 2 ? romix<2, 2> : g == 4 ? romix<4, 2> : NULL;
    if (shape.interleave == 1)
        return g == 1 ? romix<1, 1> : g == 2 ? romix<2, 1> : g == 4 ? romix<4, 1> : NULL;
    return NULL;
}

/* Dynamic shared memory of a romix launch. */
size_t romix_smem(const cuda_scrypt_shape &shape)
{
    return shape.layout == CUDA_SCRYPT_THREAD ? thread_romix_smem(shape.threads_per_block) : 0;
}

} // namespace

extern "C" size_t cuda_scrypt_pad_bytes(const cuda_scrypt_shape *shape)
{
    const size_t entry = 128;
    if (shape->layout == CUDA_SCRYPT_THREAD)
        return entry * (LODE_SCRYPT_N - (shape->gap ? LODE_SCRYPT_N / shape->gap : 0));
    return entry * LODE_SCRYPT_N / (shape->gap ? shape->gap : 1);
}

extern "C" unsigned cuda_scrypt_hashes_per_block(const cuda_scrypt_shape *shape)
{
    if (romix_for(*shape) == NULL)
        return 0;
    return shape->layout == CUDA_SCRYPT_THREAD ? shape->threads_per_block
                                               : shape->threads_per_block / 4 * shape->interleave;
}

extern "C" unsigned cuda_scrypt_resident_slots(const cuda_scrypt_shape *shape)
{
    int dev = 0, sms = 0, blocks = 0;
    romix_fn f = romix_for(*shape);
    if (f == NULL || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return 0;
    /* The thread layout wants the shared-memory carveout its blocks fill. */
    if (shape->layout == CUDA_SCRYPT_THREAD &&
        cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared) != cudaSuccess)
        return 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, (int)shape->threads_per_block,
                                                      romix_smem(*shape)) != cudaSuccess)
        return 0;
    return (unsigned)blocks * (unsigned)sms * cuda_scrypt_hashes_per_block(shape);
}

extern "C" cudaError_t cuda_scrypt_launch(const cuda_scrypt_params *p, uint32_t start, uint32_t count,
                                          unsigned slots, const cuda_scrypt_shape *shape, void *state,
                                          void *scratch, cuda_hits *hits, cudaStream_t stream)
{
    slot_state *st = static_cast<slot_state *>(state);
    uint4 *pad = static_cast<uint4 *>(scratch);
    romix_fn romix_kernel = romix_for(*shape);
    /* Only whole blocks of romix: round the slots used up to a block. */
    const unsigned per_block = cuda_scrypt_hashes_per_block(shape);
    if (romix_kernel == NULL || per_block == 0)
        return cudaErrorInvalidValue;
    const unsigned used = (count + per_block - 1) / per_block * per_block;
    if (used > slots || used == 0)
        return cudaErrorInvalidValue;
    pbkdf2_in<<<(used + 127) / 128, 128, 0, stream>>>(*p, start, used, st);
    /* The scratchpad is laid out for `used` slots (its entry stride). */
    romix_kernel<<<used / per_block, shape->threads_per_block, romix_smem(*shape), stream>>>(st, pad, used);
    pbkdf2_out<<<(count + 127) / 128, 128, 0, stream>>>(*p, start, count, st, hits);
    return cudaGetLastError();
}
