#include "core/stratum/stratum_conn.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/errmsg.h"
#include "core/base/hex.h"
#include "core/base/log.h"
#include "core/stratum/url_userinfo.h"

struct lode_stratum_conn {
    int fd;
    CURL *proxy;  /* through a proxy: the handle owns fd (curl closes it) */
    SSL_CTX *ctx;
    SSL *ssl;
    const atomic_bool *cancel;
    /* Received bytes not yet returned; one line at most plus what follows it. */
    char buf[LODE_STRATUM_LINE_MAX + 2];
    size_t buf_len;
    size_t consumed; /* bytes of the last returned line, dropped at the next read */
    unsigned overlong;
    char peer[LODE_STRATUM_HOST_MAX + 16]; /* host:port, for -P */
};

static atomic_bool protocol_dump;

void lode_stratum_set_protocol_dump(bool on) { atomic_store(&protocol_dump, on); }

/* -P: one line of the traffic ("<": from the pool, ">": to it), masked. */
static void dump_line(const lode_stratum_conn *c, const char *direction, const char *line, size_t len)
{
    if (!atomic_load_explicit(&protocol_dump, memory_order_relaxed))
        return;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    char *shown = lode_stratum_masked_line(line, len);
    lode_log(LODE_LOG_INFO, "stratum %s %s %s", c->peer, direction, shown ? shown : "(out of memory)");
    free(shown);
}

/* The schemes of pool URLs; a URL without "://" is stratum+tcp. */
static const struct {
    const char *prefix;
    bool tls;
} url_schemes[] = {
    {"stratum+tcp://", false},
    {"stratum+ssl://", true},
    {"stratum+tls://", true},
    {"stratum+tcps://", true}, /* some pools and miners write TLS so */
};

#define URL_TEXT_MAX 2048

static bool has_control(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return true;
    return false;
}

int lode_stratum_url_parse(const char *url, lode_stratum_url *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    if (url == NULL || *url == '\0')
        return lode_fail(err, err_len, "no pool URL");
    if (strlen(url) > URL_TEXT_MAX)
        return lode_fail(err, err_len, "pool URL longer than %d characters", URL_TEXT_MAX);
    const char *rest = url;
    const char *sep = strstr(url, "://");
    if (sep != NULL) {
        size_t i = 0, n = sizeof url_schemes / sizeof url_schemes[0];
        while (i < n && strncmp(url, url_schemes[i].prefix, strlen(url_schemes[i].prefix)) != 0)
            i++;
        if (i == n) {
            int shown = sep - url < 32 ? (int)(sep - url) : 32;
            return lode_fail(err, err_len,
                        "pool URL scheme '%.*s://' is not stratum+tcp://, stratum+ssl://, stratum+tls:// or "
                        "stratum+tcps:// (a node for solo mining is http://)",
                        shown, url);
        }
        rest = url + strlen(url_schemes[i].prefix);
        out->tls = url_schemes[i].tls;
    }
    /* user[:pass]@ : the password runs to the last '@' (a host has none). */
    const char *at = strrchr(rest, '@');
    if (at != NULL) {
        if (lode_stratum_userinfo_parse(rest, (size_t)(at - rest), "pool URL", out->user, out->pass,
                                        LODE_STRATUM_CRED_MAX, &out->has_pass, err, err_len) != 0) {
            memset(out, 0, sizeof *out); /* no credential left behind */
            return -1;
        }
        out->has_user = true;
        rest = at + 1;
    }
    /* Messages quote the host part only: never the credentials. */
    const char *host_begin = rest, *host_end, *port;
    if (*rest == '[') { /* IPv6 literal */
        host_begin = rest + 1;
        host_end = strchr(host_begin, ']');
        if (host_end == NULL || host_end[1] != ':')
            return lode_fail(err, err_len, "pool URL '%.80s': bad [IPv6]:port", rest);
        port = host_end + 2;
    } else {
        host_end = strrchr(rest, ':');
        if (host_end == NULL)
            return lode_fail(err, err_len, "pool URL '%.80s' has no :port", rest);
        port = host_end + 1;
    }
    size_t host_len = (size_t)(host_end - host_begin);
    if (host_len == 0 || host_len >= sizeof out->host)
        return lode_fail(err, err_len, "pool URL '%.80s': host empty or too long", rest);
    for (const char *c = host_begin; c < host_end; c++)
        if (*c == '/' || *c == '@' || *c == ' ' || (unsigned char)*c < 0x20 || (*c == ':' && *rest != '['))
            return lode_fail(err, err_len, "pool URL '%.80s': invalid host", rest);
    memcpy(out->host, host_begin, host_len);
    char *end;
    errno = 0;
    long p = strtol(port, &end, 10);
    /* A trailing "/" is common in copied URLs; anything else after the port is not. */
    if (end == port || *port < '0' || *port > '9' || (*end != '\0' && strcmp(end, "/") != 0) || p < 1 ||
        p > 65535 || errno)
        return lode_fail(err, err_len, "pool URL '%.80s': port must be 1..65535", rest);
    snprintf(out->port, sizeof out->port, "%ld", p);
    return 0;
}

