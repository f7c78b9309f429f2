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
                          .progress_interval = 10, .progress_ckp = true, .out = stdout,
                          .stop_after_factor = 1, .add_delay = 600};
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

/* One assignment's run, shared by the steps of lode_tf_driver_run. */
typedef struct class_run {
    lode_tf_driver *d;
    const lode_tf_assignment *a;
    char path[4096]; /* its checkpoint */
    lode_tf_progress pr;
    unsigned proof_bits;
    FILE *class_log;
    double ghz_days;
    double t0, last_ckp, last_line, last_add;
    unsigned done_at_start; /* classes done when this run started */
    uint64_t cand0;         /* candidates counted when it started */
    uint64_t class_cand0, class_size; /* the running class's: counted at its start, its indices */
    bool add_failed;        /* the last merge of worktodo.add failed (logged once) */
} class_run;

static void progress_line(class_run *s, unsigned c, double t, double frac);

/* worktodo.add merged when add_delay has passed (new work for later
 * assignments; mfaktc looks every WorkFileAddDelay while it runs). */
static void merge_add_due(class_run *s, double t)
{
    if (s->d->worktodo == NULL || t - s->last_add < s->d->add_delay)
        return;
    s->last_add = t;
    bool failed = lode_tf_worktodo_merge_add(s->d->worktodo) < 0;
    if (failed && !s->add_failed) /* once, not every class or tick */
        lode_log(LODE_LOG_ERROR, "cannot merge worktodo.add into %s: %s", s->d->worktodo, strerror(errno));
    s->add_failed = failed;
}

/* While class c runs: a progress line when one is due (a CPU's class can
 * take minutes), with the class's fraction from the candidates counted,
 * and worktodo.add. */
static void class_tick(class_run *s, unsigned c)
{
    double t = lode_clock_s();
    /* last_line is 0 before the first class ends: count from the start. */
    if (t - (s->last_line > s->t0 ? s->last_line : s->t0) >= s->d->progress_interval) {
        double frac = s->class_size ? (double)(candidates(s->d->miner) - s->class_cand0) / (double)s->class_size : 0;
        progress_line(s, c, t, frac < 0 ? 0 : frac > 0.999 ? 0.999 : frac);
    }
    merge_add_due(s, t);
}

/* Waits for class c (job seq): 1 done, -1 never (every device failed), 0
 * stopped first. A stop lets the class finish only if it does within
 * LODE_STOP_GRACE_MS (a GPU's class takes well under a second, a CPU's can
 * take minutes: then it is left and runs again next time); a second stop
 * leaves it at once. */
