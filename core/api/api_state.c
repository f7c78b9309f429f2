/* The sampler (one thread, one provider snapshot a second, 15 minutes kept
 * in ring buffers), the rates and history computed from it, and the JSON
 * and Prometheus renderings every request is answered from. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/api/api_internal.h"
#include "core/base/clock.h"
#include "core/base/device_state.h"

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool lode_api_token_equal(const char *given, size_t given_len, const char *token)
{
    /* Every byte of the longer text is looked at whatever the content, so
     * the time says nothing about where the first difference is. */
    size_t token_len = strlen(token);
    size_t n = given_len > token_len ? given_len : token_len;
    unsigned diff = (unsigned)(given_len ^ token_len);
    for (size_t i = 0; i < n; i++) {
        unsigned char a = i < given_len ? (unsigned char)given[i] : 0;
        unsigned char b = i < token_len ? (unsigned char)token[i] : 0;
        diff |= (unsigned)(a ^ b);
    }
    return diff == 0 && token_len > 0;
}

int api_parse_bind(const char *bind, struct sockaddr_storage *addr, socklen_t *len, bool *loopback,
                   char *err, size_t err_len)
{
    char host[256];
    const char *port;
    if (bind == NULL || *bind == '\0') {
        snprintf(err, err_len, "--api-bind wants HOST:PORT, e.g. 127.0.0.1:4028");
        return -1;
    }
    if (bind[0] == '[') { /* [V6]:PORT */
        const char *close = strchr(bind, ']');
        if (close == NULL || close[1] != ':' || (size_t)(close - bind - 1) >= sizeof host) {
            snprintf(err, err_len, "--api-bind: '%s' is not [IPV6]:PORT", bind);
            return -1;
        }
        memcpy(host, bind + 1, (size_t)(close - bind - 1));
        host[close - bind - 1] = '\0';
        port = close + 2;
    } else if (strspn(bind, "0123456789") == strlen(bind)) { /* PORT alone, as ccminer and cgminer: loopback */
        snprintf(host, sizeof host, "127.0.0.1");
        port = bind;
    } else {
        const char *colon = strrchr(bind, ':');
        if (colon == NULL || colon == bind || (size_t)(colon - bind) >= sizeof host ||
            memchr(bind, ':', (size_t)(colon - bind)) != NULL) {
            snprintf(err, err_len, "--api-bind wants HOST:PORT (IPv6 as [ADDR]:PORT), not '%s'", bind);
            return -1;
        }
        memcpy(host, bind, (size_t)(colon - bind));
        host[colon - bind] = '\0';
        port = colon + 1;
    }
    char *end;
    errno = 0;
    unsigned long p = *port >= '0' && *port <= '9' ? strtoul(port, &end, 10) : 70000;
    if (p > 65535 || errno != 0 || *end != '\0') {
        snprintf(err, err_len, "--api-bind: the port must be a number from 0 to 65535, not '%s'", port);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || res == NULL) {
        snprintf(err, err_len, "--api-bind: cannot resolve '%s': %s", host, gai_strerror(rc));
        return -1;
    }
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    if (res->ai_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)res->ai_addr;
        *loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)res->ai_addr;
        *loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    freeaddrinfo(res);
    return 0;
}

int lode_api_check_config(const char *bind, const char *token, char *err, size_t err_len)
{
    struct sockaddr_storage addr;
    socklen_t len;
    bool loopback;
    if (api_parse_bind(bind, &addr, &len, &loopback, err, err_len) != 0)
        return -1;
    bool have_token = token != NULL && *token != '\0';
    if (have_token && strlen(token) > LODE_API_TOKEN_MAX) {
        snprintf(err, err_len, "the API token is longer than %d characters", LODE_API_TOKEN_MAX);
        return -1;
    }
    for (const char *t = token; have_token && *t; t++)
        if ((unsigned char)*t <= 0x20 || (unsigned char)*t >= 0x7f) {
            snprintf(err, err_len, "the API token must be printable ASCII without spaces");
            return -1;
        }
    if (!loopback && !have_token) {
        snprintf(err, err_len,
                 "--api-bind %s listens beyond this machine: give a token (--api-token-file FILE, "
                 "LODE_API_TOKEN or --api-token), or bind to 127.0.0.1",
                 bind);
        return -1;
    }
    return 0;
}

/* ---- the sampler ---- */

static char *dup_text(const char *s)
{
    return strdup(s ? s : "");
}