void lode_stratum_url_format(const lode_stratum_url *url, char *out, size_t out_len)
{
    bool v6 = strchr(url->host, ':') != NULL;
    snprintf(out, out_len, "stratum+%s://%s%s%s:%s", url->tls ? "ssl" : "tcp", v6 ? "[" : "",
             url->host, v6 ? "]" : "", url->port);
}

static const char *const proxy_schemes[] = {"socks5://", "socks5h://", "socks4://", "socks4a://", "http://"};

void lode_stratum_proxy_display(const char *proxy, char *out, size_t out_len)
{
    if (proxy == NULL) {
        snprintf(out, out_len, "(none)");
        return;
    }
    const char *sep = strstr(proxy, "://");
    const char *host = sep ? sep + 3 : proxy;
    const char *at = strrchr(host, '@');
    snprintf(out, out_len, "%.*s%.200s", sep ? (int)(host - proxy) : 0, proxy, at ? at + 1 : host);
}

int lode_stratum_proxy_check(const char *proxy, char *err, size_t err_len)
{
    if (proxy == NULL || *proxy == '\0')
        return lode_fail(err, err_len, "empty proxy URL");
    if (strlen(proxy) > URL_TEXT_MAX)
        return lode_fail(err, err_len, "proxy URL longer than %d characters", URL_TEXT_MAX);
    char shown[256];
    lode_stratum_proxy_display(proxy, shown, sizeof shown);
    const char *host = NULL;
    for (size_t i = 0; i < sizeof proxy_schemes / sizeof proxy_schemes[0]; i++)
        if (strncmp(proxy, proxy_schemes[i], strlen(proxy_schemes[i])) == 0)
            host = proxy + strlen(proxy_schemes[i]);
    if (host == NULL)
        return lode_fail(err, err_len, "proxy '%s' must start with socks5://, socks5h://, socks4://, socks4a:// or http://",
                    shown);
    if (has_control(proxy, strlen(proxy)))
        return lode_fail(err, err_len, "proxy URL holds control characters");
    const char *at = strrchr(host, '@');
    if (at != NULL) {
        char user[LODE_STRATUM_CRED_MAX], pass[LODE_STRATUM_CRED_MAX];
        bool has_pass;
        int rc = lode_stratum_userinfo_parse(host, (size_t)(at - host), "proxy URL", user, pass, sizeof user,
                                             &has_pass, err, err_len);
        memset(pass, 0, sizeof pass);
        if (rc != 0)
            return -1;
        host = at + 1;
    }
    if (*host == '\0' || *host == ':' || *host == '/')
        return lode_fail(err, err_len, "proxy '%s' has no host", shown);
    return 0;
}

int lode_stratum_pin_parse(const char *pin, uint8_t sha256[32])
{
    if (pin == NULL)
        return -1;
    char hex[65];
    size_t n = 0;
    for (const char *c = pin; *c; c++) {
        if (*c == ':')
            continue;
        if (n == 64)
            return -1;
        hex[n++] = *c;
    }
    hex[n] = '\0';
    return n == 64 && lode_hex_decode(hex, sha256, 32) == 0 ? 0 : -1;
}

int lode_wake_init(lode_wake *w)
{
    if (pipe(w->fds) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        fcntl(w->fds[i], F_SETFL, fcntl(w->fds[i], F_GETFL) | O_NONBLOCK);
        fcntl(w->fds[i], F_SETFD, FD_CLOEXEC);
    }
    return 0;
}

void lode_wake_signal(lode_wake *w)
{
    char b = 1;
    /* A full pipe already wakes the reader: a failed write loses nothing. */
    ssize_t r = write(w->fds[1], &b, 1);
    (void)r;
}

