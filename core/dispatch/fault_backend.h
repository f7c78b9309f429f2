/* A fault-injecting backend, for tests only: its devices ("fault:0" ..
 * "fault:3") run the CPU backend's real sha256d scan and misbehave as told,
 * so that the dispatcher's watchdog, restarts, quarantine and thermal limit
 * can be tested without a failing GPU:
 * - hang: a scan blocks, deaf to its abort flag, for hang_s seconds (or
 *   until lode_fault_release), as a GPU stuck in its driver would;
 * - error: a scan fails with a device error, as a GPU lost mid-run;
 * - bad hits: a scan reports its real hits plus two made-up ones, as a
 *   device computing garbage (overclocked, overheating) would;
 * - corrupt, drop, extra hits: about one hit in N is reported at a wrong
 *   index, or left out, or about one non-hit nonce in N is reported, as a
 *   device subtly wrong would be (what `lode check` is for). Which nonces
 *   misbehave depends on the nonce alone (fault_backend.c's nonce_picked),
 *   so `lode scan` over the same nonces, chunked differently, shows it too.
 * Faults start once a handle is tuned (the dispatcher tunes a handle after
 * its self-test), so every handle passes its self-test and a reopen after a
 * fault succeeds. Its sensors report the temperature the test sets.
 *
 * C tests install it with lode_registry_use_backends and plan its faults
 * with lode_fault_set. The `lode` program lists it after the compiled-in
 * backends when LODE_TEST_FAULT is set (core/base/settings.c), whose
 * comma-separated entries plan the faults:
 *   hang:DEV[:AFTER]           DEV's scans hang (for good) after AFTER good scans
 *   error:DEV[:AFTER[:TIMES]]  device errors, TIMES of them (default: for ever)
 *   badhits:DEV[:AFTER]        made-up hits
 *   corrupt:DEV:N              about one hit in N at a wrong index nearby (dropped
 *                              where none lies inside the scanned range)
 *   drop:DEV:N                 about one hit in N left out
 *   extra:DEV:N                about one non-hit nonce in N reported as a hit
 *                              (N 1..1000000; every scan once tuned)
 *   temp:DEV:FILE              DEV's temperature is the number in FILE (no file:
 *                              no sensor)
 * e.g. LODE_TEST_FAULT=hang:0:5 lode --benchmark -a sha256d -d fault:0,fault:1 */
#ifndef LODE_CORE_FAULT_BACKEND_H
#define LODE_CORE_FAULT_BACKEND_H

#include <stddef.h>

#include "core/base/backend.h"

#define LODE_FAULT_DEVICES 4

extern const lode_backend_ops lode_backend_fault;

typedef enum lode_fault_kind {
    LODE_FAULT_NONE,
    LODE_FAULT_HANG,
    LODE_FAULT_ERROR,
    LODE_FAULT_BAD_HITS,
    LODE_FAULT_CORRUPT_HITS, /* the hit kinds fault every live scan, */
    LODE_FAULT_DROP_HITS,    /* ignoring after and times */
    LODE_FAULT_EXTRA_HITS,
} lode_fault_kind;

typedef struct lode_fault_plan {
    lode_fault_kind kind;
    unsigned after; /* scans that behave first, over all the device's handles */
    unsigned times; /* faults before it behaves again; 0 = for ever */
    double hang_s;  /* HANG: a hung scan returns after this long; 0 = only at
                       lode_fault_release (or after 10 minutes) */
    unsigned every; /* CORRUPT, DROP, EXTRA_HITS: about one nonce in this
                       many is picked (0 counts as 1) */
} lode_fault_plan;

/* Plans device's faults (NULL: none) and zeroes its counts. Any thread. */
void lode_fault_set(int device, const lode_fault_plan *plan);
/* The device's temperature sensor reads celsius; NAN: it has none. */
void lode_fault_set_temperature(int device, double celsius);
/* Ends every hang now and those to come return at once. */
void lode_fault_release(void);
/* Faults the device has shown so far; for the hit kinds, the hits
 * corrupted, dropped or made up. */
unsigned lode_fault_fired(int device);
/* Plans every device from a LODE_TEST_FAULT text. 0, or -1 with why. */
int lode_fault_configure(const char *spec, char *err, size_t err_len);

#endif
