#include "core/tf/class_driver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/tf_ref.h"
#include "core/base/settings.h"
#include "core/dispatch/registry.h"
#include "core/tf/fileio.h"
#include "core/tf/progress_line.h"
#include "core/tf/proof.h"

void lode_tf_driver_init(lode_tf_driver *d)
{
    *d = (lode_tf_driver){.results = "results.json.txt", .ckp_dir = ".", .ckp_interval = 60,
                          .progress_interval = 10, .progress_ckp = true, .out = stdout};
    pthread_mutex_init(&d->lock, NULL);
}

void lode_tf_driver_status(lode_tf_driver *d, lode_tf_status *out)
{
    pthread_mutex_lock(&d->lock);
    *out = d->status;
    pthread_mutex_unlock(&d->lock);
}

void lode_tf_driver_destroy(lode_tf_driver *d)
{
    pthread_mutex_destroy(&d->lock);
}

void lode_tf_driver_on_found(void *driver, const lode_found *f)
{
    lode_tf_driver *d = driver;
    pthread_mutex_lock(&d->lock);
    if (f->device < LODE_TF_STATUS_DEVICES) {
        d->status.device_proof_entries[f->device] += (f->hash[0] & LODE_TF_HIT_PROOF) != 0;
        d->status.device_factors[f->device] += (f->hash[0] & LODE_TF_HIT_FACTOR) != 0;
    }
    if ((f->hash[0] & LODE_TF_HIT_FACTOR) && d->hit_count < LODE_TF_MAX_FACTORS) {
        d->hit_n[d->hit_count] = f->hit.index;
        d->hit_seq[d->hit_count++] = f->work->seq;
    }
    if (f->hash[0] & LODE_TF_HIT_PROOF) {
        if (d->proof_hits < LODE_TF_PROOF_MAX) {
            d->proof_n[d->proof_hits] = f->hit.index;
            d->proof_seq[d->proof_hits++] = f->work->seq;
        } else {
            d->proof_overflow = true;
        }
    }
    pthread_mutex_unlock(&d->lock);
}

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
        lode_log(LODE_LOG_INFO,
                 "M%u 2^%u..2^%u: proof %s: %zu proof entries with t = %u (%.1f expected), sha256 %s", a->p,
                 a->bit_min, a->bit_max, path, n, pr->proof_bits, summary->expected, summary->sha256);
    free(q);
    return rc;
}

static bool asked(bool (*flag)(void))
{
    return flag != NULL && flag();
}

