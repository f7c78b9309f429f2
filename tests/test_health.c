/* Device health, driven through the fault-injecting backend
 * (core/dispatch/fault_backend.h: the CPU backend's real sha256d scan,
 * misbehaving on purpose), installed with the registry's test hook. Two
 * devices, fault:0 misbehaving and fault:1 sound:
 * - a paused device takes no work and mines again once resumed;
 * - device errors: the device is reopened after a backoff and recovers, or
 *   after too many restarts is quarantined;
 * - a hung scan (deaf to its abort flag): its range goes to the other
 *   device at once, the device restarts once the scan returns, and is
 *   quarantined when it keeps hanging; one that never returns is abandoned
 *   and quarantined;
 * - made-up hits: the device is quarantined;
 * - the thermal limit pauses a device above it and resumes it below the
 *   limit less the hysteresis; a device without a temperature sensor is
 *   never paused.
 * Throughout, every job's index space is scanned exactly once: each hit
 * (about one index in 16, found by OpenSSL's SHA-256, not lode's) arrives
 * exactly once and the devices' scanned counts add up to the job. Waits
 * are hang guards only (a minute or two), never speed limits. */
#include <math.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <time.h>

#include "core/base/status.h"
#include "core/base/stuck_threads.h"
#include "core/base/target.h"
#include "core/dispatch/dispatch.h"
#include "core/dispatch/fault_backend.h"
#include "tests/test_util.h"

enum { SPAN = 1 << 20 };
#define EASY_TOP 0x0fffffffu /* about one index in 16 hits */
#define HARD_TOP 0x0000ffffu /* one in 65536: a scan has few real hits */
#define GUARD_S 120.0

typedef struct collected {
    pthread_mutex_t lock;
    uint8_t *seen;     /* hits per index of the current job */
    uint64_t seq;      /* the job whose hits are counted; 0 = none */
    uint64_t next_seq; /* the dispatcher numbers its jobs 1, 2, ... */
} collected;

static collected found = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_found(void *user, const lode_found *f)
{
    (void)user;
    pthread_mutex_lock(&found.lock);
    if (f->work->seq == found.seq && f->hit.index < SPAN && found.seen[f->hit.index] < 255)
        found.seen[f->hit.index]++;
    pthread_mutex_unlock(&found.lock);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap_ms(int ms) { nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000L}, NULL); }

/* The oracle: OpenSSL's double SHA-256 of the header with the nonce. */
static bool oracle_hit(const lode_work *w, uint32_t nonce)
{
    uint8_t header[80], once[32], hash[32];
    memcpy(header, w->header.header, 80);
    memcpy(header + 76, &nonce, 4); /* little-endian hosts, as lode's targets */
    SHA256(header, 80, once);
    SHA256(once, 32, hash);
    return lode_hash_meets_target(hash, &w->header.target);
}

/* hang_timeout_s < 0: no watchdog. */
static lode_dispatcher *start_watched(const double *max_temp, int max_restarts, double hang_timeout_s)
{
    lode_device_ref *refs;
    size_t count;
    char err[256] = "";
    if (lode_registry_select("fault:0,fault:1", LODE_ALGO_SHA256D, &refs, &count, err, sizeof err) != 0) {
        CHECK(false, "select the fault devices: %s", err);
        return NULL;
    }
    lode_dispatcher_config cfg = {
        .algo = LODE_ALGO_SHA256D,
        .devices = refs,
        .device_count = count,
        .chunk_ms = 20,
        .callbacks = {.found = on_found},
        .max_temp_c = max_temp,
        .hang_timeout_s = hang_timeout_s,
        .max_restarts = max_restarts,
        .backoff_s = 0.05,
        .monitor_interval_s = 0.05,
    };
    found.next_seq = 1;
    lode_dispatcher *m = lode_dispatcher_start(&cfg, err, sizeof err);
    free(refs);
    CHECK(m != NULL, "dispatcher starts: %s", err);
    if (m != NULL)
        CHECK(lode_dispatcher_wait_ready(m, -1) == 2, "both fault devices pass their self-tests");
    return m;
}

static lode_dispatcher *start(const double *max_temp, int max_restarts)
{
    /* A hang timeout well above a 20 ms scan, even under ThreadSanitizer on a busy machine. */
    return start_watched(max_temp, max_restarts, 2.0);
}

static lode_device_stats stats(lode_dispatcher *m, size_t device)
{
    lode_device_stats st;
    lode_dispatcher_device_stats(m, device, &st);
    return st;
}

