/* JSON-RPC over HTTP to the node (libcurl), for the getblocktemplate job
 * source's threads: each brings its own CURL handle. */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/base/log.h"
#include "core/gbt/gbt_internal.h"

#define MAX_REPLY_BYTES (64u << 20)     /* a template with an MWEB block stays far below */

typedef struct reply_buffer {
    char *data;
    size_t len;
    bool too_large;
} reply_buffer;

static size_t on_body(char *chunk, size_t size, size_t count, void *user)
{
    reply_buffer *r = user;
    size_t n = size * count;
    if (n > MAX_REPLY_BYTES - r->len) {
        r->too_large = true;
        return 0; /* aborts the transfer */
    }
    char *grown = realloc(r->data, r->len + n + 1);
    if (!grown)
        return 0;
    memcpy(grown + r->len, chunk, n);
    r->data = grown;
    r->len += n;
    r->data[r->len] = '\0';
    return n;
}

/* One transfer's view of a stop: it aborts stop_grace_s after it first
 * sees the stop (0: at once). */
typedef struct transfer {
    lode_gbt *g;
    double stop_grace_s;
    bool stop_seen;
    struct timespec stop_at;
} transfer;

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    transfer *t = user;
    if (!atomic_load(&t->g->stopping))
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!t->stop_seen) {
        t->stop_seen = true;
        t->stop_at = now;
    }
    double waited = (double)(now.tv_sec - t->stop_at.tv_sec) + (now.tv_nsec - t->stop_at.tv_nsec) / 1e9;
    return waited >= t->stop_grace_s ? 1 : 0;
}

int lode_gbt_read_cookie(const char *path, char *out, size_t out_len, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len, "cannot read the cookie file %s: %s", path, strerror(errno));
        return -1;
    }
    size_t n = fread(out, 1, out_len - 1, f);
    fclose(f);
    out[n] = '\0';
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
        out[--n] = '\0';
    if (!strchr(out, ':')) {
        snprintf(err, err_len, "the cookie file %s does not hold user:password", path);
        return -1;
    }
    return 0;
}

/* "user:pass" from the configuration or the cookie file. */
static int credentials(lode_gbt *g, char *out, size_t out_len, char *err, size_t err_len)
{
    if (g->user) {
        snprintf(out, out_len, "%s:%s", g->user, g->pass ? g->pass : "");
        return 0;
    }
    return lode_gbt_read_cookie(g->cookie_file, out, out_len, err, err_len);
}


/* Calls method(params) and returns its result (a new reference; JSON null
 * for a null result) or NULL with err filled; *node_code gets the JSON-RPC
 * error code when the node answered with an error. params is stolen. A stop
 * aborts the call after stop_grace_s (0: at once). */
/* The result of a completed HTTP exchange (a new reference), or NULL with
 * *status and err: the node's error, a refusal, or a broken reply. */
static json_t *read_reply(const reply_buffer *reply, long http_code, const char *method, rpc_status *status,
                          int *node_code, char *err, size_t err_len)
{
    json_t *result = NULL;
    json_error_t jerr;
    json_t *root = reply->data ? json_loadb(reply->data, reply->len, 0, &jerr) : NULL;
    const json_t *error = root ? json_object_get(root, "error") : NULL;
    if (error && !json_is_null(error)) {
        const json_t *code = json_object_get(error, "code");
        const json_t *message = json_object_get(error, "message");
        *node_code = json_is_integer(code) ? (int)json_integer_value(code) : 0;
        char text[201];
        lode_log_printable(text, sizeof text,
                           json_is_string(message) ? json_string_value(message) : "(no message)");
        snprintf(err, err_len, "%s: node error %d: %s", method, *node_code, text);
        *status = RPC_NODE_ERROR;
    } else if (http_code == 401 || http_code == 403) {
        snprintf(err, err_len, "%s: HTTP %ld: the node refused the RPC password (-u/-p) or "
                 "cookie (--cookie)%s", method, http_code,
                 http_code == 403 ? ", or connections from this address (-rpcallowip)" : "");
        *status = RPC_AUTH_ERROR;
    } else if (http_code != 200) {
        snprintf(err, err_len, "%s: HTTP %ld from the node", method, http_code);
    } else if (!root || !json_is_object(root) || !json_object_get(root, "result")) {
        snprintf(err, err_len, "%s: the node's reply is not a JSON-RPC response", method);
    } else {
        result = json_incref(json_object_get(root, "result"));
        *status = RPC_OK;
    }
    json_decref(root);
    return result;
}

/* Which proxy and which connection a call may use. */
static void set_connection_rules(lode_gbt *g, CURL *curl, const char *method)
{
    if (g->node_on_loopback)
        curl_easy_setopt(curl, CURLOPT_PROXY, ""); /* "": no proxy, whatever the environment says */
    if (strcmp(method, "submitblock") == 0) {
        /* libcurl re-sends a request on its own when a reused connection
         * dies before any reply: a block the node kept would come back
         * "duplicate" to what lode takes for a first try. A connection of
         * its own makes every try one lode knows about. */
        curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, 1L);
    }
}

