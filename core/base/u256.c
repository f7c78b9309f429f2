#include "core/base/u256.h"

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

lode_u256 lode_u256_from_le_bytes(const uint8_t bytes[32])
{
    lode_u256 v;
    for (int i = 0; i < 8; i++)
        v.w[i] = load_le32(bytes + 4 * i);
    return v;
}

void lode_u256_to_le_bytes(const lode_u256 *v, uint8_t bytes[32])
{
    for (int i = 0; i < 8; i++)
        for (int b = 0; b < 4; b++)
            bytes[4 * i + b] = (uint8_t)(v->w[i] >> (8 * b));
}

int lode_u256_cmp(const lode_u256 *a, const lode_u256 *b)
{
    for (int i = 7; i >= 0; i--)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

bool lode_u256_is_zero(const lode_u256 *v)
{
    uint32_t any = 0;
    for (int i = 0; i < 8; i++)
        any |= v->w[i];
    return any == 0;
}

bool lode_hash_meets_target(const uint8_t hash[32], const lode_u256 *target)
{
    lode_u256 h = lode_u256_from_le_bytes(hash);
    return lode_u256_cmp(&h, target) <= 0;
}