static uint64_t total_hashes(lode_dispatcher *m)
{
    return stats(m, 0).hashes + stats(m, 1).hashes;
}

/* Scans one job of SPAN indices and checks it was scanned exactly once.
 * Returns false if it did not finish (a failed check). */
static bool checked_job(lode_dispatcher *m, uint32_t target_top, const char *what)
{
    lode_work w = {.algo = LODE_ALGO_SHA256D};
    test_rand_bytes(w.header.header, 80);
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    w.header.target.w[7] = target_top;
    uint64_t before = total_hashes(m);
    /* The job's number is known only once it is installed, and its first
     * hits may come before set_job returns: the number is predicted. */
    pthread_mutex_lock(&found.lock);
    memset(found.seen, 0, SPAN);
    found.seq = found.next_seq++;
    pthread_mutex_unlock(&found.lock);
    uint64_t seq = lode_dispatcher_set_job(m, &w, 0, SPAN);
    CHECK(seq == found.seq, "%s: job %llu, predicted %llu", what, (unsigned long long)seq,
          (unsigned long long)found.seq);
    int rc = 0;
    double t0 = now_s();
    while ((rc = lode_dispatcher_wait_job(m, seq, 200)) == 0 && now_s() - t0 < GUARD_S)
        ;
    CHECK(rc == 1, "%s: the job is scanned to the end (%d)", what, rc);
    if (rc != 1)
        return false;
    size_t missing = 0, doubled = 0, extra = 0, hits = 0;
    pthread_mutex_lock(&found.lock);
    for (uint32_t n = 0; n < SPAN; n++) {
        bool want = oracle_hit(&w, n);
        hits += want;
        missing += want && found.seen[n] == 0;
        doubled += found.seen[n] > 1;
        extra += !want && found.seen[n] > 0;
    }
    pthread_mutex_unlock(&found.lock);
    CHECK(missing == 0 && doubled == 0 && extra == 0,
          "%s: every one of %zu hits exactly once: %zu missing, %zu doubled, %zu false", what, hits, missing,
          doubled, extra);
    uint64_t scanned = total_hashes(m) - before;
    CHECK(scanned == SPAN, "%s: the devices scanned %llu indices of a job of %d", what,
          (unsigned long long)scanned, SPAN);
    return true;
}

/* Runs checked jobs until fault:0 is in state `want` (true) or the guard
 * runs out (false). */
static bool jobs_until(lode_dispatcher *m, lode_device_state want, uint32_t target_top, const char *what)
{
    double t0 = now_s();
    while (now_s() - t0 < GUARD_S) {
        if (stats(m, 0).state == want)
            return true;
        if (!checked_job(m, target_top, what))
            return false;
    }
    return stats(m, 0).state == want;
}

/* Waits (hang guard) until device's state is want. */
static bool wait_state(lode_dispatcher *m, size_t device, lode_device_state want)
{
    for (double t0 = now_s(); now_s() - t0 < GUARD_S; nap_ms(5))
        if (stats(m, device).state == want)
            return true;
    return false;
}

/* Scans claimed by either device whose hashes are not counted yet. */
static unsigned scans_out(lode_dispatcher *m)
{
    return stats(m, 0).scans_out + stats(m, 1).scans_out;
}

/* A device that takes no work: once the scans its workers had in flight at
 * the pause are counted (none out), it claims none and its count stays put
 * while fault:1 scans three times two whole chunks' worth more. A device
 * that takes work has a scan out or counts more. */
static bool takes_no_work(lode_dispatcher *m)
{
    const uint64_t step = 400000;
    const double t0 = now_s();
    while (stats(m, 0).scans_out > 0 && now_s() - t0 < GUARD_S)
        nap_ms(5);
    const uint64_t mine = stats(m, 0).hashes;
    for (int round = 0; round < 3; round++) {
        const uint64_t other = stats(m, 1).hashes;
        while (stats(m, 1).hashes < other + step && now_s() - t0 < GUARD_S) {
            if (stats(m, 0).scans_out > 0)
                return false;
            nap_ms(5);
        }
        if (stats(m, 1).hashes < other + step)
            return false; /* the guard ran out */
    }
    return stats(m, 0).scans_out == 0 && stats(m, 0).hashes == mine;
}

