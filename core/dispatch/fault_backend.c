#include "core/dispatch/fault_backend.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend-cpu/cpu_backend.h"
#include "core/base/settings.h"
#include "core/base/status.h"

#define HANG_GUARD_S 600.0

/* What each device is told to do, and what it did (under lock). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t released;
static pthread_once_t released_once = PTHREAD_ONCE_INIT;
static unsigned release_generation;
static struct {
    lode_fault_plan plan;
    unsigned scans, fired; /* live scans so far; faults shown so far */
    double temp_c;         /* NAN: no sensor */
    char temp_file[256];   /* "" = temp_c */
} devices[LODE_FAULT_DEVICES] = {
    {.temp_c = NAN}, {.temp_c = NAN}, {.temp_c = NAN}, {.temp_c = NAN},
};

struct lode_device {
    int index;
    lode_device *inner; /* the CPU backend's handle */
    bool live;          /* tuned: past its self-test, faults apply */
};

static void init_released(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&released, &attr);
    pthread_condattr_destroy(&attr);
}

void lode_fault_set(int device, const lode_fault_plan *plan)
{
    if (device < 0 || device >= LODE_FAULT_DEVICES)
        return;
    pthread_mutex_lock(&lock);
    devices[device].plan = plan ? *plan : (lode_fault_plan){0};
    devices[device].scans = devices[device].fired = 0;
    pthread_mutex_unlock(&lock);
}

void lode_fault_set_temperature(int device, double celsius)
{
    if (device < 0 || device >= LODE_FAULT_DEVICES)
        return;
    pthread_mutex_lock(&lock);
    devices[device].temp_c = celsius;
    pthread_mutex_unlock(&lock);
}

void lode_fault_release(void)
{
    pthread_once(&released_once, init_released);
    pthread_mutex_lock(&lock);
    release_generation++;
    pthread_cond_broadcast(&released);
    pthread_mutex_unlock(&lock);
}

unsigned lode_fault_fired(int device)
{
    if (device < 0 || device >= LODE_FAULT_DEVICES)
        return 0;
    pthread_mutex_lock(&lock);
    unsigned n = devices[device].fired;
    pthread_mutex_unlock(&lock);
    return n;
}

static int parse_entry(const char *entry, char *err, size_t err_len)
{
    char kind[16] = "", rest[256] = "";
    int dev = -1, n = 0;
    if (sscanf(entry, "%15[a-z]:%d%n", kind, &dev, &n) != 2 || dev < 0 || dev >= LODE_FAULT_DEVICES) {
        snprintf(err, err_len, "LODE_TEST_FAULT: '%s' is not KIND:DEVICE[:...] with DEVICE 0..%d", entry,
                 LODE_FAULT_DEVICES - 1);
        return -1;
    }
    snprintf(rest, sizeof rest, "%s", entry + n);
    if (strcmp(kind, "temp") == 0) {
        if (rest[0] != ':' || rest[1] == '\0') {
            snprintf(err, err_len, "LODE_TEST_FAULT: '%s' wants temp:DEVICE:FILE", entry);
            return -1;
        }
        snprintf(devices[dev].temp_file, sizeof devices[dev].temp_file, "%s", rest + 1);
        return 0;
    }
    lode_fault_plan plan = {0};
    plan.kind = strcmp(kind, "hang") == 0      ? LODE_FAULT_HANG
                : strcmp(kind, "error") == 0   ? LODE_FAULT_ERROR
                : strcmp(kind, "badhits") == 0 ? LODE_FAULT_BAD_HITS
                : strcmp(kind, "corrupt") == 0 ? LODE_FAULT_CORRUPT_HITS
                : strcmp(kind, "drop") == 0    ? LODE_FAULT_DROP_HITS
                : strcmp(kind, "extra") == 0   ? LODE_FAULT_EXTRA_HITS
                                               : LODE_FAULT_NONE;
    if (plan.kind >= LODE_FAULT_CORRUPT_HITS) {
        /* :N and nothing more, decimal digits only */
        char *end = rest;
        errno = 0;
        bool digit = rest[0] == ':' && rest[1] >= '0' && rest[1] <= '9';
        unsigned long every = digit ? strtoul(rest + 1, &end, 10) : 0;
        if (every < 1 || every > 1000000 || errno != 0 || *end != '\0') {
            snprintf(err, err_len, "LODE_TEST_FAULT: '%s': want %s:DEVICE:N with N 1..1000000", entry, kind);
            return -1;
        }
        plan.every = (unsigned)every;
        devices[dev].plan = plan;
        devices[dev].scans = devices[dev].fired = 0;
        return 0;
    }
    /* :AFTER[:TIMES], decimal digits only */
    unsigned *field[] = {&plan.after, &plan.times};
    bool ok = plan.kind != LODE_FAULT_NONE;
    const char *p = rest;
    for (int i = 0; ok && i < 2 && *p == ':'; i++) {
        char *end;
        errno = 0;
        unsigned long v = p[1] >= '0' && p[1] <= '9' ? strtoul(p + 1, &end, 10) : (end = (char *)p, 0);
        ok = end != p + 1 && errno == 0 && v <= 1000000;
        *field[i] = (unsigned)v;
        p = end;
    }
    if (!ok || *p != '\0') {
        snprintf(err, err_len, "LODE_TEST_FAULT: '%s': want hang, error or badhits, then "
                 ":DEVICE[:AFTER[:TIMES]]; corrupt, drop or extra, then :DEVICE:N; or temp:DEVICE:FILE", entry);
        return -1;
    }
    devices[dev].plan = plan;
    devices[dev].scans = devices[dev].fired = 0;
    return 0;
}

