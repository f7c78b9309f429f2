/* The value parsers of the options (option_parse.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli/option_parse.h"

int cli_parse_u64(const char *text, uint64_t max, uint64_t *out)
{
    if (text == NULL || *text < '0' || *text > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_positive(const char *text, double *out)
{
    if (text == NULL || *text == '\0')
        return -1;
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !(v > 0) || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int cli_parse_seconds(const char *text, double *out)
{
    if (text == NULL || *text == '\0')
        return -1;
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_duration(const char *text, double *out)
{
    if (text == NULL || *text == '\0')
        return -1;
    char number[64];
    size_t len = strlen(text);
    double unit = 1;
    if (len > 1 && strchr("smh", text[len - 1]) != NULL) {
        unit = text[len - 1] == 'h' ? 3600 : text[len - 1] == 'm' ? 60 : 1;
        len--;
    }
    if (len >= sizeof number)
        return -1;
    memcpy(number, text, len);
    number[len] = '\0';
    double v;
    if (cli_parse_positive(number, &v) != 0 || v * unit > 1e9)
        return -1;
    *out = v * unit;
    return 0;
}
