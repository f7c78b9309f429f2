/* The client's files: the state file primenet.json and results_sent.txt.
 *
 * primenet.json, rewritten whole (core/tf/fileio.h, lode_tf_write_atomic):
 *   {"version": 1, "guid": "<32 lower hex>", "hardware_guid": "<32 hex>",
 *    "registered": true, "options_sent": true, "od": 3, "user": "ANONYMOUS",
 *    "computer": "box", "work_pref": 12, "days_of_work": 1}
 * registered/user/computer: what the last accepted uc said; options_sent,
 * work_pref, days_of_work: the last accepted po; od: PrimeNet's options
 * counter.
 *
 * results_sent.txt: each result line sent (accepted, or refused for good),
 * as it was in the results file, with a newline; appended durably
 * (lode_tf_append_record). */
#ifndef LODE_PRIMENET_STATE_H
#define LODE_PRIMENET_STATE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct lode_pn_state {
    char guid[33], hardware_guid[33];
    bool registered, options_sent;
    long od;
    char user[64], computer[64];
    unsigned work_pref;
    double days_of_work;
} lode_pn_state;

/* 32 random lower-case hex digits (getrandom). 0, or -1. */
int lode_pn_new_guid(char out[33]);

/* 1 loaded, 0 no file (s is a fresh state with new GUIDs), -1 malformed or
 * unreadable (why in err: the file is left as it is). */
int lode_pn_state_load(const char *path, lode_pn_state *s, char *err, size_t err_len);
/* 0, or -1 with errno. */
int lode_pn_state_save(const char *path, const lode_pn_state *s);

/* The lines of results_sent.txt, sorted, for lookups. */
typedef struct lode_pn_sent {
    char **lines;
    size_t count;
} lode_pn_sent;

/* Reads it (a missing file is empty). 0, or -1 with errno. */
int lode_pn_sent_load(const char *path, lode_pn_sent *s);
bool lode_pn_sent_has(const lode_pn_sent *s, const char *line, size_t len);
void lode_pn_sent_free(lode_pn_sent *s);
/* Appends line[0..len) and a newline. 0, or -1 with errno. */
int lode_pn_sent_record(const char *path, const char *line, size_t len);

#endif
