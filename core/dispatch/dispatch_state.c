/* The dispatcher's device state machine and its monitor thread (sensors,
 * thermal limits, the scan watchdog). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/backoff.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/dispatch/dispatch_internal.h"

/* A device is quarantined after more than max_restarts within this window. */
#define RESTART_WINDOW_S 3600.0
#define MAX_BACKOFF_S 60.0

/* ---- the device state machine (everything here with the lock held) ---- */

bool dispatch_worker_live(worker_state s) { return s != WORKER_FAILED && s != WORKER_ABANDONED; }

/* A device's state follows from its flags and its workers' states. */
static lode_device_state derive_state(const lode_dispatcher *m, size_t device)
{
    const device_counters *c = &m->counters[device];
    unsigned ready = 0, starting = 0, restarting = 0;
    for (unsigned i = 0; i < c->workers; i++) {
        worker_state s = m->workers[c->first_worker + i].state;
        ready += s == WORKER_READY;
        starting += s == WORKER_STARTING;
        restarting += s == WORKER_RESTARTING || s == WORKER_HUNG;
    }
    if (c->quarantined)
        return LODE_DEVICE_QUARANTINED;
    if (ready + starting + restarting == 0)
        return LODE_DEVICE_FAILED;
    if (c->paused)
        return LODE_DEVICE_PAUSED;
    if (c->thermal)
        return LODE_DEVICE_PAUSED_THERMAL;
    if (ready > 0)
        return LODE_DEVICE_MINING;
    return restarting > 0 ? LODE_DEVICE_RESTARTING : LODE_DEVICE_STARTING;
}

/* The one place a device's state change is told: once per change, with
 * its reason ("cuda:0: mining -> paused-thermal: 86 C, above its limit of
 * 85 C"); with --log-format json the event "device" with the fields device,
 * state, from and reason. */
static void log_state_change(const lode_dispatcher *m, size_t device, lode_device_state from,
                             lode_device_state to, const char *why)
{
    bool bad = to == LODE_DEVICE_RESTARTING || to == LODE_DEVICE_PAUSED_THERMAL || to == LODE_DEVICE_FAILED ||
               to == LODE_DEVICE_QUARANTINED;
    lode_log_event(bad ? LODE_LOG_WARN : LODE_LOG_INFO, "device",
                   LODE_LOG_FIELDS(LODE_LOG_STR("device", m->devices[device].id),
                                   LODE_LOG_STR("state", lode_device_state_name(to)),
                                   LODE_LOG_STR("from", lode_device_state_name(from)),
                                   LODE_LOG_STR("reason", why && *why ? why : NULL)),
                   "%s: %s -> %s%s%s", m->devices[device].id, lode_device_state_name(from),
                   lode_device_state_name(to), why && *why ? ": " : "", why ? why : "");
}

/* Recomputes a device's state after one of its inputs changed; why says
 * what changed. */
void dispatch_refresh_state(lode_dispatcher *m, size_t device, const char *why)
{
    device_counters *c = &m->counters[device];
    lode_device_state now = derive_state(m, device);
    if (now != c->state) {
        log_state_change(m, device, c->state, now, why);
        c->state = now;
    }
    pthread_cond_broadcast(&m->state_changed);
}

void dispatch_set_worker(lode_dispatcher *m, worker *w, worker_state s, const char *why)
{
    if (w->state == WORKER_ABANDONED)
        return; /* for good: a call returning late changes nothing */
    if (w->state == WORKER_STARTING && s != WORKER_STARTING)
        m->settled++;
    if (dispatch_worker_live(w->state) && !dispatch_worker_live(s))
        m->alive--;
    w->state = s;
    dispatch_refresh_state(m, w->device, why);
}

/* Keeps the last fault (cut to fit) for the stats. */
void dispatch_note_error(device_counters *c, const char *why)
{
    size_t n = strnlen(why, sizeof c->last_error - 1);
    memcpy(c->last_error, why, n);
    c->last_error[n] = '\0';
}

/* Aborts the scans of a device's workers (their unscanned indices go back
 * to the others) and wakes waiting workers to look at its flags again. */
void dispatch_abort_device(lode_dispatcher *m, size_t device)
{
    const device_counters *c = &m->counters[device];
    for (unsigned i = 0; i < c->workers; i++)
        atomic_store(&m->workers[c->first_worker + i].abort, 1);
    pthread_cond_broadcast(&m->work_ready);
}

/* Gives a device up: its workers close their handles and end, the others
 * go on. */
void dispatch_quarantine(lode_dispatcher *m, size_t device, const char *why)
{
    device_counters *c = &m->counters[device];
    if (c->quarantined)
        return;
    c->quarantined = true;
    dispatch_note_error(c, why);
    dispatch_abort_device(m, device);
    dispatch_refresh_state(m, device, why);
}

/* Counts a restart of the device (a worker's fault) and returns the
 * backoff before its reopen, or -1 once the device is quarantined: more
 * than max_restarts within the hour. */
double dispatch_count_restart(lode_dispatcher *m, size_t device, const char *why)
{
    device_counters *c = &m->counters[device];
    double now = lode_clock_s();
    dispatch_note_error(c, why);
    c->restarts++;
    if (c->window_restarts == 0 || now - c->window_start > RESTART_WINDOW_S) {
        c->window_start = now;
        c->window_restarts = 0;
    }
    c->window_restarts++;
    int limit = m->config.max_restarts;
    if (limit < 0 || c->window_restarts > (unsigned)limit) {
        char msg[sizeof c->last_error + 64];
        snprintf(msg, sizeof msg, "%u restart(s) within the hour, the limit is %d (last: %s)",
                 c->window_restarts, limit < 0 ? 0 : limit, why);
        dispatch_quarantine(m, device, msg);
        return -1;
    }
    unsigned earlier = c->window_restarts ? c->window_restarts - 1 : 0;
    return lode_backoff_s(m->config.backoff_s, earlier, MAX_BACKOFF_S);
}

