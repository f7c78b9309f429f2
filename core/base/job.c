#include "core/base/job.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/sha256_ref.h"

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

int lode_job_set_coinbase(lode_job *job, const uint8_t *coinb1, size_t coinb1_len,
                          const uint8_t *coinb2, size_t coinb2_len)
{
    /* +1: malloc(0) may return NULL, which would read as failure. */
    uint8_t *a = malloc(coinb1_len + 1), *b = malloc(coinb2_len + 1);
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return -1;
    }
    if (coinb1_len)
        memcpy(a, coinb1, coinb1_len);
    if (coinb2_len)
        memcpy(b, coinb2, coinb2_len);
    free(job->coinb1);
    free(job->coinb2);
    job->coinb1 = a;
    job->coinb2 = b;
    job->coinb1_len = coinb1_len;
    job->coinb2_len = coinb2_len;
    return 0;
}

int lode_job_copy(lode_job *dst, const lode_job *src)
{
    *dst = *src;
    dst->coinb1 = dst->coinb2 = NULL;
    if (lode_job_set_coinbase(dst, src->coinb1, src->coinb1_len, src->coinb2, src->coinb2_len) != 0) {
        *dst = (lode_job){0};
        return -1;
    }
    return 0;
}

void lode_job_free(lode_job *job)
{
    free(job->coinb1);
    free(job->coinb2);
    *job = (lode_job){0};
}

void lode_job_merkle_root(const lode_job *job, const uint8_t *extranonce2, uint8_t root[32])
{
    /* The coinbase is streamed into the hash: no buffer to size. */
    lode_ref_sha256_ctx ctx;
    uint8_t inner[32];
    lode_ref_sha256_init(&ctx);
    lode_ref_sha256_update(&ctx, job->coinb1, job->coinb1_len);
    lode_ref_sha256_update(&ctx, job->extranonce1, job->extranonce1_len);
    lode_ref_sha256_update(&ctx, extranonce2, job->extranonce2_len);
    lode_ref_sha256_update(&ctx, job->coinb2, job->coinb2_len);
    lode_ref_sha256_final(&ctx, inner);
    lode_ref_sha256(inner, 32, root);

    uint8_t pair[64];
    for (size_t i = 0; i < job->branch_len; i++) {
        memcpy(pair, root, 32);
        memcpy(pair + 32, job->branch[i], 32);
        lode_ref_sha256d(pair, 64, root);
    }
}

uint32_t lode_header_ntime(const uint8_t header[80])
{
    const uint8_t *p = header + 68;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void lode_job_header(const lode_job *job, const uint8_t *extranonce2, uint32_t ntime,
                     uint32_t version, uint8_t header[80])
{
    put_le32(header, version);
    memcpy(header + 4, job->prevhash, 32);
    lode_job_merkle_root(job, extranonce2, header + 36);
    put_le32(header + 68, ntime);
    put_le32(header + 72, job->nbits);
    put_le32(header + 76, 0);
}

size_t lode_job_coinbase(const lode_job *job, const uint8_t *extranonce2, uint8_t *out,
                         size_t out_cap)
{
    size_t len = job->coinb1_len + job->extranonce1_len + job->extranonce2_len + job->coinb2_len;
    if (len > out_cap)
        return 0;
    uint8_t *p = out;
    memcpy(p, job->coinb1, job->coinb1_len);
    p += job->coinb1_len;
    memcpy(p, job->extranonce1, job->extranonce1_len);
    p += job->extranonce1_len;
    memcpy(p, extranonce2, job->extranonce2_len);
    p += job->extranonce2_len;
    memcpy(p, job->coinb2, job->coinb2_len);
    return len;
}

int lode_merkle_branch(const uint8_t (*leaves)[32], size_t n, uint8_t branch[][32])
{
    if (n == 0)
        return -1;
    /* Work on a copy of the current level; leaf 0's own value never
     * matters, only its siblings on the way up. */
    uint8_t (*level)[32] = malloc((n + 1) * sizeof *level);
    if (level == NULL)
        return -1;
    memcpy(level, leaves, n * sizeof *level);
    int depth = 0;
    while (n > 1) {
        if (depth == LODE_MERKLE_BRANCH_MAX) {
            free(level);
            return -1;
        }
        if (n % 2 == 1) /* Bitcoin duplicates the last hash of an odd level */
            memcpy(level[n], level[n - 1], 32);
        memcpy(branch[depth++], level[1], 32);
        size_t next = (n + 1) / 2;
        for (size_t i = 0; i < next; i++)
            lode_ref_sha256d(level[2 * i], 64, level[i]);
        n = next;
    }
    free(level);
    return depth;
}
