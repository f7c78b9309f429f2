/* What check.c's device threads and check_run.c share. */
#ifndef LODE_DISPATCH_CHECK_INTERNAL_H
#define LODE_DISPATCH_CHECK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/dispatch/check.h"
#include "core/dispatch/stop_join.h"

#define MAX_VARIANTS 16

/* One device's rows, run on a thread of their own. */
typedef struct device_run {
    const lode_check_config *cfg;
    const atomic_int *stop;
    lode_check_row *rows; /* this device's, consecutive */
    size_t row_count;
    unsigned reference_threads;
    double t0;
    pthread_t thread;
    bool started;
    atomic_bool finished;   /* its rows are done (or stopped) */
    lode_stop_join *join;   /* shared by every device's run */
} device_run;

/* Runs a device's rows in turn (a thread's body: arg is its device_run). */
void *lode_check_device_thread(void *arg);

#endif
