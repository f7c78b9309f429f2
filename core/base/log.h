/* Log lines on stderr: "[2026-11-22 10:00:00] message", coloured by level
 * when stderr is a terminal (cpuminer's look). Thread-safe. */
#ifndef LODE_CORE_LOG_H
#define LODE_CORE_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* NOTICE: what a run is for (the end-of-run summary); shown even with -q,
 * which hides INFO and DEBUG. */
typedef enum lode_log_level {
    LODE_LOG_ERROR,
    LODE_LOG_WARN,
    LODE_LOG_NOTICE,
    LODE_LOG_INFO,
    LODE_LOG_DEBUG
} lode_log_level;

void lode_log_configure(bool quiet, bool color);
void lode_log(lode_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies text from a pool or node keeping printable ASCII only (anything
 * else becomes '?'), so it cannot inject terminal escapes into the log;
 * truncated to cap - 1 bytes, always terminated. NULL in gives "". out may
 * be in (sanitising in place). */
void lode_log_printable(char *out, size_t cap, const char *in);

#endif
