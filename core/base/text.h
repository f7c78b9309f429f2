/* Building a text in a fixed buffer, piece by piece; numbers as a user
 * reads them. */
#ifndef LODE_BASE_TEXT_H
#define LODE_BASE_TEXT_H

#include <stddef.h>

/* Appends printf-style text at buf + *used (len: the buffer's size) and
 * moves *used on. Past the end the text is cut (buf stays terminated) and
 * *used becomes len, so later appends do nothing. */
void lode_appendf(char *buf, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* v in plain decimal, never in e-notation, with `digits` significant
 * digits (1 to 17), every digit of the whole part kept: at 3 digits 86.3,
 * 0.0123, 0.00000412, 12345, 1000 for 999.96. "0" for 0; "?" for NaN or
 * infinity. */
void lode_format_decimal(double v, int digits, char *out, size_t len);

/* A rate as every line of lode writes it: three significant digits and an
 * SI prefix (k M G T P E), never e-notation. A unit that is a symbol
 * ("H/s") takes the prefix as SI writes it, a unit that is a word
 * ("candidates/s", "sweeps/s") after a space: "8.11 GH/s", "6.37 kH/s",
 * "86.3 G candidates/s", "0.0123 sweeps/s", "0 H/s". */
void lode_format_rate(double rate, const char *unit, char *out, size_t len);

#endif
