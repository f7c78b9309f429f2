/* Stratum v1 messages: parsing what a pool sends and building what lode
 * sends (Stratum v1 as pools speak it). Pure functions, no I/O, no globals.
 *
 * Every parser takes untrusted text and either fills its output or returns
 * -1 with a one-line reason in err; nothing here aborts on bad input. */
#ifndef LODE_STRATUM_MSG_H
#define LODE_STRATUM_MSG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/algo.h"
#include "core/base/job.h"

/* The longest line lode accepts from a pool, newline excluded. A notify with
 * a 32-entry branch and a large coinbase is a few KiB; 64 KiB leaves room
 * for pools that pad coinb2 and still bounds memory per connection. */
#define LODE_STRATUM_LINE_MAX 65536
/* The mask lode offers in mining.configure (BIP 320's general-purpose bits). */
#define LODE_STRATUM_VERSION_MASK 0x1fffe000u
#define LODE_STRATUM_TEXT_MAX 256 /* show_message text, error messages (truncated) */
#define LODE_STRATUM_HOST_MAX 256

typedef enum lode_stratum_msg_kind {
    LODE_STRATUM_RESPONSE,          /* a reply to one of lode's requests */
    LODE_STRATUM_NOTIFY,            /* mining.notify */
    LODE_STRATUM_SET_DIFFICULTY,    /* mining.set_difficulty */
    LODE_STRATUM_SET_EXTRANONCE,    /* mining.set_extranonce */
    LODE_STRATUM_SET_VERSION_MASK,  /* mining.set_version_mask */
    LODE_STRATUM_RECONNECT,         /* client.reconnect */
    LODE_STRATUM_SHOW_MESSAGE,      /* client.show_message */
    LODE_STRATUM_GET_VERSION,       /* client.get_version */
    LODE_STRATUM_PING,              /* mining.ping */
    LODE_STRATUM_UNKNOWN_METHOD,    /* any other method: answer with an error if it has an id */
} lode_stratum_msg_kind;

/* mining.notify, decoded. prevhash holds the 32 bytes of the hex as sent
 * (not yet word-swapped); lode_stratum_notify_to_job does the swap. */
typedef struct lode_stratum_notify {
    char job_id[LODE_JOB_ID_MAX];  /* 1..63 characters */
    uint8_t prevhash[32];
    uint8_t *coinb1, *coinb2;      /* owned (lode_stratum_msg_free) */
    size_t coinb1_len, coinb2_len;
    uint8_t branch[LODE_MERKLE_BRANCH_MAX][32];
    size_t branch_len;
    uint32_t version, nbits, ntime;
    bool clean_jobs;
} lode_stratum_notify;

typedef struct lode_stratum_msg {
    lode_stratum_msg_kind kind;
    /* The message's id as sent (any JSON type; a JSON null or NULL when it
     * has none), kept to echo it in replies. Owned. */
    json_t *id;
    /* The id as an integer, when it is one (lode's own requests use integers). */
    bool id_is_int;
    int64_t int_id;
    union {
        struct {
            json_t *result;        /* owned; JSON null when error */
            bool is_error;         /* the error member is set (or result is null and error absent) */
            int error_code;        /* slush convention: 21 stale, 22 duplicate, 23 low difficulty, ... 0 unknown */
            char error_message[LODE_STRATUM_TEXT_MAX];
        } response;
        lode_stratum_notify notify;
        double difficulty;         /* finite, > 0 */
        struct {
            uint8_t extranonce1[LODE_EXTRANONCE_MAX];
            size_t extranonce1_len;   /* 0..32 */
            size_t extranonce2_size;  /* 1..32 (LODE_EXTRANONCE_MAX: what lode_job holds) */
        } set_extranonce;
        uint32_t version_mask;
        struct {
            char host[LODE_STRATUM_HOST_MAX]; /* "" = the current host */
            uint16_t port;                    /* 0 = the current port */
            double wait_s;                    /* 0..3600 */
        } reconnect;
        char text[LODE_STRATUM_TEXT_MAX];     /* show_message: printable ASCII only */
        char method[64];                      /* unknown method, printable, truncated */
    } u;
} lode_stratum_msg;

