#include "core/base/target.h"

#include <math.h>
#include <string.h>

#include "core/base/hex.h"

int lode_target_from_nbits(uint32_t nbits, lode_u256 *target)
{
    unsigned size = nbits >> 24;
    uint32_t mantissa = nbits & 0x007fffff;
    memset(target, 0, sizeof *target);
    if (mantissa == 0)
        return 0;
    if (nbits & 0x00800000)
        return -1; /* negative */
    if (size <= 3) {
        target->w[0] = mantissa >> (8 * (3 - size));
        return 0;
    }
    /* The mantissa's lowest byte lands at byte offset size-3. */
    unsigned shift = 8 * (size - 3);
    unsigned top_bit = shift + 32 - (unsigned)__builtin_clz(mantissa);
    if (top_bit > 256)
        return -1;
    unsigned word = shift / 32, bits = shift % 32;
    target->w[word] = mantissa << bits;
    if (bits != 0 && word + 1 < 8)
        target->w[word + 1] = mantissa >> (32 - bits);
    return 0;
}

/* Bit length of v (0 for zero). */
static unsigned bit_length(const lode_u256 *v)
{
    for (int i = 7; i >= 0; i--)
        if (v->w[i])
            return 32 * (unsigned)i + 32 - (unsigned)__builtin_clz(v->w[i]);
    return 0;
}

/* v >> shift, low 32 bits. */
static uint32_t shifted_low32(const lode_u256 *v, unsigned shift)
{
    unsigned word = shift / 32, bits = shift % 32;
    uint64_t lo = word < 8 ? v->w[word] : 0;
    uint64_t hi = word + 1 < 8 ? v->w[word + 1] : 0;
    return (uint32_t)(((hi << 32) | lo) >> bits);
}

uint32_t lode_target_to_nbits(const lode_u256 *target)
{
    unsigned size = (bit_length(target) + 7) / 8;
    uint32_t mantissa = size <= 3 ? target->w[0] << (8 * (3 - size))
                                  : shifted_low32(target, 8 * (size - 3));
    mantissa &= 0x00ffffff;
    /* The sign bit must stay clear: move a byte into the exponent. */
    if (mantissa & 0x00800000) {
        mantissa >>= 8;
        size++;
    }
    return mantissa | (uint32_t)size << 24;
}

int lode_target_from_difficulty(double diff, lode_algo algo, lode_u256 *target)
{
    const lode_algo_info *info = lode_algo_get(algo);
    if (info == NULL || !isfinite(diff) || diff <= 0)
        return -1;
    /* target = 0xffff0000 * 2^(192 + shift) / diff, computed the way pools
     * and cpuminer do: scale diff down by whole 32-bit words, divide once in
     * double precision and truncate. Truncation only lowers the target, so a
     * share that meets it always meets the pool's exact target. */
    double d = ldexp(diff, -(int)info->pool_diff1_shift);
    int word = 6;
    while (word > 0 && d > 1.0) {
        d = ldexp(d, -32);
        word--;
    }
    double quotient = 4294901760.0 / d;
    memset(target, 0, sizeof *target);
    if (quotient >= 18446744073709551616.0) { /* above 2^256: every hash is a share */
        memset(target->w, 0xff, sizeof target->w);
        return 0;
    }
    uint64_t q = (uint64_t)quotient;
    target->w[word] = (uint32_t)q;
    target->w[word + 1] = (uint32_t)(q >> 32);
    return 0;
}

double lode_target_to_difficulty(const lode_u256 *target, lode_algo algo)
{
    const lode_algo_info *info = lode_algo_get(algo);
    double t = 0;
    for (int i = 7; i >= 0; i--)
        t = t * 4294967296.0 + target->w[i];
    if (info == NULL || t == 0)
        return INFINITY;
    return ldexp(65535.0, 208 + (int)info->pool_diff1_shift) / t;
}

double lode_target_chance(const lode_u256 *target)
{
    double t = 0;
    for (int i = 7; i >= 0; i--)
        t = t * 4294967296.0 + target->w[i];
    return ldexp(t + 1.0, -256);
}

int lode_target_parse_hex(const char *hex, lode_u256 *target)
{
    uint8_t be[32], le[32];
    if (lode_hex_decode(hex, be, sizeof be) != 0)
        return -1;
    for (int i = 0; i < 32; i++)
        le[i] = be[31 - i];
    *target = lode_u256_from_le_bytes(le);
    return 0;
}

void lode_target_format_hex(const lode_u256 *target, char out[65])
{
    uint8_t le[32];
    lode_u256_to_le_bytes(target, le);
    lode_hex_encode_reversed(le, sizeof le, out);
}
