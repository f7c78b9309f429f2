/* Preloaded into lode by test_stop.py: a library that takes SIGINT and
 * SIGTERM over once lode runs, the way LLVM inside PoCL does when it
 * compiles a kernel: SA_RESETHAND | SA_NODEFER handlers that put the old
 * handler back and raise the signal again. The window in which the
 * default action is in place is widened to a second, so two signals in a
 * row meet it every time where lode relies on a handler of its own. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct sigaction previous[2];

static void pause_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void taken(int sig)
{
    pause_s(1.0);
    sigaction(sig, &previous[sig == SIGINT ? 0 : 1], NULL);
    raise(sig);
}

static void *take_over(void *arg)
{
    (void)arg;
    /* As a thread lode starts would: the mask lode set is not undone. */
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stops, NULL);
    pause_s(0.3); /* after main installed lode's own */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = taken;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &previous[0]);
    sigaction(SIGTERM, &sa, &previous[1]);
    static const char line[] = "signal_taker: SIGINT and SIGTERM taken over\n";
    (void)!write(STDERR_FILENO, line, sizeof line - 1);
    return NULL;
}

__attribute__((constructor)) static void start(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, take_over, NULL) == 0)
        pthread_detach(t);
}
