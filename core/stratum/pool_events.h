/* The stratum client's log lines for what a pool may send at will (a
 * difficulty, a message, an unknown method, a job, a bad line): each kind
 * rate-limited (core/base/log_limit.h), so a pool that floods lode with
 * them leaves a few lines a minute and "N similar messages suppressed". */
#ifndef LODE_STRATUM_POOL_EVENTS_H
#define LODE_STRATUM_POOL_EVENTS_H

#include "core/base/algo.h"
#include "core/base/log_limit.h"

typedef struct lode_pool_events {
    lode_log_limit difficulty, message, unknown_method, unknown_reply, job, bad_line, version_mask;
} lode_pool_events;

void lode_pool_events_init(lode_pool_events *e);
/* Says what each kind held back (the end of a connection). */
void lode_pool_events_flush(lode_pool_events *e);
/* mining.set_difficulty: a warning when no hash, or every hash, meets it. */
void lode_pool_events_difficulty(lode_pool_events *e, double difficulty, lode_algo algo);

#endif