int lode_fault_configure(const char *spec, char *err, size_t err_len)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", spec ? spec : "");
    int rc = 0;
    pthread_mutex_lock(&lock);
    char *save = NULL;
    for (char *entry = strtok_r(copy, ",", &save); entry && rc == 0; entry = strtok_r(NULL, ",", &save))
        rc = parse_entry(entry, err, err_len);
    pthread_mutex_unlock(&lock);
    return rc;
}

/* LODE_TEST_FAULT is read once, at the first probe. */
static int configured = -1;
static char configure_error[LODE_WHY_LEN];
static pthread_once_t configure_once = PTHREAD_ONCE_INIT;

static void configure_from_env(void)
{
    const char *spec = lode_setting_text(LODE_SETTING_TEST_FAULT);
    configured = spec == NULL ? 0 : lode_fault_configure(spec, configure_error, sizeof configure_error);
}

static int fault_probe(char why[LODE_WHY_LEN])
{
    pthread_once(&configure_once, configure_from_env);
    if (configured != 0) {
        snprintf(why, LODE_WHY_LEN, "%s", configure_error);
        return -1;
    }
    return lode_backend_cpu.probe(why);
}

static int fault_count(void) { return LODE_FAULT_DEVICES; }

static int fault_info(int index, lode_device_info *out)
{
    if (index < 0 || index >= LODE_FAULT_DEVICES || lode_backend_cpu.device_info(0, out) != 0)
        return -1;
    snprintf(out->name, sizeof out->name, "fault-injecting CPU device %d", index);
    out->workers = out->max_workers = 1;
    out->algo_mask = 1u << LODE_ALGO_SHA256D;
    out->on_host_cpu = true; /* not in the default selection: only -d fault picks it */
    return 0;
}

static int fault_open(int index, const lode_open_params *params, lode_device **out)
{
    lode_device_info cpu;
    if (index < 0 || index >= LODE_FAULT_DEVICES || lode_backend_cpu.device_info(0, &cpu) != 0)
        return LODE_ERR_INVALID;
    lode_device *d = calloc(1, sizeof *d);
    if (d == NULL)
        return LODE_ERR_NO_MEMORY;
    d->index = index;
    /* Each fault device on a core of its own, where there are enough. */
    lode_open_params inner = *params;
    inner.worker = (unsigned)index % (cpu.max_workers ? cpu.max_workers : 1);
    int rc = lode_backend_cpu.open(0, &inner, &d->inner);
    if (rc != LODE_OK) {
        free(d);
        return rc;
    }
    *out = d;
    return LODE_OK;
}

static void fault_close(lode_device *d)
{
    lode_backend_cpu.close(d->inner);
    free(d);
}

static int fault_set_work(lode_device *d, const lode_work *work)
{
    return lode_backend_cpu.set_work(d->inner, work);
}

