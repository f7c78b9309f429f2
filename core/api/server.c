/* The HTTP server: libmicrohttpd with one internal polling thread (every
 * answer is rendered from the sampler's rings, so one thread is plenty,
 * and a slow client holds a connection, never the thread), a small memory
 * limit per connection (oversized headers are refused by libmicrohttpd
 * itself), a body limit of its own, a timeout for idle or half-sent
 * requests, a limit of connections per client address below the total (so
 * one client that opens many and sends slowly cannot lock the others out),
 * and the Host rule (api_host.c). */
#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/api/api_internal.h"
#include "core/base/log.h"

#define MAX_BODY 4096               /* control bodies are a few bytes */
#define CONNECTION_MEMORY (32 * 1024) /* request line and headers must fit */
#define CONNECTION_LIMIT 256         /* in all */
#define CONNECTION_LIMIT_PER_IP 32   /* a dashboard takes a few, a scraper one */
#define CONNECTION_TIMEOUT_S 10

struct lode_api {
    api_state state;
    struct MHD_Daemon *daemon;
    bool loopback;
    unsigned port;
    api_host_rule hosts;
};

typedef enum route_kind { R_GET, R_POST } route_kind;

typedef enum route_id {
    ROUTE_ASSET, ROUTE_SUMMARY, ROUTE_DEVICES, ROUTE_HISTORY, ROUTE_METRICS,
    ROUTE_PAUSE, ROUTE_RESUME, ROUTE_POOL_NEXT,
} route_id;

typedef struct route {
    const char *path;
    route_kind kind;
    route_id id;
} route;

static const route routes[] = {
    {"/api/summary", R_GET, ROUTE_SUMMARY},  {"/api/devices", R_GET, ROUTE_DEVICES},
    {"/api/history", R_GET, ROUTE_HISTORY},  {"/metrics", R_GET, ROUTE_METRICS},
    {"/api/pause", R_POST, ROUTE_PAUSE},     {"/api/resume", R_POST, ROUTE_RESUME},
    {"/api/pool/next", R_POST, ROUTE_POOL_NEXT},
};

/* One request's state between libmicrohttpd's calls. */
typedef struct request {
    const route *route;
    route asset_route;
    char body[MAX_BODY + 1];
    size_t body_len;
    bool too_big;
} request;

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *type, const void *data,
                                 size_t len, enum MHD_ResponseMemoryMode mode, const char *allow)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)data, mode);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (allow)
        MHD_add_response_header(r, "Allow", allow);
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"lode\"");
    if (strncmp(type, "text/html", 9) == 0)
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* {"error": "..."} with a status. */
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *allow, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *allow, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *o = json_pack("{s:s?}", "error", msg);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (text == NULL)
        return MHD_NO;
    return send_text(c, status, "application/json", text, strlen(text), MHD_RESPMEM_MUST_FREE, allow);
}

/* The text of a JSON value, which is freed. */
static char *dump_json(json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, char *text)
{
    if (text == NULL)
        return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
    return send_text(c, status, "application/json", text, strlen(text), MHD_RESPMEM_MUST_FREE, NULL);
}

/* 0 when the request may go on; otherwise the status to refuse it with. */
static unsigned check_token(lode_api *api, struct MHD_Connection *c, bool needed)
{
    if (!needed)
        return 0;
    const char *token = api->state.config.token;
    if (token == NULL)
        return MHD_HTTP_FORBIDDEN; /* control is off: no token was configured */
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (auth == NULL)
        return MHD_HTTP_UNAUTHORIZED;
    if (strncasecmp(auth, "Bearer ", 7) != 0)
        return MHD_HTTP_UNAUTHORIZED;
    const char *given = auth + 7;
    while (*given == ' ')
        given++;
    size_t len = strlen(given);
    while (len > 0 && given[len - 1] == ' ')
        len--;
    return lode_api_token_equal(given, len, token) ? 0 : MHD_HTTP_FORBIDDEN;
}

static void client_text(struct MHD_Connection *c, char *out, size_t len)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(out, len, "?");
    if (info == NULL || info->client_addr == NULL)
        return;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)len);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)len);
}