/* A long job (2^32 indices) to keep the devices busy. */
static void endless_job(lode_dispatcher *m)
{
    lode_work w = {.algo = LODE_ALGO_SHA256D};
    test_rand_bytes(w.header.header, 80);
    memset(w.header.target.w, 0xff, sizeof w.header.target.w);
    w.header.target.w[7] = 0; /* almost no hits */
    pthread_mutex_lock(&found.lock);
    found.seq = 0;
    found.next_seq++;
    pthread_mutex_unlock(&found.lock);
    lode_dispatcher_set_job(m, &w, 0, UINT64_C(1) << 32);
}

/* Ends an endless job with a finite one, unchecked: the scans of the
 * endless job still in flight when it is replaced add to the devices'
 * counts, so settle waits for them, and only jobs after it compare counts. */
static void settle(lode_dispatcher *m)
{
    lode_work w = {.algo = LODE_ALGO_SHA256D};
    pthread_mutex_lock(&found.lock);
    found.seq = 0;
    found.next_seq++;
    pthread_mutex_unlock(&found.lock);
    uint64_t seq = lode_dispatcher_set_job(m, &w, 0, SPAN);
    for (double t0 = now_s(); lode_dispatcher_wait_job(m, seq, 200) == 0 && now_s() - t0 < GUARD_S;)
        ;
    /* ...and no scan of the job before is still out: a starved worker
     * returning one late would count it in the next checked job. */
    for (double t0 = now_s(); scans_out(m) > 0 && now_s() - t0 < GUARD_S;)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
}

static void finish(lode_dispatcher *m)
{
    lode_fault_release();
    lode_dispatcher_free(m);
    lode_fault_set(0, NULL);
    lode_fault_set(1, NULL);
    lode_fault_set_temperature(0, NAN);
    lode_fault_set_temperature(1, NAN);
}

static void test_pause(void)
{
    lode_dispatcher *m = start(NULL, 0);
    if (m == NULL)
        return;
    CHECK(lode_dispatcher_set_paused(m, 7, true) == -1, "pausing an unknown device fails");
    endless_job(m);
    CHECK(lode_dispatcher_set_paused(m, 0, true) == 0 && wait_state(m, 0, LODE_DEVICE_PAUSED),
          "fault:0 is paused (%s)", lode_device_state_name(stats(m, 0).state));
    CHECK(takes_no_work(m), "a paused device takes no work");
    CHECK(stats(m, 1).state == LODE_DEVICE_MINING, "the other device mines on");
    uint64_t before = stats(m, 0).hashes;
    CHECK(lode_dispatcher_set_paused(m, 0, false) == 0 && wait_state(m, 0, LODE_DEVICE_MINING),
          "fault:0 resumes (%s)", lode_device_state_name(stats(m, 0).state));
    for (double t0 = now_s(); stats(m, 0).hashes == before && now_s() - t0 < GUARD_S;)
        nap_ms(5);
    CHECK(stats(m, 0).hashes > before, "a resumed device takes work again");
    settle(m);
    CHECK(checked_job(m, EASY_TOP, "after a pause"), "a job after the pause");
    finish(m);
}

static void test_error_recovers(void)
{
    lode_fault_set(0, &(lode_fault_plan){.kind = LODE_FAULT_ERROR, .after = 3, .times = 2});
    lode_dispatcher *m = start(NULL, 3);
    if (m == NULL)
        return;
    double t0 = now_s();
    while (lode_fault_fired(0) < 2 && now_s() - t0 < GUARD_S)
        checked_job(m, EASY_TOP, "device errors");
    CHECK(lode_fault_fired(0) == 2, "fault:0 failed twice (%u)", lode_fault_fired(0));
    CHECK(jobs_until(m, LODE_DEVICE_MINING, EASY_TOP, "reopened"), "fault:0 mines again after its errors (%s)",
          lode_device_state_name(stats(m, 0).state));
    lode_device_stats st = stats(m, 0);
    CHECK(st.restarts == 2 && strstr(st.last_error, "device error") != NULL,
          "two restarts, last error 'device error' (%u, '%s')", st.restarts, st.last_error);
    uint64_t before = st.hashes;
    checked_job(m, EASY_TOP, "recovered");
    CHECK(stats(m, 0).hashes > before && stats(m, 0).state == LODE_DEVICE_MINING,
          "the recovered device scans again");
    finish(m);
}