int api_state_init(api_state *s, const lode_api_config *c)
{
    memset(s, 0, sizeof *s);
    s->config = *c;
    s->config.bind = dup_text(c->bind);
    s->config.token = c->token && *c->token ? strdup(c->token) : NULL;
    s->config.version = dup_text(c->version);
    s->config.build = dup_text(c->build);
    s->config.algorithm = dup_text(c->algorithm);
    s->config.unit = dup_text(c->unit ? c->unit : "H/s");
    s->config.source_kind = dup_text(c->source_kind);
    s->config.source = dup_text(c->source);
    if (s->config.sample_interval_s <= 0)
        s->config.sample_interval_s = 1.0;
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    s->start_mono = lode_clock_s();
    s->start_wall = now_wall();
    return 0;
}

static int allocate_rings(api_state *s, size_t devices)
{
    size_t n = API_HISTORY, nd = n * (devices ? devices : 1);
    s->devices = devices;
    s->mono = calloc(n, sizeof *s->mono);
    s->wall = calloc(n, sizeof *s->wall);
    s->hashes = calloc(nd, sizeof *s->hashes);
    s->temp = calloc(nd, sizeof *s->temp);
    s->power = calloc(nd, sizeof *s->power);
    s->accepted = calloc(n, sizeof *s->accepted);
    s->rejected = calloc(n, sizeof *s->rejected);
    s->stale = calloc(n, sizeof *s->stale);
    s->credit = calloc(n, sizeof *s->credit);
    return s->mono && s->wall && s->hashes && s->temp && s->power && s->accepted && s->rejected && s->stale &&
                   s->credit
               ? 0
               : -1;
}

/* Takes one snapshot (outside the lock: the provider may take a while)
 * and records it. */
static void sample(api_state *s)
{
    lode_api_snapshot *snap = calloc(1, sizeof *snap);
    if (snap == NULL)
        return;
    s->config.provider.snapshot(s->config.provider.user, snap);
    if (snap->device_count > LODE_API_MAX_DEVICES)
        snap->device_count = LODE_API_MAX_DEVICES;
    if (snap->pool_count > LODE_API_MAX_POOLS)
        snap->pool_count = LODE_API_MAX_POOLS;
    double mono = lode_clock_s(), wall = now_wall();
    pthread_mutex_lock(&s->lock);
    if (s->mono == NULL && allocate_rings(s, snap->device_count) != 0) {
        pthread_mutex_unlock(&s->lock);
        free(snap);
        return;
    }
    size_t i = s->head;
    s->mono[i] = mono;
    s->wall[i] = wall;
    uint64_t acc = 0, rej = 0, st = 0;
    for (size_t p = 0; p < snap->pool_count; p++) {
        acc += snap->pools[p].accepted;
        rej += snap->pools[p].rejected;
        st += snap->pools[p].stale;
    }
    s->accepted[i] = acc;
    s->rejected[i] = rej;
    s->stale[i] = st;
    s->credit[i] = snap->tf.running && snap->tf.candidates > 0 ? snap->tf.ghz_days / (double)snap->tf.candidates
                                                               : NAN;
    /* The client's texts are cut at their size, whatever it left in them. */
    snap->primenet.state[sizeof snap->primenet.state - 1] = '\0';
    snap->primenet.last_error[sizeof snap->primenet.last_error - 1] = '\0';
    for (size_t d = 0; d < s->devices; d++) {
        const lode_api_device *dev = d < snap->device_count ? &snap->devices[d] : NULL;
        s->hashes[i * s->devices + d] = dev ? dev->hashes : 0;
        s->temp[i * s->devices + d] =
            dev && (dev->sensors.present & LODE_SENSOR_TEMP) ? (float)dev->sensors.temp_c : NAN;
        s->power[i * s->devices + d] =
            dev && (dev->sensors.present & LODE_SENSOR_POWER) ? (float)dev->sensors.power_w : NAN;
    }
    s->head = (s->head + 1) % API_HISTORY;
    if (s->count < API_HISTORY)
        s->count++;
    free(s->last);
    s->last = snap;
    pthread_mutex_unlock(&s->lock);
}

