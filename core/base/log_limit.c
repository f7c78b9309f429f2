#include "core/base/log_limit.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/base/clock.h"

void lode_log_limit_flush(lode_log_limit *limit)
{
    if (limit->suppressed == 0)
        return;
    lode_log(LODE_LOG_INFO, "%llu similar messages suppressed (%s)", (unsigned long long)limit->suppressed,
             limit->kind ? limit->kind : "repeated lines");
    limit->suppressed = 0;
}

void lode_log_limited(lode_log_limit *limit, lode_log_level level, const char *fmt, ...)
{
    double now = lode_clock_s();
    if (limit->shown == 0 || now - limit->window_start >= LODE_LOG_LIMIT_WINDOW_S) {
        limit->window_start = now;
        limit->shown = 0;
    }
    if (limit->shown >= LODE_LOG_LIMIT_BURST) {
        limit->suppressed++;
        return;
    }
    limit->shown++;
    lode_log_limit_flush(limit);
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    lode_log(level, "%s", line);
}