static int fault_tune(lode_device *d, double target_ms)
{
    (void)target_ms;
    d->live = true;
    return LODE_OK;
}

static uint64_t fault_preferred_chunk(lode_device *d, double target_ms)
{
    return lode_backend_cpu.preferred_chunk(d->inner, target_ms);
}

/* Blocks, deaf to the abort flag, for seconds (0: until released). */
static void hang(double seconds)
{
    pthread_once(&released_once, init_released);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    double s = seconds > 0 ? seconds : HANG_GUARD_S;
    double whole = (double)until.tv_nsec * 1e-9 + s;
    until.tv_sec += (time_t)whole;
    until.tv_nsec = (long)((whole - (double)(time_t)whole) * 1e9);
    pthread_mutex_lock(&lock);
    unsigned generation = release_generation;
    while (release_generation == generation && pthread_cond_timedwait(&released, &lock, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&lock);
}

static bool is_hit(const lode_hits *hits, size_t first, uint64_t index)
{
    for (size_t i = first; i < hits->count; i++)
        if (hits->items[i].index == index)
            return true;
    return false;
}

/* A 64-bit mix of the nonce (splitmix64's finalizer): the hit faults pick
 * nonces by it, so a nonce's fate is the same in every scan that covers
 * it, however the range is chunked, threaded or timed. */
static uint64_t nonce_mix(uint64_t nonce)
{
    uint64_t z = nonce + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Whether the hit faults pick this nonce: about one in every. */
static bool nonce_picked(uint64_t nonce, unsigned every) { return nonce_mix(nonce) % every == 0; }

static int by_index(const void *a, const void *b)
{
    uint64_t x = ((const lode_hit *)a)->index, y = ((const lode_hit *)b)->index;
    return x < y ? -1 : x > y;
}

static bool in_sorted(const lode_hit *sorted, size_t n, uint64_t index)
{
    lode_hit key = {.index = index};
    return n > 0 && bsearch(&key, sorted, n, sizeof key, by_index) != NULL;
}

#define CORRUPT_TRIES 8 /* neighbours tried, each within 16 of the hit */

/* The wrong index a corrupted hit is reported at: the first of up to 8
 * neighbours nonce +- 1..16, in an order drawn from a mix of the nonce,
 * that is not a hit; so a function of the nonce and the work alone (two
 * corrupted hits may share one: it is reported twice). UINT64_MAX, the hit
 * dropped instead, where that neighbour lies outside the scanned range
 * [start, end) (only its hits are known, and a hit must stay inside its
 * range) or all tried are hits. */
static uint64_t wrong_index(const lode_hit *real, size_t n, uint64_t nonce, uint64_t start, uint64_t end)
{
    uint64_t m = nonce_mix(nonce_mix(nonce)); /* independent of nonce_picked's mix */
    for (int i = 0; i < CORRUPT_TRIES; i++) {
        uint64_t offset = 1 + ((m >> (4 * i)) & 15);
        bool below = (m >> (32 + i)) & 1;
        if (below ? nonce < start + offset : nonce + offset >= end)
            return UINT64_MAX;
        uint64_t candidate = below ? nonce - offset : nonce + offset;
        if (!in_sorted(real, n, candidate))
            return candidate;
    }
    return UINT64_MAX;
}

/* Corrupts or drops the picked ones of the real hits hits[first..], found
 * over [start, end). Returns how many it changed. */
static unsigned mangle_hits(lode_hits *hits, size_t first, lode_fault_kind fault, unsigned every, uint64_t start,
                            uint64_t end)
{
    size_t n = hits->count - first;
    if (n == 0)
        return 0;
    qsort(hits->items + first, n, sizeof *hits->items, by_index);
    /* Wrong indices are chosen against the real hits, so from a copy
     * (without memory for it, the hits stay real). */
    lode_hit *real = malloc(n * sizeof *real);
    if (real == NULL)
        return 0;
    memcpy(real, hits->items + first, n * sizeof *real);
    unsigned changed = 0;
    size_t kept = first;
    for (size_t i = 0; i < n; i++) {
        lode_hit hit = real[i];
        if (nonce_picked(hit.index, every)) {
            changed++;
            hit.index = fault == LODE_FAULT_CORRUPT_HITS ? wrong_index(real, n, hit.index, start, end)
                                                           : UINT64_MAX;
            if (hit.index == UINT64_MAX)
                continue; /* dropped */
        }
        hits->items[kept++] = hit;
    }
    hits->count = kept;
    free(real);
    return changed;
}

/* Reports the picked non-hit nonces of [start, end) as hits, after the
 * real hits hits[first..]. Costs a mix per nonce, no hash. Returns how
 * many it made up. */
static unsigned extra_hits(lode_hits *hits, size_t first, unsigned every, uint64_t start, uint64_t end)
{
    size_t real = hits->count - first;
    if (real > 1)
        qsort(hits->items + first, real, sizeof *hits->items, by_index);
    unsigned made_up = 0;
    for (uint64_t i = start; i < end; i++) {
        if (!nonce_picked(i, every))
            continue;
        if (!in_sorted(hits->items + first, real, i) && lode_hits_push(hits, (lode_hit){.index = i}) == 0)
            made_up++;
    }
    return made_up;
}

static int fault_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done, const atomic_int *abort)
{
    lode_fault_kind fault = LODE_FAULT_NONE;
    double hang_s = 0;
    unsigned every = 0;
    if (d->live) {
        pthread_mutex_lock(&lock);
        const lode_fault_plan *p = &devices[d->index].plan;
        if (p->kind >= LODE_FAULT_CORRUPT_HITS) {
            fault = p->kind; /* every scan; counted per hit below */
            every = p->every ? p->every : 1;
        } else if (p->kind != LODE_FAULT_NONE && devices[d->index].scans++ >= p->after &&
            (p->times == 0 || devices[d->index].fired < p->times)) {
            fault = p->kind;
            hang_s = p->hang_s;
            devices[d->index].fired++;
        }
        pthread_mutex_unlock(&lock);
    }
    *done = 0;
    if (fault == LODE_FAULT_HANG) {
        hang(hang_s);
        return LODE_OK; /* nothing scanned */
    }
    if (fault == LODE_FAULT_ERROR)
        return LODE_ERR_DEVICE;
    size_t first = hits->count;
    int rc = lode_backend_cpu.scan(d->inner, r, hits, done, abort);
    if (rc == LODE_OK && fault == LODE_FAULT_BAD_HITS) {
        int made_up = 0;
        for (uint64_t i = r->start; i < r->start + *done && made_up < 2; i++)
            if (!is_hit(hits, first, i) && lode_hits_push(hits, (lode_hit){.index = i}) == 0)
                made_up++;
    }
    if (rc == LODE_OK && fault >= LODE_FAULT_CORRUPT_HITS) {
        uint64_t end = r->start + *done; /* an aborted scan's hits cover what it did */
        unsigned changed = fault == LODE_FAULT_EXTRA_HITS ? extra_hits(hits, first, every, r->start, end)
                                                          : mangle_hits(hits, first, fault, every, r->start, end);
        pthread_mutex_lock(&lock);
        devices[d->index].fired += changed;
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

static int fault_read_sensors(int index, lode_sensors *out)
{
    if (index < 0 || index >= LODE_FAULT_DEVICES)
        return LODE_ERR_INVALID;
    pthread_mutex_lock(&lock);
    double t = devices[index].temp_c;
    char file[sizeof devices[index].temp_file];
    memcpy(file, devices[index].temp_file, sizeof file);
    pthread_mutex_unlock(&lock);
    if (file[0] != '\0') {
        FILE *f = fopen(file, "r");
        t = NAN;
        if (f != NULL && fscanf(f, "%lf", &t) != 1)
            t = NAN;
        if (f != NULL)
            fclose(f);
    }
    if (!isnan(t)) {
        out->present |= LODE_SENSOR_TEMP;
        out->temp_c = t;
    }
    return LODE_OK;
}

const lode_backend_ops lode_backend_fault = {
    .name = "fault",
    .probe = fault_probe,
    .device_count = fault_count,
    .device_info = fault_info,
    .open = fault_open,
    .close = fault_close,
    .set_work = fault_set_work,
    .scan = fault_scan,
    .preferred_chunk = fault_preferred_chunk,
    .tune = fault_tune,
    .read_sensors = fault_read_sensors,
};
