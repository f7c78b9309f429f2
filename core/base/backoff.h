#ifndef LODE_BACKOFF_H
#define LODE_BACKOFF_H

/* The pause before retry number `attempt` (0: the first retry) of an
 * exponential backoff: base_s doubled attempt times, at most max_s. Every
 * retry loop of lode (pools, the node, PrimeNet, a faulted device) waits
 * this long, so a peer that is down is asked ever less often. */
double lode_backoff_s(double base_s, unsigned attempt, double max_s);

#endif
