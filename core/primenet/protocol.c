#include "core/primenet/protocol.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tf/worktodo.h"

static void put(lode_pn_query *q, const char *s, size_t n)
{
    if (q->failed)
        return;
    if (q->len + n + 1 > q->cap) {
        size_t cap = (q->len + n + 1) * 2 + 256;
        char *g = realloc(q->text, cap);
        if (g == NULL) {
            q->failed = true;
            return;
        }
        q->text = g;
        q->cap = cap;
    }
    memcpy(q->text + q->len, s, n);
    q->len += n;
    q->text[q->len] = '\0';
}

bool lode_pn_url_encode(const char *value, char *out, size_t cap, size_t *used)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *s = (const unsigned char *)value; *s; s++) {
        bool keep = isalnum(*s) || *s == '-' || *s == '_' || *s == '.' || *s == '~';
        size_t n = keep || *s == ' ' ? 1 : 3;
        if (*used + n >= cap)
            return false;
        if (keep) {
            out[(*used)++] = (char)*s;
        } else if (*s == ' ') {
            out[(*used)++] = '+';
        } else {
            out[(*used)++] = '%';
            out[(*used)++] = hex[*s >> 4];
            out[(*used)++] = hex[*s & 15];
        }
    }
    out[*used] = '\0';
    return true;
}

void lode_pn_query_add(lode_pn_query *q, const char *name, const char *value)
{
    size_t cap = strlen(value) * 3 + 1, used = 0;
    char *enc = malloc(cap);
    if (enc == NULL) {
        q->failed = true;
        return;
    }
    lode_pn_url_encode(value, enc, cap, &used);
    if (q->len > 0)
        put(q, "&", 1);
    put(q, name, strlen(name));
    put(q, "=", 1);
    put(q, enc, used);
    free(enc);
}

void lode_pn_query_addf(lode_pn_query *q, const char *name, const char *fmt, ...)
{
    char value[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof value) {
        q->failed = true; /* a number or a short word never gets here */
        return;
    }
    lode_pn_query_add(q, name, value);
}

void lode_pn_query_start(lode_pn_query *q, const char *t, const char *guid)
{
    *q = (lode_pn_query){0};
    lode_pn_query_add(q, "px", "GIMPS");
    lode_pn_query_add(q, "v", LODE_PN_API_VERSION);
    lode_pn_query_add(q, "t", t);
    if (guid != NULL)
        lode_pn_query_add(q, "g", guid);
}

const char *lode_pn_query_finish(lode_pn_query *q)
{
    lode_pn_query_add(q, "ss", LODE_PN_UNTRUSTED_SALT);
    lode_pn_query_add(q, "sh", LODE_PN_UNTRUSTED_HASH);
    return q->failed ? NULL : q->text;
}

void lode_pn_query_free(lode_pn_query *q)
{
    free(q->text);
    *q = (lode_pn_query){0};
}

static int refuse(const char *body, size_t len, char *err, size_t err_len, const char *why)
{
    char shown[LODE_TF_ECHO_MAX * 4 + 64];
    lode_tf_worktodo_escape(body, len, shown, sizeof shown);
    snprintf(err, err_len, "a malformed reply (%s): '%s'", why, shown);
    return -1;
}

