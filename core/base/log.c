#include "core/base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static bool log_quiet;
static int log_color = -1; /* -1: decide from isatty on first use */

void lode_log_configure(bool quiet, bool color)
{
    log_quiet = quiet;
    log_color = color ? isatty(STDERR_FILENO) : 0;
}

void lode_log(lode_log_level level, const char *fmt, ...)
{
    /* -q keeps errors, warnings and the summary: what a quiet user still needs. */
    if (log_quiet && level >= LODE_LOG_INFO)
        return;
    if (log_color < 0)
        log_color = isatty(STDERR_FILENO);
    static const char *colors[] = {"\033[1;31m", "\033[1;33m", "", "", "\033[2m"};
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);

    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&log_lock);
    fprintf(stderr, "[%s] %s", stamp, log_color ? colors[level] : "");
    vfprintf(stderr, fmt, ap);
    fputs(log_color && colors[level][0] ? "\033[0m\n" : "\n", stderr);
    pthread_mutex_unlock(&log_lock);
    va_end(ap);
}

void lode_log_printable(char *out, size_t cap, const char *in)
{
    if (cap == 0)
        return;
    size_t n = 0;
    for (; in != NULL && *in != '\0' && n + 1 < cap; in++) {
        unsigned char c = (unsigned char)*in;
        out[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[n] = '\0';
}
