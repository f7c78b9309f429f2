#include "core/dispatch/stop_join.h"

#include <stdlib.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/stuck_threads.h"

lode_stop_join *lode_stop_join_new(void)
{
    lode_stop_join *j = calloc(1, sizeof *j);
    if (j == NULL)
        return NULL;
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->changed, NULL);
    return j;
}

void lode_stop_join_finished(lode_stop_join *j)
{
    pthread_mutex_lock(&j->lock);
    j->finished++;
    if (j->abandoned)
        lode_stuck_thread_returned();
    pthread_cond_broadcast(&j->changed);
    pthread_mutex_unlock(&j->lock);
}

/* The stop flag is polled: whoever sets it does not know this waiter. */
#define POLL_MS 50

unsigned lode_stop_join_wait(lode_stop_join *j, unsigned threads, const atomic_int *stop, unsigned grace_ms)
{
    double give_up_at = 0;
    pthread_mutex_lock(&j->lock);
    while (j->finished < threads) {
        if (give_up_at == 0 && atomic_load(stop))
            give_up_at = lode_clock_s() + grace_ms / 1000.0;
        if (give_up_at != 0 && lode_clock_s() >= give_up_at)
            break;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&j->changed, &j->lock, &until);
    }
    unsigned out = threads - j->finished;
    if (out > 0) {
        j->abandoned = true;
        for (unsigned i = 0; i < out; i++)
            lode_stuck_thread_left();
    }
    pthread_mutex_unlock(&j->lock);
    return out;
}

void lode_stop_join_free(lode_stop_join *j)
{
    if (j == NULL)
        return;
    pthread_cond_destroy(&j->changed);
    pthread_mutex_destroy(&j->lock);
    free(j);
}