static enum MHD_Result control(lode_api *api, struct MHD_Connection *c, request *rq)
{
    const lode_api_provider *p = &api->state.config.provider;
    char who[64], why[256] = "";
    client_text(c, who, sizeof who);
    json_error_t jerr;
    json_t *body = rq->body_len ? json_loadb(rq->body, rq->body_len, 0, &jerr) : json_object();
    if (body == NULL || !json_is_object(body)) {
        json_decref(body);
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "the body must be a JSON object");
    }
    enum MHD_Result result;
    if (rq->route->id == ROUTE_POOL_NEXT) {
        json_decref(body);
        if (p->next_pool == NULL)
            return send_error(c, MHD_HTTP_CONFLICT, NULL, "this run has no pools to switch between");
        if (p->next_pool(p->user, why, sizeof why) != 0)
            return send_error(c, MHD_HTTP_CONFLICT, NULL, "%s", why);
        lode_log(LODE_LOG_INFO, "API: switching to the next pool (asked from %s)", who);
        return send_json(c, MHD_HTTP_OK, dump_json(json_pack("{s:b}", "ok", 1)));
    }
    bool pause = rq->route->id == ROUTE_PAUSE;
    const char *id = json_string_value(json_object_get(body, "device"));
    if (id == NULL) {
        result = send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "want {\"device\": \"ID\"}");
    } else if (p->set_paused == NULL) {
        result = send_error(c, MHD_HTTP_CONFLICT, NULL, "this run cannot pause devices");
    } else {
        int d = api_device_index(&api->state, id);
        if (d < 0) {
            result = send_error(c, MHD_HTTP_NOT_FOUND, NULL, "no device '%.64s' in this run", id);
        } else if (p->set_paused(p->user, (size_t)d, pause, why, sizeof why) != 0) {
            result = send_error(c, MHD_HTTP_CONFLICT, NULL, "%s", why);
        } else {
            char safe[64];
            lode_log_printable(safe, sizeof safe, id);
            lode_log(LODE_LOG_INFO, "API: %s %s (asked from %s)", pause ? "pausing" : "resuming", safe, who);
            result = send_json(c, MHD_HTTP_OK,
                               dump_json(json_pack("{s:b,s:s,s:b}", "ok", 1, "device", id, "paused", pause)));
        }
    }
    json_decref(body);
    return result;
}

static enum MHD_Result answer_get(lode_api *api, struct MHD_Connection *c, const route *rt)
{
    switch (rt->id) {
    case ROUTE_SUMMARY:
        return send_json(c, MHD_HTTP_OK, api_render_summary(&api->state, false));
    case ROUTE_DEVICES:
        return send_json(c, MHD_HTTP_OK, api_render_summary(&api->state, true));
    case ROUTE_HISTORY:
        return send_json(c, MHD_HTTP_OK, api_render_history(&api->state));
    case ROUTE_METRICS: {
        char *text = api_render_metrics(&api->state);
        if (text == NULL)
            return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
        return send_text(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text),
                         MHD_RESPMEM_MUST_FREE, NULL);
    }
    default: {
        const api_asset *a = api_find_asset(rt->path);
        return send_text(c, MHD_HTTP_OK, a->content_type, a->data, a->size, MHD_RESPMEM_PERSISTENT, NULL);
    }
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    lode_api *api = cls;
    request *rq = *con_cls;
    if (rq == NULL) { /* the headers are in: route, method, token, size */
        rq = calloc(1, sizeof *rq);
        if (rq == NULL)
            return MHD_NO;
        *con_cls = rq;
        if (!api_host_allowed(&api->hosts, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
            return send_error(c, MHD_HTTP_FORBIDDEN, NULL,
                              "this API answers only its own names in Host (a proxy's: --api-allow-host)");
        for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
            if (strcmp(url, routes[i].path) == 0)
                rq->route = &routes[i];
        if (rq->route == NULL && api_find_asset(url) != NULL) {
            rq->asset_route = (route){api_find_asset(url)->path, R_GET, ROUTE_ASSET};
            rq->route = &rq->asset_route;
        }
        if (rq->route == NULL)
            return send_error(c, MHD_HTTP_NOT_FOUND, NULL, "no such path (see /api/summary, /metrics, /)");
        bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
        bool post = strcmp(method, "POST") == 0;
        if (rq->route->kind == R_GET ? !get : !post)
            return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, rq->route->kind == R_GET ? "GET, HEAD" : "POST",
                              "this method is not allowed here");
        /* The page and Chart.js hold no data; everything else needs the
         * token beyond loopback, and control always. */
        bool needed = rq->route->kind == R_POST || (!api->loopback && rq->route->id != ROUTE_ASSET);
        unsigned refused = check_token(api, c, needed);
        if (refused == MHD_HTTP_UNAUTHORIZED)
            return send_error(c, refused, NULL, "this needs the API token (Authorization: Bearer TOKEN)");
        if (refused)
            return send_error(c, refused, NULL,
                              api->state.config.token ? "wrong token"
                                                      : "control is off: start lode with an API token");
        const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length != NULL && strtoull(length, NULL, 10) > MAX_BODY)
            return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, NULL, "the body is limited to %d bytes", MAX_BODY);
        if (get)
            return answer_get(api, c, rq->route);
        return MHD_YES; /* the body comes next */
    }
    if (*upload_data_size > 0) {
        if (rq->body_len + *upload_data_size > MAX_BODY)
            rq->too_big = true;
        else {
            memcpy(rq->body + rq->body_len, upload_data, *upload_data_size);
            rq->body_len += *upload_data_size;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->too_big)
        return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, NULL, "the body is limited to %d bytes", MAX_BODY);
    return control(api, c, rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
    (void)cls;
    (void)c;
    (void)why;
    free(*con_cls);
    *con_cls = NULL;
}

