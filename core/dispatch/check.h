/* `lode check`: every selected device and implementation variant computes
 * random work of each algorithm, and the CPU reference (core/base, the *_ref files)
 * computes the same work; the answers are compared exactly.
 *
 * A job is drawn from (seed, algorithm, job number) alone, so every device
 * and variant checks the same jobs and a seed reproduces them:
 * - SHA-256d, scrypt: a random header, a target loose enough for dozens of
 *   hits, a range of odd length, one job in four ending at nonce 2^32-1;
 *   one SHA-256d job in two rolls LODE_VERSIONS_MAX versions;
 * - Momentum: a random header; every colliding pair of its 2^26 nonces;
 * - trial factoring: even jobs hold a known factor (tests/vectors, the
 *   embedded set) at a random place of a range of its class; odd jobs are
 *   random small ranges of a random exponent, bit level and class.
 *
 * Each job has the range the device scans and a window of it that the
 * reference enumerates index by index; inside the window the two hit sets
 * must be equal, and every hit the device reports anywhere must pass the
 * reference's re-check (check_hit) exactly once. With a job count (--jobs)
 * the window is the whole range (ranges are small enough for the
 * reference). With a duration the device's ranges grow to about half a
 * second of its work and the windows to what the reference threads can do
 * in about a sixth of that, so the device stays busy (a stability test at
 * full load, as memtest is for memory); a device on the host's cores then
 * runs a handle per worker (the CPU backend: one per core; Momentum one),
 * each row one job at least.
 *
 * A device runs its (algorithm, variant) pairs one after another on a
 * thread of its own; devices run side by side. A device whose answer differs
 * is named and the others go on. */
#ifndef LODE_CORE_CHECK_H
#define LODE_CORE_CHECK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/work.h"
#include "core/dispatch/registry.h"

#define LODE_CHECK_VARIANT_LEN 32
#define LODE_CHECK_KEPT_MISMATCHES 8 /* per row, in full; all are counted */

/* One difference between a device and the reference. */
typedef struct lode_check_mismatch {
    uint64_t job;          /* the job number (with the seed, it reproduces the job) */
    lode_work work;        /* the job */
    lode_range range;      /* the part to rescan to see it (lode scan --start --count) */
    lode_hit hit;          /* the hit in question */
    bool reported;         /* true: the device reported hit and the reference does not agree;
                              false: the reference has hit and the device did not report it */
    char what[160];        /* one line: what differs */
    double at_s;           /* seconds since the check started */
    lode_sensors sensors;  /* the device's readings then (present = 0: none) */
} lode_check_mismatch;

/* One device x variant x algorithm. */
typedef struct lode_check_row {
    const lode_device_ref *device;
    char variant[LODE_CHECK_VARIANT_LEN]; /* "" = the device's only implementation */
    lode_algo algo;
    bool ran;                 /* opened, passed its self-test and scanned */
    int error;                /* LODE_OK, or the status that stopped the row */
    char error_text[300];     /* why (a self-test's failing vector, a device error) */
    uint64_t jobs;
    uint64_t hits_reported;   /* hits the device reported, each re-checked */
    uint64_t hits_compared;   /* reference hits inside the windows, matched one by one */
    uint64_t indices;         /* indices the device scanned (an index of a version-rolled
                                 job counts once per version: hashes) */
    uint64_t indices_exact;   /* of those, inside a window the reference enumerated */
    uint64_t mismatches;      /* jobs with at least one difference */
    uint64_t differences;     /* every difference */
    double device_s;          /* time in the device's scans */
    double seconds;           /* wall time of the row */
    double max_temp_c;        /* NAN: no temperature reading */
    lode_check_mismatch kept[LODE_CHECK_KEPT_MISMATCHES]; /* the first ones */
} lode_check_row;

typedef struct lode_check_config {
    const lode_device_ref *devices;
    size_t device_count;
    const lode_algo *algos;   /* in this order; a device skips those it cannot run */
    size_t algo_count;
    const char *variant;      /* NULL: every variant the device offers */
    uint64_t seed;
    uint64_t jobs;            /* per row; used when duration_s is 0 */
    double duration_s;        /* > 0: run this long, split evenly over a device's rows */
    unsigned reference_threads; /* 0: one per online CPU */
    /* Called (from a device's thread) after each job; may be NULL. */
    void (*progress)(void *user, const lode_check_row *row);
    /* Called (from a device's thread) as each row finishes; may be NULL. */
    void (*row_done)(void *user, const lode_check_row *row);
    void *user;
} lode_check_config;

typedef struct lode_check {
    lode_check_row *rows;     /* device by device, then algorithm, then variant */
    size_t row_count;
    double seconds;
    unsigned abandoned;       /* device threads a stop left behind (stuck in a device call) */
} lode_check;

/* Runs the check; *stop (may be NULL) ends it early (Ctrl-C). Returns 0 and
 * fills out (free it with lode_check_free), or -1 with why in err (no
 * device runs any of the algorithms, out of memory). Mismatches and device
 * errors are results, in the rows, not failures of the call. */
int lode_check_run(const lode_check_config *cfg, const atomic_int *stop, lode_check *out, char *err,
                   size_t err_len);
void lode_check_free(lode_check *c);

/* Did every row run and match? */
bool lode_check_passed(const lode_check *c);

#endif
