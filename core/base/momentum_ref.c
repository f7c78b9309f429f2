/* Momentum, straight from the protocol's momentum.cpp and main.h. */
#include "core/base/momentum_ref.h"

#include <string.h>

#include "core/base/sha256_ref.h"
#include "core/base/sha512_ref.h"

void lode_ref_momentum_midhash(const uint8_t header80[80], uint8_t mid[32])
{
    lode_ref_sha256d(header80, 80, mid);
}

/* The birthdays of nonces base .. base+7 (base a multiple of 8): one
 * SHA-512(le32(base) || midHash) gives all eight, word i (little-endian)
 * shifted right by 14 for nonce base + i. */
static void birthdays_of_base(const uint8_t mid[32], uint32_t base, uint64_t birthdays[8])
{
    uint8_t input[36], digest[64];
    for (int i = 0; i < 4; i++)
        input[i] = (uint8_t)(base >> (8 * i));
    memcpy(input + 4, mid, 32);
    lode_ref_sha512(input, sizeof input, digest);
    for (int w = 0; w < 8; w++) {
        uint64_t word = 0;
        for (int i = 7; i >= 0; i--)
            word = word << 8 | digest[8 * w + i];
        birthdays[w] = word >> (64 - LODE_MOMENTUM_BIRTHDAY_BITS);
    }
}

uint64_t lode_ref_momentum_birthday(const uint8_t mid[32], uint32_t nonce)
{
    uint64_t birthdays[8];
    birthdays_of_base(mid, nonce - nonce % 8, birthdays);
    return birthdays[nonce % 8];
}

bool lode_ref_momentum_verify(const uint8_t mid[32], uint32_t a, uint32_t b)
{
    if (a == b || a > LODE_MOMENTUM_NONCES || b > LODE_MOMENTUM_NONCES)
        return false;
    return lode_ref_momentum_birthday(mid, a) == lode_ref_momentum_birthday(mid, b);
}

void lode_ref_momentum_header88(const uint8_t header80[80], uint32_t a, uint32_t b,
                                uint8_t header88[88])
{
    memcpy(header88, header80, 80);
    for (int i = 0; i < 4; i++) {
        header88[80 + i] = (uint8_t)(a >> (8 * i));
        header88[84 + i] = (uint8_t)(b >> (8 * i));
    }
}

bool lode_ref_momentum_block_hash(const uint8_t header88[88], uint8_t hash[32])
{
    uint8_t mid[32];
    lode_ref_momentum_midhash(header88, mid);
    uint32_t a = 0, b = 0;
    for (int i = 3; i >= 0; i--) {
        a = a << 8 | header88[80 + i];
        b = b << 8 | header88[84 + i];
    }
    if (!lode_ref_momentum_verify(mid, a, b)) {
        memset(hash, 0xff, 32);
        return false;
    }
    lode_ref_sha256d(header88, 88, hash);
    return true;
}

