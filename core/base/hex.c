#include "core/base/hex.h"

#include <string.h>

int lode_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int lode_hex_decode(const char *hex, uint8_t *out, size_t len)
{
    if (hex == NULL || strlen(hex) != 2 * len)
        return -1;
    for (size_t i = 0; i < len; i++) {
        int hi = lode_hex_digit(hex[2 * i]), lo = lode_hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static const char digits[] = "0123456789abcdef";

void lode_hex_encode(const uint8_t *in, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * len] = '\0';
}

void lode_hex_encode_reversed(const uint8_t *in, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[in[len - 1 - i] >> 4];
        out[2 * i + 1] = digits[in[len - 1 - i] & 15];
    }
    out[2 * len] = '\0';
}
