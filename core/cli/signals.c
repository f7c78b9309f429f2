/* Stop requests: SIGINT, SIGTERM and SIGHUP are taken by one thread of
 * lode's own with sigwait(), never by a handler.
 *
 * Libraries install handlers of their own: LLVM inside PoCL registers
 * SA_RESETHAND handlers for SIGINT and SIGTERM when it compiles a kernel,
 * and a second Ctrl-C right behind the first met the default action in the
 * instant before LLVM put lode's handler back, killing lode without its
 * checkpoint or summary. Here the three signals are blocked before the
 * first thread starts, so every thread inherits the mask, no handler of
 * anyone's ever runs for them, and the waiting thread records each one. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "core/cli/signals.h"

static atomic_int stops;     /* stop requests so far (2 and more: stop now) */
static atomic_int stop_flag; /* the abort flag handed to device calls */
static int wake_pipe[2] = {-1, -1};
static sigset_t stop_signals;

static atomic_int thread_started;
static void start_signal_thread(void);

/* The waiting thread starts with the first look at the stops: after the
 * options are read and --cpu-priority and --background applied, so it
 * runs at the priority of the others and in the process that runs. A stop
 * that comes earlier waits, blocked, and is taken then. */
static void ensure_thread(void)
{
    if (!atomic_load(&thread_started) && !atomic_exchange(&thread_started, 1))
        start_signal_thread();
}

bool cli_interrupted(void)
{
    ensure_thread();
    return atomic_load(&stops) != 0;
}

bool cli_interrupted_twice(void)
{
    ensure_thread();
    return atomic_load(&stops) >= 2;
}

const atomic_int *cli_stop_flag(void)
{
    ensure_thread();
    return &stop_flag;
}

int cli_stop_fd(void)
{
    ensure_thread();
    return wake_pipe[0];
}

static void note_stop(void)
{
    if (atomic_load(&stops) < 2)
        atomic_fetch_add(&stops, 1);
    atomic_store(&stop_flag, 1);
    if (wake_pipe[1] >= 0) {
        char byte = 'S';
        (void)!write(wake_pipe[1], &byte, 1); /* full: a reader is already woken */
    }
}

static void *signal_main(void *arg)
{
    (void)arg;
    for (;;) {
        int sig;
        if (sigwait(&stop_signals, &sig) == 0)
            note_stop();
    }
    return NULL;
}

/* The fallback where no thread can be started: a plain handler. */
static void on_signal(int sig)
{
    (void)sig;
    note_stop();
}

static void start_signal_thread(void)
{
    pthread_t t;
    pthread_attr_t attr;
    bool started = false;
    if (pthread_attr_init(&attr) == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        started = pthread_create(&t, &attr, signal_main, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    if (started) {
        pthread_setname_np(t, "lode-signals");
        return;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
}

void cli_install_signal_handlers(void)
{
    /* A reader that went away (`lode ... | head -1`) must not kill lode
     * mid-run: writes fail with EPIPE instead, the logs are dropped, and a
     * result that cannot be written is an error (cli_finish_output). */
    struct sigaction ignore = {.sa_handler = SIG_IGN};
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, NULL);
    /* A closed terminal or ssh session (SIGHUP) stops lode like Ctrl-C:
     * summary, queued shares sent, exit status 130. */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        wake_pipe[0] = wake_pipe[1] = -1;
}

/* A fork's child has no thread of its parent's. */
void cli_signals_after_fork(void) { atomic_store(&thread_started, 0); }