void lode_wake_drain(lode_wake *w)
{
    char b[64];
    while (read(w->fds[0], b, sizeof b) > 0) {
    }
}

void lode_wake_destroy(lode_wake *w)
{
    close(w->fds[0]);
    close(w->fds[1]);
    w->fds[0] = w->fds[1] = -1;
}

/* OpenSSL writes with write(2), which raises SIGPIPE on a closed socket and
 * would kill a program that did not ignore it. A library must not change the
 * process's handlers, so block SIGPIPE on this thread around TLS writes and
 * swallow the one a failed write left pending (as libpq and curl do). */
typedef struct sigpipe_guard {
    sigset_t old;
    bool was_pending;
} sigpipe_guard;

static void sigpipe_block(sigpipe_guard *g)
{
    sigset_t pipe_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigpending(&pending);
    g->was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &g->old);
}

static void sigpipe_restore(sigpipe_guard *g)
{
    sigset_t pipe_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigpending(&pending);
    if (!g->was_pending && sigismember(&pending, SIGPIPE)) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static bool cancelled(const atomic_bool *cancel)
{
    return cancel != NULL && atomic_load(cancel);
}

/* Waits for events on fd until deadline, in 50 ms slices so cancel is seen.
 * Returns 1 ready, 0 timeout, -1 cancelled or poll failure. */
static int wait_fd(int fd, short events, double deadline, const atomic_bool *cancel)
{
    for (;;) {
        if (cancelled(cancel))
            return -1;
        double left = deadline - lode_clock_s();
        if (left <= 0)
            return 0;
        int ms = left > 0.05 ? 50 : (int)(left * 1000) + 1;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, ms);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

static int connect_tcp(const lode_stratum_url *url, double deadline, const atomic_bool *cancel,
                       char *err, size_t err_len)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *list = NULL;
    int gai = getaddrinfo(url->host, url->port, &hints, &list);
    if (gai != 0)
        return lode_fail(err, err_len, "cannot resolve %s: %s", url->host, gai_strerror(gai));
    int fd = -1;
    char last[160] = "no address";
    for (struct addrinfo *a = list; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            snprintf(last, sizeof last, "socket: %s", strerror(errno));
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
            snprintf(last, sizeof last, "%s", strerror(errno));
            close(fd);
            fd = -1;
            continue;
        }
        int w = wait_fd(fd, POLLOUT, deadline, cancel);
        int so_error = 0;
        socklen_t so_len = sizeof so_error;
        if (w <= 0) {
            snprintf(last, sizeof last, "%s", w == 0 ? "timed out" : "cancelled");
        } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &so_len) != 0 || so_error != 0) {
            snprintf(last, sizeof last, "%s", strerror(so_error ? so_error : errno));
            w = 0;
        }
        if (w <= 0) {
            close(fd);
            fd = -1;
            if (cancelled(cancel))
                break;
        }
    }
    freeaddrinfo(list);
    if (fd < 0)
        return lode_fail(err, err_len, "cannot connect to %s:%s: %s", url->host, url->port, last);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    return fd;
}

static void openssl_reason(char *out, size_t out_len)
{
    unsigned long e = ERR_get_error();
    if (e == 0)
        snprintf(out, out_len, "connection closed during the handshake");
    else
        ERR_error_string_n(e, out, out_len);
    ERR_clear_error();
}

/* Drives an SSL call that may want to read or write, until deadline. */
static int ssl_wait(SSL *ssl, int fd, int ret, double deadline, const atomic_bool *cancel)
{
    int e = SSL_get_error(ssl, ret);
    if (e == SSL_ERROR_WANT_READ)
        return wait_fd(fd, POLLIN, deadline, cancel);
    if (e == SSL_ERROR_WANT_WRITE)
        return wait_fd(fd, POLLOUT, deadline, cancel);
    return -2; /* a real error */
}

