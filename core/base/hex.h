/* Hexadecimal text <-> bytes, strict: no prefixes, no spaces, even length. */
#ifndef LODE_CORE_HEX_H
#define LODE_CORE_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Decodes exactly `len` bytes from `hex`, which must be 2*len hex digits and
 * nothing more. Returns 0, or -1 on a wrong length or a non-hex digit. */
/* The value of one hex digit (either case), or -1. */
int lode_hex_digit(char c);
int lode_hex_decode(const char *hex, uint8_t *out, size_t len);
/* Writes 2*len lower-case digits and a NUL to out (size 2*len+1). */
void lode_hex_encode(const uint8_t *in, size_t len, char *out);
/* Same, with the bytes in reverse order: the "display order" of hashes. */
void lode_hex_encode_reversed(const uint8_t *in, size_t len, char *out);

#endif
