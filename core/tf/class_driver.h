/* The class driver of trial factoring: runs an assignment's classes in
 * ascending order, one dispatcher job per class (all workers of all devices
 * share it), with checkpoints between classes, then writes the result
 * through the ordered finishing steps (finish.c). An assignment of several
 * bit levels runs whole or, with stages, one bit level at a time, each a
 * range of its own with its checkpoint and result (worklist.c).
 *
 * A factor is logged (event "tf_factor") as its class ends and saved in
 * the checkpoint at once. With stop_after_factor 2 the run stops at the
 * first class after a factor: the result is partial (rangecomplete false,
 * no proof) and the line goes; 1 stops after the stage with a factor.
 *
 * A checkpoint is written every ckp_interval seconds and on a stop request,
 * after a whole class: a SIGKILL loses at most the classes since the last
 * one and a class is never skipped. A stop does not wait for a class that
 * does not finish within LODE_STOP_GRACE_MS: it runs again next time. No result is lost or reported twice: a
 * finished assignment goes through these steps, each durable (fsync) before
 * the next; a kill at any instant leaves either the result unwritten or a
 * record that stops a second report:
 *   1. the checkpoint says "finished, result pending" with the lengths of
 *      the results files (even with progress_ckp off: it is the record);
 *   2. the legacy lines, then the JSON line, are appended (a restart in
 *      state 1 looks after those lengths for this assignment's lines and
 *      appends only what is missing);
 *   3. the checkpoint says "reported" (a restart only cleans up);
 *   4. the worktodo line is removed, or, after a stage that is not the
 *      line's last, its bit_min is raised past the stage;
 *   5. the checkpoint is removed.
 * Before step 2 the proof file (core/tf/proof.h) is written whole beside
 * the results (its content follows from the checkpoint, so a restart writes
 * the same file again), and the JSON line names it with its digest.
 * A result that cannot be written fails the run with the checkpoint and the
 * worktodo line kept; the next run writes it. The crash hook
 * (lode_tf_crash_point) names the steps pending-saved, legacy-appended,
 * result-appended, reported-saved, worktodo-rewritten, checkpoint-removed,
 * and factor-saved (the checkpoint saved as a factor's class ends). */
#ifndef LODE_TF_CLASS_DRIVER_H
#define LODE_TF_CLASS_DRIVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/dispatch/dispatch.h"
#include "core/tf/checkpoint.h"
#include "core/tf/results.h"
#include "core/tf/worktodo.h"

/* What a run ends with. */
enum { LODE_TF_DONE = 0, LODE_TF_FAILED = 1, LODE_TF_STOPPED = 2 };

/* Devices whose proof entries and factors are counted one by one. */
#define LODE_TF_STATUS_DEVICES 64

/* Where a run stands, for the HTTP API and the summary (lode_tf_driver_status). */
typedef struct lode_tf_status {
    bool running;                        /* an assignment's classes are being run */
    unsigned exponent, bit_min, bit_max;
    unsigned classes_done, classes_total; /* of the running assignment */
    uint64_t classes_done_total;         /* classes finished by this process */
    uint64_t assignments_done;           /* assignments finished by this process */
    unsigned factors;                    /* of the running assignment so far (its checkpoint's too) */
    uint64_t factors_found;              /* found by this process, counted as their class completes */
    /* Per device (the dispatcher's index), as reported: the primes for the
     * proof's list (a factor is one too) and the factors. A class stopped
     * and run again reports its own again. */
    uint64_t device_proof_entries[LODE_TF_STATUS_DEVICES], device_factors[LODE_TF_STATUS_DEVICES];
    double ghz_days;                     /* the running assignment's credit */
    uint64_t candidates;                 /* and its candidates (lode_tf_candidates) */
    double ghz_days_per_day, eta_s;      /* -1 until a class is done in this run */
} lode_tf_status;