static void *sampler_main(void *arg)
{
    api_state *s = arg;
    double next = lode_clock_s() + s->config.sample_interval_s;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        double wait = next - lode_clock_s();
        if (wait > 0) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_sec += (time_t)wait;
            until.tv_nsec += (long)((wait - floor(wait)) * 1e9);
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&s->wake, &s->lock, &until);
            continue;
        }
        pthread_mutex_unlock(&s->lock);
        sample(s);
        /* On a stalled machine, no burst of samples to catch up. */
        next += s->config.sample_interval_s;
        if (next < lode_clock_s())
            next = lode_clock_s() + s->config.sample_interval_s;
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int api_state_start(api_state *s)
{
    sample(s);
    if (pthread_create(&s->sampler, NULL, sampler_main, s) != 0)
        return -1;
    s->sampler_running = true;
    return 0;
}

void api_state_stop(api_state *s)
{
    if (!s->sampler_running)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->sampler, NULL);
    s->sampler_running = false;
}

void api_state_destroy(api_state *s)
{
    api_state_stop(s);
    free(s->last);
    free(s->mono);
    free(s->wall);
    free(s->hashes);
    free(s->temp);
    free(s->power);
    free(s->accepted);
    free(s->rejected);
    free(s->stale);
    free(s->credit);
    free((char *)s->config.bind);
    free((char *)s->config.token);
    free((char *)s->config.version);
    free((char *)s->config.build);
    free((char *)s->config.algorithm);
    free((char *)s->config.unit);
    free((char *)s->config.source_kind);
    free((char *)s->config.source);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
}

/* ---- rates (under the lock) ---- */

/* Ring index of the k-th newest sample (0 = newest). */
static size_t nth_newest(const api_state *s, size_t k)
{
    return (s->head + API_HISTORY - 1 - k) % API_HISTORY;
}

double api_device_rate(const api_state *s, size_t d, double seconds)
{
    if (s->count < 2 || d >= s->devices)
        return NAN;
    size_t newest = nth_newest(s, 0), k = 1;
    while (k + 1 < s->count && s->mono[newest] - s->mono[nth_newest(s, k)] < seconds - 0.25)
        k++;
    size_t old = nth_newest(s, k);
    double dt = s->mono[newest] - s->mono[old];
    if (dt <= 0)
        return NAN;
    return (double)(s->hashes[newest * s->devices + d] - s->hashes[old * s->devices + d]) / dt;
}

int api_device_index(api_state *s, const char *id)
{
    int found = -1;
    pthread_mutex_lock(&s->lock);
    for (size_t d = 0; s->last != NULL && d < s->last->device_count; d++)
        if (strcmp(s->last->devices[d].id, id) == 0)
            found = (int)d;
    pthread_mutex_unlock(&s->lock);
    return found;
}

static bool is_tf(const api_state *s)
{
    return strcmp(s->config.source_kind, "tf") == 0;
}

/* GHz-days/day of device d over the last `seconds`: its candidates a second
 * times a day times the credit of one candidate of the running assignment;
 * NAN when none runs. */
double api_device_credit_rate(const api_state *s, size_t d, double seconds)
{
    if (s->count == 0)
        return NAN;
    return api_device_rate(s, d, seconds) * 86400.0 * s->credit[nth_newest(s, 0)];
}

/* ---- JSON ---- */

