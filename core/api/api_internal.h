/* Inside the API layer: the sampler and what it keeps (api_state.c), the
 * renderers (JSON and Prometheus text), the embedded dashboard, and the
 * HTTP server around them (server.c, built with libmicrohttpd). */
#ifndef LODE_API_INTERNAL_H
#define LODE_API_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/api/api.h"

/* 15 minutes of one-second samples, plus the one the window starts at. */
#define API_HISTORY 901

typedef struct api_state {
    lode_api_config config; /* strings owned (copied) */
    pthread_mutex_t lock;   /* everything below */
    pthread_cond_t wake;
    bool stop;
    pthread_t sampler;
    bool sampler_running;
    double start_mono, start_wall;

    lode_api_snapshot *last; /* the newest snapshot; NULL before the first */
    size_t devices;          /* device count of the first snapshot (fixed for a run) */
    size_t head, count;      /* ring: newest at head - 1 */
    double *mono, *wall;     /* per sample */
    uint64_t *hashes;        /* [sample * devices + d] */
    float *temp, *power;     /* NAN when absent */
    uint64_t *accepted, *rejected, *stale; /* summed over pools */
    double *credit;          /* tf: GHz-days of one candidate of the running assignment; NAN: none */
} api_state;

int api_state_init(api_state *s, const lode_api_config *config);
/* Starts the sampler; the first sample is taken before this returns. */
int api_state_start(api_state *s);
void api_state_stop(api_state *s);
void api_state_destroy(api_state *s);

/* Hashes per second of device d over the last `seconds` (over all samples
 * when fewer are kept); NAN with fewer than two samples. Under the lock. */
double api_device_rate(const api_state *s, size_t d, double seconds);
/* lode tf: GHz-days/day of device d over the last `seconds` (its rate times
 * the credit of one candidate of the running assignment); NAN when none runs. */
double api_device_credit_rate(const api_state *s, size_t d, double seconds);

/* Renderers: a malloc'd text (NULL when memory ran out); api_render_metrics
 * in api_metrics.c, the others in api_state.c. */
char *api_render_summary(api_state *s, bool devices_only);
char *api_render_history(api_state *s);
char *api_render_metrics(api_state *s);

/* A malloc'd copy of text that is valid UTF-8 without control characters:
 * every byte of an invalid sequence and every control character becomes
 * '?' (core/api/api_text.c). JSON strings and metric labels both get it.
 * NULL when memory ran out. */
char *api_clean_text(const char *text);

/* The Host rule (core/api/api_host.c): the names a request's Host header
 * may give, with or without a port. */
#define API_HOST_NAMES (LODE_API_MAX_ALLOW_HOSTS + 5)
#define API_HOST_NAME_MAX 253
typedef struct api_host_rule {
    char names[API_HOST_NAMES][API_HOST_NAME_MAX + 1]; /* localhost, 127.0.0.1, [::1], the bound
                                                          * address, the bind's name, the allowed */
    size_t count;
    bool any_ip; /* bound to every address (0.0.0.0, [::]): any IP literal names it */
} api_host_rule;
/* The rule of a server bound (bound) as bind says (HOST:PORT, [V6]:PORT).
 * 0, or -1 when an allowed name is not valid (lode_api_host_name_valid). */
int api_host_rule_init(api_host_rule *r, const char *bind, const struct sockaddr *bound,
                       const char *const *allowed, size_t allowed_count);
/* Whether a Host header value (NULL: none was sent) names this server. */
bool api_host_allowed(const api_host_rule *r, const char *host);

/* The device index of an id ("cpu:0"), or -1. */
int api_device_index(api_state *s, const char *id);

/* HOST:PORT or [V6]:PORT resolved; loopback set when every byte of it is
 * this machine only (127.0.0.0/8, ::1). */
int api_parse_bind(const char *bind, struct sockaddr_storage *addr, socklen_t *len, bool *loopback,
                   char *err, size_t err_len);

/* The embedded files (generated from core/api/dashboard/ and Debian's
 * Chart.js by cmake/EmbedFiles.cmake). */
typedef struct api_asset {
    const char *path;         /* "/", "/chart.js" */
    const char *content_type;
    const unsigned char *data;
    size_t size;
} api_asset;
const api_asset *api_find_asset(const char *path);

#endif
