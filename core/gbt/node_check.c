#include "core/gbt/node_check.h"

#include <math.h>
#include <string.h>

#include "core/base/target.h"

void lode_gbt_pow_check_init(lode_gbt_pow_check *c, lode_algo algo)
{
    c->algo = algo;
    c->headers = 0;
    c->log2_pass = 0;
}

lode_gbt_pow_state lode_gbt_pow_check_header(lode_gbt_pow_check *c, const uint8_t header[80])
{
    static const uint8_t zero[32];
    if (memcmp(header + 4, zero, 32) == 0)
        return LODE_GBT_POW_GENESIS;
    uint32_t bits = (uint32_t)header[72] | (uint32_t)header[73] << 8 | (uint32_t)header[74] << 16 |
                    (uint32_t)header[75] << 24;
    lode_u256 target;
    if (lode_target_from_nbits(bits, &target) != 0 || lode_u256_is_zero(&target))
        return LODE_GBT_POW_MALFORMED;
    uint8_t hash[32];
    lode_algo_get(c->algo)->pow_hash_ref(header, hash);
    if (!lode_hash_meets_target(hash, &target))
        return LODE_GBT_POW_WRONG;
    /* log2((target + 1) / 2^256); a double holds the leading bits, enough. */
    double t = 0;
    for (int i = 7; i >= 0; i--)
        t = t * 4294967296.0 + target.w[i];
    c->log2_pass += log2(t + 1.0) - 256.0;
    c->headers++;
    return c->log2_pass <= -(double)LODE_GBT_POW_CHECK_BITS ? LODE_GBT_POW_CONFIRMED
                                                             : LODE_GBT_POW_MORE;
}

lode_gbt_verdict lode_gbt_submit_verdict(const char *result, bool retried)
{
    if (result == NULL)
        return LODE_GBT_ACCEPTED;
    if (strcmp(result, "duplicate") == 0)
        return retried ? LODE_GBT_KEPT : LODE_GBT_KNOWN;
    if (strcmp(result, "inconclusive") == 0 || strcmp(result, "duplicate-inconclusive") == 0)
        return LODE_GBT_INCONCLUSIVE;
    return LODE_GBT_REJECTED;
}