static int tls_handshake(lode_stratum_conn *c, const lode_stratum_url *url, const char *cert_pin,
                         double deadline, char *err, size_t err_len)
{
    uint8_t pin[32];
    bool pinned = cert_pin != NULL && cert_pin[0] != '\0';
    if (pinned && lode_stratum_pin_parse(cert_pin, pin) != 0)
        return lode_fail(err, err_len, "certificate pin must be 64 hex digits (SHA-256 of the certificate)");
    c->ctx = SSL_CTX_new(TLS_client_method());
    if (c->ctx == NULL)
        return lode_fail(err, err_len, "cannot create a TLS context");
    SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(c->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (!pinned)
        SSL_CTX_set_default_verify_paths(c->ctx);
    /* Verification runs in full but does not abort the handshake: the result
     * is checked below, so the error can show the certificate seen. */
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_NONE, NULL);
    c->ssl = SSL_new(c->ctx);
    if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1)
        return lode_fail(err, err_len, "cannot create a TLS session");
    struct in6_addr addr6;
    struct in_addr addr4;
    bool is_ip = inet_pton(AF_INET, url->host, &addr4) == 1 || inet_pton(AF_INET6, url->host, &addr6) == 1;
    if (!is_ip)
        SSL_set_tlsext_host_name(c->ssl, url->host); /* SNI: names only, never addresses */
    if (!pinned) {
        if (is_ip)
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), url->host);
        else
            SSL_set1_host(c->ssl, url->host);
    }
    for (;;) {
        sigpipe_guard guard;
        sigpipe_block(&guard);
        int r = SSL_connect(c->ssl);
        sigpipe_restore(&guard);
        if (r == 1)
            break;
        int w = ssl_wait(c->ssl, c->fd, r, deadline, c->cancel);
        if (w == 1)
            continue;
        char why[200];
        if (w == -2)
            openssl_reason(why, sizeof why);
        else
            snprintf(why, sizeof why, "%s", w == 0 ? "timed out" : "cancelled");
        return lode_fail(err, err_len, "TLS handshake with %s:%s failed: %s", url->host, url->port, why);
    }
    X509 *cert = SSL_get1_peer_certificate(c->ssl);
    if (cert == NULL)
        return lode_fail(err, err_len, "TLS: %s:%s sent no certificate", url->host, url->port);
    uint8_t seen[32];
    unsigned seen_len = 0;
    int digest_ok = X509_digest(cert, EVP_sha256(), seen, &seen_len);
    X509_free(cert);
    if (!digest_ok || seen_len != 32)
        return lode_fail(err, err_len, "TLS: cannot hash the certificate");
    char seen_hex[65];
    lode_hex_encode(seen, 32, seen_hex);
    if (pinned) {
        if (memcmp(seen, pin, 32) != 0)
            return lode_fail(err, err_len, "TLS: %s:%s presented certificate sha256 %s, not the pinned one",
                        url->host, url->port, seen_hex);
        return 0;
    }
    long verify = SSL_get_verify_result(c->ssl);
    if (verify != X509_V_OK)
        return lode_fail(err, err_len,
                    "TLS: certificate of %s:%s not trusted (%s); to trust exactly this certificate, pin sha256 %s",
                    url->host, url->port, X509_verify_cert_error_string(verify), seen_hex);
    return 0;
}

/* Stops curl's connect when lode stops (curl calls this at least once a
 * second while it waits). */
static int proxy_progress(void *cancel, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                          curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    return cancelled(cancel) ? 1 : 0;
}

/* curl_global_init once per process, before the first handle (thread-safe
 * in the libcurl of Debian 12; the once guards older ones within lode). */