typedef struct lode_tf_driver {
    /* Files. */
    const char *worktodo;    /* finished lines are removed from it; NULL: none */
    const char *results;     /* the JSON results (results.json.txt) */
    const char *legacy;      /* the legacy lines too (results.txt); NULL: none */
    const char *ckp_dir;     /* where M<p>_<a>_<b>.ckp live */
    const char *class_log;   /* each class appended as it completes (tests); NULL: none */
    double ckp_interval;     /* seconds between checkpoints (0: every class) */
    double progress_interval; /* seconds between progress lines */
    bool progress_ckp;       /* false: no progress saves (the finish record is still written) */
    bool stages;             /* a range of several bit levels one bit level at a time, a result each */
    int stop_after_factor;   /* mfaktc's StopAfterFactor: 0 never stop early; 1 (the default) at the
                                end of the bit level with stages, of the range without; 2 at the end
                                of the class (the rest of the range is not run: a partial result) */
    double add_delay;        /* seconds between merges of worktodo.add while a range runs (600,
                                mfaktc's WorkFileAddDelay; 0: after every class) */
    lode_tf_report_info info;
    FILE *out;               /* the legacy lines as printed (stdout); NULL: not printed */

    /* The run. */
    lode_dispatcher *miner;       /* started with lode_tf_driver_on_found as its found callback */
    bool (*stop)(void);      /* save and stop (Ctrl-C): the running class is kept if it finishes
                                within LODE_STOP_GRACE_MS, else it runs again next time; NULL: never */
    bool (*stop_now)(void);  /* leave the running class undone at once (a second Ctrl-C); NULL: never */
    /* Called once a finished assignment's result is in the results file and
     * its line has left the worktodo (the PrimeNet client sends it at once);
     * NULL: none. */
    void (*on_result)(void *user, const lode_tf_assignment *a);
    void *on_result_user;

    /* Private: confirmed hits of the running class: factors, and the
     * primes of the proof (core/tf/proof.h). */
    pthread_mutex_t lock;
    uint64_t hit_n[LODE_TF_MAX_FACTORS], hit_seq[LODE_TF_MAX_FACTORS];
    int hit_count;
    uint64_t proof_n[LODE_TF_PROOF_MAX], proof_seq[LODE_TF_PROOF_MAX];
    unsigned proof_hits;
    bool proof_overflow;
    lode_tf_status status; /* under lock */
} lode_tf_driver;

/* Defaults: results.json.txt, checkpoints in ".", every 60 s, progress
 * lines every 10 s, printed to stdout; no stages, stop after a factor at
 * the end of the range, worktodo.add merged every 600 s. */
void lode_tf_driver_init(lode_tf_driver *d);
void lode_tf_driver_destroy(lode_tf_driver *d);

/* The miner's found callback (user = the driver). */
void lode_tf_driver_on_found(void *driver, const lode_found *found);

/* Runs one assignment from its checkpoint (if any) to the end of the
 * finishing steps, in stages (one bit level at a time) when d->stages
 * says so, or when its first stage's checkpoint says an earlier run did;
 * a checkpoint of the whole range runs it whole. LODE_TF_DONE (also when
 * it stopped early for a factor, its line removed), LODE_TF_STOPPED
 * (progress saved as progress_ckp says), or LODE_TF_FAILED (logged). */
int lode_tf_driver_run(lode_tf_driver *d, const lode_tf_assignment *a);

/* One range (a stage, or a whole assignment) from its checkpoint to the
 * end of the finishing steps, as lode_tf_driver_run; *factors (NULL: not
 * wanted) gets the factors its result has. */
int lode_tf_driver_run_range(lode_tf_driver *d, const lode_tf_assignment *a, int *factors);

/* Runs *list in order. With a worktodo file, worktodo.add is merged after
 * each finished assignment and the list is read again from the file (the
 * finished line is gone; lines added meanwhile, by worktodo.add or
 * written to the file, are there) and run from its top.
 * Returns as lode_tf_driver_run, at the first assignment that is not done,
 * or LODE_TF_STOPPED when a stop was asked between assignments. */
int lode_tf_driver_run_list(lode_tf_driver *d, lode_tf_assignment **list, size_t *count);

/* Steps 1 to 5 above for a finished assignment (pr: its classes and
 * factors; the factors are sorted). LODE_TF_DONE, or LODE_TF_FAILED with
 * the reason logged (the checkpoint and the worktodo line are kept: the
 * next run goes on from there). Needs no miner. */
int lode_tf_driver_finish(const lode_tf_driver *d, const lode_tf_assignment *a, lode_tf_progress *pr);

/* Step 4's line after a's result with this many factors: the line raised
 * to the next stage into out (its length), or -1 when the line goes (its
 * last stage, or a factor with stop_after_factor 1 or 2). */
int lode_tf_driver_next_line(const lode_tf_driver *d, const lode_tf_assignment *a, int factors, char *out,
                             size_t len);

/* A copy of where the run stands (any thread). */
void lode_tf_driver_status(lode_tf_driver *d, lode_tf_status *out);

/* "3d 04h 05m", "4h 05m", "5m 06s", "7s". */
void lode_tf_format_eta(double seconds, char *out, size_t len);

#endif
