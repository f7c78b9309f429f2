#include "core/base/stuck_threads.h"

#include <stdatomic.h>

static atomic_uint stuck;

void lode_stuck_thread_left(void) { atomic_fetch_add(&stuck, 1); }

void lode_stuck_thread_returned(void) { atomic_fetch_sub(&stuck, 1); }

unsigned lode_stuck_threads(void) { return atomic_load(&stuck); }
