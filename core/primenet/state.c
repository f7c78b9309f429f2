#include "core/primenet/state.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/base/hex.h"
#include "core/tf/fileio.h"

int lode_pn_new_guid(char out[33])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    lode_hex_encode(b, sizeof b, out);
    return 0;
}

static bool is_hex32(const char *s, bool lower)
{
    if (s == NULL || strlen(s) != 32)
        return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s) || (lower && isupper((unsigned char)*s)))
            return false;
    return true;
}

static int copy_text(json_t *root, const char *key, char *out, size_t len)
{
    json_t *v = json_object_get(root, key);
    if (v == NULL) {
        out[0] = '\0';
        return 0;
    }
    if (!json_is_string(v) || json_string_length(v) >= len || strlen(json_string_value(v)) != json_string_length(v))
        return -1;
    snprintf(out, len, "%s", json_string_value(v));
    return 0;
}

/* The fields of a parsed state file; why names the first bad one. */
static int read_fields(json_t *root, lode_pn_state *s, const char **why)
{
    json_t *v;
    *why = "not a JSON object";
    if (!json_is_object(root))
        return -1;
    *why = "\"version\" is not 1";
    if (json_integer_value(json_object_get(root, "version")) != 1)
        return -1;
    *why = "\"guid\" is not 32 lower-case hex digits";
    if (copy_text(root, "guid", s->guid, sizeof s->guid) != 0 || !is_hex32(s->guid, true))
        return -1;
    *why = "\"hardware_guid\" is not 32 hex digits";
    if (copy_text(root, "hardware_guid", s->hardware_guid, sizeof s->hardware_guid) != 0 ||
        !is_hex32(s->hardware_guid, false))
        return -1;
    *why = "\"user\" or \"computer\" is not a short string";
    if (copy_text(root, "user", s->user, sizeof s->user) != 0 ||
        copy_text(root, "computer", s->computer, sizeof s->computer) != 0)
        return -1;
    *why = "\"registered\", \"options_sent\" are not true or false";
    v = json_object_get(root, "registered");
    json_t *o = json_object_get(root, "options_sent");
    if ((v != NULL && !json_is_boolean(v)) || (o != NULL && !json_is_boolean(o)))
        return -1;
    s->registered = json_is_true(v);
    s->options_sent = json_is_true(o);
    *why = "\"od\", \"work_pref\" or \"days_of_work\" is not a number";
    json_t *od = json_object_get(root, "od"), *w = json_object_get(root, "work_pref"),
           *d = json_object_get(root, "days_of_work");
    if ((od != NULL && !json_is_integer(od)) || (w != NULL && !json_is_integer(w)) ||
        (d != NULL && !json_is_number(d)))
        return -1;
    s->od = od != NULL ? (long)json_integer_value(od) : 0;
    s->work_pref = w != NULL ? (unsigned)json_integer_value(w) : 0;
    s->days_of_work = d != NULL ? json_number_value(d) : 0;
    return 0;
}

int lode_pn_state_load(const char *path, lode_pn_state *s, char *err, size_t err_len)
{
    memset(s, 0, sizeof *s);
    size_t len;
    char *text = lode_tf_read_file(path, &len);
    if (text == NULL && errno == ENOENT) {
        if (lode_pn_new_guid(s->guid) != 0 || lode_pn_new_guid(s->hardware_guid) != 0) {
            snprintf(err, err_len, "no random numbers for a GUID: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    if (text == NULL) {
        snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    const char *why = "not valid JSON";
    int rc = root != NULL ? read_fields(root, s, &why) : -1;
    json_decref(root);
    if (rc != 0) {
        snprintf(err, err_len, "%s: %s%s%s; it holds the computer's GUID, which PrimeNet's assignments belong "
                 "to: mend it, or remove it to register this computer anew", path, why,
                 root == NULL ? ": " : "", root == NULL ? jerr.text : "");
        return -1;
    }
    return 1;
}

int lode_pn_state_save(const char *path, const lode_pn_state *s)
{
    json_t *root = json_pack("{s:i, s:s, s:s, s:b, s:b, s:I, s:s, s:s, s:i, s:f}", "version", 1, "guid", s->guid,
                             "hardware_guid", s->hardware_guid, "registered", s->registered, "options_sent",
                             s->options_sent, "od", (json_int_t)s->od, "user", s->user, "computer", s->computer,
                             "work_pref", (int)s->work_pref, "days_of_work", s->days_of_work);
    char *text = root != NULL ? json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(1)) : NULL;
    json_decref(root);
    if (text == NULL) {
        errno = ENOMEM;
        return -1;
    }
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (line == NULL) {
        free(text);
        errno = ENOMEM;
        return -1;
    }
    line[n] = '\n';
    int rc = lode_tf_write_atomic(path, line, n + 1);
    free(line);
    return rc;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int lode_pn_sent_load(const char *path, lode_pn_sent *s)
{
    *s = (lode_pn_sent){0};
    size_t len;
    char *text = lode_tf_read_file(path, &len);
    if (text == NULL)
        return errno == ENOENT ? 0 : -1;
    size_t pos = 0, n, cap = 0;
    const char *line;
    int rc = 0;
    while (rc == 0 && lode_tf_next_line(text, len, &pos, &line, &n)) {
        if (s->count == cap) {
            cap = cap ? cap * 2 : 64;
            char **g = realloc(s->lines, cap * sizeof *g);
            if (g == NULL) {
                rc = -1;
                break;
            }
            s->lines = g;
        }
        if ((s->lines[s->count] = strndup(line, n)) == NULL)
            rc = -1;
        else
            s->count++;
    }
    free(text);
    if (rc != 0) {
        lode_pn_sent_free(s);
        errno = ENOMEM;
        return -1;
    }
    qsort(s->lines, s->count, sizeof *s->lines, by_text);
    return 0;
}

bool lode_pn_sent_has(const lode_pn_sent *s, const char *line, size_t len)
{
    char *key = strndup(line, len);
    if (key == NULL)
        return false;
    bool found = s->count > 0 && bsearch(&key, s->lines, s->count, sizeof *s->lines, by_text) != NULL;
    free(key);
    return found;
}

void lode_pn_sent_free(lode_pn_sent *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->lines[i]);
    free(s->lines);
    *s = (lode_pn_sent){0};
}

int lode_pn_sent_record(const char *path, const char *line, size_t len)
{
    char *text = malloc(len + 1);
    if (text == NULL) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(text, line, len);
    text[len] = '\n';
    int rc = lode_tf_append_record(path, text, len + 1);
    free(text);
    return rc;
}
