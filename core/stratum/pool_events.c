#include "core/stratum/pool_events.h"

#include <stddef.h>
#include <stdint.h>

#include "core/base/target.h"

void lode_pool_events_init(lode_pool_events *e)
{
    *e = (lode_pool_events){
        .difficulty = {.kind = "stratum: pool difficulty"},
        .message = {.kind = "pool message"},
        .unknown_method = {.kind = "stratum: unknown method"},
        .unknown_reply = {.kind = "stratum: reply to an unknown request id"},
        .job = {.kind = "stratum: job"},
        .bad_line = {.kind = "stratum: bad line from the pool"},
        .version_mask = {.kind = "stratum: version mask"},
    };
}

void lode_pool_events_flush(lode_pool_events *e)
{
    lode_log_limit *all[] = {&e->difficulty, &e->message, &e->unknown_method, &e->unknown_reply,
                             &e->job,        &e->bad_line, &e->version_mask};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        lode_log_limit_flush(all[i]);
}

void lode_pool_events_difficulty(lode_pool_events *e, double difficulty, lode_algo algo)
{
    lode_u256 target;
    lode_target_from_difficulty(difficulty, algo, &target);
    bool every_hash = true;
    for (size_t i = 0; i < 8; i++)
        every_hash = every_hash && target.w[i] == UINT32_MAX;
    if (lode_u256_is_zero(&target))
        lode_log_limited(&e->difficulty, LODE_LOG_WARN, "stratum: pool difficulty %g is too high for any hash to "
                         "meet; its jobs are not mined (idle until the pool lowers it)", difficulty);
    else if (every_hash)
        lode_log_limited(&e->difficulty, LODE_LOG_WARN, "stratum: pool difficulty %g makes every hash a share: a "
                         "flood; shares beyond what the pool answers in time are not sent", difficulty);
    else
        lode_log_limited(&e->difficulty, LODE_LOG_INFO, "stratum: pool difficulty %g (from the next job)",
                         difficulty);
}
