/* The finishing steps of a finished assignment (class_driver.h): the
 * proof file, the result lines and the worktodo line, in the order that
 * keeps a result from being lost or reported twice. */
#include "core/tf/class_driver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/base/settings.h"
#include "core/base/tf_ref.h"
#include "core/tf/fileio.h"
#include "core/tf/proof.h"

static int by_u128(const void *a, const void *b)
{
    lode_u128 x = *(const lode_u128 *)a, y = *(const lode_u128 *)b;
    return x < y ? -1 : x > y;
}

/* Where the proof goes: the results file's directory ("" for the current
 * one), or the checkpoints' when the results path is not a regular file
 * (--results /dev/stdout would put it into /dev). */
static void proof_dir(const lode_tf_driver *d, char *out, size_t len)
{
    const char *results = d->results;
    struct stat st;
    if (results != NULL && stat(results, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(out, len, "%s", d->ckp_dir);
        return;
    }
    const char *slash = results != NULL ? strrchr(results, '/') : NULL;
    snprintf(out, len, "%.*s", slash != NULL ? (int)(slash - results) : 0, slash != NULL ? results : "");
    if (slash == results)
        snprintf(out, len, "/");
}

/* The proof of a finished assignment: the devices' list (q at or above
 * LODE_TF_PROOF_HOST_LIMIT) and the host's below it, sorted, written to
 * its file in proof_dir; *summary for the JSON line. 0, or -1
 * (logged). */
static int write_proof(const lode_tf_driver *d, const lode_tf_assignment *a, const lode_tf_progress *pr,
                       lode_tf_proof_summary *summary, char *path, size_t path_len)
{
    lode_u128 *small = NULL;
    size_t n_small = 0;
    if (lode_tf_proof_enumerate(a->p, a->bit_min, a->bit_max, pr->proof_bits, LODE_TF_PROOF_HOST_LIMIT, &small,
                                &n_small) != 0) {
        lode_log(LODE_LOG_ERROR, "out of memory listing the proof's small q");
        return -1;
    }
    size_t n = 0;
    lode_u128 *q = malloc((n_small + pr->proof_count + 1) * sizeof *q);
    if (q == NULL) {
        free(small);
        lode_log(LODE_LOG_ERROR, "out of memory writing the proof");
        return -1;
    }
    for (size_t i = 0; i < n_small; i++)
        q[n++] = small[i];
    free(small);
    for (unsigned i = 0; i < pr->proof_count; i++) {
        const lode_u128 x = lode_tf_q(a->p, pr->proof_k[i]);
        if (x >= LODE_TF_PROOF_HOST_LIMIT)
            q[n++] = x;
    }
    /* Every index is scanned once (the dispatcher's ranges, a checkpoint's
     * classes), so there are no repeats: lode_tf_proof_write refuses them. */
    qsort(q, n, sizeof *q, by_u128);
    char dir[4096];
    proof_dir(d, dir, sizeof dir);
    lode_tf_proof_path(dir, a, path, path_len);
    summary->t = pr->proof_bits;
    summary->count = (unsigned)n;
    summary->expected = lode_tf_proof_expected(a->p, a->bit_min, a->bit_max, pr->proof_bits);
    lode_tf_proof_digest(q, n, summary->sha256);
    const char *name = strrchr(path, '/');
    summary->file = name != NULL ? name + 1 : path;
    int rc = lode_tf_proof_write(path, a->p, a->bit_min, a->bit_max, pr->proof_bits, q, n);
    if (rc != 0)
        lode_log(LODE_LOG_ERROR, "cannot write the proof %s: %s; the result is not written and the next run "
                 "tries again", path, strerror(errno));
    else
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: proof %s: %zu proof entries with t = %u (%.1f expected), "
                 "sha256 %s", a->p, a->bit_min, a->bit_max, path, n, pr->proof_bits, summary->expected,
                 summary->sha256);
    free(q);
    return rc;
}

static long file_length(const char *path)
{
    struct stat st;
    return path != NULL && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long)st.st_size : 0;
}