void lode_tf_format_eta(double s, char *out, size_t len)
{
    if (!(s >= 0) || s > 1e12)
        s = 0;
    unsigned long long t = (unsigned long long)(s + 0.5);
    unsigned long long d = t / 86400, h = t / 3600 % 24, m = t / 60 % 60, sec = t % 60;
    if (d)
        snprintf(out, len, "%llud %02lluh %02llum", d, h, m);
    else if (h)
        snprintf(out, len, "%lluh %02llum", h, m);
    else if (m)
        snprintf(out, len, "%llum %02llus", m, sec);
    else
        snprintf(out, len, "%llus", sec);
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

int lode_tf_driver_finish(const lode_tf_driver *d, const lode_tf_assignment *a, lode_tf_progress *pr)
{
    char path[4096];
    lode_tf_checkpoint_path(d->ckp_dir, a, path, sizeof path);
    qsort(pr->k, (size_t)pr->factors, sizeof pr->k[0], by_k);
    char legacy[8192];
    if (d->out != NULL) {
        lode_tf_legacy_lines(a, pr->k, pr->factors, &d->info, false, legacy, sizeof legacy);
        fputs(legacy, d->out);
        fflush(d->out);
    }
    lode_tf_legacy_lines(a, pr->k, pr->factors, &d->info, true, legacy, sizeof legacy);
    /* The result as an event (--log-format json): the factors in decimal. */
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
    if (pr->state == LODE_TF_CKP_REPORTED) {
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: the result is already in %s", a->p, a->bit_min, a->bit_max,
                 d->results);
    } else {
        bool resumed = pr->state == LODE_TF_CKP_PENDING;
        lode_tf_proof_summary proof;
        char proof_path[4200];
        lode_tf_report_info info = d->info;
        if (!pr->proof_kept)
            lode_log(LODE_LOG_WARN, "M%u 2^%u..2^%u: this result carries no proof (%s)", a->p, a->bit_min,
                     a->bit_max, lode_setting_flag(LODE_SETTING_TF_NO_PROOF)
                                     ? "LODE_TF_NO_PROOF is set"
                                     : "its run resumed from a checkpoint without one, or its list overflowed");
        if (!resumed) {
            pr->state = LODE_TF_CKP_PENDING;
            pr->results_offset = file_length(d->results);
            pr->legacy_offset = file_length(d->legacy);
            if (lode_tf_checkpoint_save(path, a, pr) != 0) {
                lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s; the result is not written (it "
                         "could not be guarded against a second report); the next run tries again", path,
                         strerror(errno));
                return LODE_TF_FAILED;
            }
            lode_tf_crash_point("pending-saved");
        }
        if (pr->proof_kept) {
            if (write_proof(d, a, pr, &proof, proof_path, sizeof proof_path) != 0)
                return LODE_TF_FAILED;
            info.proof = &proof;
            lode_tf_crash_point("proof-written");
        }
        if (d->legacy != NULL && !(resumed && lode_tf_result_present(d->legacy, pr->legacy_offset, a, false))) {
            if (lode_tf_append_record(d->legacy, legacy, strlen(legacy)) != 0) {
                lode_log(LODE_LOG_ERROR, "cannot append to %s: %s; the result stays in %s and the next run "
                         "writes it", d->legacy, strerror(errno), path);
                return LODE_TF_FAILED;
            }
            lode_tf_crash_point("legacy-appended");
        }
        if (resumed && lode_tf_result_present(d->results, pr->results_offset, a, true)) {
            lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: the result is already in %s", a->p, a->bit_min,
                     a->bit_max, d->results);
        } else {
            char *json = lode_tf_result_json(a, pr->k, pr->factors, &info);
            int rc = json != NULL ? lode_tf_append_record(d->results, json, strlen(json)) : -1;
            if (json == NULL)
                errno = ENOMEM;
            free(json);
            if (rc != 0) {
                lode_log(LODE_LOG_ERROR, "cannot append to %s: %s; the result stays in %s and the next run "
                         "writes it", d->results, strerror(errno), path);
                return LODE_TF_FAILED;
            }
            lode_tf_crash_point("result-appended");
        }
        pr->state = LODE_TF_CKP_REPORTED;
        if (lode_tf_checkpoint_save(path, a, pr) != 0) /* the pending record still guards it */
            lode_log(LODE_LOG_WARN, "cannot write checkpoint %s: %s", path, strerror(errno));
        lode_tf_crash_point("reported-saved");
    }
    if (d->worktodo != NULL) {
        if (lode_tf_worktodo_remove(d->worktodo, a) != 0) {
            lode_log(LODE_LOG_ERROR, "cannot remove the finished line from %s: %s; %s records that it is "
                     "reported and the next run removes it", d->worktodo, strerror(errno), path);
            return LODE_TF_FAILED;
        }
        lode_tf_crash_point("worktodo-rewritten");
    }
    if (unlink(path) != 0 && errno != ENOENT)
        lode_log(LODE_LOG_WARN, "cannot remove %s: %s", path, strerror(errno));
    else
        (void)lode_tf_fsync_dir_of(path);
    lode_tf_crash_point("checkpoint-removed");
    return LODE_TF_DONE;
}

static uint64_t candidates(lode_dispatcher *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < lode_dispatcher_device_count(m); i++) {
        lode_device_stats st;
        lode_dispatcher_device_stats(m, i, &st);
        n += st.hashes;
    }
    return n;
}

static const char *saved_text(bool saved, bool progress_ckp, const char *yes)
{
    return saved ? yes : progress_ckp ? "progress NOT saved" : "progress not saved (--no-checkpoints)";
}

/* Waits for class c (job seq): 1 done, -1 never (every device failed), 0
 * stopped first. A stop lets the class finish only if it does within
 * LODE_STOP_GRACE_MS (a GPU's class takes well under a second, a CPU's can
 * take minutes: then it is left and runs again next time); a second stop
 * leaves it at once. */
static int wait_class(lode_tf_driver *d, uint64_t seq, unsigned c)
{
    int r;
    double stop_at = -1;
    while ((r = lode_dispatcher_wait_job(d->miner, seq, 100)) == 0 && !asked(d->stop_now)) {
        if (!asked(d->stop))
            continue;
        if (stop_at < 0) {
            stop_at = lode_clock_s();
            lode_log(LODE_LOG_INFO, "stopping: class %u is kept if it finishes within %d s, else it runs again "
                     "next time", c, LODE_STOP_GRACE_MS / 1000);
        } else if (lode_clock_s() - stop_at >= LODE_STOP_GRACE_MS / 1000.0) {
            break;
        }
    }
    return r;
}

