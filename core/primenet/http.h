/* PrimeNet's transport: one HTTP GET a transaction through libcurl.
 *
 * TLS is verified (peer and host name); http:// is only for a loopback
 * server (127.0.0.0/8, ::1, localhost: tests, a local mirror); no redirect
 * is followed; the reply is cut off past LODE_PN_REPLY_MAX bytes; a status
 * other than 2xx is a failed call. A stop request aborts a transfer within
 * a second (curl's progress callback). */
#ifndef LODE_PRIMENET_HTTP_H
#define LODE_PRIMENET_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#define LODE_PN_DEFAULT_URL "https://v5.mersenne.org/v5server/"

typedef struct lode_pn_http {
    const char *url;                 /* the server, e.g. LODE_PN_DEFAULT_URL */
    const char *proxy;               /* -x without credentials (used for any server); NULL: none */
    const char *proxy_user, *proxy_pass; /* NULL: none */
    double connect_timeout_s, timeout_s;
    bool (*stop)(void *user);        /* true: abort now; NULL: never */
    void *stop_user;
} lode_pn_http;

/* Whether url is one lode talks PrimeNet to: https://HOST[:PORT]/PATH, or
 * http:// to a loopback host; no user, query or fragment. 0, or -1 with
 * why in err. */
int lode_pn_url_check(const char *url, char *err, size_t err_len);

/* GET url?query. 0 with the reply body in *body (malloc'ed,
 * NUL-terminated; free it) and *len, or -1 with why in err. */
int lode_pn_http_get(const lode_pn_http *h, const char *query, char **body, size_t *len, char *err,
                     size_t err_len);

#endif