json_t *lode_gbt_rpc_call(lode_gbt *g, CURL *curl, const char *method, json_t *params, double timeout_s,
                          double stop_grace_s, rpc_status *status, int *node_code, char *err, size_t err_len)
{
    *status = RPC_TRANSPORT_ERROR;
    *node_code = 0;
    json_t *request = json_pack("{s:s, s:s, s:o}", "jsonrpc", "1.0", "method", method, "params",
                                params ? params : json_array());
    char *body = request ? json_dumps(request, JSON_COMPACT) : NULL;
    json_decref(request);
    if (!body) {
        snprintf(err, err_len, "out of memory building the %s request", method);
        return NULL;
    }
    char userpwd[512];
    if (credentials(g, userpwd, sizeof userpwd, err, err_len) != 0) {
        free(body);
        return NULL;
    }

    reply_buffer reply = {0};
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, g->url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERPWD, userpwd);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    transfer progress = {.g = g, .stop_grace_s = stop_grace_s};
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &progress);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)((timeout_s < 10 ? timeout_s : 10) * 1000));
    set_connection_rules(g, curl, method);
    CURLcode rc = curl_easy_perform(curl);
    long http_code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_code);
    curl_slist_free_all(headers);
    memset(userpwd, 0, sizeof userpwd);
    free(body);

    json_t *result = NULL;
    if (rc != CURLE_OK) {
        if (reply.too_large)
            snprintf(err, err_len, "%s: the reply is larger than %u bytes", method, MAX_REPLY_BYTES);
        else if (rc == CURLE_ABORTED_BY_CALLBACK)
            snprintf(err, err_len, "%s: stopped", method);
        else
            snprintf(err, err_len, "%s: %s", method, curl_easy_strerror(rc));
    } else {
        result = read_reply(&reply, http_code, method, status, node_code, err, err_len);
    }
    free(reply.data);
    return result;
}

/* The host of an http(s):// URL (no user info, no brackets, no port). */
static void url_host(const char *url, char *out, size_t out_len)
{
    const char *h = strstr(url, "://");
    h = h ? h + 3 : url;
    size_t authority = strcspn(h, "/?#");
    const char *at = memchr(h, '@', authority);
    for (const char *c = h; at && c < h + authority; c++)
        if (*c == '@')
            at = c; /* the last one: a password may hold '@' */
    if (at)
        h = at + 1;
    size_t n = *h == '[' ? strcspn(h + 1, "]") : strcspn(h, ":/?#");
    if (*h == '[')
        h++;
    snprintf(out, out_len, "%.*s", (int)n, h);
}

static bool host_is_loopback(const char *host)
{
    struct in_addr v4;
    struct in6_addr v6;
    size_t n = strlen(host);
    if (strcasecmp(host, "localhost") == 0 || (n > 10 && strcasecmp(host + n - 10, ".localhost") == 0))
        return true;
    if (inet_pton(AF_INET, host, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6) ||
               (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
    return false;
}

/* The proxy libcurl takes from the environment for url's scheme, and the
 * variable's name; NULL if none. */
static const char *environment_proxy(const char *url, const char **name)
{
    bool https = strncmp(url, "https://", 8) == 0;
    /* libcurl's order; plain http:// reads only the lowercase name (CGI
     * servers set HTTP_PROXY from a request header). */
    const char *names[] = {https ? "https_proxy" : "http_proxy", https ? "HTTPS_PROXY" : NULL, "all_proxy",
                           "ALL_PROXY"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = names[i] ? getenv(names[i]) : NULL;
        if (v && *v) {
            *name = names[i];
            return v;
        }
    }
    return NULL;
}

void lode_gbt_proxy_setup(lode_gbt *g)
{
    char host[256];
    url_host(g->url, host, sizeof host);
    g->node_on_loopback = host_is_loopback(host);
    const char *name = NULL;
    const char *proxy = environment_proxy(g->url, &name);
    if (g->node_on_loopback || !proxy)
        return;
    /* Shown without any user:password. */
    const char *sep = strstr(proxy, "://");
    const char *rest = sep ? sep + 3 : proxy;
    size_t authority = strcspn(rest, "/?#");
    const char *at = NULL;
    for (const char *c = rest; c < rest + authority; c++)
        if (*c == '@')
            at = c;
    char shown[300];
    snprintf(shown, sizeof shown, "%.*s%.200s", sep ? (int)(rest - proxy) : 0, proxy, at ? at + 1 : rest);
    lode_log_printable(shown, sizeof shown, shown);
    const char *no_proxy = getenv("no_proxy") ? getenv("no_proxy") : getenv("NO_PROXY");
    lode_log(LODE_LOG_INFO, "getblocktemplate: the node at %s is reached through the proxy %s from %s%s", host,
             shown, name, no_proxy && *no_proxy ? " (unless no_proxy excludes it)" : "");
}
