#include "core/base/backoff.h"

double lode_backoff_s(double base_s, unsigned attempt, double max_s)
{
    double pause = base_s;
    /* Doubling stops at the cap, so a long run of failures costs no more
     * steps than the cap takes and never overflows. */
    for (unsigned i = 0; i < attempt && pause > 0 && pause < max_s; i++)
        pause *= 2;
    return pause < max_s ? pause : max_s;
}
