/* The HTTP API, Prometheus metrics and the dashboard of a running lode.
 *
 * The server knows nothing of the dispatcher, the job sources or trial
 * factoring: the program gives it a provider, whose snapshot callback fills
 * a lode_api_snapshot (counters, states, sensors) and whose control
 * callbacks pause a device or switch pools. A sampler thread calls the
 * snapshot once a second and keeps 15 minutes of it in ring buffers; every
 * request is answered from those (no request reaches a device or takes a
 * lock of the miner), so scraping costs the miner nothing.
 *
 *   GET  /                 the dashboard (Chart.js embedded: works offline)
 *   GET  /chart.js         Chart.js, as Debian ships it
 *   GET  /api/summary      everything: build, source, pools, devices, tf, primenet
 *   GET  /api/devices      the devices only
 *   GET  /api/history      per-device hashrate, temperature, power (tf: GHz-days/day); shares
 *   GET  /metrics          Prometheus text exposition format 0.0.4
 *   POST /api/pause        {"device": "cpu:0"}    (token required)
 *   POST /api/resume       {"device": "cpu:0"}    (token required)
 *   POST /api/pool/next    {}                     (token required)
 *
 * Tokens: "Authorization: Bearer TOKEN". Control always needs it; reads need
 * it when the server listens beyond loopback (lode_api_start refuses such a
 * bind without a token). 401 without a token, 403 with a wrong one. The
 * whole token is compared, in constant time, and never logged.
 *
 * Host: a request whose Host header names neither the bound address nor
 * localhost, 127.0.0.1, [::1] (any port) nor a name of allow_hosts gets 403
 * and no data, so a page that re-points its own name at this machine (DNS
 * rebinding) cannot read the API through a browser. A request without Host
 * (HTTP/1.0, or HTTP/1.1 from a script; browsers always send one) is
 * answered. On a wildcard bind
 * (0.0.0.0, [::]) any IP literal names the server. */
#ifndef LODE_API_H
#define LODE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/backend.h"
#include "core/base/energy.h"

#define LODE_API_MAX_DEVICES 64
#define LODE_API_MAX_POOLS 16
/* The longest token taken (a longer one is refused, never cut). */
#define LODE_API_TOKEN_MAX 1024
/* At most this many --api-allow-host names. */
#define LODE_API_MAX_ALLOW_HOSTS 16

typedef struct lode_api_device {
    char id[32];       /* "cuda:0" */
    char name[96];
    char backend[16];  /* "cuda" */
    char variant[32];  /* "" = the backend's default */
    char state[24];    /* lode_device_state_name(): "mining", "paused", ... */
    uint64_t hashes, hits, hw_errors;
    /* Nonce scans (0 for Momentum and tf): the hits the hashes should have
     * given, and hits dropped unchecked because their job had ended
     * (lode_device_stats); hits + hits_dropped ~ hits_expected. */
    double hits_expected;
    uint64_t hits_dropped;
    unsigned scans_in_flight; /* scans claimed whose hashes are not in `hashes` yet */
    lode_sensors sensors; /* only what is in sensors.present is shown */
    uint64_t proof_entries, factors; /* tf: what it found (docs/OPERATIONS.md, "Words") */
    lode_energy_reading energy; /* since it began counting work (lode_device_stats) */
    /* NVIDIA: NVML's UUID ("" otherwise) and index, and the PCI bus id, for
     * the labels of NVIDIA's DCGM exporter. */
    char uuid[96];
    unsigned nvml_index;
    char bus_id[32];
} lode_api_device;

typedef struct lode_api_pool {
    char url[256];
    bool active;       /* the pool lode mines on (or tries to) */
    bool connected;
    /* The pool's (node's) answers: accepted, rejected, stale; never answered:
     * dropped (its job had ended), unsent, unanswered. */
    uint64_t accepted, rejected, stale, dropped, unsent, unanswered;
    double difficulty; /* 0: unknown */
    char last_reject[128];
} lode_api_pool;

