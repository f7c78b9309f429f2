/* Stratum transport: one TCP or TLS connection to a pool, read as lines.
 *
 * Every wait is bounded by a timeout, and a wake-up pipe lets another thread
 * interrupt a read at once (a share to submit, a stop). Nothing here
 * allocates in proportion to what the peer sends: a line longer than
 * LODE_STRATUM_LINE_MAX is an error that ends the connection. */
#ifndef LODE_STRATUM_CONN_H
#define LODE_STRATUM_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/stratum/stratum_msg.h"

/* A pool URL, the one parser of them (the command line, config files and
 * the stratum client all come here):
 *   stratum+tcp://HOST:PORT                     plain TCP
 *   stratum+ssl://, stratum+tls://, stratum+tcps://   TLS
 *   HOST:PORT                                   no scheme: stratum+tcp
 *   [IPv6]:PORT in any of them                  stratum+tcp://[::1]:3333
 *   USER:PASS@ or USER@ before the host         credentials (cpuminer's habit);
 *                                               PASS runs to the last '@', so it
 *                                               may hold ':' and '@'; percent
 *                                               escapes decoded (url_userinfo.h)
 * A trailing "/" is allowed. */
#define LODE_STRATUM_CRED_MAX 256
typedef struct lode_stratum_url {
    bool tls;
    char host[LODE_STRATUM_HOST_MAX];
    char port[8];
    bool has_user, has_pass;          /* credentials were in the URL */
    char user[LODE_STRATUM_CRED_MAX];
    char pass[LODE_STRATUM_CRED_MAX];
} lode_stratum_url;

/* Returns 0, or -1 with a reason (unknown scheme, no port, ...). The reason
 * never quotes the credentials. */
int lode_stratum_url_parse(const char *url, lode_stratum_url *out, char *err, size_t err_len);
/* "stratum+tcp://host:port" back from the parts, without the credentials
 * (what is logged). */
void lode_stratum_url_format(const lode_stratum_url *url, char *out, size_t out_len);
/* A proxy URL as it may be logged: "socks5://host:port", any "user:pass@"
 * left out. */
void lode_stratum_proxy_display(const char *proxy, char *out, size_t out_len);
/* 0 if proxy is a proxy URL lode can use (socks5://, socks5h://,
 * socks4://, socks4a://, http://, with a host, USER:PASS@ read as in pool
 * URLs); -1 with a reason. */
int lode_stratum_proxy_check(const char *proxy, char *err, size_t err_len);

/* A certificate pin: the SHA-256 of the leaf certificate's DER, 64 hex digits,
 * colons between bytes allowed. Returns 0, or -1 if it is not one. */
int lode_stratum_pin_parse(const char *pin, uint8_t sha256[32]);

/* A self-pipe: signal from any thread, poll the read end, drain after waking. */
typedef struct lode_wake {
    int fds[2];
} lode_wake;
int lode_wake_init(lode_wake *w);
void lode_wake_signal(lode_wake *w);
void lode_wake_drain(lode_wake *w);
void lode_wake_destroy(lode_wake *w);

typedef struct lode_stratum_conn lode_stratum_conn;

/* Connects (each address getaddrinfo gives, non-blocking, within timeout_s;
 * or through proxy, when not NULL/"": a SOCKS5, SOCKS4 or HTTP CONNECT proxy that
 * libcurl reaches, within the same time) and, for TLS, completes the handshake and checks the certificate: without
 * a pin, the chain against the system store and the host name; with a pin
 * (cert_pin not NULL/""), exactly that certificate. cancel (may be NULL) is
 * polled every 50 ms so a stop is prompt. Name resolution itself is
 * blocking (getaddrinfo has no timeout). Returns NULL with a reason. */
lode_stratum_conn *lode_stratum_conn_open(const lode_stratum_url *url, const char *cert_pin,
                                          const char *proxy, double timeout_s, const atomic_bool *cancel, char *err,
                                          size_t err_len);

typedef enum lode_conn_status {
    LODE_CONN_ERROR = -1,    /* the connection is dead (closed, reset, over-long line) */
    LODE_CONN_TIMEOUT = 0,   /* nothing within the timeout */
    LODE_CONN_LINE = 1,      /* *line holds one line */
    LODE_CONN_WOKEN = 2,     /* the wake pipe became readable (not drained) */
} lode_conn_status;

/* Waits up to timeout_s for one whole line. *line points into the
 * connection's buffer (NUL-terminated, newline stripped) and stays valid
 * until the next call. wake may be NULL. */
lode_conn_status lode_stratum_conn_read_line(lode_stratum_conn *c, const lode_wake *wake,
                                             double timeout_s, const char **line, size_t *len,
                                             char *err, size_t err_len);
/* Writes all of data within timeout_s. Returns 0, or -1 with a reason. */
int lode_stratum_conn_write(lode_stratum_conn *c, const char *data, size_t len, double timeout_s,
                            char *err, size_t err_len);
/* Over-long lines this connection refused (0 or 1: the first ends it). */
unsigned lode_stratum_conn_overlong_lines(const lode_stratum_conn *c);
void lode_stratum_conn_close(lode_stratum_conn *c);
/* -P (--protocol-dump): log every line read and written, as
 * lode_stratum_masked_line shows it (any thread; off by default). */
void lode_stratum_set_protocol_dump(bool on);

#endif
