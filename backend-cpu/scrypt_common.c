/* PBKDF2-HMAC-SHA256 for scrypt's Litecoin use, specialised to an 80-byte
 * password that is also the salt (the block header), on the job's SHA-256
 * block function. Per hash it costs 16 compressions: 1 to hash the key
 * (the midstate of the first 64 header bytes is shared by the job), 2 for
 * the HMAC pads, 9 for the 128-byte B and 4 for the final 32 bytes.
 * Also the conversions to and from the SIMD paths' diagonal row order. */
#include <string.h>

#include "backend-cpu/scrypt_internal.h"

#define HEADER_BYTES 80u
#define SHA256_BLOCK 64u

static uint32_t byteswap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

static void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Writes SHA-256 padding for a message of total_bytes into the rest of the
 * final block, from offset used (which must leave room for 9 bytes). */
static void pad_final_block(uint8_t block[SHA256_BLOCK], unsigned used, uint64_t total_bytes)
{
    uint64_t bits = total_bytes * 8u;
    block[used] = 0x80;
    memset(block + used + 1, 0, SHA256_BLOCK - 8 - used - 1);
    store_be32(block + SHA256_BLOCK - 8, (uint32_t)(bits >> 32));
    store_be32(block + SHA256_BLOCK - 4, (uint32_t)bits);
}

static void state_to_bytes(const uint32_t state[8], uint8_t digest[32])
{
    for (unsigned i = 0; i < 8; i++)
        store_be32(digest + 4 * i, state[i]);
}

/* Completes an HMAC: the outer hash over a 32-byte inner digest. */
static void hmac_outer(const cpu_scrypt_job *job, const cpu_scrypt_hmac *hmac,
                       const uint32_t inner_state[8], uint32_t result[8])
{
    uint8_t block[SHA256_BLOCK];
    state_to_bytes(inner_state, block);
    pad_final_block(block, 32, SHA256_BLOCK + 32);
    memcpy(result, hmac->outer, 32);
    job->compress(result, block);
}

void cpu_scrypt_prepare(cpu_scrypt_job *job)
{
    memset(job->pre, 0, sizeof job->pre);
    uint32_t *midstate = job->pre + CPU_SCRYPT_PRE_MIDSTATE;
    memcpy(midstate, sha256_iv, 32);
    job->compress(midstate, job->header);
}

/* The header's last 16 bytes with the nonce in place, i.e. bytes 64..79. */
static void header_tail(const cpu_scrypt_job *job, uint32_t nonce, uint8_t tail[16])
{
    memcpy(tail, job->header + SHA256_BLOCK, 12);
    store_le32(tail + 12, nonce);
}

void cpu_scrypt_pbkdf2_start(const cpu_scrypt_job *job, uint32_t nonce, cpu_scrypt_hmac *hmac,
                             uint32_t x[CPU_SCRYPT_BLOCK_WORDS])
{
    uint8_t tail[16];
    header_tail(job, nonce, tail);

    /* The 80-byte key is longer than a block, so HMAC keys with its hash. */
    uint8_t block[SHA256_BLOCK];
    uint32_t key_hash[8];
    memcpy(key_hash, job->pre + CPU_SCRYPT_PRE_MIDSTATE, 32);
    memcpy(block, tail, 16);
    pad_final_block(block, 16, HEADER_BYTES);
    job->compress(key_hash, block);

    uint8_t ipad[SHA256_BLOCK], opad[SHA256_BLOCK];
    state_to_bytes(key_hash, ipad);
    memset(ipad + 32, 0, 32);
    for (unsigned i = 0; i < SHA256_BLOCK; i++) {
        opad[i] = ipad[i] ^ 0x5c;
        ipad[i] ^= 0x36;
    }
    memcpy(hmac->inner, sha256_iv, 32);
    job->compress(hmac->inner, ipad);
    memcpy(hmac->outer, sha256_iv, 32);
    job->compress(hmac->outer, opad);

    /* T_k = HMAC(header, header || be32(k)) for k = 1..4; the inner hash
     * of the salt's first 64 bytes is common to all four. */
    uint32_t salt_state[8];
    memcpy(salt_state, hmac->inner, 32);
    job->compress(salt_state, job->header);

    memcpy(block, tail, 16);
    pad_final_block(block, 20, SHA256_BLOCK + HEADER_BYTES + 4);
    for (uint32_t k = 1; k <= 4; k++) {
        uint32_t inner[8], t[8];
        store_be32(block + 16, k);
        memcpy(inner, salt_state, 32);
        job->compress(inner, block);
        hmac_outer(job, hmac, inner, t);
        /* T's bytes are big-endian state words; ROMix reads them as
         * little-endian words. */
        for (unsigned i = 0; i < 8; i++)
            x[8 * (k - 1) + i] = byteswap32(t[i]);
    }
}

void cpu_scrypt_pbkdf2_finish(const cpu_scrypt_job *job, const cpu_scrypt_hmac *hmac,
                              const uint32_t x[CPU_SCRYPT_BLOCK_WORDS], uint8_t out[32])
{
    uint8_t salt[2 * SHA256_BLOCK];
    for (unsigned i = 0; i < CPU_SCRYPT_BLOCK_WORDS; i++)
        store_le32(salt + 4 * i, x[i]);

    uint32_t inner[8], result[8];
    memcpy(inner, hmac->inner, 32);
    job->compress(inner, salt);
    job->compress(inner, salt + SHA256_BLOCK);

    uint8_t block[SHA256_BLOCK];
    store_be32(block, 1); /* the only output block of dkLen = 32 */
    pad_final_block(block, 4, SHA256_BLOCK + sizeof salt + 4);
    job->compress(inner, block);

    hmac_outer(job, hmac, inner, result);
    state_to_bytes(result, out);
}

/* Index in a 16-word Salsa20 block of diagonal row r, element c. */
static unsigned diagonal_word(unsigned r, unsigned c)
{
    return 4 * ((r + c) & 3) + c;
}

void cpu_scrypt_to_diagonal(const uint32_t x[CPU_SCRYPT_BLOCK_WORDS],
                            uint32_t diag[CPU_SCRYPT_BLOCK_WORDS])
{
    for (unsigned half = 0; half < 2; half++)
        for (unsigned r = 0; r < 4; r++)
            for (unsigned c = 0; c < 4; c++)
                diag[16 * half + 4 * r + c] = x[16 * half + diagonal_word(r, c)];
}

void cpu_scrypt_from_diagonal(const uint32_t diag[CPU_SCRYPT_BLOCK_WORDS],
                              uint32_t x[CPU_SCRYPT_BLOCK_WORDS])
{
    for (unsigned half = 0; half < 2; half++)
        for (unsigned r = 0; r < 4; r++)
            for (unsigned c = 0; c < 4; c++)
                x[16 * half + diagonal_word(r, c)] = diag[16 * half + 4 * r + c];
}
