/* Waiting for a set of threads while a stop may come: once the stop has
 * been asked for LODE_STOP_GRACE_MS, the threads still out (stuck in a
 * device call) are left behind rather than waited for. */
#ifndef LODE_DISPATCH_STOP_JOIN_H
#define LODE_DISPATCH_STOP_JOIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct lode_stop_join {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned finished;
    bool abandoned; /* the waiter gave up: late finishers count themselves back */
} lode_stop_join;

/* A new set, or NULL when out of memory. Left behind threads keep it: it is
 * freed by lode_stop_join_free only when none is out. */
lode_stop_join *lode_stop_join_new(void);
/* Each thread of the set calls this as its last act. */
void lode_stop_join_finished(lode_stop_join *j);
/* Waits until `threads` have finished, or until grace_ms after *stop is
 * seen set. Returns how many are still out; each is counted as a stuck
 * thread (core/base/stuck_threads.h), and the set, with whatever they use,
 * must then be left allocated. */
unsigned lode_stop_join_wait(lode_stop_join *j, unsigned threads, const atomic_int *stop, unsigned grace_ms);
void lode_stop_join_free(lode_stop_join *j);

#endif
