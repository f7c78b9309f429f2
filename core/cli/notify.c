/* systemd's notify protocol through libsystemd (sd_notify): see notify.h.
 * The protocol is datagrams on the socket NOTIFY_SOCKET names; libsystemd
 * speaks it (abstract sockets, credentials) so lode need not.
 *
 * sd_notify blocks while the manager's socket is full (a manager that does
 * not read), and libsystemd has no way not to. So no thread that mines or
 * stops ever calls it: a sender thread of its own sends what the scheduler
 * thread posts (the newest STATUS, WATCHDOG, READY first and STOPPING
 * last), the scheduler warns once when a send has waited too long, and the
 * stop waits LODE_STOP_GRACE_MS at most for STOPPING=1 to go out, then
 * leaves the sender behind (core/base/stuck_threads.h). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/stuck_threads.h"
#include "core/base/text.h"
#include "core/cli/notify.h"
#include "core/dispatch/dispatch.h"
#ifdef LODE_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

/* Seconds between STATUS lines. */
#define STATUS_PERIOD_S 2.0
/* A send that has waited this long means the manager does not read. */
#define SEND_STALL_S 5.0

struct cli_notify {
    lode_dispatcher *miner;
    const char *what, *unit;
    cli_status_extra extra;
    void *user;
    double watchdog_s; /* WATCHDOG_USEC in seconds; 0 = no watchdog */
    pthread_t scheduler, sender;
    pthread_mutex_t lock;
    pthread_cond_t wake;      /* the scheduler's sleep; the stop's wait for the sender */
    pthread_cond_t post_wake; /* the sender's: something to send */
    bool stopping;            /* the scheduler ends */
    /* What the sender is to send next, under lock. */
    bool ready_due, watchdog_due, stopping_due;
    char status[256];         /* "" = none due */
    bool sending, sender_done, left_behind, stall_warned, error_warned;
    double sending_since;
};

#ifdef LODE_HAVE_SYSTEMD
/* Some device mines or may: the watchdog is fed only then, so systemd
 * restarts a lode whose every device is stuck. */
static bool healthy(lode_dispatcher *m)
{
    for (size_t d = 0; d < lode_dispatcher_device_count(m); d++) {
        lode_device_stats st;
        lode_dispatcher_device_stats(m, d, &st);
        if (st.state == LODE_DEVICE_MINING || st.state == LODE_DEVICE_STARTING || st.state == LODE_DEVICE_PAUSED ||
            st.state == LODE_DEVICE_PAUSED_THERMAL)
            return true;
    }
    return false;
}

static uint64_t total_hashes(lode_dispatcher *m)
{
    uint64_t sum = 0;
    for (size_t d = 0; d < lode_dispatcher_device_count(m); d++) {
        lode_device_stats st;
        lode_dispatcher_device_stats(m, d, &st);
        sum += st.hashes;
    }
    return sum;
}

static void destroy(cli_notify *n)
{
    pthread_cond_destroy(&n->wake);
    pthread_cond_destroy(&n->post_wake);
    pthread_mutex_destroy(&n->lock);
    free(n);
}

/* Takes what is due as one datagram (lock held); false if nothing is. */
static bool take_message(cli_notify *n, char *out, size_t len, bool *last)
{
    size_t used = 0;
    out[0] = '\0';
    if (n->ready_due)
        used += (size_t)snprintf(out + used, len - used, "READY=1\n");
    if (n->status[0] && used < len)
        used += (size_t)snprintf(out + used, len - used, "STATUS=%s\n", n->status);
    if (n->watchdog_due && used < len)
        used += (size_t)snprintf(out + used, len - used, "WATCHDOG=1\n");
    *last = n->stopping_due;
    if (*last && used < len)
        used += (size_t)snprintf(out + used, len - used, "STOPPING=1\n");
    n->ready_due = n->watchdog_due = n->stopping_due = false;
    n->status[0] = '\0';
    if (used > 0 && used < len)
        out[used - 1] = '\0'; /* no newline after the last assignment */
    return used > 0;
}

static void *sender_main(void *arg)
{
    cli_notify *n = arg;
    pthread_setname_np(pthread_self(), "lode-notify-tx");
    sigset_t stops; /* a Ctrl-C interrupting a send would lose it: they go to another thread */
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stops, NULL);
    char message[512];
    bool last = false;
    pthread_mutex_lock(&n->lock);
    while (!last) {
        while (!take_message(n, message, sizeof message, &last))
            pthread_cond_wait(&n->post_wake, &n->lock);
        n->sending = true;
        n->sending_since = lode_clock_s();
        pthread_mutex_unlock(&n->lock);
        int rc = sd_notify(0, message); /* may block for as long as the manager does not read */
        pthread_mutex_lock(&n->lock);
        n->sending = false;
        if (rc < 0 && !n->error_warned && !n->left_behind) {
            n->error_warned = true;
            lode_log(LODE_LOG_WARN, "cannot tell systemd (NOTIFY_SOCKET): %s", strerror(-rc));
        }
    }
    n->sender_done = true;
    pthread_cond_broadcast(&n->wake);
    const bool left = n->left_behind;
    pthread_mutex_unlock(&n->lock);
    if (left) { /* the stop went on without this thread: its memory is ours to free */
        destroy(n);
        lode_stuck_thread_returned();
    }
    return NULL;
}

/* Hands the sender what is due (lock held). */
static void post(cli_notify *n) { pthread_cond_signal(&n->post_wake); }