static int by_k(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The result on stdout and as an event (--log-format json): the factors
 * in decimal. */
static void announce_result(const lode_tf_driver *d, const lode_tf_assignment *a, const lode_tf_progress *pr)
{
    if (d->out != NULL) {
        char legacy[8192];
        lode_tf_report_info info = d->info;
        info.partial = pr->partial;
        lode_tf_legacy_lines(a, pr->k, pr->factors, &info, false, legacy, sizeof legacy);
        fputs(legacy, d->out);
        fflush(d->out);
    }
    char factor_list[512] = "";
    for (int i = 0, at = 0; i < pr->factors && at < (int)sizeof factor_list - 50; i++) {
        char q[48];
        lode_tf_u128_str(lode_tf_q(a->p, pr->k[i]), q);
        at += snprintf(factor_list + at, sizeof factor_list - (size_t)at, "%s%s", i ? "," : "", q);
    }
    lode_log_event(LODE_LOG_INFO, "tf_result",
                   LODE_LOG_FIELDS(LODE_LOG_INT("exponent", a->p), LODE_LOG_INT("bit_min", a->bit_min),
                                   LODE_LOG_INT("bit_max", a->bit_max), LODE_LOG_STR("status", pr->factors ? "F" : "NF"),
                                   LODE_LOG_INT("factors", pr->factors),
                                   LODE_LOG_STR("factor", pr->factors ? factor_list : NULL)),
                   "M%u 2^%u..2^%u: %s%s", a->p, a->bit_min, a->bit_max, pr->factors ? "factor " : "no factor",
                   factor_list);
}

/* Step 1: the "result pending" record. 0, or -1 (logged). */
static int save_pending(const lode_tf_driver *d, const lode_tf_assignment *a, lode_tf_progress *pr,
                        const char *path)
{
    pr->state = LODE_TF_CKP_PENDING;
    pr->results_offset = file_length(d->results);
    pr->legacy_offset = file_length(d->legacy);
    if (lode_tf_checkpoint_save(path, a, pr) != 0) {
        lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s; the result is not written (it could not be "
                 "guarded against a second report); the next run tries again", path, strerror(errno));
        return -1;
    }
    lode_tf_crash_point("pending-saved");
    return 0;
}

/* Step 2: the proof, the legacy lines, the JSON line (resumed: only what
 * is not there yet). 0, or -1 (logged). */
static int append_results(const lode_tf_driver *d, const lode_tf_assignment *a, const lode_tf_progress *pr,
                          const char *path, bool resumed)
{
    lode_tf_proof_summary proof;
    char proof_path[4200];
    lode_tf_report_info info = d->info;
    info.partial = pr->partial;
    if (pr->proof_kept) {
        if (write_proof(d, a, pr, &proof, proof_path, sizeof proof_path) != 0)
            return -1;
        info.proof = &proof;
        lode_tf_crash_point("proof-written");
    }
    if (d->legacy != NULL && !(resumed && lode_tf_result_present(d->legacy, pr->legacy_offset, a, false))) {
        char legacy[8192];
        lode_tf_legacy_lines(a, pr->k, pr->factors, &info, true, legacy, sizeof legacy);
        if (lode_tf_append_record(d->legacy, legacy, strlen(legacy)) != 0) {
            lode_log(LODE_LOG_ERROR, "cannot append to %s: %s; the result stays in %s and the next run writes "
                     "it", d->legacy, strerror(errno), path);
            return -1;
        }
        lode_tf_crash_point("legacy-appended");
    }
    if (resumed && lode_tf_result_present(d->results, pr->results_offset, a, true)) {
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: the result is already in %s", a->p, a->bit_min, a->bit_max,
                 d->results);
        return 0;
    }
    char *json = lode_tf_result_json(a, pr->k, pr->factors, &info);
    int rc = json != NULL ? lode_tf_append_record(d->results, json, strlen(json)) : -1;
    if (json == NULL)
        errno = ENOMEM;
    free(json);
    if (rc != 0) {
        lode_log(LODE_LOG_ERROR, "cannot append to %s: %s; the result stays in %s and the next run writes it",
                 d->results, strerror(errno), path);
        return -1;
    }
    lode_tf_crash_point("result-appended");
    return 0;
}

