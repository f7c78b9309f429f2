#include "core/base/text.h"

#include <stdarg.h>
#include <stdio.h>

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