static void test_error_quarantine(void)
{
    lode_fault_set(0, &(lode_fault_plan){.kind = LODE_FAULT_ERROR, .after = 2});
    lode_dispatcher *m = start(NULL, 2);
    if (m == NULL)
        return;
    CHECK(jobs_until(m, LODE_DEVICE_QUARANTINED, EASY_TOP, "device errors for good"),
          "fault:0 is quarantined (%s)", lode_device_state_name(stats(m, 0).state));
    lode_device_stats st = stats(m, 0);
    CHECK(st.restarts == 3 && strstr(st.last_error, "3 restart(s) within the hour, the limit is 2"),
          "quarantined at its third restart: %u, '%s'", st.restarts, st.last_error);
    CHECK(st.workers_ready == 0 && st.workers_failed == 1, "its worker is done");
    CHECK(lode_dispatcher_devices_left(m) == 1, "one device left");
    CHECK(checked_job(m, EASY_TOP, "after the quarantine"), "the other device mines on alone");
    CHECK(stats(m, 1).state == LODE_DEVICE_MINING && stats(m, 1).restarts == 0, "fault:1 was never touched");
    finish(m);
}

static void test_hang_restarts(void)
{
    /* Every scan after the second hangs 4 s, deaf to its abort: the
     * watchdog calls it hung at 2 s (the hang timeout), the scan comes back
     * at 4 s, before it would be abandoned (6 s), and the device reopens;
     * the third hang quarantines it. */
    lode_fault_set(0, &(lode_fault_plan){.kind = LODE_FAULT_HANG, .after = 2, .hang_s = 4.0});
    lode_dispatcher *m = start(NULL, 2);
    if (m == NULL)
        return;
    CHECK(jobs_until(m, LODE_DEVICE_QUARANTINED, EASY_TOP, "hanging scans"), "fault:0 is quarantined (%s)",
          lode_device_state_name(stats(m, 0).state));
    lode_device_stats st = stats(m, 0);
    CHECK(st.restarts == 3 && strstr(st.last_error, "has run") != NULL,
          "three restarts for hung scans: %u, '%s'", st.restarts, st.last_error);
    CHECK(lode_fault_fired(0) == 3, "three hangs (%u)", lode_fault_fired(0));
    CHECK(checked_job(m, EASY_TOP, "after the hangs"), "the other device mines on alone");
    finish(m);
}

static void test_hang_abandoned(void)
{
    /* A scan that never returns: abandoned at three times its limit. */
    lode_fault_set(0, &(lode_fault_plan){.kind = LODE_FAULT_HANG, .after = 2});
    lode_dispatcher *m = start(NULL, 5);
    if (m == NULL)
        return;
    CHECK(jobs_until(m, LODE_DEVICE_QUARANTINED, EASY_TOP, "a scan stuck for good"),
          "fault:0 is quarantined (%s)", lode_device_state_name(stats(m, 0).state));
    lode_device_stats st = stats(m, 0);
    CHECK(strstr(st.last_error, "abandoned") != NULL && st.workers_failed == 1,
          "its worker is abandoned: '%s'", st.last_error);
    CHECK(checked_job(m, EASY_TOP, "after the abandon"), "the other device mines on alone");
    finish(m); /* releases the stuck scan, so the worker is joined */
}

static atomic_int freed;

static void *free_in_thread(void *m)
{
    lode_dispatcher_free(m);
    atomic_store(&freed, 1);
    return NULL;
}

static void test_stop_leaves_stuck_scan(void)
{
    /* A stop does not wait for a scan that never returns, even with no
     * watchdog to give up on it: lode_dispatcher_free returns while the
     * scan is still stuck (it would block until the hang's release), its
     * worker left behind; once the scan returns after all, the worker
     * frees the dispatcher. */
    lode_fault_set(0, &(lode_fault_plan){.kind = LODE_FAULT_HANG, .after = 2});
    lode_dispatcher *m = start_watched(NULL, 5, -1);
    if (m == NULL)
        return;
    endless_job(m);
    for (double t0 = now_s(); lode_fault_fired(0) == 0 && now_s() - t0 < GUARD_S;)
        nap_ms(5);
    CHECK(lode_fault_fired(0) == 1, "fault:0's scan hangs (%u)", lode_fault_fired(0));
    atomic_store(&freed, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, free_in_thread, m) == 0, "a thread to stop the dispatcher");
    for (double t0 = now_s(); !atomic_load(&freed) && now_s() - t0 < GUARD_S;)
        nap_ms(5);
    CHECK(atomic_load(&freed), "the stop returns while fault:0's scan is stuck");
    CHECK(lode_stuck_threads() == 1, "its worker is left behind (%u)", lode_stuck_threads());
    lode_fault_release();
    pthread_join(t, NULL);
    for (double t0 = now_s(); lode_stuck_threads() > 0 && now_s() - t0 < GUARD_S;)
        nap_ms(5);
    CHECK(lode_stuck_threads() == 0, "the worker returns once its scan does (%u)", lode_stuck_threads());
    lode_fault_set(0, NULL);
}

