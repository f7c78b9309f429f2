/* Numbers as lode's lines write them (core/base/text.h): rates with an SI
 * prefix and plain decimals, never e-notation. The table is the rule as
 * docs/OPERATIONS.md states it; random values are read back with strtod
 * and must lie within the rounding of three significant digits. */
#include <math.h>
#include <string.h>

#include "core/base/text.h"
#include "tests/test_util.h"

static void check_rate(double rate, const char *unit, const char *want)
{
    char got[64];
    lode_format_rate(rate, unit, got, sizeof got);
    CHECK(strcmp(got, want) == 0, "%g %s: got '%s', want '%s'", rate, unit, got, want);
}

static void check_decimal(double v, int digits, const char *want)
{
    char got[64];
    lode_format_decimal(v, digits, got, sizeof got);
    CHECK(strcmp(got, want) == 0, "%g at %d digits: got '%s', want '%s'", v, digits, got, want);
}

static void table(void)
{
    check_rate(86.3e9, "candidates/s", "86.3 G candidates/s");
    check_rate(8.57e10, "candidates/s", "85.7 G candidates/s");
    check_rate(1.29e7, "candidates/s", "12.9 M candidates/s");
    check_rate(8.11e9, "H/s", "8.11 GH/s");
    check_rate(6370, "H/s", "6.37 kH/s");
    check_rate(123.4, "H/s", "123 H/s");
    check_rate(999.6, "H/s", "1.00 kH/s");
    check_rate(999960, "H/s", "1.00 MH/s");
    check_rate(0.0123, "sweeps/s", "0.0123 sweeps/s");
    check_rate(1.2e-5, "sweeps/s", "0.0000120 sweeps/s");
    check_rate(0, "H/s", "0 H/s");
    check_rate(2e21, "H/s", "2000 EH/s");
    check_decimal(4.12e-6, 3, "0.00000412");
    check_decimal(12345, 3, "12345");
    check_decimal(1048576, 6, "1048576");
    check_decimal(-86.34, 3, "-86.3");
    check_decimal(999.96, 3, "1000");
    check_decimal(1.5, 1, "2");
    check_decimal(NAN, 3, "?");
    check_decimal(INFINITY, 3, "?");
}

/* Random rates from 1e-6 to 1e20: no 'e' in the text, and the value read
 * back (mantissa times the prefix) within 0.5% (three digits' rounding). */
static void random_rates(void)
{
    static const char prefixes[] = "kMGTPE";
    for (int i = 0; i < 20000; i++) {
        double v = pow(10.0, -6.0 + 26.0 * (double)(test_rand() % 1000000) / 1e6);
        const char *unit = i % 2 ? "H/s" : "candidates/s";
        char text[64];
        lode_format_rate(v, unit, text, sizeof text);
        char *end;
        double back = strtod(text, &end);
        const char *p = end[0] == ' ' ? strchr(prefixes, end[1]) : NULL;
        if (p != NULL && end[1] != '\0')
            back *= pow(1000.0, (double)(p - prefixes + 1));
        bool plain = memchr(text, 'e', strcspn(text, " ")) == NULL && memchr(text, 'E', strcspn(text, " ")) == NULL;
        CHECK(plain && fabs(back - v) <= 0.005 * v, "%.17g: '%s' reads back as %.17g", v, text, back);
        if (!(plain && fabs(back - v) <= 0.005 * v))
            break;
    }
}

int main(void)
{
    test_seed();
    table();
    random_rates();
    return test_summary();
}
