/* The one clock for durations and deadlines: seconds on the monotonic
 * clock (never jumps with the wall clock), from an arbitrary start. */
#ifndef LODE_CORE_CLOCK_H
#define LODE_CORE_CLOCK_H

double lode_clock_s(void);

#endif