/* A device takes work unless paused (by the user or its temperature) or
 * quarantined. */
bool dispatch_takes_work(const device_counters *c) { return !c->paused && !c->thermal && !c->quarantined; }

/* ---- the monitor: sensors, thermal limits, the watchdog ---- */

/* Pauses a device above its limit and resumes it below the limit minus
 * the hysteresis (lock held). A device with a limit but no temperature
 * sensor is never paused; that is said once. */
static void apply_thermal_limit(lode_dispatcher *m, size_t device)
{
    device_counters *c = &m->counters[device];
    if (c->max_temp_c <= 0)
        return;
    if (!(c->sensors.present & LODE_SENSOR_TEMP)) {
        if (!c->no_sensor_warned)
            lode_log(LODE_LOG_WARN, "%s: no temperature sensor: its limit of %g C cannot apply",
                     m->devices[device].id, c->max_temp_c);
        c->no_sensor_warned = true;
        return;
    }
    double t = c->sensors.temp_c, resume = c->max_temp_c - m->config.temp_hysteresis_c;
    char why[96];
    if (!c->thermal && t > c->max_temp_c) {
        snprintf(why, sizeof why, "%.0f C, above its limit of %g C", t, c->max_temp_c);
        c->thermal = true;
        dispatch_note_error(c, why);
        dispatch_abort_device(m, device);
        dispatch_refresh_state(m, device, why);
    } else if (c->thermal && t < resume) {
        snprintf(why, sizeof why, "%.0f C, below %g C (its limit less %g C)", t, resume,
                 m->config.temp_hysteresis_c);
        c->thermal = false;
        pthread_cond_broadcast(&m->work_ready);
        dispatch_refresh_state(m, device, why);
    }
}

/* Finds scans that overran their limit (lock held). A hung scan cannot be
 * interrupted from here (its handle belongs to its worker's thread), so
 * its range goes back to the other workers at once, its abort flag is
 * raised, and whatever it reports later is dropped; once it returns, its
 * worker reopens the device. One that never returns is abandoned and its
 * device quarantined. */
static void watch_scans(lode_dispatcher *m, double now)
{
    for (size_t k = 0; k < m->worker_count; k++) {
        worker *w = &m->workers[k];
        if (!w->busy || w->hang_limit_s <= 0)
            continue;
        double ran = now - w->busy_since;
        char why[160];
        if (w->state == WORKER_READY && ran > w->hang_limit_s) {
            snprintf(why, sizeof why, "worker %u: a scan of %llu indices has run %.1f s, its limit is %.1f s",
                     w->slot, (unsigned long long)w->range.count, ran, w->hang_limit_s);
            lode_log(LODE_LOG_WARN, "%s: watchdog: %s; its range goes to the others", m->devices[w->device].id,
                     why);
            atomic_store(&w->abort, 1);
            if (m->job.seq == w->busy_seq)
                dispatch_give_back(m, w->range.start, w->range.count);
            dispatch_set_worker(m, w, WORKER_HUNG, why);
            w->backoff_s = dispatch_count_restart(m, w->device, why);
        } else if (w->state == WORKER_HUNG && ran > ABANDON_FACTOR * w->hang_limit_s) {
            snprintf(why, sizeof why, "worker %u: stuck in a scan for %.0f s, abandoned", w->slot, ran);
            dispatch_quarantine(m, w->device, why);
            dispatch_set_worker(m, w, WORKER_ABANDONED, why);
        }
    }
}

/* A device's sensors and its work counter, and when they were taken. */
typedef struct monitor_reading {
    lode_sensors sensors;
    double at;
    uint64_t work;
} monitor_reading;

void *dispatch_monitor_main(void *arg)
{
    lode_dispatcher *m = arg;
    pthread_setname_np(pthread_self(), "lode-monitor");
    size_t nd = m->config.device_count;
    monitor_reading *readings = calloc(nd, sizeof *readings);
    pthread_mutex_lock(&m->lock);
    while (!m->monitor_stopping) {
        pthread_mutex_unlock(&m->lock);
        /* Sensors are read without the lock: NVML may take milliseconds.
         * Each reading's time and work are taken beside it, so that a wait
         * for the lock does not stretch the span its energy covers. */
        for (size_t d = 0; readings != NULL && d < nd; d++) {
            lode_device_read_sensors(&m->devices[d], &readings[d].sensors);
            readings[d].at = lode_clock_s();
            readings[d].work = atomic_load(&m->counters[d].hashes);
        }
        pthread_mutex_lock(&m->lock);
        for (size_t d = 0; readings != NULL && d < nd; d++) {
            device_counters *c = &m->counters[d];
            const monitor_reading *r = &readings[d];
            c->sensors = r->sensors;
            /* Energy counts from the device's first work on: its self-test
             * and tuning are not work the hashes count. */
            if (r->work > 0 || c->energy.started)
                lode_energy_meter_add(&c->energy, &r->sensors, r->at, r->work);
            apply_thermal_limit(m, d);
        }
        watch_scans(m, lode_clock_s());
        struct timespec until = dispatch_deadline_in((int)(m->config.monitor_interval_s * 1000));
        while (!m->monitor_stopping && pthread_cond_timedwait(&m->monitor_wake, &m->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&m->lock);
    free(readings);
    return NULL;
}