static bool valid_name(const char *s, size_t n)
{
    if (n == 0 || n >= LODE_PN_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return false;
    return true;
}

/* The next line of body from *pos, without its LF and a CR before it
 * (blank lines skipped). */
static bool next_line(const char *body, size_t len, size_t *pos, const char **line, size_t *n)
{
    for (;;) {
        if (*pos >= len)
            return false;
        const char *s = body + *pos, *nl = memchr(s, '\n', len - *pos);
        size_t k = nl != NULL ? (size_t)(nl - s) : len - *pos;
        *pos += k + (nl != NULL);
        if (k > 0 && s[k - 1] == '\r')
            k--;
        if (k > 0) {
            *line = s;
            *n = k;
            return true;
        }
    }
}

static int parse_code(const char *v, int *code)
{
    if (*v == '-')
        v++;
    size_t n = strlen(v);
    if (n == 0 || n > 6 || strspn(v, "0123456789") != n)
        return -1;
    *code = atoi(v);
    return 0;
}

int lode_pn_reply_parse(const char *body, size_t len, lode_pn_reply *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    if (len > LODE_PN_REPLY_MAX)
        return refuse(body, len, err, err_len, "longer than 64 KiB");
    if (memchr(body, '\0', len) != NULL)
        return refuse(body, len, err, err_len, "a NUL byte");
    size_t pos = 0, n;
    const char *line;
    bool ended = false;
    while (!ended && next_line(body, len, &pos, &line, &n)) {
        if (n == 7 && memcmp(line, "==END==", 7) == 0) {
            ended = true;
            break;
        }
        const char *eq = memchr(line, '=', n);
        if (eq == NULL || !valid_name(line, (size_t)(eq - line)))
            return refuse(line, n, err, err_len, "a line that is not name=value");
        size_t name_len = (size_t)(eq - line), value_len = n - name_len - 1;
        char name[LODE_PN_NAME_MAX];
        memcpy(name, line, name_len);
        name[name_len] = '\0';
        if (lode_pn_reply_get(r, name) != NULL)
            continue;
        if (r->count == LODE_PN_FIELDS_MAX)
            return refuse(body, len, err, err_len, "too many fields");
        lode_pn_field *f = &r->fields[r->count++];
        memcpy(f->name, name, name_len + 1);
        if (value_len >= LODE_PN_VALUE_MAX)
            value_len = LODE_PN_VALUE_MAX - 1;
        memcpy(f->value, eq + 1, value_len);
        f->value[value_len] = '\0';
        for (char *c = f->value; (c = strchr(c, '\r')) != NULL;)
            *c = '\n'; /* a CR within a value is a line break of the value */
    }
    if (!ended)
        return refuse(body, len, err, err_len, "no ==END== line: cut short");
    const char *code = lode_pn_reply_get(r, "pnErrorResult"), *detail = lode_pn_reply_get(r, "pnErrorDetail");
    if (code == NULL || detail == NULL)
        return refuse(body, len, err, err_len, code == NULL ? "no pnErrorResult" : "no pnErrorDetail");
    if (parse_code(code, &r->code) != 0)
        return refuse(code, strlen(code), err, err_len, "pnErrorResult is not a number");
    snprintf(r->detail, sizeof r->detail, "%s", detail);
    return 0;
}

const char *lode_pn_reply_get(const lode_pn_reply *r, const char *name)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->fields[i].name, name) == 0)
            return r->fields[i].value;
    return NULL;
}

const char *lode_pn_error_text(int code)
{
    switch (code) {
    case LODE_PN_OK: return "success";
    case LODE_PN_SERVER_BUSY: return "server busy";
    case LODE_PN_INVALID_VERSION: return "invalid API version";
    case LODE_PN_INVALID_TRANSACTION: return "invalid transaction";
    case LODE_PN_INVALID_PARAMETER: return "invalid parameter";
    case LODE_PN_ACCESS_DENIED: return "access denied";
    case LODE_PN_DATABASE_CORRUPT: return "server database corrupt";
    case LODE_PN_DATABASE_FULL: return "server database full or broken";
    case LODE_PN_INVALID_USER: return "invalid user";
    case LODE_PN_UNREGISTERED_CPU: return "computer not registered";
    case LODE_PN_OBSOLETE_CLIENT: return "obsolete client";
    case LODE_PN_STALE_CPU_INFO: return "stale computer information";
    case LODE_PN_CPU_IDENTITY_MISMATCH: return "computer identity mismatch";
    case LODE_PN_CPU_CONFIGURATION_MISMATCH: return "computer configuration mismatch";
    case LODE_PN_NO_ASSIGNMENT: return "no assignment available";
    case LODE_PN_INVALID_ASSIGNMENT_KEY: return "invalid assignment key";
    case LODE_PN_INVALID_ASSIGNMENT_TYPE: return "invalid assignment type";
    case LODE_PN_INVALID_RESULT_TYPE: return "invalid result type";
    case LODE_PN_INVALID_WORK_TYPE: return "invalid work type";
    case LODE_PN_WORK_NO_LONGER_NEEDED: return "work no longer needed";
    case LODE_PN_ILLEGAL_RESIDUE: return "illegal residue";
    default: return "unknown error";
    }
}
