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
                                               : LODE_FAULT_NONE;
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
        snprintf(err, err_len, "LODE_TEST_FAULT: '%s': want hang, error, badhits or temp, then "
                 ":DEVICE[:AFTER[:TIMES]]", entry);
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

static int fault_scan(lode_device *d, const lode_range *r, lode_hits *hits, uint64_t *done, const atomic_int *abort)
{
    lode_fault_kind fault = LODE_FAULT_NONE;
    double hang_s = 0;
    if (d->live) {
        pthread_mutex_lock(&lock);
        const lode_fault_plan *p = &devices[d->index].plan;
        if (p->kind != LODE_FAULT_NONE && devices[d->index].scans++ >= p->after &&
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