static void init_curl(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* A TCP connection to url's host and port through proxy, made by libcurl
 * (connect-only: curl does the SOCKS5, SOCKS4 or HTTP CONNECT handshake, then hands
 * over the socket, on which the stratum or TLS bytes go as without a
 * proxy). socks5:// resolves the pool's name here, socks5h:// at the proxy. */
static int connect_proxy(lode_stratum_conn *c, const lode_stratum_url *url, const char *proxy,
                         double timeout_s, char *err, size_t err_len)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_curl);
    char shown[256];
    lode_stratum_proxy_display(proxy, shown, sizeof shown);
    c->proxy = curl_easy_init();
    if (c->proxy == NULL)
        return lode_fail(err, err_len, "libcurl could not start");
    /* The target as an http:// URL only names host and port: with
     * CONNECT_ONLY nothing is sent to it but the bytes lode writes. */
    bool v6 = strchr(url->host, ':') != NULL;
    char target[LODE_STRATUM_HOST_MAX + 32];
    snprintf(target, sizeof target, "http://%s%s%s:%s/", v6 ? "[" : "", url->host, v6 ? "]" : "", url->port);
    char curl_err[CURL_ERROR_SIZE] = "";
    long timeout_ms = timeout_s > 0 ? (long)(timeout_s * 1000) : 15000;
    CURL *h = c->proxy;
    curl_easy_setopt(h, CURLOPT_URL, target);
    /* The credentials go apart, decoded: libcurl's URL parser refuses a raw
     * '/' or '@' in them, and its messages quote the URL it was given. */
    char user[LODE_STRATUM_CRED_MAX], pass[LODE_STRATUM_CRED_MAX];
    bool has_pass = false;
    const char *scheme_end = strstr(proxy, "://") + 3; /* lode_stratum_proxy_check passed it */
    const char *at = strrchr(scheme_end, '@');
    if (at != NULL && lode_stratum_userinfo_parse(scheme_end, (size_t)(at - scheme_end), "proxy URL", user, pass,
                                                  sizeof user, &has_pass, err, err_len) != 0)
        return -1;
    char without_credentials[URL_TEXT_MAX + 1];
    snprintf(without_credentials, sizeof without_credentials, "%.*s%s", (int)(scheme_end - proxy), proxy,
             at ? at + 1 : scheme_end);
    curl_easy_setopt(h, CURLOPT_PROXY, without_credentials);
    if (at != NULL) {
        curl_easy_setopt(h, CURLOPT_PROXYUSERNAME, user);
        curl_easy_setopt(h, CURLOPT_PROXYPASSWORD, has_pass ? pass : "");
    }
    curl_easy_setopt(h, CURLOPT_NOPROXY, "");         /* no_proxy from the environment does not apply */
    curl_easy_setopt(h, CURLOPT_HTTPPROXYTUNNEL, 1L);  /* an http:// proxy: CONNECT host:port */
    curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, proxy_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)c->cancel);
    CURLcode rc = curl_easy_perform(h);
    memset(pass, 0, sizeof pass);
    if (rc != CURLE_OK) {
        if (cancelled(c->cancel))
            return lode_fail(err, err_len, "cancelled");
        return lode_fail(err, err_len, "cannot connect to %s:%s through proxy %s: %s", url->host, url->port, shown,
                    curl_err[0] ? curl_err : curl_easy_strerror(rc));
    }
    curl_socket_t fd = CURL_SOCKET_BAD;
    if (curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD)
        return lode_fail(err, err_len, "proxy %s: libcurl gave no socket", shown);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return (int)fd;
}

lode_stratum_conn *lode_stratum_conn_open(const lode_stratum_url *url, const char *cert_pin,
                                          const char *proxy, double timeout_s, const atomic_bool *cancel,
                                          char *err, size_t err_len)
{
    lode_stratum_conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        lode_fail(err, err_len, "out of memory");
        return NULL;
    }
    c->cancel = cancel;
    snprintf(c->peer, sizeof c->peer, "%s:%s", url->host, url->port);
    double deadline = lode_clock_s() + timeout_s;
    if (proxy != NULL && proxy[0] != '\0')
        c->fd = connect_proxy(c, url, proxy, timeout_s, err, err_len);
    else
        c->fd = connect_tcp(url, deadline, cancel, err, err_len);
    if (c->fd < 0) {
        lode_stratum_conn_close(c);
        return NULL;
    }
    if (url->tls && tls_handshake(c, url, cert_pin, deadline, err, err_len) != 0) {
        lode_stratum_conn_close(c);
        return NULL;
    }
    return c;
}

/* One non-blocking read into the buffer: >0 bytes, 0 would block, -1 closed/error. */
static int read_some(lode_stratum_conn *c, short *want, char *err, size_t err_len)
{
    size_t room = sizeof c->buf - 1 - c->buf_len;
    *want = POLLIN;
    if (c->ssl != NULL) {
        sigpipe_guard guard; /* a read may write (key updates, alerts) */
        sigpipe_block(&guard);
        int r = SSL_read(c->ssl, c->buf + c->buf_len, (int)room);
        sigpipe_restore(&guard);
        if (r > 0)
            return r;
        int e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_READ)
            return 0;
        if (e == SSL_ERROR_WANT_WRITE) {
            *want = POLLOUT;
            return 0;
        }
        if (e == SSL_ERROR_ZERO_RETURN)
            return lode_fail(err, err_len, "the pool closed the connection");
        char why[200];
        openssl_reason(why, sizeof why);
        return lode_fail(err, err_len, "TLS read failed: %s", why);
    }
    ssize_t r = recv(c->fd, c->buf + c->buf_len, room, 0);
    if (r > 0)
        return (int)r;
    if (r == 0)
        return lode_fail(err, err_len, "the pool closed the connection");
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return 0;
    return lode_fail(err, err_len, "read failed: %s", strerror(errno));
}

