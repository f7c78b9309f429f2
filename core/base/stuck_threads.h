/* Threads a stop gave up waiting for: each is stuck in a call that did not
 * return (a GPU driver, libsystemd's send to a manager that does not
 * read). lode never waits for them; while any is out, the process ends
 * with _exit, since exit() would run the libraries' destructors under a
 * thread still inside one of them (and could wait on it for ever). */
#ifndef LODE_CORE_STUCK_THREADS_H
#define LODE_CORE_STUCK_THREADS_H

/* A thread was left behind (any thread). */
void lode_stuck_thread_left(void);
/* A thread left behind returned after all (any thread). */
void lode_stuck_thread_returned(void);
/* How many are still out. */
unsigned lode_stuck_threads(void);

#endif
