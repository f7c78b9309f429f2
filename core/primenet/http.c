#include "core/primenet/http.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/primenet/protocol.h"

static void init_curl(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static bool is_loopback_host(const char *host)
{
    if (strcasecmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 || strcmp(host, "::1") == 0)
        return true;
    struct in_addr a;
    return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* The scheme and host of url (curl's parser), or -1 with why. */
static int url_parts(const char *url, char *scheme, size_t scheme_len, char *host, size_t host_len, char *err,
                     size_t err_len)
{
    CURLU *u = curl_url();
    if (u == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    char *s = NULL, *h = NULL, *user = NULL, *query = NULL, *fragment = NULL;
    int rc = -1;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &s, 0) != CURLUE_OK || curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK) {
        snprintf(err, err_len, "'%s' is not a URL (want https://HOST/PATH)", url);
    } else if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
               curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK ||
               curl_url_get(u, CURLUPART_FRAGMENT, &fragment, 0) == CURLUE_OK) {
        snprintf(err, err_len, "'%s': no user, query (?) or fragment (#) in the server's URL", url);
    } else {
        snprintf(scheme, scheme_len, "%s", s);
        snprintf(host, host_len, "%s", h);
        rc = 0;
    }
    curl_free(s);
    curl_free(h);
    curl_free(user);
    curl_free(query);
    curl_free(fragment);
    curl_url_cleanup(u);
    return rc;
}

int lode_pn_url_check(const char *url, char *err, size_t err_len)
{
    char scheme[16], host[256];
    if (url == NULL || url_parts(url, scheme, sizeof scheme, host, sizeof host, err, err_len) != 0)
        return -1;
    if (strcasecmp(scheme, "https") == 0)
        return 0;
    if (strcasecmp(scheme, "http") == 0 && is_loopback_host(host))
        return 0;
    if (strcasecmp(scheme, "http") == 0)
        snprintf(err, err_len, "'%s': plain http:// only to a loopback address (127.0.0.0/8, ::1, localhost); "
                 "PrimeNet's is %s", url, LODE_PN_DEFAULT_URL);
    else
        snprintf(err, err_len, "'%s': want an https:// URL (PrimeNet's is %s)", url, LODE_PN_DEFAULT_URL);
    return -1;
}

typedef struct transfer {
    const lode_pn_http *h;
    char *data;
    size_t len;
    bool too_large, no_memory, stopped;
} transfer;

static size_t on_body(char *chunk, size_t size, size_t count, void *user)
{
    transfer *t = user;
    size_t n = size * count;
    if (n > LODE_PN_REPLY_MAX - t->len) {
        t->too_large = true;
        return 0; /* aborts the transfer */
    }
    char *grown = realloc(t->data, t->len + n + 1);
    if (grown == NULL) {
        t->no_memory = true;
        return 0;
    }
    memcpy(grown + t->len, chunk, n);
    t->data = grown;
    t->len += n;
    t->data[t->len] = '\0';
    return n;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    transfer *t = user;
    if (t->h->stop != NULL && t->h->stop(t->h->stop_user))
        t->stopped = true;
    return t->stopped ? 1 : 0;
}

static void set_options(CURL *c, const lode_pn_http *h, const char *url, transfer *t, char *curl_err, bool loopback)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "lode");
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, t);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(h->connect_timeout_s * 1000));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(h->timeout_s * 1000));
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    /* -x always applies: the user asked for it, whatever the server. */
    if (h->proxy != NULL && h->proxy[0] != '\0') {
        curl_easy_setopt(c, CURLOPT_PROXY, h->proxy);
        curl_easy_setopt(c, CURLOPT_NOPROXY, ""); /* no_proxy from the environment does not apply */
        if (h->proxy_user != NULL) {
            curl_easy_setopt(c, CURLOPT_PROXYUSERNAME, h->proxy_user);
            curl_easy_setopt(c, CURLOPT_PROXYPASSWORD, h->proxy_pass != NULL ? h->proxy_pass : "");
        }
    } else if (loopback) {
        curl_easy_setopt(c, CURLOPT_PROXY, ""); /* "": no proxy from the environment */
    }
}

int lode_pn_http_get(const lode_pn_http *h, const char *query, char **body, size_t *len, char *err,
                     size_t err_len)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_curl);
    *body = NULL;
    *len = 0;
    char scheme[16], host[256];
    if (url_parts(h->url, scheme, sizeof scheme, host, sizeof host, err, err_len) != 0)
        return -1;
    size_t url_len = strlen(h->url) + strlen(query) + 2;
    char *url = malloc(url_len);
    CURL *c = url != NULL ? curl_easy_init() : NULL;
    if (c == NULL) {
        free(url);
        snprintf(err, err_len, "libcurl could not start");
        return -1;
    }
    snprintf(url, url_len, "%s?%s", h->url, query);
    transfer t = {.h = h};
    char curl_err[CURL_ERROR_SIZE] = "";
    set_options(c, h, url, &t, curl_err, is_loopback_host(host));
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    free(url);
    int result = -1;
    if (t.stopped)
        snprintf(err, err_len, "stopped");
    else if (t.too_large)
        snprintf(err, err_len, "the reply is longer than %d bytes", LODE_PN_REPLY_MAX);
    else if (t.no_memory)
        snprintf(err, err_len, "out of memory reading the reply");
    else if (rc != CURLE_OK)
        snprintf(err, err_len, "%s", curl_err[0] ? curl_err : curl_easy_strerror(rc));
    else if (status < 200 || status > 299)
        snprintf(err, err_len, "HTTP status %ld", status);
    else
        result = 0;
    if (result == 0) {
        *body = t.data != NULL ? t.data : calloc(1, 1);
        *len = t.len;
        if (*body == NULL) {
            snprintf(err, err_len, "out of memory");
            result = -1;
        }
    } else {
        free(t.data);
    }
    return result;
}
