#include "core/dispatch/check.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/momentum_ref.h"
#include "core/base/status.h"
#include "core/base/tf_ref.h"
#include "core/base/tf_vectors.h"
#include "core/dispatch/check_internal.h"
#include "core/dispatch/selftest.h"
#include "core/dispatch/stop_join.h"

#define STOPPED 1 /* device_scan: the stop flag ended the scan (not an error) */
/* Duration mode: a device scan of about this long, and the reference's
 * share of the wall time at most about a sixth of that. */
#define TARGET_SCAN_S 0.5
#define REFERENCE_SHARE 0.16
#define MAX_MOMENTUM_HEADERS 64
#define RANDOM_TF_MIN_BITS 40
/* A nonce range's hits at most (a GPU launch's hit buffer holds 1024). */
#define MAX_HITS_PER_RANGE 4096

/* ---- random numbers: splitmix64, one stream per (seed, algorithm, job) ---- */

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rng_below(rng *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

static rng job_rng(uint64_t seed, lode_algo algo, uint64_t job)
{
    rng r = {seed};
    r.state = rng_next(&r) ^ ((uint64_t)algo << 56);
    r.state = rng_next(&r) ^ job;
    rng_next(&r);
    return r;
}

/* ---- jobs ---------------------------------------------------------------- */

typedef struct check_job {
    uint64_t number;
    lode_work work;
    lode_range range;  /* the device scans this */
    lode_range window; /* the reference enumerates this part of range (count 0: none) */
} check_job;

/* How a row sizes its jobs: the exact-mode size and, with a duration, the
 * size grown to TARGET_SCAN_S of the device and the reference's budget. */
typedef struct sizing {
    bool exact;               /* --jobs: window = range */
    uint64_t size;            /* indices the device scans per job (hashes for a version-rolled job) */
    uint64_t window;          /* indices the reference may enumerate per job (hashes, as size) */
    bool reference_due;       /* Momentum: the reference may search a header this job */
    uint64_t max_hits;        /* nonce scans: hits a range may hold (re-checked on one thread) */
} sizing;

/* The exact-mode range of an algorithm: small enough that one reference
 * thread enumerates it in well under a second, big enough for dozens of
 * hits at a loose target. */
static uint64_t base_size(lode_algo algo, rng *r)
{
    switch (lode_algo_get(algo)->kind) {
    case LODE_WORK_NONCE_SCAN:
        return algo == LODE_ALGO_SCRYPT ? ((UINT64_C(1) << 9) + rng_below(r, UINT64_C(1) << 9)) | 1
                                        : ((UINT64_C(1) << 16) + rng_below(r, UINT64_C(1) << 16)) | 1;
    case LODE_WORK_COLLISION_SEARCH:
        return 1;
    case LODE_WORK_TF:
        return ((UINT64_C(1) << 12) + rng_below(r, UINT64_C(1) << 12)) | 1;
    }
    return 1;
}

/* A target whose hash meets it with probability p (0 < p <= 1/16):
 * floor(p * 2^256), word by word from the top. */
static lode_u256 target_for(double p)
{
    lode_u256 t;
    memset(&t, 0, sizeof t);
    double x = p;
    for (int i = 7; i >= 0; i--) {
        x *= 4294967296.0;
        uint32_t digit = x >= 4294967295.0 ? UINT32_MAX : (uint32_t)x;
        t.w[i] = digit;
        x -= digit;
    }
    return t;
}

/* A window of w indices inside range: one in four at its end (nonce
 * 2^32-1 when the range ends there), the others anywhere. */
static lode_range place_window(const lode_range *range, uint64_t w, rng *r)
{
    if (w >= range->count)
        return *range;
    uint64_t off = rng_below(r, 4) == 0 ? range->count - w : rng_below(r, range->count - w + 1);
    return (lode_range){range->start + off, w};
}

static void make_nonce_job(check_job *job, rng *r, const sizing *sz)
{
    for (int i = 0; i < 80; i++)
        job->work.header.header[i] = (uint8_t)rng_next(r);
    /* SHA-256d: one job in two rolls LODE_VERSIONS_MAX versions (BIP 320's
     * bits 13..28, as a pool's mask allows), each index then that many
     * hashes; sizes count hashes. */
    uint32_t per_index = 1;
    if (job->work.algo == LODE_ALGO_SHA256D && rng_below(r, 2) == 0) {
        const uint32_t base = (uint32_t)rng_next(r) & ~UINT32_C(0x1fffe000);
        const uint32_t first = (uint32_t)rng_next(r);
        job->work.header.version_count = per_index = LODE_VERSIONS_MAX;
        for (uint32_t k = 0; k < LODE_VERSIONS_MAX; k++)
            job->work.header.versions[k] = base | ((first + k) & 0xffff) << 13;
    }
    uint64_t base = base_size(job->work.algo, r);
    uint64_t count = (sz->exact ? base : sz->size) / per_index;
    if (count == 0)
        count = 1;
    if (count > UINT64_C(1) << 32)
        count = UINT64_C(1) << 32;
    uint64_t space = (UINT64_C(1) << 32) - count;
    job->range.count = count;
    job->range.start = rng_below(r, 4) == 0 ? space : rng_below(r, space + 1);
    uint64_t w = sz->exact ? count : (sz->window / per_index < count ? sz->window / per_index : count);
    if (w == 0)
        w = 1;
    job->window = place_window(&job->range, w, r);
    /* Dozens of hits in the window, and over the range no more hits than
     * the reference re-checks (on one thread) in its share, nor than a
     * GPU's hit buffers hold without rescans. */
    double want = job->work.algo == LODE_ALGO_SCRYPT ? 24.0 : 48.0;
    double p = want / (double)(w ? w : 1) / per_index;
    double max_hits = sz->exact ? want : (double)sz->max_hits;
    if (max_hits < want)
        max_hits = want;
    if (p * (double)count * per_index > max_hits)
        p = max_hits / (double)count / per_index;
    if (p > 1.0 / 16)
        p = 1.0 / 16;
    job->work.header.target = target_for(p);
}

static void make_momentum_job(check_job *job, rng *r, const sizing *sz)
{
    for (int i = 0; i < 80; i++)
        job->work.header.header[i] = (uint8_t)rng_next(r);
    memset(job->work.header.target.w, 0xff, sizeof job->work.header.target.w); /* every pair */
    uint64_t count = sz->exact ? 1 : sz->size;
    job->range.count = count;
    job->range.start = rng_below(r, (UINT64_C(1) << 32) - count + 1);
    job->window = sz->exact || sz->reference_due ? (lode_range){job->range.start, 1} : (lode_range){0, 0};
}

/* The bit levels the known factors span: random jobs stay inside them, so
 * they ask no kernel for more than its self-test covers. */
static void vector_bits(unsigned *lo, unsigned *hi)
{
    *lo = LODE_TF_MAX_BITS;
    *hi = 0;
    for (size_t i = 0; i < lode_tf_vector_count; i++) {
        if (lode_tf_vectors[i].bit_min < *lo)
            *lo = lode_tf_vectors[i].bit_min;
        if (lode_tf_vectors[i].bit_max > *hi)
            *hi = lode_tf_vectors[i].bit_max;
    }
}

/* A range of size indices of [nb, ne) holding index must (or anywhere if
 * must is out of it). */
static lode_range range_in_class(uint64_t nb, uint64_t ne, uint64_t size, uint64_t must, rng *r)
{
    if (size > ne - nb)
        size = ne - nb;
    uint64_t lo = nb, hi = ne - size; /* start in [lo, hi] */
    if (must >= nb && must < ne) {
        if (must + 1 > size && must + 1 - size > lo)
            lo = must + 1 - size;
        if (must < hi)
            hi = must;
    }
    return (lode_range){lo + rng_below(r, hi - lo + 1), size};
}

static void make_tf_job(check_job *job, rng *r, const sizing *sz)
{
    lode_tf_job *f = &job->work.factor;
    uint64_t base = base_size(LODE_ALGO_TF, r), nb = 0, ne = 0, known = UINT64_MAX;
    if (job->number % 2 == 0 && lode_tf_vector_count > 0) {
        const lode_tf_vector *v = &lode_tf_vectors[rng_below(r, lode_tf_vector_count)];
        *f = (lode_tf_job){.exponent = v->exponent, .bit_min = v->bit_min, .bit_max = v->bit_max,
                           .num_classes = LODE_TF_CLASSES, .class_index = (uint32_t)(v->k % LODE_TF_CLASSES)};
        known = v->k / LODE_TF_CLASSES;
        lode_tf_class_range(f->exponent, f->bit_min, f->bit_max, f->class_index, &nb, &ne);
    } else {
        unsigned lo, hi;
        vector_bits(&lo, &hi);
        /* And from 2^40 up: a factor below a sieve's largest prime can be
         * struck out by the sieve itself (the known factors cover those). */
        if (lo < RANDOM_TF_MIN_BITS)
            lo = RANDOM_TF_MIN_BITS;
        do {
            uint32_t p = (uint32_t)(LODE_TF_MIN_EXPONENT + rng_below(r, UINT32_MAX - 1000 - LODE_TF_MIN_EXPONENT));
            while (!lode_tf_is_prime(p))
                p++;
            unsigned bits = lo + (unsigned)rng_below(r, hi - lo);
            uint32_t c;
            do
                c = (uint32_t)rng_below(r, LODE_TF_CLASSES);
            while (!lode_tf_class_needed(p, c));
            *f = (lode_tf_job){.exponent = p, .bit_min = bits, .bit_max = bits + 1,
                               .num_classes = LODE_TF_CLASSES, .class_index = c};
            if (lode_tf_job_valid(f))
                lode_tf_class_range(p, f->bit_min, f->bit_max, c, &nb, &ne);
            else
                nb = ne = 0;
        } while (ne - nb < 2);
    }
    job->range = range_in_class(nb, ne, sz->exact ? base : sz->size, known, r);
    uint64_t w = sz->exact ? job->range.count : sz->window;
    /* The window holds the known factor, where there is one. */
    job->window = known != UINT64_MAX ? range_in_class(job->range.start, job->range.start + job->range.count,
                                                       w, known, r)
                                      : place_window(&job->range, w < job->range.count ? w : job->range.count, r);
}

static void make_job(lode_algo algo, uint64_t seed, uint64_t number, const sizing *sz, check_job *job)
{
    rng r = job_rng(seed, algo, number);
    memset(job, 0, sizeof *job);
    job->number = number;
    job->work.algo = algo;
    switch (lode_algo_get(algo)->kind) {
    case LODE_WORK_NONCE_SCAN:
        make_nonce_job(job, &r, sz);
        break;
    case LODE_WORK_COLLISION_SEARCH:
        make_momentum_job(job, &r, sz);
        break;
    case LODE_WORK_TF:
        make_tf_job(job, &r, sz);
        break;
    }
}

/* ---- the reference's answer for a job's window ---------------------------- */

static void set_nonce(uint8_t header[80], uint64_t nonce)
{
    for (int b = 0; b < 4; b++)
        header[76 + b] = (uint8_t)(nonce >> (8 * b));
}

typedef struct ref_part {
    const check_job *job;
    uint64_t start, count;
    lode_hits hits;
    int rc;
} ref_part;

static void *ref_part_run(void *arg)
{
    ref_part *part = arg;
    const lode_work *w = &part->job->work;
    uint8_t header[80], hash[32];
    memcpy(header, w->header.header, 80);
    /* A version-rolled job's versions, in the order lode_hit_compare sorts them. */
    const uint32_t n = w->algo == LODE_ALGO_TF ? 0 : w->header.version_count;
    uint32_t sorted[LODE_VERSIONS_MAX];
    memcpy(sorted, w->header.versions, sizeof sorted);
    for (uint32_t a = 1; a < n; a++)
        for (uint32_t b = a; b > 0 && sorted[b - 1] > sorted[b]; b--) {
            uint32_t t = sorted[b];
            sorted[b] = sorted[b - 1];
            sorted[b - 1] = t;
        }
    for (uint64_t i = part->start; i < part->start + part->count && part->rc == 0; i++) {
        bool hit;
        if (w->algo == LODE_ALGO_TF) {
            hit = lode_tf_divides(w->factor.exponent,
                                  lode_tf_q(w->factor.exponent, lode_tf_k(w->factor.class_index, i)));
        } else if (n > 0) {
            set_nonce(header, i);
            for (uint32_t k = 0; k < n && part->rc == 0; k++) {
                for (int b = 0; b < 4; b++)
                    header[b] = (uint8_t)(sorted[k] >> (8 * b));
                lode_algo_get(w->algo)->pow_hash_ref(header, hash);
                if (lode_hash_meets_target(hash, &w->header.target) &&
                    lode_hits_push(&part->hits, (lode_hit){.index = i, .version = sorted[k]}) != 0)
                    part->rc = -1;
            }
            continue;
        } else {
            set_nonce(header, i);
            lode_algo_get(w->algo)->pow_hash_ref(header, hash);
            hit = lode_hash_meets_target(hash, &w->header.target);
        }
        if (hit && lode_hits_push(&part->hits, (lode_hit){.index = i}) != 0)
            part->rc = -1;
    }
    return NULL;
}

/* Every hit of the job's window, by index (then pair). */
static int reference_answer(const check_job *job, unsigned threads, lode_hits *out)
{
    const lode_range *win = &job->window;
    if (win->count == 0)
        return 0;
    if (lode_algo_get(job->work.algo)->kind == LODE_WORK_COLLISION_SEARCH) {
        for (uint64_t n = win->start; n < win->start + win->count; n++) {
            uint8_t header[80], mid[32];
            memcpy(header, job->work.header.header, 80);
            set_nonce(header, n);
            lode_ref_momentum_midhash(header, mid);
            lode_momentum_pair *pairs;
            size_t count;
            if (lode_ref_momentum_pairs(mid, threads, &pairs, &count) != 0)
                return -1;
            int rc = 0;
            for (size_t i = 0; i < count && rc == 0; i++)
                rc = lode_hits_push(out, (lode_hit){.index = n, .pair = {pairs[i].a, pairs[i].b}});
            free(pairs);
            if (rc != 0)
                return -1;
        }
        return 0;
    }
    if (threads == 0)
        threads = 1;
    if (win->count < 4096u * threads)
        threads = (unsigned)(win->count / 4096 + 1);
    ref_part *parts = calloc(threads, sizeof *parts);
    pthread_t *tids = calloc(threads, sizeof *tids);
    bool *started = calloc(threads, sizeof *started);
    int rc = parts && tids && started ? 0 : -1;
    for (unsigned t = 0; rc == 0 && t < threads; t++) {
        uint64_t lo = win->count * t / threads, hi = win->count * (t + 1) / threads;
        parts[t] = (ref_part){.job = job, .start = win->start + lo, .count = hi - lo};
        /* The first part on this thread; a thread that cannot start is done here too. */
        started[t] = t > 0 && pthread_create(&tids[t], NULL, ref_part_run, &parts[t]) == 0;
    }
    for (unsigned t = 0; rc == 0 && t < threads; t++)
        if (!started[t])
            ref_part_run(&parts[t]);
    for (unsigned t = 0; parts && t < threads; t++) {
        if (started && started[t])
            pthread_join(tids[t], NULL);
        for (size_t i = 0; rc == 0 && i < parts[t].hits.count; i++)
            rc = lode_hits_push(out, parts[t].hits.items[i]);
        rc |= parts[t].rc;
        lode_hits_free(&parts[t].hits);
    }
    free(parts);
    free(tids);
    free(started);
    return rc;
}

/* ---- the device's answer ----------------------------------------------- */

/* Scans the range, rescanning halves when a fixed hit buffer fills (as the
 * dispatcher does). LODE_OK, STOPPED, or the device's status. */
static int device_scan(lode_handle *h, uint64_t start, uint64_t count, lode_hits *hits, const atomic_int *stop)
{
    lode_range r = {.start = start, .count = count};
    uint64_t done = 0;
    size_t keep = hits->count;
    int rc = lode_handle_scan(h, &r, hits, &done, stop);
    if (rc == LODE_ERR_HITS_OVERFLOW && count > 1) {
        hits->count = keep;
        rc = device_scan(h, start, count / 2, hits, stop);
        return rc == LODE_OK ? device_scan(h, start + count / 2, count - count / 2, hits, stop) : rc;
    }
    if (rc == LODE_OK && done != count)
        rc = atomic_load(stop) ? STOPPED : LODE_ERR_DEVICE;
    return rc;
}

/* ---- comparing ----------------------------------------------------------- */


typedef struct comparison {
    lode_check_row *row;
    const check_job *job;
    double t0;
    bool differed;
} comparison;

/* A short range around the hit that shows the difference again. */
static lode_range repro_range(const check_job *job, uint64_t index)
{
    if (lode_algo_get(job->work.algo)->kind == LODE_WORK_COLLISION_SEARCH)
        return (lode_range){index, 1};
    uint64_t lo = job->range.start, hi = job->range.start + job->range.count;
    /* 32 either side: a hit a device moved by a few nonces is in it too. */
    uint64_t a = index >= lo + 32 ? index - 32 : lo, b = index + 33 <= hi ? index + 33 : hi;
    if (index < lo || index >= hi) /* outside the job: its own range, whole */
        return job->range;
    return (lode_range){a, b - a};
}

static void differ(comparison *c, const lode_hit *hit, bool reported, const char *what)
{
    lode_check_row *row = c->row;
    row->differences++;
    if (!c->differed) {
        c->differed = true;
        row->mismatches++;
    }
    size_t kept = row->differences - 1;
    if (kept >= LODE_CHECK_KEPT_MISMATCHES)
        return;
    lode_check_mismatch *m = &row->kept[kept];
    m->job = c->job->number;
    m->work = c->job->work;
    m->range = repro_range(c->job, hit->index);
    m->hit = *hit;
    m->reported = reported;
    snprintf(m->what, sizeof m->what, "%s", what);
    m->at_s = lode_clock_s() - c->t0;
    memset(&m->sensors, 0, sizeof m->sensors);
    lode_device_read_sensors(row->device, &m->sensors);
}

static void describe_hit(const lode_work *w, const lode_hit *h, char *buf, size_t len)
{
    if (lode_algo_get(w->algo)->kind == LODE_WORK_COLLISION_SEARCH)
        snprintf(buf, len, "the pair %u %u of header nonce %llu", h->pair[0], h->pair[1],
                 (unsigned long long)h->index);
    else if (w->algo == LODE_ALGO_TF) {
        char q[48];
        lode_tf_u128_str(lode_tf_q(w->factor.exponent, lode_tf_k(w->factor.class_index, h->index)), q);
        snprintf(buf, len, "index %llu (factor %s)", (unsigned long long)h->index, q);
    } else if (w->header.version_count > 0)
        snprintf(buf, len, "nonce %llu version %08x", (unsigned long long)h->index, h->version);
    else
        snprintf(buf, len, "nonce %llu", (unsigned long long)h->index);
}

static bool in_range(const lode_range *r, uint64_t i) { return i >= r->start && i - r->start < r->count; }

/* The device's hits (sorted) against the reference's (sorted): inside the
 * window exactly; everywhere, each hit re-checked and reported once. */
static void compare(comparison *c, const lode_hits *dev, const lode_hits *ref)
{
    const check_job *job = c->job;
    char hit_text[96], what[160];
    size_t r = 0;
    for (size_t i = 0; i < dev->count; i++) {
        const lode_hit *h = &dev->items[i];
        describe_hit(&job->work, h, hit_text, sizeof hit_text);
        if (i > 0 && lode_hit_compare(h, &dev->items[i - 1]) == 0) {
            snprintf(what, sizeof what, "%s reported twice", hit_text);
            differ(c, h, true, what);
            continue;
        }
        uint8_t hash[32];
        bool inside = in_range(&job->range, h->index);
        bool genuine = inside && lode_algo_get(job->work.algo)->check_hit(&job->work, h, hash);
        if (!inside) {
            snprintf(what, sizeof what, "%s reported, outside the range scanned", hit_text);
            differ(c, h, true, what);
        } else if (!genuine) {
            snprintf(what, sizeof what, "%s reported, and the reference rejects it", hit_text);
            differ(c, h, true, what);
        }
        if (!in_range(&job->window, h->index))
            continue;
        /* Reference hits before this one were missed. */
        for (; r < ref->count && lode_hit_compare(&ref->items[r], h) < 0; r++) {
            describe_hit(&job->work, &ref->items[r], hit_text, sizeof hit_text);
            snprintf(what, sizeof what, "%s not reported; the reference finds it", hit_text);
            differ(c, &ref->items[r], false, what);
        }
        if (r < ref->count && lode_hit_compare(&ref->items[r], h) == 0) {
            c->row->hits_compared++;
            r++;
        } else if (genuine) {
            snprintf(what, sizeof what, "%s reported; the reference's own search lacks it", hit_text);
            differ(c, h, true, what);
        }
    }
    for (; r < ref->count; r++) {
        describe_hit(&job->work, &ref->items[r], hit_text, sizeof hit_text);
        snprintf(what, sizeof what, "%s not reported; the reference finds it", hit_text);
        differ(c, &ref->items[r], false, what);
    }
}

/* ---- a device's rows ------------------------------------------------------ */


static void note_sensors(lode_check_row *row)
{
    lode_sensors s = {0};
    if (lode_device_read_sensors(row->device, &s) == LODE_OK && (s.present & LODE_SENSOR_TEMP) &&
        (isnan(row->max_temp_c) || s.temp_c > row->max_temp_c))
        row->max_temp_c = s.temp_c;
}

/* Duration mode: grows the device's range toward TARGET_SCAN_S and fits the
 * reference's window to its share. ref_rate: reference indices per second
 * and thread so far (0: not known yet). */
static void resize(sizing *sz, lode_algo algo, double scan_s, double ref_rate, unsigned threads,
                   double device_total_s, double reference_total_s)
{
    lode_work_kind kind = lode_algo_get(algo)->kind;
    uint64_t max = kind == LODE_WORK_NONCE_SCAN ? UINT64_C(1) << 32
                   : kind == LODE_WORK_COLLISION_SEARCH ? MAX_MOMENTUM_HEADERS
                                                       : UINT64_C(1) << 40;
    double f = scan_s > 0 ? TARGET_SCAN_S / scan_s : 4;
    f = f < 0.5 ? 0.5 : f > 4 ? 4 : f;
    double grown = (double)sz->size * f;
    sz->size = grown < 1 ? 1 : grown > (double)max ? max : (uint64_t)grown;
    if (ref_rate > 0) {
        double w = ref_rate * threads * REFERENCE_SHARE * TARGET_SCAN_S;
        sz->window = w < 64 ? 64 : (uint64_t)w;
        double hits = w / threads;
        sz->max_hits = hits > MAX_HITS_PER_RANGE ? MAX_HITS_PER_RANGE : (uint64_t)hits;
    }
    /* Momentum: a whole reference search per header, when its time so far
     * leaves room for one more. */
    sz->reference_due = reference_total_s <= REFERENCE_SHARE * device_total_s;
}

/* One worker of a row: its own handle, jobs w, w + stride, ... The row's
 * figures and differences are shared: updated under the device's lock. */
typedef struct row_worker {
    device_run *d;
    lode_check_row *row;
    double deadline, row_t0;
    unsigned worker, stride, reference_threads;
    pthread_mutex_t *lock;
} row_worker;

static void row_error(row_worker *w, int rc, const char *fmt, unsigned long long a, const char *b)
{
    pthread_mutex_lock(w->lock);
    if (w->row->error == LODE_OK) {
        w->row->error = rc;
        snprintf(w->row->error_text, sizeof w->row->error_text, fmt, a, b);
    }
    pthread_mutex_unlock(w->lock);
}

/* The worker's handle, opened, self-tested and tuned; false (the row's
 * error set) when it cannot be. */
static bool open_worker(row_worker *w, lode_handle *h)
{
    lode_check_row *row = w->row;
    lode_open_params params = {.algo = row->algo, .worker = w->worker,
                               .variant = row->variant[0] ? row->variant : NULL, .id = row->device->id};
    int rc = lode_handle_open(h, row->device, &params);
    if (rc != LODE_OK) {
        row_error(w, rc, "worker %llu cannot open: %s", w->worker, lode_status_str(rc));
        return false;
    }
    char why[256];
    if (lode_selftest_handle(h, NULL, why, sizeof why) != 0) {
        row_error(w, LODE_ERR_DEVICE, "worker %llu: self-test failed: %s", w->worker, why);
        lode_handle_close(h);
        return false;
    }
    lode_handle_tune(h, 200.0);
    pthread_mutex_lock(w->lock);
    row->ran = true;
    pthread_mutex_unlock(w->lock);
    return true;
}

/* One job's scan and reference answer in the row's figures, compared. */
static void record_job(row_worker *w, const check_job *job, const lode_hits *dev, const lode_hits *ref,
                       double scan_s)
{
    lode_check_row *row = w->row;
    const lode_check_config *cfg = w->d->cfg;
    pthread_mutex_lock(w->lock);
    row->device_s += scan_s;
    row->indices += lode_work_hashes(&job->work, job->range.count);
    row->indices_exact += lode_work_hashes(&job->work, job->window.count);
    row->hits_reported += dev->count;
    comparison c = {.row = row, .job = job, .t0 = w->d->t0};
    compare(&c, dev, ref);
    row->jobs++;
    note_sensors(row);
    row->seconds = lode_clock_s() - w->row_t0;
    if (cfg->progress)
        cfg->progress(cfg->user, row);
    pthread_mutex_unlock(w->lock);
}

static void *run_row_worker(void *arg)
{
    row_worker *w = arg;
    device_run *d = w->d;
    lode_check_row *row = w->row;
    const lode_check_config *cfg = d->cfg;
    lode_handle h;
    if (!open_worker(w, &h))
        return NULL;
    int rc;
    sizing sz = {.exact = cfg->duration_s <= 0, .reference_due = true};
    {
        rng r = job_rng(cfg->seed, row->algo, 0);
        sz.size = sz.window = base_size(row->algo, &r);
    }
    double device_total = 0, reference_total = 0, reference_indices = 0;
    lode_hits dev = {0}, ref = {0};
    for (uint64_t j = w->worker; !atomic_load(d->stop); j += w->stride) {
        /* With a duration, a row compares one job at least, even when its
         * self-test took its whole share (Momentum on a CPU). */
        if (sz.exact ? j >= cfg->jobs : j > 0 && lode_clock_s() >= w->deadline)
            break;
        check_job job;
        make_job(row->algo, cfg->seed, j, &sz, &job);
        lode_hits_clear(&dev);
        lode_hits_clear(&ref);
        double t = lode_clock_s();
        rc = lode_handle_set_work(&h, &job.work);
        if (rc == LODE_OK)
            rc = device_scan(&h, job.range.start, job.range.count, &dev, d->stop);
        double scan_s = lode_clock_s() - t;
        if (rc == STOPPED)
            break;
        if (rc != LODE_OK) {
            row_error(w, rc, "job %llu: %s", (unsigned long long)j, lode_status_str(rc));
            break;
        }
        t = lode_clock_s();
        if (reference_answer(&job, w->reference_threads, &ref) != 0) {
            row_error(w, LODE_ERR_NO_MEMORY, "job %llu: the reference ran out of memory%s",
                      (unsigned long long)j, "");
            break;
        }
        device_total += scan_s;
        reference_total += lode_clock_s() - t;
        reference_indices += (double)lode_work_hashes(&job.work, job.window.count);
        if (dev.count > 1)
            qsort(dev.items, dev.count, sizeof *dev.items, lode_hit_compare);
        if (ref.count > 1)
            qsort(ref.items, ref.count, sizeof *ref.items, lode_hit_compare);
        record_job(w, &job, &dev, &ref, scan_s);
        if (!sz.exact)
            resize(&sz, row->algo, scan_s,
                   reference_total > 0 ? reference_indices / reference_total / w->reference_threads : 0,
                   w->reference_threads, device_total, reference_total);
    }
    lode_hits_free(&dev);
    lode_hits_free(&ref);
    lode_handle_close(&h);
    return NULL;
}

/* A row on one handle, or with a duration on every worker of a device on
 * the host's cores (the CPU backend: one per core), so that a stability
 * test loads the whole processor. Not Momentum: each of its handles and
 * reference searches holds about half a gigabyte. */
static void run_row(device_run *d, lode_check_row *row, double deadline)
{
    bool per_core = d->cfg->duration_s > 0 && row->device->info.on_host_cpu &&
                    lode_algo_get(row->algo)->kind != LODE_WORK_COLLISION_SEARCH;
    unsigned workers = per_core && row->device->info.workers > 1 ? row->device->info.workers : 1;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    row_worker *ws = calloc(workers, sizeof *ws);
    pthread_t *tids = calloc(workers, sizeof *tids);
    bool *started = calloc(workers, sizeof *started);
    double row_t0 = lode_clock_s();
    if (ws == NULL || tids == NULL || started == NULL) {
        row->error = LODE_ERR_NO_MEMORY;
        snprintf(row->error_text, sizeof row->error_text, "out of memory");
    }
    unsigned reference_threads = d->reference_threads / workers ? d->reference_threads / workers : 1;
    for (unsigned i = 0; ws && tids && started && i < workers; i++) {
        ws[i] = (row_worker){.d = d, .row = row, .deadline = deadline, .row_t0 = row_t0, .worker = i,
                             .stride = workers, .reference_threads = reference_threads, .lock = &lock};
        started[i] = i > 0 && pthread_create(&tids[i], NULL, run_row_worker, &ws[i]) == 0;
    }
    if (ws && tids && started) {
        run_row_worker(&ws[0]);
        for (unsigned i = 1; i < workers; i++) {
            if (started[i])
                pthread_join(tids[i], NULL);
            else /* no thread: its jobs here, after the others */
                run_row_worker(&ws[i]);
        }
    }
    free(ws);
    free(tids);
    free(started);
    pthread_mutex_destroy(&lock);
    row->seconds = lode_clock_s() - row_t0;
}

void *lode_check_device_thread(void *arg)
{
    device_run *d = arg;
    double start = lode_clock_s();
    for (size_t i = 0; i < d->row_count && !atomic_load(d->stop); i++) {
        /* Each row gets an even share of what is left. */
        double left = d->cfg->duration_s - (lode_clock_s() - start);
        double deadline = lode_clock_s() + left / (double)(d->row_count - i);
        run_row(d, &d->rows[i], deadline);
        if (d->cfg->row_done)
            d->cfg->row_done(d->cfg->user, &d->rows[i]);
    }
    atomic_store(&d->finished, true);
    lode_stop_join_finished(d->join);
    return NULL;
}