static int wait_class(class_run *s, uint64_t seq, unsigned c)
{
    lode_tf_driver *d = s->d;
    int r;
    double stop_at = -1;
    while ((r = lode_dispatcher_wait_job(d->miner, seq, 100)) == 0 && !asked(d->stop_now)) {
        if (!asked(d->stop)) {
            class_tick(s, c);
            continue;
        }
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

/* The checkpoint, if any, into s->pr, and whether the run keeps a proof. */
static void load_progress(class_run *s)
{
    const lode_tf_assignment *a = s->a;
    lode_tf_progress *pr = &s->pr;
    lode_tf_checkpoint_path(s->d->ckp_dir, a, s->path, sizeof s->path);
    lode_tf_progress_init(pr);
    s->proof_bits = lode_tf_proof_bits(a->p, a->bit_min, a->bit_max);
    const bool want_proof = !lode_setting_flag(LODE_SETTING_TF_NO_PROOF);
    if (lode_tf_checkpoint_load(s->path, a, pr) == 1) {
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: resuming from %s at class %u (%u of %u done)", a->p,
                 a->bit_min, a->bit_max, s->path, pr->next_class, pr->classes_done, LODE_TF_NEEDED_CLASSES);
        if (want_proof && (!pr->proof_kept || pr->proof_bits != s->proof_bits))
            lode_log(LODE_LOG_WARN,
                     "M%u 2^%u..2^%u: the checkpoint holds no proof with t = %u (an older lode, or a run with "
                     "LODE_TF_NO_PROOF, wrote it): this result will carry none",
                     a->p, a->bit_min, a->bit_max, s->proof_bits);
        if (pr->proof_bits != s->proof_bits)
            pr->proof_kept = false;
    } else {
        pr->proof_kept = want_proof;
        pr->proof_bits = s->proof_bits;
    }
    if (!want_proof)
        pr->proof_kept = false;
}

/* Moves the confirmed hits of class c (job seq) into the progress: its
 * factors and its proof entries. */
static void collect_hits(class_run *s, uint64_t seq, unsigned c)
{
    lode_tf_driver *d = s->d;
    lode_tf_progress *pr = &s->pr;
    pthread_mutex_lock(&d->lock);
    const int factors_before = pr->factors;
    for (int i = 0; i < d->hit_count; i++)
        if (d->hit_seq[i] == seq && pr->factors < LODE_TF_MAX_FACTORS)
            pr->k[pr->factors++] = lode_tf_k(c, d->hit_n[i]);
    d->hit_count = 0;
    d->status.factors = (unsigned)pr->factors;
    d->status.factors_found += (uint64_t)(pr->factors - factors_before);
    /* The class's proof entries (write_proof sorts the whole list). */
    for (unsigned i = 0; i < d->proof_hits && pr->proof_kept; i++) {
        if (d->proof_seq[i] != seq)
            continue;
        if (pr->proof_count == LODE_TF_PROOF_MAX) {
            lode_log(LODE_LOG_ERROR, "M%u: more than %d proof entries: this result will carry no proof",
                     s->a->p, LODE_TF_PROOF_MAX);
            pr->proof_kept = false;
            break;
        }
        pr->proof_k[pr->proof_count++] = lode_tf_k(c, d->proof_n[i]);
    }
    if (d->proof_overflow && pr->proof_kept) {
        lode_log(LODE_LOG_ERROR, "M%u class %u: proof entries lost: this result will carry no proof", s->a->p, c);
        pr->proof_kept = false;
    }
    d->proof_hits = 0;
    d->proof_overflow = false;
    pthread_mutex_unlock(&d->lock);
}

/* Class c through the dispatcher: LODE_TF_DONE, LODE_TF_STOPPED (left
 * undone, the progress before it saved) or LODE_TF_FAILED. */
static int run_class(class_run *s, unsigned c)
{
    const lode_tf_assignment *a = s->a;
    uint64_t nb, ne;
    lode_tf_class_range(a->p, a->bit_min, a->bit_max, c, &nb, &ne);
    if (ne <= nb)
        return LODE_TF_DONE;
    lode_work w = {.algo = LODE_ALGO_TF,
                   .factor = {a->p, a->bit_min, a->bit_max, LODE_TF_CLASSES, c, s->pr.proof_kept, s->proof_bits}};
    s->class_cand0 = candidates(s->d->miner);
    s->class_size = ne - nb;
    uint64_t seq = lode_dispatcher_set_job(s->d->miner, &w, nb, ne);
    int r = wait_class(s, seq, c);
    if (r == 0) { /* stopped mid-class: the checkpoint says this class is not done */
        bool saved = false;
        if (s->d->progress_ckp && !(saved = lode_tf_checkpoint_save(s->path, a, &s->pr) == 0))
            lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s", s->path, strerror(errno));
        lode_log(LODE_LOG_INFO, "stopped in class %u: %s; the class runs again next time", c,
                 saved_text(saved, s->d->progress_ckp, "progress before it saved"));
        return LODE_TF_STOPPED;
    }
    if (r < 0) {
        lode_log(LODE_LOG_ERROR, "M%u class %u: no device could finish it", a->p, c);
        return LODE_TF_FAILED;
    }
    collect_hits(s, seq, c);
    return LODE_TF_DONE;
}

/* The progress line in class c: after it (class_frac 0), or while it runs
 * (class_frac: the part of it done). */
static void progress_line(class_run *s, unsigned c, double t, double class_frac)
{
    const lode_tf_assignment *a = s->a;
    const lode_tf_progress *pr = &s->pr;
    lode_dispatcher *m = s->d->miner;
    uint64_t cand = candidates(m);
    double el = t - s->t0 > 1e-6 ? t - s->t0 : 1e-6;
    double done = pr->classes_done + class_frac, ran = done - s->done_at_start;
    double frac = ran / LODE_TF_NEEDED_CLASSES;
    double left = LODE_TF_NEEDED_CLASSES - done;
    double eta = ran > 0 ? el / ran * left : 0;
    lode_tf_progress_figures fig = {.assignment = a, .class_index = c,
                                    .percent = 100.0 * done / LODE_TF_NEEDED_CLASSES,
                                    .candidates_per_s = (double)(cand - s->cand0) / el,
                                    .ghz_days_per_day = s->ghz_days * frac / (el / 86400.0), .eta_s = eta};
    char line[1024];
    lode_tf_progress_line(&fig, m, line, sizeof line);
    lode_log(LODE_LOG_INFO, "%s", line);
    s->last_line = t;
}

/* The factors class c found (those from index first on): printed, and
 * each an event with its class (mfaktc prints a factor as its class ends). */
static void announce_factors(const class_run *s, unsigned c, int first)
{
    const lode_tf_assignment *a = s->a;
    for (int i = first; i < s->pr.factors; i++) {
        char q[48];
        lode_tf_u128_str(lode_tf_q(a->p, s->pr.k[i]), q);
        lode_log_event(LODE_LOG_INFO, "tf_factor",
                       LODE_LOG_FIELDS(LODE_LOG_INT("exponent", a->p), LODE_LOG_INT("bit_min", a->bit_min),
                                       LODE_LOG_INT("bit_max", a->bit_max), LODE_LOG_INT("class", c),
                                       LODE_LOG_STR("factor", q)),
                       "M%u has a factor: %s (2^%u..2^%u, class %u)", a->p, q, a->bit_min, a->bit_max, c);
    }
}

/* After class c: its factors (from index first on), the class log, the
 * status, a checkpoint when one is due or a factor came, the progress
 * line. LODE_TF_STOPPED when a stop was asked, else LODE_TF_DONE. */
static int class_done(class_run *s, unsigned c, int first)
{
    lode_tf_driver *d = s->d;
    lode_tf_progress *pr = &s->pr;
    pr->next_class = c + 1;
    pr->classes_done++;
    if (s->class_log != NULL) {
        fprintf(s->class_log, "%u\n", c);
        fflush(s->class_log);
        pr->class_log_offset = ftell(s->class_log);
    }
    double t = lode_clock_s();
    double el = t - s->t0 > 1e-6 ? t - s->t0 : 1e-6, ran = (double)(pr->classes_done - s->done_at_start);
    pthread_mutex_lock(&d->lock);
    d->status.classes_done = pr->classes_done;
    d->status.classes_done_total++;
    d->status.ghz_days_per_day = s->ghz_days * ran / LODE_TF_NEEDED_CLASSES / (el / 86400.0);
    d->status.eta_s = el / ran * (double)(LODE_TF_NEEDED_CLASSES - pr->classes_done);
    pthread_mutex_unlock(&d->lock);
    const bool found = pr->factors > first;
    if (found)
        announce_factors(s, c, first);
    bool stop = asked(d->stop), saved = false;
    if (d->progress_ckp && (stop || found || t - s->last_ckp >= d->ckp_interval)) {
        if (!(saved = lode_tf_checkpoint_save(s->path, s->a, pr) == 0))
            lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s", s->path, strerror(errno));
        s->last_ckp = t;
        if (saved && found)
            lode_tf_crash_point("factor-saved");
    }
    if (t - s->last_line >= d->progress_interval || pr->classes_done == LODE_TF_NEEDED_CLASSES)
        progress_line(s, c, t, 0);
    merge_add_due(s, t);
    if (stop && pr->classes_done < LODE_TF_NEEDED_CLASSES) { /* else: report it first */
        lode_log(LODE_LOG_INFO, "interrupted after class %u: %s", c,
                 saved_text(saved, d->progress_ckp, "progress saved"));
        return LODE_TF_STOPPED;
    }
    return LODE_TF_DONE;
}

/* Starts the run's log and status. */
static void start_run(class_run *s)
{
    lode_tf_driver *d = s->d;
    const lode_tf_assignment *a = s->a;
    if (d->class_log != NULL) {
        /* Drop what was logged after the checkpoint: those classes run again. */
        if (truncate(d->class_log, s->pr.class_log_offset) != 0 && errno != ENOENT)
            lode_log(LODE_LOG_WARN, "cannot truncate %s", d->class_log);
        s->class_log = fopen(d->class_log, "a");
    }
    s->ghz_days = lode_tf_ghz_days(a->p, a->bit_min, a->bit_max);
    lode_log(LODE_LOG_INFO, "trial factoring M%u from 2^%u to 2^%u (%.4f GHz-days)", a->p, a->bit_min,
             a->bit_max, s->ghz_days);
    s->t0 = s->last_ckp = s->last_add = lode_clock_s();
    s->last_line = 0;
    s->done_at_start = s->pr.classes_done;
    s->cand0 = candidates(d->miner);
    pthread_mutex_lock(&d->lock);
    d->status.running = true;
    d->status.exponent = a->p;
    d->status.bit_min = a->bit_min;
    d->status.bit_max = a->bit_max;
    d->status.classes_done = s->pr.classes_done;
    d->status.classes_total = LODE_TF_NEEDED_CLASSES;
    d->status.factors = (unsigned)s->pr.factors;
    d->status.ghz_days = s->ghz_days;
    d->status.candidates = lode_tf_candidates(a->p, a->bit_min, a->bit_max);
    d->status.ghz_days_per_day = d->status.eta_s = -1;
    pthread_mutex_unlock(&d->lock);
}

/* --stop-after-factor 2 with a factor found: the result covers the classes
 * done so far (the rest are not run). */
static bool stop_for_factor(class_run *s)
{
    if (s->d->stop_after_factor != 2 || s->pr.factors == 0)
        return false;
    s->pr.partial = true;
    lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: stopping after the factor (--stop-after-factor 2): %u of %u "
             "classes ran, the range is reported as partial", s->a->p, s->a->bit_min, s->a->bit_max,
             s->pr.classes_done, LODE_TF_NEEDED_CLASSES);
    return true;
}

