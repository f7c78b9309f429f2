/* The PrimeNet v5 client of `lode tf --primenet` (docs/GIMPS.md,
 * "PrimeNet"): a thread beside the class driver that registers the
 * computer (uc, po), keeps worktodo.txt filled with trial-factoring
 * assignments (ga; ra for keyless lines the user added), reports progress
 * (ap) at start and every check-in, and sends each result of
 * results.json.txt (ar) that results_sent.txt does not hold yet, recording
 * it there once PrimeNet took it (or refused it for good).
 *
 * Files: the state (primenet.json: GUIDs, what was registered, the options
 * counter), written atomically; results_sent.txt, each sent line appended
 * verbatim as AutoPrimeNet does; worktodo.txt, rewritten through
 * core/tf/worktodo.h (one rewrite at a time in the process, FILE.lock
 * against others).
 *
 * Every error code of PrimeNet gets its handling: 30 a new GUID and uc
 * again, 32/33/34/46 uc (and po) again, then the call once more; 3 and a
 * failed call (no connection, a timeout, a malformed reply) a few quick
 * retries 1, 2, 4 s apart, then the next pass after a wait that doubles
 * from the retry interval up to an hour; 40 (no work) no ga before that
 * wait; 43/44/45/47/48 final: a result recorded as sent, an assignment
 * dropped from worktodo.txt, each with a message; 7 on ar logged and sent
 * again next pass; 9/21/31 refused: the client stops and
 * lode_primenet_refused says so (lode exits 3).
 *
 * A kill at any instant neither loses a result nor has it credited twice:
 * a line is recorded after PrimeNet took it (crash steps primenet-sent,
 * sent-recorded); one sent again after a kill between the two meets error
 * 43 (its key is completed) and is recorded then. */
#ifndef LODE_PRIMENET_PRIMENET_H
#define LODE_PRIMENET_PRIMENET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LODE_PRIMENET_USER_MAX 20     /* PrimeNet's user ID and computer name */
#define LODE_PRIMENET_FETCH_UNKNOWN 2 /* assignments queued while the rate is unknown */

/* The running assignment, as the class driver measures it. */
typedef struct lode_primenet_progress {
    bool running;
    unsigned exponent, bit_min, bit_max;
    unsigned classes_done, classes_total;
    double ghz_days_per_day; /* -1: not measured yet */
    double eta_s;            /* -1: unknown */
} lode_primenet_progress;

typedef struct lode_primenet_config {
    /* The server (strings must outlive the client). */
    const char *url;                  /* http.h: https, or http:// on loopback */
    const char *proxy, *proxy_user, *proxy_pass; /* -x, NULL: none */
    /* Who asks, and for what. */
    const char *user;                 /* the PrimeNet user ID (ANONYMOUS) */
    const char *computer;             /* at most 20 characters */
    unsigned work_pref;               /* 2 or 12 */
    double days_of_work;              /* queued work, in days at the measured rate */
    bool no_more_work;                /* no ga */
    /* What uc says of the machine. */
    const char *program_version;      /* lode's, e.g. "0.1.0" */
    const char *cpu_model;            /* the devices' names, 8 to 64 characters */
    unsigned cores, threads_per_core, memory_mib, mhz, l1_kib, l2_kib;
    /* Files. */
    const char *worktodo, *results, *state_file, *sent_file;
    /* The running assignment (called on the client's thread); NULL: none. */
    void (*progress)(void *user, lode_primenet_progress *out);
    void *progress_user;
    bool (*stop)(void);               /* a stop request (Ctrl-C); NULL: none */
    /* Pacing (0: the defaults, 60, 3600 and 180 s). */
    double retry_s;                   /* the first wait after a failed pass; doubles up to an hour;
                                         the quick retries wait 1/60, 2/60, 4/60 of it */
    double checkin_s;                 /* between progress reports */
    double timeout_s;                 /* one call's limit */
} lode_primenet_config;

/* For the HTTP API and the dashboard. */
typedef struct lode_primenet_status {
    char state[24];              /* registering, fetching, sending, reporting, idle, waiting to retry,
                                    refused, stopped */
    uint64_t results_sent;       /* by this process (accepted, or refused for good) */
    uint64_t results_queued;     /* lines of the results file not sent yet, at the last look */
    uint64_t assignments_fetched; /* by this process */
    char last_error[256];        /* "" when the last contact went well */
    double next_contact_s;       /* seconds to the next planned contact; 0: now; -1: none */
} lode_primenet_status;

typedef struct lode_primenet_client lode_primenet_client;

/* Reads the state file (a malformed one is an error: it holds the GUID
 * that the assignments belong to) and starts the client's thread. NULL
 * with why in err. */
lode_primenet_client *lode_primenet_start(const lode_primenet_config *cfg, char *err, size_t err_len);
/* A result was written, or the worktodo ran dry: contact PrimeNet soon
 * (not before a wait after failures ends). Any thread. */
void lode_primenet_wake(lode_primenet_client *c);
/* PrimeNet refused the user (9, 21, 31): the client has stopped. */
bool lode_primenet_refused(lode_primenet_client *c);
void lode_primenet_client_status(lode_primenet_client *c, lode_primenet_status *out);
/* One last pass that sends what is queued (a failed call gets its quick
 * retries), then stops the client. The number of results left unsent. */
uint64_t lode_primenet_finish(lode_primenet_client *c);
/* Stops the thread (within seconds: a transfer is aborted) and frees c. */
void lode_primenet_stop(lode_primenet_client *c);

/* The outcome of lode_primenet_unreserve. */
enum { LODE_PRIMENET_UNRESERVED = 0, LODE_PRIMENET_UNRESERVE_FAILED = 1, LODE_PRIMENET_UNRESERVE_NONE = 2,
       LODE_PRIMENET_UNRESERVE_REFUSED = 3 };
/* Gives the keyed assignments of exponent (0: every one) back (au) and
 * removes their lines; no thread, the caller holds the worktodo lock. */
int lode_primenet_unreserve(const lode_primenet_config *cfg, uint32_t exponent);

#endif