typedef struct lode_api_tf {
    bool running;            /* an assignment is being worked on */
    unsigned exponent, bit_min, bit_max;
    unsigned classes_done, classes_total; /* of the current assignment */
    uint64_t classes_done_total;          /* classes finished since start (a counter) */
    uint64_t assignments_done;
    double ghz_days;                      /* the assignment's credit */
    uint64_t candidates;                  /* its candidates: ghz_days / candidates is one's credit */
    double ghz_days_per_day;              /* < 0: not known yet */
    double eta_s;                         /* < 0: not known yet */
    unsigned factors;                     /* of the current assignment so far */
    uint64_t factors_found;               /* found since start (a counter) */
} lode_api_tf;

/* The PrimeNet client of a tf run, as it reports itself; enabled false:
 * none (the API shows {"enabled": false}). The strings may come
 * unterminated: the API cuts them at their size. */
typedef struct lode_api_primenet {
    bool enabled;
    char state[32];
    unsigned results_sent, results_queued, assignments_queued;
    char last_error[200];
    double next_contact_s;
} lode_api_primenet;

typedef struct lode_api_snapshot {
    lode_api_device devices[LODE_API_MAX_DEVICES];
    size_t device_count;
    lode_api_pool pools[LODE_API_MAX_POOLS];
    size_t pool_count;
    lode_api_tf tf;  /* meaningful when the config's source_kind is "tf" */
    lode_api_primenet primenet; /* the same */
} lode_api_snapshot;

typedef struct lode_api_provider {
    void *user;
    /* Fills out (zeroed before the call); called by the sampler thread,
     * once a second. Must not block for long. */
    void (*snapshot)(void *user, lode_api_snapshot *out);
    /* Pauses (true) or resumes device index; 0, or -1 with a reason. NULL:
     * this run has nothing to pause. */
    int (*set_paused)(void *user, size_t device, bool paused, char *why, size_t why_len);
    /* Moves to the next pool; 0, or -1 with a reason. NULL: no pools. */
    int (*next_pool)(void *user, char *why, size_t why_len);
} lode_api_provider;

typedef struct lode_api_config {
    const char *bind;        /* HOST:PORT, [IPV6]:PORT; port 0 = any free port */
    const char *token;       /* NULL or "": none (then loopback only, and no control) */
    const char *const *allow_hosts; /* more names Host may give (a reverse proxy's), */
    size_t allow_host_count;        /* each lode_api_host_name_valid */
    const char *version;     /* "0.1.0" */
    const char *build;       /* one line about the build */
    const char *algorithm;   /* "scrypt" */
    const char *unit;        /* "H/s", "sweeps/s", "candidates/s" */
    const char *source_kind; /* "stratum", "gbt", "benchmark", "tf" */
    const char *source;      /* the pool or node URL, "benchmark", or the worktodo */
    lode_api_provider provider;
    double sample_interval_s; /* 0 = 1 s */
} lode_api_config;

typedef struct lode_api lode_api;

/* Whether this lode has the HTTP server (built with libmicrohttpd). */
bool lode_api_available(void);
/* Checks bind and token without starting anything: the address parses, the
 * token is printable and at most LODE_API_TOKEN_MAX long, and a bind beyond
 * loopback has one. 0, or -1 with the reason in err. */
int lode_api_check_config(const char *bind, const char *token, char *err, size_t err_len);
/* A name --api-allow-host takes: letters, digits, '-' and '.', or an IPv6
 * literal in brackets; no port. */
bool lode_api_host_name_valid(const char *name);
/* Starts the sampler and the server; logs "API listening on http://ADDR:PORT".
 * NULL with the reason in err. */
lode_api *lode_api_start(const lode_api_config *config, char *err, size_t err_len);
/* The port bound (useful with port 0). */
unsigned lode_api_port(const lode_api *api);
/* Stops the server and the sampler (no provider call after it returns). NULL is fine. */
void lode_api_stop(lode_api *api);

/* Compares a token in time that depends on neither text's content. */
bool lode_api_token_equal(const char *given, size_t given_len, const char *token);

#endif