lode_conn_status lode_stratum_conn_read_line(lode_stratum_conn *c, const lode_wake *wake,
                                             double timeout_s, const char **line, size_t *len,
                                             char *err, size_t err_len)
{
    if (c->consumed > 0) {
        memmove(c->buf, c->buf + c->consumed, c->buf_len - c->consumed);
        c->buf_len -= c->consumed;
        c->consumed = 0;
    }
    double deadline = lode_clock_s() + timeout_s;
    size_t scanned = 0;
    for (;;) {
        char *nl = memchr(c->buf + scanned, '\n', c->buf_len - scanned);
        if (nl != NULL) {
            size_t n = (size_t)(nl - c->buf);
            c->consumed = n + 1;
            while (n > 0 && c->buf[n - 1] == '\r')
                n--;
            c->buf[n] = '\0';
            *line = c->buf;
            *len = n;
            dump_line(c, "<", c->buf, n);
            return LODE_CONN_LINE;
        }
        scanned = c->buf_len;
        if (c->buf_len > LODE_STRATUM_LINE_MAX) {
            c->overlong++;
            lode_fail(err, err_len, "the pool sent a line longer than %d bytes", LODE_STRATUM_LINE_MAX);
            return LODE_CONN_ERROR;
        }
        short want;
        int r = read_some(c, &want, err, err_len);
        if (r < 0)
            return LODE_CONN_ERROR;
        if (r > 0) {
            c->buf_len += (size_t)r;
            continue;
        }
        double left = deadline - lode_clock_s();
        if (left <= 0)
            return LODE_CONN_TIMEOUT;
        struct pollfd p[2] = {{.fd = c->fd, .events = want}, {.fd = wake ? wake->fds[0] : -1, .events = POLLIN}};
        int pr = poll(p, 2, (int)(left * 1000) + 1);
        if (pr < 0 && errno != EINTR) {
            lode_fail(err, err_len, "poll failed: %s", strerror(errno));
            return LODE_CONN_ERROR;
        }
        if (pr > 0 && (p[1].revents & POLLIN))
            return LODE_CONN_WOKEN;
    }
}

int lode_stratum_conn_write(lode_stratum_conn *c, const char *data, size_t len, double timeout_s,
                            char *err, size_t err_len)
{
    double deadline = lode_clock_s() + timeout_s;
    size_t done = 0;
    while (done < len) {
        short want = POLLOUT;
        if (c->ssl != NULL) {
            sigpipe_guard guard;
            sigpipe_block(&guard);
            int r = SSL_write(c->ssl, data + done, (int)(len - done));
            sigpipe_restore(&guard);
            if (r > 0) {
                done += (size_t)r;
                continue;
            }
            int e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_WANT_READ) {
                want = POLLIN;
            } else if (e != SSL_ERROR_WANT_WRITE) {
                char why[200];
                openssl_reason(why, sizeof why);
                return lode_fail(err, err_len, "TLS write failed: %s", why);
            }
        } else {
            ssize_t r = send(c->fd, data + done, len - done, MSG_NOSIGNAL);
            if (r > 0) {
                done += (size_t)r;
                continue;
            }
            if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                return lode_fail(err, err_len, "write failed: %s", strerror(errno));
        }
        int w = wait_fd(c->fd, want, deadline, c->cancel);
        if (w <= 0)
            return lode_fail(err, err_len, "write %s", w == 0 ? "timed out" : "cancelled");
    }
    dump_line(c, ">", data, len);
    return 0;
}

unsigned lode_stratum_conn_overlong_lines(const lode_stratum_conn *c)
{
    return c->overlong;
}

void lode_stratum_conn_close(lode_stratum_conn *c)
{
    if (c == NULL)
        return;
    if (c->ssl != NULL) {
        /* Best effort close_notify; the socket is non-blocking so this cannot hang. */
        if (SSL_is_init_finished(c->ssl)) {
            sigpipe_guard guard;
            sigpipe_block(&guard);
            SSL_shutdown(c->ssl);
            sigpipe_restore(&guard);
        }
        SSL_free(c->ssl);
    }
    SSL_CTX_free(c->ctx);
    ERR_clear_error();
    if (c->proxy != NULL)
        curl_easy_cleanup(c->proxy); /* closes the socket */
    else if (c->fd >= 0)
        close(c->fd);
    free(c);
}