static void set_number(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

static void set_text(json_t *o, const char *key, const char *text)
{
    char *clean = api_clean_text(text);
    json_object_set_new(o, key, clean ? json_string(clean) : json_null());
    free(clean);
}

static void add_sensors(json_t *o, const lode_sensors *se)
{
    if (se->present & LODE_SENSOR_TEMP)
        set_number(o, "temperature_c", se->temp_c);
    if (se->present & LODE_SENSOR_POWER)
        set_number(o, "power_w", se->power_w);
    if (se->present & LODE_SENSOR_FAN)
        set_number(o, "fan_percent", se->fan_percent);
    if (se->present & LODE_SENSOR_SM_CLOCK)
        set_number(o, "sm_clock_mhz", se->sm_clock_mhz);
    if (se->present & LODE_SENSOR_MEM_CLOCK)
        set_number(o, "mem_clock_mhz", se->mem_clock_mhz);
    if (se->present & LODE_SENSOR_THROTTLE) {
        char t[sizeof se->throttle + 1];
        memcpy(t, se->throttle, sizeof se->throttle);
        t[sizeof se->throttle] = '\0';
        set_text(o, "throttle", t);
    }
}

static lode_algo run_algo(const api_state *s)
{
    lode_algo algo = LODE_ALGO_COUNT;
    if (s->config.algorithm == NULL || lode_algo_parse(s->config.algorithm, &algo) != 0)
        return LODE_ALGO_COUNT;
    return algo;
}

/* Its energy since it began counting work, and per unit of work
 * (core/base/energy.h); nothing while not measured. */
static void add_energy(json_t *o, const api_state *s, size_t d, const lode_energy_reading *e)
{
    if (!e->measured)
        return;
    const char *unit = "";
    double credit = is_tf(s) ? api_device_credit_rate(s, d, 60) : -1;
    double per_unit = lode_energy_per_unit(run_algo(s), e, credit, &unit);
    set_number(o, "energy_j", e->joules);
    set_number(o, "energy_power_w", lode_energy_mean_watts(e));
    set_text(o, "energy_source", e->from_counter ? "counter" : "power");
    set_number(o, "energy_per_unit", per_unit);
    set_text(o, "energy_unit", unit);
}

/* The devices' energy together: joules, and per unit of work where every
 * device that worked is measured. */
static void add_total_energy(json_t *total, const api_state *s, double credit)
{
    lode_energy_reading sum = {.measured = true};
    double watts = 0;
    for (size_t d = 0; s->last != NULL && d < s->last->device_count; d++) {
        const lode_api_device *dev = &s->last->devices[d];
        if (dev->hashes == 0)
            continue;
        if (!dev->energy.measured)
            return;
        sum.joules += dev->energy.joules;
        sum.work += dev->energy.work;
        watts += lode_energy_mean_watts(&dev->energy);
    }
    if (!(watts > 0))
        return;
    sum.span_s = sum.joules / watts; /* so that the mean power is the devices' sum */
    const char *unit = "";
    set_number(total, "energy_j", sum.joules);
    set_number(total, "energy_power_w", watts);
    set_number(total, "energy_per_unit", lode_energy_per_unit(run_algo(s), &sum, credit, &unit));
    set_text(total, "energy_unit", unit);
}

static json_t *devices_json(const api_state *s)
{
    json_t *arr = json_array();
    for (size_t d = 0; s->last != NULL && d < s->last->device_count; d++) {
        const lode_api_device *dev = &s->last->devices[d];
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer((json_int_t)d));
        set_text(o, "id", dev->id);
        set_text(o, "name", dev->name);
        set_text(o, "backend", dev->backend);
        if (dev->variant[0])
            set_text(o, "variant", dev->variant);
        else
            json_object_set_new(o, "variant", json_null());
        set_text(o, "state", dev->state);
        set_number(o, "hashrate_10s", api_device_rate(s, d, 10));
        set_number(o, "hashrate_60s", api_device_rate(s, d, 60));
        set_number(o, "hashrate_15m", api_device_rate(s, d, 900));
        json_object_set_new(o, "hashes", json_integer((json_int_t)dev->hashes));
        json_object_set_new(o, "hits", json_integer((json_int_t)dev->hits));
        json_object_set_new(o, "hardware_errors", json_integer((json_int_t)dev->hw_errors));
        json_object_set_new(o, "hits_expected", json_real(dev->hits_expected));
        json_object_set_new(o, "hits_dropped", json_integer((json_int_t)dev->hits_dropped));
        json_object_set_new(o, "scans_in_flight", json_integer(dev->scans_in_flight));
        if (is_tf(s)) {
            set_number(o, "ghz_days_per_day", api_device_credit_rate(s, d, 60));
            json_object_set_new(o, "proof_entries", json_integer((json_int_t)dev->proof_entries));
            json_object_set_new(o, "factors", json_integer((json_int_t)dev->factors));
        }
        add_sensors(o, &dev->sensors);
        add_energy(o, s, d, &dev->energy);
        json_array_append_new(arr, o);
    }
    return arr;
}

static const char *pool_state(const lode_api_pool *p)
{
    return p->active ? (p->connected ? "mining" : "connecting") : "standby";
}

