/* The PrimeNet client's parts (client.c: the thread, its pacing and the
 * calls; register.c: uc and po; send.c: ar; work.c: ga, ra, ap, au). */
#ifndef LODE_PRIMENET_CLIENT_INTERNAL_H
#define LODE_PRIMENET_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/primenet/http.h"
#include "core/primenet/primenet.h"
#include "core/primenet/protocol.h"
#include "core/primenet/state.h"
#include "core/tf/worktodo.h"

#define PN_QUICK_RETRIES 3    /* after the first try: 1, 2, 4 s apart */
#define PN_LONGEST_WAIT 3600.0
#define PN_FETCH_PER_PASS 20  /* ga at most this often a pass */
#define PN_QUEUE_MAX 1000     /* lines in worktodo.txt past which nothing is fetched */
#define PN_REPORT_MAX 50      /* ap for this many assignments at most */
#define PN_UNKNOWN_ETA_S (7 * 86400.0) /* an assignment of unknown speed, as AutoPrimeNet counts it */

/* What a call came to. */
enum {
    PN_TX_OK,      /* a reply, in *reply (its code may be an error the caller handles) */
    PN_TX_FAILED,  /* no usable reply after the quick retries, or registration failed */
    PN_TX_STOPPED, /* a stop request */
    PN_TX_REFUSED, /* PrimeNet refused the user: stop for good */
};

typedef struct pn_param {
    const char *name, *value;
} pn_param;

struct lode_primenet_client {
    lode_primenet_config cfg;
    lode_pn_http http;
    lode_pn_state state;
    bool state_loaded;
    char app[72];                /* uc's a */
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* Under lock. */
    bool wake, finishing;
    atomic_bool stopping, refused;
    lode_primenet_status status;
    double next_contact;         /* clock time; -1: none */
    /* The thread's own. */
    double retry_wait;           /* the current wait after a failed pass; 0: none */
    double fetch_wait;           /* the same for "no assignment" */
    double hold_until, fetch_after, next_report;
    double known_rate;           /* GHz-days/day last measured; <= 0: unknown */
    bool od_stale;               /* uc answered a higher od: query po */
    long server_od;
    uint64_t warned_lines;       /* result lines warned about (not sent) */
};

/* client.c */
bool pn_stopping(lode_primenet_client *c);
/* Sleeps up to s seconds; false if a stop came first. */
bool pn_pause(lode_primenet_client *c, double s);
void pn_set_state(lode_primenet_client *c, const char *state);
void pn_note_error(lode_primenet_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One transaction t with params (g, ss, sh added) and its generic
 * handling (quick retries, re-registration on 30/32/33/34/46, refusal). */
int pn_transact(lode_primenet_client *c, const char *t, const pn_param *params, size_t n, lode_pn_reply *reply);
/* The reply's detail fit for the log (printable ASCII, line breaks as
 * " / "). */
void pn_detail(const lode_pn_reply *r, char *out, size_t len);

/* register.c: uc, then po with the options; and a po query when the
 * server's options counter moved. */
int pn_register(lode_primenet_client *c);
int pn_ensure_registered(lode_primenet_client *c);
int pn_save_state(lode_primenet_client *c);

/* send.c: counts the lines of the results file not in results_sent.txt
 * (the status's results_queued) and, with send, an ar for each. PN_TX_OK
 * when every line went (or none was waiting). */
int pn_send_results(lode_primenet_client *c, bool send);

/* work.c */
int pn_register_keyless(lode_primenet_client *c);           /* ra */
int pn_fill_queue(lode_primenet_client *c, bool *no_work);  /* ga */
int pn_report_progress(lode_primenet_client *c);            /* ap */
bool pn_queue_short(lode_primenet_client *c);
/* Removes a's line with a message saying why (PrimeNet's code). */
void pn_drop_assignment(lode_primenet_client *c, const lode_tf_assignment *a, int code, const char *detail);
bool pn_is_key(const char *s);

#endif
