/* PrimeNet v5's wire format (docs/GIMPS.md, "PrimeNet"): one
 * HTTP GET a transaction, its data in the query; a reply of name=value
 * lines up to a line ==END==.
 *
 * A query is px=GIMPS&v=0.95&t=T&g=GUID, the transaction's fields in the
 * order they are added, then the fixed security fields of a client without
 * PrimeNet's private key, ss=19191919&sh=ABCDABCDABCDABCDABCDABCDABCDABCD.
 * Values are URL-encoded (a space as '+').
 *
 * A reply is trusted for nothing: it is refused (a failed call, with why)
 * when it is longer than LODE_PN_REPLY_MAX, holds a NUL byte, a line that
 * is not name=value, more than LODE_PN_FIELDS_MAX fields, no ==END==, or
 * lacks pnErrorResult (a number) or pnErrorDetail. Lines end at LF (a CR
 * before it is dropped); a CR within a value is a line break of the value,
 * as in PrimeNet's clients; a value longer than LODE_PN_VALUE_MAX - 1
 * bytes is cut; the first of two fields of one name counts. */
#ifndef LODE_PRIMENET_PROTOCOL_H
#define LODE_PRIMENET_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

#define LODE_PN_REPLY_MAX (64 * 1024)
#define LODE_PN_FIELDS_MAX 48
#define LODE_PN_NAME_MAX 32
#define LODE_PN_VALUE_MAX 512
#define LODE_PN_API_VERSION "0.95"
#define LODE_PN_UNTRUSTED_SALT "19191919"
#define LODE_PN_UNTRUSTED_HASH "ABCDABCDABCDABCDABCDABCDABCDABCD"

/* The error codes the client acts on (PrimeNet's primenet.h). */
enum {
    LODE_PN_OK = 0,
    LODE_PN_SERVER_BUSY = 3,
    LODE_PN_INVALID_VERSION = 4,
    LODE_PN_INVALID_TRANSACTION = 5,
    LODE_PN_INVALID_PARAMETER = 7,
    LODE_PN_ACCESS_DENIED = 9,
    LODE_PN_DATABASE_CORRUPT = 11,
    LODE_PN_DATABASE_FULL = 13,
    LODE_PN_INVALID_USER = 21,
    LODE_PN_UNREGISTERED_CPU = 30,
    LODE_PN_OBSOLETE_CLIENT = 31,
    LODE_PN_STALE_CPU_INFO = 32,
    LODE_PN_CPU_IDENTITY_MISMATCH = 33,
    LODE_PN_CPU_CONFIGURATION_MISMATCH = 34,
    LODE_PN_NO_ASSIGNMENT = 40,
    LODE_PN_INVALID_ASSIGNMENT_KEY = 43,
    LODE_PN_INVALID_ASSIGNMENT_TYPE = 44,
    LODE_PN_INVALID_RESULT_TYPE = 45,
    LODE_PN_INVALID_WORK_TYPE = 46,
    LODE_PN_WORK_NO_LONGER_NEEDED = 47,
    LODE_PN_ILLEGAL_RESIDUE = 48,
};

/* A query being built (malloc'ed text). */
typedef struct lode_pn_query {
    char *text;
    size_t len, cap;
    bool failed; /* out of memory: lode_pn_query_finish returns NULL */
} lode_pn_query;

/* px, v, t and g (guid NULL: no g). */
void lode_pn_query_start(lode_pn_query *q, const char *t, const char *guid);
/* &name=value, value URL-encoded. */
void lode_pn_query_add(lode_pn_query *q, const char *name, const char *value);
void lode_pn_query_addf(lode_pn_query *q, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds ss and sh; the whole query (owned by q), or NULL when out of memory. */
const char *lode_pn_query_finish(lode_pn_query *q);
void lode_pn_query_free(lode_pn_query *q);

/* Appends value URL-encoded to out[0..cap) at *used (A-Z a-z 0-9 - _ . ~
 * kept, a space as '+', every other byte %XX): false when it does not
 * fit. */
bool lode_pn_url_encode(const char *value, char *out, size_t cap, size_t *used);

typedef struct lode_pn_field {
    char name[LODE_PN_NAME_MAX];
    char value[LODE_PN_VALUE_MAX];
} lode_pn_field;

typedef struct lode_pn_reply {
    int code;                       /* pnErrorResult */
    char detail[LODE_PN_VALUE_MAX]; /* pnErrorDetail as sent */
    size_t count;                   /* fields, pnErrorResult and pnErrorDetail among them */
    lode_pn_field fields[LODE_PN_FIELDS_MAX];
} lode_pn_reply;

/* Parses a reply body. 0, or -1 with why in err (the reply shown escaped,
 * cut). */
int lode_pn_reply_parse(const char *body, size_t len, lode_pn_reply *r, char *err, size_t err_len);
/* A field's value, or NULL. */
const char *lode_pn_reply_get(const lode_pn_reply *r, const char *name);

/* What a code means, for messages ("invalid assignment key"). */
const char *lode_pn_error_text(int code);

#endif