static json_t *tf_json(const lode_api_tf *tf)
{
    json_t *o = json_object();
    json_object_set_new(o, "running", json_boolean(tf->running));
    if (tf->running) {
        char assignment[64];
        snprintf(assignment, sizeof assignment, "M%u 2^%u..2^%u", tf->exponent, tf->bit_min, tf->bit_max);
        set_text(o, "assignment", assignment);
        json_object_set_new(o, "exponent", json_integer(tf->exponent));
        json_object_set_new(o, "bit_min", json_integer(tf->bit_min));
        json_object_set_new(o, "bit_max", json_integer(tf->bit_max));
        json_object_set_new(o, "classes_done", json_integer(tf->classes_done));
        json_object_set_new(o, "classes_total", json_integer(tf->classes_total));
        set_number(o, "progress", tf->classes_total ? (double)tf->classes_done / tf->classes_total : NAN);
        set_number(o, "ghz_days", tf->ghz_days);
        json_object_set_new(o, "candidates", json_integer((json_int_t)tf->candidates));
        set_number(o, "ghz_days_per_day", tf->ghz_days_per_day >= 0 ? tf->ghz_days_per_day : NAN);
        set_number(o, "eta_s", tf->eta_s >= 0 ? tf->eta_s : NAN);
        json_object_set_new(o, "factors", json_integer(tf->factors));
    }
    json_object_set_new(o, "classes_done_total", json_integer((json_int_t)tf->classes_done_total));
    json_object_set_new(o, "assignments_done", json_integer((json_int_t)tf->assignments_done));
    json_object_set_new(o, "factors_found", json_integer((json_int_t)tf->factors_found));
    return o;
}

/* {"enabled": false} without a client; else its state as it gives it. */
static json_t *primenet_json(const lode_api_primenet *pn)
{
    json_t *o = json_object();
    json_object_set_new(o, "enabled", json_boolean(pn->enabled));
    if (!pn->enabled)
        return o;
    set_text(o, "state", pn->state);
    json_object_set_new(o, "results_sent", json_integer(pn->results_sent));
    json_object_set_new(o, "results_queued", json_integer(pn->results_queued));
    json_object_set_new(o, "assignments_queued", json_integer(pn->assignments_queued));
    if (pn->last_error[0])
        set_text(o, "last_error", pn->last_error);
    else
        json_object_set_new(o, "last_error", json_null());
    set_number(o, "next_contact_s", pn->next_contact_s >= 0 ? pn->next_contact_s : NAN);
    return o;
}

static char *dump(json_t *root)
{
    char *text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(root);
    return text;
}

char *api_render_summary(api_state *s, bool devices_only)
{
    pthread_mutex_lock(&s->lock);
    if (devices_only) {
        json_t *root = json_object();
        json_object_set_new(root, "devices", devices_json(s));
        pthread_mutex_unlock(&s->lock);
        return dump(root);
    }
    const lode_api_config *c = &s->config;
    json_t *root = json_object();
    set_text(root, "version", c->version);
    set_text(root, "build", c->build);
    set_number(root, "uptime_s", lode_clock_s() - s->start_mono);
    set_number(root, "started_at", s->start_wall);
    set_text(root, "algorithm", c->algorithm);
    set_text(root, "unit", c->unit);
    json_t *source = json_object();
    set_text(source, "kind", c->source_kind);
    set_text(source, "url", c->source);
    json_object_set_new(root, "source", source);
    json_object_set_new(root, "control", json_boolean(c->token != NULL));

    json_t *pools = json_array();
    for (size_t p = 0; s->last != NULL && p < s->last->pool_count; p++) {
        const lode_api_pool *pl = &s->last->pools[p];
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer((json_int_t)p));
        set_text(o, "url", pl->url);
        set_text(o, "state", pool_state(pl));
        json_object_set_new(o, "active", json_boolean(pl->active));
        json_object_set_new(o, "connected", json_boolean(pl->connected));
        json_object_set_new(o, "accepted", json_integer((json_int_t)pl->accepted));
        json_object_set_new(o, "rejected", json_integer((json_int_t)pl->rejected));
        json_object_set_new(o, "stale", json_integer((json_int_t)pl->stale));
        json_object_set_new(o, "dropped", json_integer((json_int_t)pl->dropped));
        json_object_set_new(o, "unsent", json_integer((json_int_t)pl->unsent));
        json_object_set_new(o, "unanswered", json_integer((json_int_t)pl->unanswered));
        set_number(o, "difficulty", pl->difficulty > 0 ? pl->difficulty : NAN);
        if (pl->last_reject[0])
            set_text(o, "last_reject", pl->last_reject);
        json_array_append_new(pools, o);
    }
    json_object_set_new(root, "pools", pools);

    json_t *devices = devices_json(s);
    json_t *total = json_object();
    double r10 = 0, r60 = 0, r900 = 0;
    uint64_t hashes = 0, hits = 0, hw = 0;
    for (size_t d = 0; s->last != NULL && d < s->last->device_count; d++) {
        r10 += api_device_rate(s, d, 10);
        r60 += api_device_rate(s, d, 60);
        r900 += api_device_rate(s, d, 900);
        hashes += s->last->devices[d].hashes;
        hits += s->last->devices[d].hits;
        hw += s->last->devices[d].hw_errors;
    }
    set_number(total, "hashrate_10s", r10);
    set_number(total, "hashrate_60s", r60);
    set_number(total, "hashrate_15m", r900);
    json_object_set_new(total, "hashes", json_integer((json_int_t)hashes));
    json_object_set_new(total, "hits", json_integer((json_int_t)hits));
    json_object_set_new(total, "hardware_errors", json_integer((json_int_t)hw));
    double credit = -1;
    if (is_tf(s)) {
        credit = 0;
        for (size_t d = 0; s->last != NULL && d < s->last->device_count; d++)
            credit += api_device_credit_rate(s, d, 60);
        set_number(total, "ghz_days_per_day", credit);
    }
    add_total_energy(total, s, credit);
    json_object_set_new(root, "total", total);
    json_object_set_new(root, "devices", devices);
    if (is_tf(s) && s->last != NULL) {
        json_object_set_new(root, "tf", tf_json(&s->last->tf));
        json_object_set_new(root, "primenet", primenet_json(&s->last->primenet));
    }
    pthread_mutex_unlock(&s->lock);
    return dump(root);
}

