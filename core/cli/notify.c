/* systemd's notify protocol through libsystemd (sd_notify): see cli.h.
 * The protocol is datagrams on the socket NOTIFY_SOCKET names; libsystemd
 * speaks it (abstract sockets, credentials) so lode need not. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/cli/cli.h"
#include "core/dispatch/dispatch.h"
#ifdef LODE_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

/* Seconds between STATUS lines. */
#define STATUS_PERIOD_S 2.0

struct cli_notify {
    lode_dispatcher *miner;
    const char *what, *unit;
    cli_status_extra extra;
    void *user;
    double watchdog_s; /* WATCHDOG_USEC in seconds; 0 = no watchdog */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
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

static void *notify_main(void *arg)
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
        if (n->watchdog_s > 0 && now - last_ping >= n->watchdog_s / 2 - 0.01 && healthy(n->miner)) {
            sd_notify(0, "WATCHDOG=1");
            last_ping = now;
        }
        if (now - last_status >= STATUS_PERIOD_S - 0.01) {
            uint64_t hashes = total_hashes(n->miner);
            char rate[32], extra[160] = "";
            cli_format_rate((double)(hashes - last_hashes) / (now - last_status), n->unit, rate, sizeof rate);
            if (n->extra != NULL)
                n->extra(n->user, extra, sizeof extra);
            sd_notifyf(0, "STATUS=%s %s%s%s", n->what, rate, extra[0] ? ", " : "", extra);
            last_status = now;
            last_hashes = hashes;
        }
        pthread_mutex_lock(&n->lock);
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
    *n = (cli_notify){.miner = m, .what = what, .unit = unit, .extra = extra, .user = user};
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0)
        n->watchdog_s = (double)usec / 1e6;
    pthread_mutex_init(&n->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&n->wake, &attr);
    pthread_condattr_destroy(&attr);
    int rc = sd_notifyf(0, "READY=1\nSTATUS=%s started", what);
    if (rc < 0)
        lode_log(LODE_LOG_WARN, "cannot tell systemd (NOTIFY_SOCKET): %s", strerror(-rc));
    if (pthread_create(&n->thread, NULL, notify_main, n) != 0) {
        lode_log(LODE_LOG_WARN, "cannot start the systemd notify thread: no STATUS, no WATCHDOG");
        pthread_cond_destroy(&n->wake);
        pthread_mutex_destroy(&n->lock);
        free(n);
        return NULL;
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
    n->stopping = true;
    pthread_cond_signal(&n->wake);
    pthread_mutex_unlock(&n->lock);
    pthread_join(n->thread, NULL);
    sd_notify(0, "STOPPING=1");
    pthread_cond_destroy(&n->wake);
    pthread_mutex_destroy(&n->lock);
    free(n);
#endif
}
