#include "core/base/text.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lode_appendf(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    *used = n < 0 || (size_t)n >= len - *used ? len : *used + (size_t)n;
}

void lode_format_decimal(double v, int digits, char *out, size_t len)
{
    if (!isfinite(v)) {
        snprintf(out, len, "?");
        return;
    }
    if (v == 0) {
        snprintf(out, len, "0");
        return;
    }
    digits = digits < 1 ? 1 : digits > 17 ? 17 : digits;
    /* Rounded to `digits` first, so 999.96 at 3 digits is 1000, not 1000.0. */
    char e_form[40];
    snprintf(e_form, sizeof e_form, "%.*e", digits - 1, v);
    double rounded = strtod(e_form, NULL);
    const char *e = strchr(e_form, 'e'); /* the exponent as printf rounded it */
    int exponent = e != NULL ? atoi(e + 1) : 0;
    int decimals = digits - 1 - exponent;
    if (decimals > 0)
        snprintf(out, len, "%.*f", decimals, rounded);
    else /* the whole part whole: 12345, not 12300 */
        snprintf(out, len, "%.0f", v);
}

void lode_format_rate(double rate, const char *unit, char *out, size_t len)
{
    static const char prefixes[] = "kMGTPE";
    int p = -1;
    char mantissa[48];
    lode_format_decimal(rate, 3, mantissa, sizeof mantissa);
    /* Scaled on the rounded value: 999.6 k is 1.00 M, not 1000 k. */
    while (fabs(strtod(mantissa, NULL)) >= 1000.0 && p + 1 < (int)sizeof prefixes - 1) {
        rate /= 1000.0;
        p++;
        lode_format_decimal(rate, 3, mantissa, sizeof mantissa);
    }
    int word = unit != NULL && islower((unsigned char)unit[0]);
    if (p < 0)
        snprintf(out, len, "%s %s", mantissa, unit ? unit : "");
    else
        snprintf(out, len, "%s %c%s%s", mantissa, prefixes[p], word ? " " : "", unit ? unit : "");
}