/* libmicrohttpd's own messages (never with header values in them). Most
 * are about a client that sent garbage or hung up: every bad connection
 * would add a line, so a hostile client could fill a log file. The first
 * MHD_LOG_LINES are logged, then one line says the rest are not; the stop
 * reports how many there were. */
#define MHD_LOG_LINES 20
static atomic_uint mhd_messages;

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    const unsigned n_before = atomic_fetch_add(&mhd_messages, 1);
    if (n_before > MHD_LOG_LINES)
        return;
    if (n_before == MHD_LOG_LINES) {
        lode_log(LODE_LOG_DEBUG, "API: libmicrohttpd: further messages are not logged (counted at the end)");
        return;
    }
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    lode_log(LODE_LOG_DEBUG, "API: libmicrohttpd: %s", msg);
}

bool lode_api_available(void)
{
    return true;
}

lode_api *lode_api_start(const lode_api_config *config, char *err, size_t err_len)
{
    if (lode_api_check_config(config->bind, config->token, err, err_len) != 0)
        return NULL;
    struct sockaddr_storage addr;
    socklen_t addr_len;
    bool loopback;
    if (api_parse_bind(config->bind, &addr, &addr_len, &loopback, err, err_len) != 0)
        return NULL;
    lode_api *api = calloc(1, sizeof *api);
    if (api == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    api->loopback = loopback;
    if (api_host_rule_init(&api->hosts, config->bind, (const struct sockaddr *)&addr, config->allow_hosts,
                           config->allow_host_count) != 0) {
        snprintf(err, err_len, "--api-allow-host: too many names, or a name that is not a host name");
        free(api);
        return NULL;
    }
    api_state_init(&api->state, config);
    if (api_state_start(&api->state) != 0) {
        snprintf(err, err_len, "cannot start the API's sampler thread");
        api_state_destroy(&api->state);
        free(api);
        return NULL;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    api->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, api,
                                   MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                                   MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                   MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
                                   MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT_PER_IP,
                                   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
                                   MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
                                   MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                                   MHD_OPTION_END);
    if (api->daemon == NULL) {
        snprintf(err, err_len, "cannot listen on %s (address in use, or not this machine's?)", config->bind);
        api_state_destroy(&api->state);
        free(api);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(api->daemon, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_storage bound;
    socklen_t bound_len = sizeof bound;
    char host[INET6_ADDRSTRLEN] = "?";
    if (info != NULL && getsockname(info->listen_fd, (struct sockaddr *)&bound, &bound_len) == 0) {
        if (bound.ss_family == AF_INET) {
            const struct sockaddr_in *in = (const struct sockaddr_in *)&bound;
            inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
            api->port = ntohs(in->sin_port);
        } else {
            const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&bound;
            inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
            api->port = ntohs(in6->sin6_port);
        }
    }
    bool v6 = bound.ss_family == AF_INET6;
    /* NOTICE: -q keeps it, as the port 0 bound is only said here. */
    lode_log(LODE_LOG_NOTICE, "API listening on http://%s%s%s:%u (dashboard at /, metrics at /metrics%s)",
             v6 ? "[" : "", host, v6 ? "]" : "", api->port,
             api->state.config.token ? "; control with the token" : "; no token: read-only");
    return api;
}

unsigned lode_api_port(const lode_api *api)
{
    return api ? api->port : 0;
}

void lode_api_stop(lode_api *api)
{
    if (api == NULL)
        return;
    MHD_stop_daemon(api->daemon);
    const unsigned messages = atomic_load(&mhd_messages);
    if (messages > MHD_LOG_LINES)
        lode_log(LODE_LOG_DEBUG, "API: libmicrohttpd: %u messages, %u of them not logged", messages,
                 messages - MHD_LOG_LINES);
    api_state_destroy(&api->state);
    free(api);
}