int lode_tf_driver_run(lode_tf_driver *d, const lode_tf_assignment *a)
{
    char path[4096];
    lode_tf_checkpoint_path(d->ckp_dir, a, path, sizeof path);
    lode_tf_progress pr;
    lode_tf_progress_init(&pr);
    const unsigned proof_bits = lode_tf_proof_bits(a->p, a->bit_min, a->bit_max);
    const bool want_proof = !lode_setting_flag(LODE_SETTING_TF_NO_PROOF);
    if (lode_tf_checkpoint_load(path, a, &pr) == 1) {
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: resuming from %s at class %u (%u of %u done)", a->p,
                 a->bit_min, a->bit_max, path, pr.next_class, pr.classes_done, LODE_TF_NEEDED_CLASSES);
        if (want_proof && (!pr.proof_kept || pr.proof_bits != proof_bits))
            lode_log(LODE_LOG_WARN,
                     "M%u 2^%u..2^%u: the checkpoint holds no proof with t = %u (an older lode, or a run with "
                     "LODE_TF_NO_PROOF, wrote it): this result will carry none",
                     a->p, a->bit_min, a->bit_max, proof_bits);
        if (pr.proof_bits != proof_bits)
            pr.proof_kept = false;
    } else {
        pr.proof_kept = want_proof;
        pr.proof_bits = proof_bits;
    }
    if (!want_proof)
        pr.proof_kept = false;
    FILE *class_log = NULL;
    if (d->class_log != NULL) {
        /* Drop what was logged after the checkpoint: those classes run again. */
        if (truncate(d->class_log, pr.class_log_offset) != 0 && errno != ENOENT)
            lode_log(LODE_LOG_WARN, "cannot truncate %s", d->class_log);
        class_log = fopen(d->class_log, "a");
    }
    double ghz_days = lode_tf_ghz_days(a->p, a->bit_min, a->bit_max);
    lode_log(LODE_LOG_INFO, "trial factoring M%u from 2^%u to 2^%u (%.4f GHz-days)", a->p, a->bit_min,
             a->bit_max, ghz_days);
    double t0 = lode_clock_s(), last_ckp = t0, last_line = 0;
    unsigned done_at_start = pr.classes_done;
    pthread_mutex_lock(&d->lock);
    d->status.running = true;
    d->status.exponent = a->p;
    d->status.bit_min = a->bit_min;
    d->status.bit_max = a->bit_max;
    d->status.classes_done = pr.classes_done;
    d->status.classes_total = LODE_TF_NEEDED_CLASSES;
    d->status.factors = (unsigned)pr.factors;
    d->status.ghz_days = ghz_days;
    d->status.candidates = lode_tf_candidates(a->p, a->bit_min, a->bit_max);
    d->status.ghz_days_per_day = d->status.eta_s = -1;
    pthread_mutex_unlock(&d->lock);
    lode_dispatcher *m = d->miner;
    uint64_t cand0 = candidates(m);
    int status = LODE_TF_DONE;
    for (unsigned c = pr.next_class; c < LODE_TF_CLASSES; c++) {
        if (!lode_tf_class_needed(a->p, c)) {
            pr.next_class = c + 1;
            continue;
        }
        uint64_t nb, ne;
        lode_tf_class_range(a->p, a->bit_min, a->bit_max, c, &nb, &ne);
        if (ne > nb) {
            lode_work w = {.algo = LODE_ALGO_TF,
                           .factor = {a->p, a->bit_min, a->bit_max, LODE_TF_CLASSES, c, pr.proof_kept, proof_bits}};
            uint64_t seq = lode_dispatcher_set_job(m, &w, nb, ne);
            int r = wait_class(d, seq, c);
            if (r == 0) { /* stopped mid-class: the checkpoint says this class is not done */
                bool saved = false;
                if (d->progress_ckp && !(saved = lode_tf_checkpoint_save(path, a, &pr) == 0))
                    lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s", path, strerror(errno));
                lode_log(LODE_LOG_INFO, "stopped in class %u: %s; the class runs again next time", c,
                         saved_text(saved, d->progress_ckp, "progress before it saved"));
                status = LODE_TF_STOPPED;
                break;
            }
            if (r < 0) {
                lode_log(LODE_LOG_ERROR, "M%u class %u: no device could finish it", a->p, c);
                status = LODE_TF_FAILED;
                break;
            }
            pthread_mutex_lock(&d->lock);
            const int factors_before = pr.factors;
            for (int i = 0; i < d->hit_count; i++)
                if (d->hit_seq[i] == seq && pr.factors < LODE_TF_MAX_FACTORS)
                    pr.k[pr.factors++] = lode_tf_k(c, d->hit_n[i]);
            d->hit_count = 0;
            d->status.factors = (unsigned)pr.factors;
            d->status.factors_found += (uint64_t)(pr.factors - factors_before);
            /* The class's proof entries (write_proof sorts the whole list). */
            for (unsigned i = 0; i < d->proof_hits && pr.proof_kept; i++) {
                if (d->proof_seq[i] != seq)
                    continue;
                if (pr.proof_count == LODE_TF_PROOF_MAX) {
                    lode_log(LODE_LOG_ERROR, "M%u: more than %d proof entries: this result will carry no "
                             "proof", a->p, LODE_TF_PROOF_MAX);
                    pr.proof_kept = false;
                    break;
                }
                pr.proof_k[pr.proof_count++] = lode_tf_k(c, d->proof_n[i]);
            }
            if (d->proof_overflow && pr.proof_kept) {
                lode_log(LODE_LOG_ERROR, "M%u class %u: proof entries lost: this result will carry no proof",
                         a->p, c);
                pr.proof_kept = false;
            }
            d->proof_hits = 0;
            d->proof_overflow = false;
            pthread_mutex_unlock(&d->lock);
        }
        pr.next_class = c + 1;
        pr.classes_done++;
        if (class_log != NULL) {
            fprintf(class_log, "%u\n", c);
            fflush(class_log);
            pr.class_log_offset = ftell(class_log);
        }
        double t = lode_clock_s();
        {
            double el = t - t0 > 1e-6 ? t - t0 : 1e-6, ran = (double)(pr.classes_done - done_at_start);
            pthread_mutex_lock(&d->lock);
            d->status.classes_done = pr.classes_done;
            d->status.classes_done_total++;
            d->status.ghz_days_per_day = ghz_days * ran / LODE_TF_NEEDED_CLASSES / (el / 86400.0);
            d->status.eta_s = el / ran * (double)(LODE_TF_NEEDED_CLASSES - pr.classes_done);
            pthread_mutex_unlock(&d->lock);
        }
        bool stop = asked(d->stop), saved = false;
        if (d->progress_ckp && (stop || t - last_ckp >= d->ckp_interval)) {
            if (!(saved = lode_tf_checkpoint_save(path, a, &pr) == 0))
                lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s", path, strerror(errno));
            last_ckp = t;
        }
        if (t - last_line >= d->progress_interval || pr.classes_done == LODE_TF_NEEDED_CLASSES) {
            uint64_t cand = candidates(m);
            double el = t - t0 > 1e-6 ? t - t0 : 1e-6;
            double frac = (double)(pr.classes_done - done_at_start) / LODE_TF_NEEDED_CLASSES;
            double left = (double)(LODE_TF_NEEDED_CLASSES - pr.classes_done);
            double eta = pr.classes_done > done_at_start ? el / (pr.classes_done - done_at_start) * left : 0;
            lode_tf_progress_figures fig = {.assignment = a, .class_index = c,
                                            .percent = 100.0 * pr.classes_done / LODE_TF_NEEDED_CLASSES,
                                            .candidates_per_s = (double)(cand - cand0) / el,
                                            .ghz_days_per_day = ghz_days * frac / (el / 86400.0), .eta_s = eta};
            char line[1024];
            lode_tf_progress_line(&fig, m, line, sizeof line);
            lode_log(LODE_LOG_INFO, "%s", line);
            last_line = t;
        }
        if (stop && pr.classes_done < LODE_TF_NEEDED_CLASSES) { /* else: report it first */
            lode_log(LODE_LOG_INFO, "interrupted after class %u: %s", c,
                     saved_text(saved, d->progress_ckp, "progress saved"));
            status = LODE_TF_STOPPED;
            break;
        }
    }
    if (class_log != NULL)
        fclose(class_log);
    pthread_mutex_lock(&d->lock);
    d->status.running = false;
    pthread_mutex_unlock(&d->lock);
    if (status != LODE_TF_DONE)
        return status;
    status = lode_tf_driver_finish(d, a, &pr);
    if (status == LODE_TF_DONE) {
        pthread_mutex_lock(&d->lock);
        d->status.assignments_done++;
        pthread_mutex_unlock(&d->lock);
    }
    return status;
}

int lode_tf_driver_run_list(lode_tf_driver *d, lode_tf_assignment **list, size_t *count)
{
    int status = LODE_TF_DONE;
    for (size_t i = 0; status == LODE_TF_DONE && i < *count; i++) {
        status = lode_tf_driver_run(d, &(*list)[i]);
        if (status == LODE_TF_DONE && asked(d->stop))
            status = LODE_TF_STOPPED;
        if (status != LODE_TF_DONE || d->worktodo == NULL)
            continue;
        /* New work dropped into worktodo.add meanwhile: merge it, and go on
         * with whatever the file now holds (the finished line is gone). */
        long merged = lode_tf_worktodo_merge_add(d->worktodo);
        if (merged < 0)
            lode_log(LODE_LOG_ERROR, "cannot merge worktodo.add into %s: %s", d->worktodo, strerror(errno));
        if (merged > 0) {
            lode_tf_assignment *fresh;
            size_t n;
            int bad;
            if (lode_tf_worktodo_load(d->worktodo, &fresh, &n, &bad, false) == 0) {
                free(*list);
                *list = fresh;
                *count = n;
                i = (size_t)-1; /* from the top of the file again */
            }
        }
    }
    return status;
}
