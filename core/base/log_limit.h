/* Rate limits for log lines a peer can repeat at will (a pool's
 * set_difficulty, messages, unknown methods, notifies): at most
 * LODE_LOG_LIMIT_BURST lines of a kind per LODE_LOG_LIMIT_WINDOW_S; the rest
 * are counted and said as one line, "N similar messages suppressed (kind)",
 * before the next line of that kind shows, or at lode_log_limit_flush. So a
 * flood leaves a few lines a minute, and mining goes on meanwhile.
 *
 * A limit belongs to one thread (no lock): the stratum I/O thread keeps its
 * own. Zero-initialise it and set `kind`. */
#ifndef LODE_CORE_LOG_LIMIT_H
#define LODE_CORE_LOG_LIMIT_H

#include <stdint.h>

#include "core/base/log.h"

#define LODE_LOG_LIMIT_BURST 5
#define LODE_LOG_LIMIT_WINDOW_S 60.0

typedef struct lode_log_limit {
    const char *kind;       /* names the lines in the "suppressed" line */
    double window_start;    /* lode_clock_s of the window's first line */
    unsigned shown;         /* lines shown in this window */
    uint64_t suppressed;    /* lines held back since the last "suppressed" line */
} lode_log_limit;

void lode_log_limited(lode_log_limit *limit, lode_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Says what was held back, if anything (the end of a connection). */
void lode_log_limit_flush(lode_log_limit *limit);

#endif