/* Parses one line (len bytes, no newline needed; a trailing "\r" is fine).
 * Lines over LODE_STRATUM_LINE_MAX, with NUL bytes, not a JSON object, or
 * with a malformed known message give -1 and a reason in err. On success
 * the caller owns *msg and frees it with lode_stratum_msg_free. */
int lode_stratum_parse_line(const char *line, size_t len, lode_stratum_msg *msg, char *err,
                            size_t err_len);
void lode_stratum_msg_free(lode_stratum_msg *msg);

/* The result of mining.subscribe:
 * [[["mining.notify","<sub id>"],...], "<extranonce1 hex>", <extranonce2_size>].
 * session_id receives the mining.notify subscription id ("" if absent). */
int lode_stratum_parse_subscribe_result(const json_t *result, char session_id[LODE_JOB_ID_MAX],
                                        uint8_t extranonce1[LODE_EXTRANONCE_MAX],
                                        size_t *extranonce1_len, size_t *extranonce2_size,
                                        char *err, size_t err_len);
/* The result of mining.configure: *mask gets the negotiated version mask,
 * 0 if the pool did not accept version rolling. -1 if the result is malformed. */
int lode_stratum_parse_configure_result(const json_t *result, uint32_t *mask, char *err,
                                        size_t err_len);

/* Builders: each returns one malloc'd line ending in "\n" (free it), or NULL
 * if memory ran out. Ids are lode's request counter. */
char *lode_stratum_build_configure(int64_t id, uint32_t mask, unsigned min_bit_count);
/* session_id NULL or "" = a fresh session. */
char *lode_stratum_build_subscribe(int64_t id, const char *agent, const char *session_id);
char *lode_stratum_build_extranonce_subscribe(int64_t id);
char *lode_stratum_build_authorize(int64_t id, const char *user, const char *pass);
/* A protocol line as -P (--protocol-dump) shows it, malloc'd (NULL: no
 * memory): mining.authorize's password replaced by "***", every byte that
 * is not printable ASCII (and the backslash) as \xNN. The one place that
 * decides what of the traffic may be logged. */
char *lode_stratum_masked_line(const char *line, size_t len);
char *lode_stratum_build_suggest_difficulty(int64_t id, double difficulty);
/* ntime and nonce are written as the big-endian hex of the integers,
 * extranonce2 as its raw bytes; with_version_bits adds the 6th parameter. */
char *lode_stratum_build_submit(int64_t id, const char *user, const char *job_id,
                                const uint8_t *extranonce2, size_t extranonce2_len,
                                uint32_t ntime, uint32_t nonce, bool with_version_bits,
                                uint32_t version_bits);
/* Replies to the pool's requests; id is the request's own id (echoed). */
char *lode_stratum_build_reply_string(const json_t *id, const char *result);  /* get_version, ping */
char *lode_stratum_build_reply_true(const json_t *id);                        /* show_message */
char *lode_stratum_build_reply_error(const json_t *id, int code, const char *message);

/* What the connection knows besides the notify itself. */
typedef struct lode_stratum_session {
    lode_algo algo;
    uint8_t extranonce1[LODE_EXTRANONCE_MAX];
    size_t extranonce1_len;
    size_t extranonce2_size;
    double difficulty;          /* pool difficulty of this job */
    uint32_t version_mask;      /* negotiated mask; ignored unless algo is sha256d */
    uint32_t ntime_roll_max;    /* seconds ntime may be rolled ahead */
    uint64_t generation;        /* the source's connection counter */
} lode_stratum_session;

/* Turns a notify into a job: prevhash word-swapped to internal order, share
 * target from the difficulty in the algorithm's pool convention, coinbase
 * parts copied. clean: the job replaces all older ones. Returns 0, or -1
 * with a reason (the job is then empty). */
int lode_stratum_notify_to_job(const lode_stratum_notify *notify,
                               const lode_stratum_session *session, bool clean, lode_job *job,
                               char *err, size_t err_len);

#endif