static void test_bad_hits(void)
{
    lode_fault_set(0, &(lode_fault_plan){.kind = LODE_FAULT_BAD_HITS, .after = 2});
    lode_dispatcher *m = start(NULL, 0);
    if (m == NULL)
        return;
    /* Few real hits per scan, so the made-up ones stand out. */
    CHECK(jobs_until(m, LODE_DEVICE_QUARANTINED, HARD_TOP, "made-up hits"), "fault:0 is quarantined (%s)",
          lode_device_state_name(stats(m, 0).state));
    lode_device_stats st = stats(m, 0);
    CHECK(st.hw_errors >= 8 && strstr(st.last_error, "failed the CPU re-check") != NULL,
          "for its rejected hits: %llu, '%s'", (unsigned long long)st.hw_errors, st.last_error);
    CHECK(stats(m, 1).hw_errors == 0 && stats(m, 1).state == LODE_DEVICE_MINING, "fault:1 is sound");
    CHECK(checked_job(m, EASY_TOP, "after the bad hits"), "the other device mines on alone");
    finish(m);
}

/* Waits until the monitor has read celsius on fault:0 (and acted on it). */
static bool reads(lode_dispatcher *m, double celsius)
{
    for (double t0 = now_s(); now_s() - t0 < GUARD_S; nap_ms(5)) {
        lode_device_stats st = stats(m, 0);
        if ((st.sensors.present & LODE_SENSOR_TEMP) && st.sensors.temp_c == celsius)
            return true;
    }
    return false;
}

static void test_thermal(void)
{
    const double limits[2] = {80, 80};
    lode_fault_set_temperature(0, 60); /* fault:1 has no sensor */
    lode_dispatcher *m = start(limits, 0);
    if (m == NULL)
        return;
    endless_job(m);
    CHECK(reads(m, 60) && stats(m, 0).state == LODE_DEVICE_MINING && stats(m, 0).max_temp_c == 80,
          "60 C under a limit of 80 C: mining");
    lode_fault_set_temperature(0, 85);
    CHECK(wait_state(m, 0, LODE_DEVICE_PAUSED_THERMAL), "85 C: paused (%s)",
          lode_device_state_name(stats(m, 0).state));
    CHECK(strstr(stats(m, 0).last_error, "85 C, above its limit of 80 C") != NULL, "why: '%s'",
          stats(m, 0).last_error);
    CHECK(takes_no_work(m), "a device paused for its temperature takes no work");
    lode_fault_set_temperature(0, 77);
    CHECK(reads(m, 77) && stats(m, 0).state == LODE_DEVICE_PAUSED_THERMAL,
          "77 C, above 75 C (the limit less the hysteresis): still paused (%s)",
          lode_device_state_name(stats(m, 0).state));
    lode_fault_set_temperature(0, 70);
    CHECK(wait_state(m, 0, LODE_DEVICE_MINING), "70 C: mining again (%s)",
          lode_device_state_name(stats(m, 0).state));
    lode_device_stats other = stats(m, 1);
    CHECK(other.state == LODE_DEVICE_MINING && !(other.sensors.present & LODE_SENSOR_TEMP),
          "the device without a sensor is never paused (%s)", lode_device_state_name(other.state));
    settle(m);
    CHECK(checked_job(m, EASY_TOP, "after the thermal pause"), "a job after the thermal pause");
    finish(m);
}

int main(void)
{
    test_seed();
    found.seen = calloc(SPAN, 1);
    static const lode_backend_ops *const fault_only[] = {&lode_backend_fault};
    lode_registry_use_backends(fault_only, 1);
    test_pause();
    test_error_recovers();
    test_error_quarantine();
    test_hang_restarts();
    test_hang_abandoned();
    test_stop_leaves_stuck_scan();
    test_bad_hits();
    test_thermal();
    lode_registry_use_backends(NULL, 0);
    free(found.seen);
    return test_summary();
}
