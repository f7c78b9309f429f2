/* The Host rule: a browser sends the name it resolved, so a page whose
 * name an attacker re-points at 127.0.0.1 (DNS rebinding) reaches lode
 * with that name in Host. Answering only the names of the bound address
 * keeps such a page from reading the API through the user's browser. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/api/api_internal.h"

bool lode_api_host_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > API_HOST_NAME_MAX)
        return false;
    if (name[0] == '[') { /* an IPv6 literal, as in a URL */
        char inner[API_HOST_NAME_MAX + 1];
        struct in6_addr a;
        if (name[n - 1] != ']')
            return false;
        memcpy(inner, name + 1, n - 2);
        inner[n - 2] = '\0';
        return inet_pton(AF_INET6, inner, &a) == 1;
    }
    return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") == n;
}

static int add_name(api_host_rule *r, const char *name)
{
    if (r->count == API_HOST_NAMES)
        return -1;
    snprintf(r->names[r->count++], sizeof r->names[0], "%s", name);
    return 0;
}

int api_host_rule_init(api_host_rule *r, const char *bind, const struct sockaddr *bound,
                       const char *const *allowed, size_t allowed_count)
{
    memset(r, 0, sizeof *r);
    /* The bind's own name: HOST of HOST:PORT, [V6] of [V6]:PORT. */
    char bind_host[API_HOST_NAME_MAX + 1] = "";
    const char *end = bind[0] == '[' ? strchr(bind, ']') : strrchr(bind, ':');
    size_t n = end ? (size_t)(end - bind) + (bind[0] == '[') : 0;
    if (n < sizeof bind_host) {
        memcpy(bind_host, bind, n);
        bind_host[n] = '\0';
    }
    char ip[INET6_ADDRSTRLEN + 2] = "";
    if (bound->sa_family == AF_INET) {
        const struct in_addr *a = &((const struct sockaddr_in *)bound)->sin_addr;
        r->any_ip = a->s_addr == htonl(INADDR_ANY);
        inet_ntop(AF_INET, a, ip, sizeof ip);
    } else if (bound->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)bound)->sin6_addr;
        r->any_ip = IN6_IS_ADDR_UNSPECIFIED(a);
        ip[0] = '[';
        inet_ntop(AF_INET6, a, ip + 1, sizeof ip - 2);
        strcat(ip, "]");
    }
    if (add_name(r, "localhost") != 0 || add_name(r, "127.0.0.1") != 0 || add_name(r, "[::1]") != 0 ||
        (ip[0] && add_name(r, ip) != 0))
        return -1;
    if (lode_api_host_name_valid(bind_host) && add_name(r, bind_host) != 0)
        return -1;
    for (size_t i = 0; i < allowed_count; i++)
        if (!lode_api_host_name_valid(allowed[i]) || add_name(r, allowed[i]) != 0)
            return -1;
    return 0;
}

/* Whether name (no port) is an IP literal: dotted IPv4 or bracketed IPv6. */
static bool ip_literal(const char *name)
{
    unsigned char buf[sizeof(struct in6_addr)];
    size_t n = strlen(name);
    if (name[0] != '[')
        return inet_pton(AF_INET, name, buf) == 1;
    char inner[API_HOST_NAME_MAX + 1];
    if (n < 2 || n - 2 > API_HOST_NAME_MAX || name[n - 1] != ']')
        return false;
    memcpy(inner, name + 1, n - 2);
    inner[n - 2] = '\0';
    return inet_pton(AF_INET6, inner, buf) == 1;
}

bool api_host_allowed(const api_host_rule *r, const char *host)
{
    if (host == NULL)
        return true; /* HTTP/1.0 without Host: no browser sends that */
    const char *end; /* of the name: a port may follow */
    if (host[0] == '[') {
        end = strchr(host, ']');
        if (end == NULL)
            return false;
        end++;
    } else {
        end = host + strcspn(host, ":");
    }
    size_t name_len = (size_t)(end - host);
    if (name_len == 0 || name_len > API_HOST_NAME_MAX)
        return false;
    if (*end == ':') {
        size_t digits = strspn(end + 1, "0123456789");
        if (digits == 0 || digits > 5 || end[1 + digits] != '\0')
            return false;
    } else if (*end != '\0') {
        return false;
    }
    char name[API_HOST_NAME_MAX + 1];
    memcpy(name, host, name_len);
    name[name_len] = '\0';
    if (r->any_ip && ip_literal(name))
        return true;
    for (size_t i = 0; i < r->count; i++)
        if (strcasecmp(name, r->names[i]) == 0)
            return true;
    return false;
}
