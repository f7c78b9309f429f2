#include "core/dispatch/selftest.h"

#include <stdio.h>
#include <string.h>

#include "core/base/hex.h"
#include "core/base/status.h"
#include "core/base/vectors.h"
#include "core/dispatch/tf_selftest.h"

/* Scans [start, start+count) and returns the hits in *hits. */
static int scan_all(lode_handle *h, uint64_t start, uint64_t count, lode_hits *hits, const atomic_int *abort)
{
    static const atomic_int never = 0;
    lode_range range = {.start = start, .count = count};
    uint64_t done = 0;
    lode_hits_clear(hits);
    int rc = lode_handle_scan(h, &range, hits, &done, abort != NULL ? abort : &never);
    if (rc == LODE_OK && done != count)
        rc = LODE_ERR_DEVICE;
    return rc;
}

static int check_vector(lode_handle *h, const lode_pow_vector *v, bool window, lode_hits *hits,
                        const atomic_int *abort, char *why, size_t why_len)
{
    lode_work work = {.algo = h->algo};
    uint8_t hash_le[32], hash_be[32];
    if (lode_hex_decode(v->header_hex, work.header.header, 80) != 0 ||
        lode_hex_decode(v->pow_hash_hex, hash_be, 32) != 0) {
        snprintf(why, why_len, "vector '%s' is malformed", v->name);
        return -1;
    }
    for (int i = 0; i < 32; i++)
        hash_le[i] = hash_be[31 - i];
    const uint8_t *n = work.header.header + 76;
    uint32_t nonce = (uint32_t)n[0] | (uint32_t)n[1] << 8 | (uint32_t)n[2] << 16 | (uint32_t)n[3] << 24;

    /* Target = the known hash: the nonce is a hit, exactly at the boundary. */
    work.header.target = lode_u256_from_le_bytes(hash_le);
    uint64_t start = nonce, count = 1;
    if (window) { /* straddle SIMD lane and chunk boundaries around the nonce */
        start = nonce >= 19 ? nonce - 19 : 0;
        count = (nonce <= UINT32_MAX - 20 ? (uint64_t)nonce + 21 : 1ull << 32) - start;
    }
    int rc = lode_handle_set_work(h, &work);
    if (rc == LODE_OK)
        rc = scan_all(h, start, count, hits, abort);
    if (rc != LODE_OK) {
        snprintf(why, why_len, "vector '%s': %s", v->name, lode_status_str(rc));
        return -1;
    }
    if (hits->count != 1 || hits->items[0].index != nonce) {
        snprintf(why, why_len, "vector '%s': expected exactly nonce %u as a hit, got %zu hit(s)%s",
                 v->name, nonce, hits->count, hits->count ? " at other nonces" : "");
        return -1;
    }

    /* Target = the known hash minus one: the nonce must not be a hit. */
    for (int i = 0; i < 8; i++)
        if (work.header.target.w[i]-- != 0)
            break;
    rc = lode_handle_set_work(h, &work);
    if (rc == LODE_OK)
        rc = scan_all(h, nonce, 1, hits, abort);
    if (rc != LODE_OK) {
        snprintf(why, why_len, "vector '%s': %s", v->name, lode_status_str(rc));
        return -1;
    }
    if (hits->count != 0) {
        snprintf(why, why_len, "vector '%s': nonce %u reported with a target below its hash",
                 v->name, nonce);
        return -1;
    }
    return 0;
}

/* A collision search: the vector's 88-byte header carries the pair. One
 * sweep of its header with the target exactly at the pair's block hash
 * must report that pair and nothing else (the header's other collisions
 * hash above it), so both the search and the target test are exercised. */
static int check_collision_vector(lode_handle *h, const lode_pow_vector *v, lode_hits *hits,
                                  const atomic_int *abort, char *why, size_t why_len)
{
    lode_work work = {.algo = h->algo};
    uint8_t header88[88], hash_le[32], hash_be[32];
    if (lode_hex_decode(v->header_hex, header88, 88) != 0 ||
        lode_hex_decode(v->pow_hash_hex, hash_be, 32) != 0) {
        snprintf(why, why_len, "vector '%s' is malformed", v->name);
        return -1;
    }
    for (int i = 0; i < 32; i++)
        hash_le[i] = hash_be[31 - i];
    memcpy(work.header.header, header88, 80);
    work.header.target = lode_u256_from_le_bytes(hash_le);
    const uint8_t *n = header88 + 76;
    uint32_t nonce = (uint32_t)n[0] | (uint32_t)n[1] << 8 | (uint32_t)n[2] << 16 | (uint32_t)n[3] << 24;
    uint32_t pair[2];
    for (int k = 0; k < 2; k++) {
        const uint8_t *p = header88 + 80 + 4 * k;
        pair[k] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    }
    int rc = lode_handle_set_work(h, &work);
    if (rc == LODE_OK)
        rc = scan_all(h, nonce, 1, hits, abort);
    if (rc != LODE_OK) {
        snprintf(why, why_len, "vector '%s': %s", v->name, lode_status_str(rc));
        return -1;
    }
    uint32_t lo = pair[0] < pair[1] ? pair[0] : pair[1], hi = pair[0] ^ pair[1] ^ lo;
    if (hits->count != 1 || hits->items[0].index != nonce || hits->items[0].pair[0] != lo ||
        hits->items[0].pair[1] != hi) {
        snprintf(why, why_len, "vector '%s': expected exactly the pair %u %u, got %zu hit(s)",
                 v->name, lo, hi, hits->count);
        return -1;
    }
    return 0;
}

int lode_selftest_handle(lode_handle *h, const atomic_int *abort, char *why, size_t why_len)
{
    if (lode_algo_get(h->algo)->kind == LODE_WORK_TF)
        return lode_tf_selftest_handle(h, true, abort, why, why_len); /* mfaktc's short set */
    size_t count;
    const lode_pow_vector *vectors = lode_pow_vectors(h->algo, &count);
    if (count == 0) {
        snprintf(why, why_len, "no self-test vectors for %s", lode_algo_get(h->algo)->name);
        return -1;
    }
    lode_hits hits = {0};
    int rc = 0;
    if (lode_algo_get(h->algo)->kind == LODE_WORK_COLLISION_SEARCH) {
        /* One full sweep per vector: the first (mainnet genesis) only. */
        rc = check_collision_vector(h, &vectors[0], &hits, abort, why, why_len);
    } else {
        for (size_t i = 0; i < count && rc == 0; i++)
            rc = check_vector(h, &vectors[i], i == 0, &hits, abort, why, why_len);
    }
    lode_hits_free(&hits);
    if (rc != 0 && abort != NULL && atomic_load(abort))
        snprintf(why, why_len, "interrupted");
    return rc;
}