int lode_tf_driver_run_range(lode_tf_driver *d, const lode_tf_assignment *a, int *factors)
{
    class_run *s = calloc(1, sizeof *s); /* the progress holds the proof list: not on the stack */
    if (s == NULL) {
        lode_log(LODE_LOG_ERROR, "out of memory");
        return LODE_TF_FAILED;
    }
    s->d = d;
    s->a = a;
    load_progress(s);
    start_run(s);
    int status = LODE_TF_DONE;
    /* A finished state (a result pending or reported) only finishes. */
    unsigned from = s->pr.state == LODE_TF_CKP_RUNNING ? s->pr.next_class : LODE_TF_CLASSES;
    for (unsigned c = from; c < LODE_TF_CLASSES && status == LODE_TF_DONE; c++) {
        if (!lode_tf_class_needed(a->p, c)) {
            s->pr.next_class = c + 1;
            continue;
        }
        if (stop_for_factor(s))
            break;
        const int first = s->pr.factors;
        status = run_class(s, c);
        if (status == LODE_TF_DONE)
            status = class_done(s, c, first);
    }
    if (s->class_log != NULL)
        fclose(s->class_log);
    pthread_mutex_lock(&d->lock);
    d->status.running = false;
    pthread_mutex_unlock(&d->lock);
    if (status == LODE_TF_DONE)
        status = lode_tf_driver_finish(d, a, &s->pr);
    if (factors != NULL)
        *factors = s->pr.factors;
    if (status == LODE_TF_DONE) {
        pthread_mutex_lock(&d->lock);
        d->status.assignments_done++;
        pthread_mutex_unlock(&d->lock);
    }
    free(s);
    return status;
}