int lode_tf_driver_next_line(const lode_tf_driver *d, const lode_tf_assignment *a, int factors, char *out,
                             size_t len)
{
    lode_tf_assignment whole;
    char why[256];
    if (lode_tf_worktodo_parse_line(a->line, a->line_len, &whole, why, sizeof why) != 1 || whole.p != a->p ||
        whole.bit_min != a->bit_min || whole.bit_max <= a->bit_max)
        return -1; /* the line is this range: done */
    if (factors > 0 && d->stop_after_factor != 0)
        return -1; /* the exponent has a factor: the rest is not wanted */
    return lode_tf_worktodo_raised(&whole, a->bit_max, out, len);
}

/* Steps 4 and 5: the worktodo line (removed, or raised past a stage), then
 * the checkpoint. */
static int clean_up(const lode_tf_driver *d, const lode_tf_assignment *a, const lode_tf_progress *pr,
                    const char *path)
{
    if (d->worktodo != NULL) {
        char next[LODE_TF_LINE_MAX + 2];
        int n = lode_tf_driver_next_line(d, a, pr->factors, next, sizeof next);
        if ((n < 0 ? lode_tf_worktodo_remove(d->worktodo, a)
                   : lode_tf_worktodo_replace(d->worktodo, a, next, (size_t)n)) != 0) {
            lode_log(LODE_LOG_ERROR, "cannot %s the finished line of %s: %s; %s records that it is reported and "
                     "the next run does it", n < 0 ? "remove" : "raise", d->worktodo, strerror(errno), path);
            return LODE_TF_FAILED;
        }
        lode_tf_crash_point("worktodo-rewritten");
    }
    if (unlink(path) != 0 && errno != ENOENT)
        lode_log(LODE_LOG_WARN, "cannot remove %s: %s", path, strerror(errno));
    else
        (void)lode_tf_fsync_dir_of(path);
    lode_tf_crash_point("checkpoint-removed");
    if (d->on_result != NULL) /* the PrimeNet client sends it now */
        d->on_result(d->on_result_user, a);
    return LODE_TF_DONE;
}

int lode_tf_driver_finish(const lode_tf_driver *d, const lode_tf_assignment *a, lode_tf_progress *pr)
{
    char path[4096];
    lode_tf_checkpoint_path(d->ckp_dir, a, path, sizeof path);
    qsort(pr->k, (size_t)pr->factors, sizeof pr->k[0], by_k);
    announce_result(d, a, pr);
    if (pr->state == LODE_TF_CKP_REPORTED) {
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: the result is already in %s", a->p, a->bit_min, a->bit_max,
                 d->results);
        return clean_up(d, a, pr, path);
    }
    bool resumed = pr->state == LODE_TF_CKP_PENDING;
    if (pr->partial && pr->proof_kept) {
        /* A proof covers a whole range: the verifier counts on all of it. */
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: a partial range carries no proof", a->p, a->bit_min, a->bit_max);
        pr->proof_kept = false;
    } else if (!pr->proof_kept && !pr->partial) {
        lode_log(LODE_LOG_WARN, "M%u 2^%u..2^%u: this result carries no proof (%s)", a->p, a->bit_min,
                 a->bit_max, lode_setting_flag(LODE_SETTING_TF_NO_PROOF)
                                 ? "LODE_TF_NO_PROOF is set"
                                 : "its run resumed from a checkpoint without one, or its list overflowed");
    }
    if ((!resumed && save_pending(d, a, pr, path) != 0) || append_results(d, a, pr, path, resumed) != 0)
        return LODE_TF_FAILED;
    pr->state = LODE_TF_CKP_REPORTED;
    if (lode_tf_checkpoint_save(path, a, pr) != 0) /* the pending record still guards it */
        lode_log(LODE_LOG_WARN, "cannot write checkpoint %s: %s", path, strerror(errno));
    lode_tf_crash_point("reported-saved");
    return clean_up(d, a, pr, path);
}