/* Says once that the manager does not read (lock held). */
static void check_stall(cli_notify *n, double now)
{
    if (n->sending && !n->stall_warned && now - n->sending_since >= SEND_STALL_S) {
        n->stall_warned = true;
        lode_log(LODE_LOG_WARN, "systemd does not read NOTIFY_SOCKET (a notification has waited %.0f s): lode "
                 "goes on without telling it (status, watchdog)", now - n->sending_since);
    }
}

static void *scheduler_main(void *arg)
{
    cli_notify *n = arg;
    pthread_setname_np(pthread_self(), "lode-notify");
    double period = n->watchdog_s > 0 && n->watchdog_s / 2 < STATUS_PERIOD_S ? n->watchdog_s / 2 : STATUS_PERIOD_S;
    double last_status = lode_clock_s(), last_ping = 0;
    uint64_t last_hashes = total_hashes(n->miner);
    pthread_mutex_lock(&n->lock);
    while (!n->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        double whole = (double)until.tv_nsec * 1e-9 + period;
        until.tv_sec += (time_t)whole;
        until.tv_nsec = (long)((whole - (double)(time_t)whole) * 1e9);
        while (!n->stopping && pthread_cond_timedwait(&n->wake, &n->lock, &until) == 0)
            ;
        if (n->stopping)
            break;
        pthread_mutex_unlock(&n->lock);
        double now = lode_clock_s();
        bool ping = n->watchdog_s > 0 && now - last_ping >= n->watchdog_s / 2 - 0.01 && healthy(n->miner);
        char status[sizeof n->status] = "";
        if (now - last_status >= STATUS_PERIOD_S - 0.01) {
            uint64_t hashes = total_hashes(n->miner);
            char rate[32], extra[160] = "";
            lode_format_rate((double)(hashes - last_hashes) / (now - last_status), n->unit, rate, sizeof rate);
            if (n->extra != NULL)
                n->extra(n->user, extra, sizeof extra);
            snprintf(status, sizeof status, "%s %s%s%s", n->what, rate, extra[0] ? ", " : "", extra);
            last_status = now;
            last_hashes = hashes;
        }
        pthread_mutex_lock(&n->lock);
        if (ping) {
            n->watchdog_due = true;
            last_ping = now;
        }
        if (status[0])
            memcpy(n->status, status, sizeof status); /* the newest replaces one not sent yet */
        post(n);
        check_stall(n, now);
    }
    pthread_mutex_unlock(&n->lock);
    return NULL;
}
#endif

cli_notify *cli_notify_ready(lode_dispatcher *m, const char *what, const char *unit, cli_status_extra extra,
                             void *user)
{
    if (getenv("NOTIFY_SOCKET") == NULL)
        return NULL;
#ifndef LODE_HAVE_SYSTEMD
    (void)m, (void)what, (void)unit, (void)extra, (void)user;
    lode_log(LODE_LOG_WARN, "NOTIFY_SOCKET is set, but this lode was built without libsystemd: "
             "systemd hears nothing from it (use Type=simple, not Type=notify)");
    return NULL;
#else
    cli_notify *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    *n = (cli_notify){.miner = m, .what = what, .unit = unit, .extra = extra, .user = user, .ready_due = true};
    snprintf(n->status, sizeof n->status, "%s started", what);
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0)
        n->watchdog_s = (double)usec / 1e6;
    pthread_mutex_init(&n->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&n->wake, &attr);
    pthread_cond_init(&n->post_wake, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&n->sender, NULL, sender_main, n) != 0) {
        lode_log(LODE_LOG_WARN, "cannot start the systemd notify thread: systemd hears nothing");
        destroy(n);
        return NULL;
    }
    if (pthread_create(&n->scheduler, NULL, scheduler_main, n) != 0) {
        lode_log(LODE_LOG_WARN, "cannot start the systemd notify thread: no STATUS, no WATCHDOG");
        n->stopping = true; /* READY=1 still goes out, and STOPPING=1 at the end */
        n->scheduler = n->sender;
    }
    return n;
#endif
}

void cli_notify_stop(cli_notify *n)
{
    if (n == NULL)
        return;
#ifdef LODE_HAVE_SYSTEMD
    pthread_mutex_lock(&n->lock);
    const bool scheduled = !n->stopping;
    n->stopping = true;
    pthread_cond_broadcast(&n->wake);
    pthread_mutex_unlock(&n->lock);
    if (scheduled)
        pthread_join(n->scheduler, NULL); /* it never waits on the sender */
    pthread_mutex_lock(&n->lock);
    n->watchdog_due = false; /* the last word is STOPPING=1 */
    n->status[0] = '\0';
    n->stopping_due = true;
    post(n);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += LODE_STOP_GRACE_MS / 1000;
    while (!n->sender_done && pthread_cond_timedwait(&n->wake, &n->lock, &until) == 0)
        ;
    const bool done = n->sender_done;
    if (!done) {
        check_stall(n, lode_clock_s());
        lode_log(LODE_LOG_WARN, "systemd did not take STOPPING=1 within %d s: lode stops without telling it",
                 LODE_STOP_GRACE_MS / 1000);
        n->left_behind = true;
        lode_stuck_thread_left();
    }
    pthread_mutex_unlock(&n->lock);
    if (done) {
        pthread_join(n->sender, NULL);
        destroy(n);
    } else {
        pthread_detach(n->sender);
    }
#endif
}