/* Per device: [time_ms, hashes/s] over SMOOTH samples (tf: and
 * [time_ms, GHz-days/day] at the credit of the assignment then running);
 * temperature and power as sampled. Shares: [time_ms, accepted, rejected,
 * stale] (totals). */
#define SMOOTH 5
char *api_render_history(api_state *s)
{
    json_t *root = json_object();
    pthread_mutex_lock(&s->lock);
    set_text(root, "unit", s->config.unit);
    set_number(root, "interval_s", s->config.sample_interval_s);
    json_t *devices = json_array();
    for (size_t d = 0; s->last != NULL && d < s->devices && d < s->last->device_count; d++) {
        json_t *o = json_object(), *rate = json_array(), *temp = json_array(), *power = json_array();
        json_t *credit = json_array();
        set_text(o, "id", s->last->devices[d].id);
        for (size_t k = s->count; k-- > 0;) { /* oldest first */
            size_t i = nth_newest(s, k);
            json_int_t ms = (json_int_t)(s->wall[i] * 1000);
            if (k + 1 < s->count) {
                size_t back = s->count - 1 - k < SMOOTH ? s->count - 1 - k : SMOOTH;
                size_t j = nth_newest(s, k + back);
                double dt = s->mono[i] - s->mono[j];
                double r = dt > 0 ? (double)(s->hashes[i * s->devices + d] - s->hashes[j * s->devices + d]) / dt
                                  : NAN;
                if (dt > 0)
                    json_array_append_new(rate, json_pack("[I,f]", ms, r));
                if (dt > 0 && isfinite(s->credit[i]))
                    json_array_append_new(credit, json_pack("[I,f]", ms, r * 86400.0 * s->credit[i]));
            }
            float t = s->temp[i * s->devices + d], w = s->power[i * s->devices + d];
            if (!isnan(t))
                json_array_append_new(temp, json_pack("[I,f]", ms, (double)t));
            if (!isnan(w))
                json_array_append_new(power, json_pack("[I,f]", ms, (double)w));
        }
        json_object_set_new(o, "hashrate", rate);
        json_object_set_new(o, "temperature_c", temp);
        json_object_set_new(o, "power_w", power);
        if (is_tf(s))
            json_object_set_new(o, "ghz_days_per_day", credit);
        else
            json_decref(credit);
        json_array_append_new(devices, o);
    }
    json_t *shares = json_array();
    for (size_t k = s->count; k-- > 0 && s->last != NULL && s->last->pool_count > 0;) {
        size_t i = nth_newest(s, k);
        json_array_append_new(shares, json_pack("[I,I,I,I]", (json_int_t)(s->wall[i] * 1000),
                                                (json_int_t)s->accepted[i], (json_int_t)s->rejected[i],
                                                (json_int_t)s->stale[i]));
    }
    pthread_mutex_unlock(&s->lock);
    json_object_set_new(root, "devices", devices);
    json_object_set_new(root, "shares", shares);
    return dump(root);
}
