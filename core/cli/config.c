/* -c/--config FILE: a JSON object whose keys are lode's long option names.
 *
 *   {"algo": "scrypt", "threads": 2, "quiet": true,
 *    "pools": [{"url": "stratum+tcp://pool:3333", "user": "me", "pass": "x"}]}
 *
 * "url" may also be a string or an array of strings. Values go through
 * cli_apply_option, exactly like the command line. An error names the file,
 * the line and the key. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli/config.h"
#include "core/cli/options.h"

#define CONFIG_MAX_BYTES (1u << 20)

typedef struct config_reader {
    cli_options *o;
    const char *name;
    const char *text;
    size_t len;
    size_t cursor; /* where the search for the next key's line starts */
    int line;      /* the line of the key being applied; 0 = unknown */
    char *err;
    size_t err_len;
} config_reader;

/* The line of the first `"key"` followed by a colon at or after the cursor
 * (keys are visited in file order, so this finds the one meant). jansson
 * does not keep positions of keys, hence the search. */
static int line_of_key(config_reader *r, const char *key)
{
    size_t klen = strlen(key);
    for (size_t i = r->cursor; i + klen + 2 <= r->len; i++) {
        if (r->text[i] != '"' || memcmp(r->text + i + 1, key, klen) != 0 || r->text[i + klen + 1] != '"')
            continue;
        size_t j = i + klen + 2;
        while (j < r->len && (r->text[j] == ' ' || r->text[j] == '\t' || r->text[j] == '\r' || r->text[j] == '\n'))
            j++;
        if (j < r->len && r->text[j] == ':') {
            r->cursor = j;
            int line = 1;
            for (size_t k = 0; k < i; k++)
                line += r->text[k] == '\n';
            return line;
        }
    }
    return 0;
}

static int key_error(config_reader *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int key_error(config_reader *r, const char *key, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (r->line > 0)
        snprintf(r->err, r->err_len, "%s:%d: key '%s': %s", r->name, r->line, key, why);
    else
        snprintf(r->err, r->err_len, "%s: key '%s': %s", r->name, key, why);
    return -1;
}

/* Keeps a copy of s alive as long as the options. */
static const char *keep(config_reader *r, const char *s)
{
    char **grown = realloc(r->o->owned, (r->o->owned_count + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    r->o->owned = grown;
    char *copy = strdup(s);
    if (copy != NULL)
        r->o->owned[r->o->owned_count++] = copy;
    return copy;
}

/* Moves to key in the text: later errors name its line. */
static void visit_key(config_reader *r, const char *key)
{
    int line = line_of_key(r, key);
    if (line > 0)
        r->line = line;
}

/* One scalar value of option opt under key. */
static int apply_value(config_reader *r, const char *key, const cli_option *opt, json_t *value)
{
    char text[64];
    const char *arg = NULL;
    if (opt->arg == NULL) {
        if (!json_is_boolean(value))
            return key_error(r, key, "wants true or false");
        if (json_is_false(value))
            return 0;
    } else if (json_is_string(value)) {
        arg = json_string_value(value);
        if (strlen(arg) != json_string_length(value))
            return key_error(r, key, "the text holds a NUL character");
    } else if (json_is_number(value) && !opt->numeric) {
        return key_error(r, key, "wants a string");
    } else if (json_is_integer(value)) {
        snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT, json_integer_value(value));
        arg = text;
    } else if (json_is_real(value)) {
        snprintf(text, sizeof text, "%.17g", json_real_value(value));
        arg = text;
    } else {
        return key_error(r, key, "wants a string or a number");
    }
    if (arg != NULL && (arg = keep(r, arg)) == NULL)
        return key_error(r, key, "out of memory");
    char why[256];
    if (cli_apply_option(r->o, key, arg, why, sizeof why) != 0)
        return key_error(r, key, "%s", why);
    return 0;
}

/* {"cuda:0": 80, "cpu": 90}: each entry as --max-temp ID=C. */
static int apply_per_device(config_reader *r, const char *key, const cli_option *opt, json_t *object)
{
    const char *device;
    json_t *value;
    json_object_foreach(object, device, value) {
        if (!json_is_number(value))
            return key_error(r, key, "\"%s\" wants a number of degrees Celsius", device);
        char text[96];
        snprintf(text, sizeof text, "%.40s=%.17g", device, json_number_value(value));
        char why[256];
        if (strlen(device) >= 40 || cli_apply_option(r->o, opt->name, text, why, sizeof why) != 0)
            return key_error(r, key, "%s", strlen(device) >= 40 ? "device id too long" : why);
    }
    return 0;
}

static int apply_pools(config_reader *r, json_t *pools)
{
    if (!json_is_array(pools) || json_array_size(pools) == 0)
        return key_error(r, "pools", "wants a non-empty array of {\"url\", \"user\", \"pass\", \"cert-pin\"}");
    size_t i;
    json_t *pool;
    json_array_foreach(pools, i, pool) {
        if (!json_is_object(pool))
            return key_error(r, "pools", "entry %zu is not an object", i + 1);
        json_t *url = json_object_get(pool, "url");
        if (url == NULL)
            return key_error(r, "pools", "entry %zu has no \"url\"", i + 1);
        /* url first: user, pass and cert-pin attach to the last url. */
        size_t entry_cursor = r->cursor;
        visit_key(r, "url");
        if (apply_value(r, "url", cli_find_option(r->o->command, "url"), url) != 0)
            return -1;
        const char *key;
        json_t *value;
        json_object_foreach(pool, key, value) {
            if (strcmp(key, "url") == 0)
                continue;
            r->cursor = entry_cursor;
            visit_key(r, key);
            if (strcmp(key, "user") != 0 && strcmp(key, "pass") != 0 && strcmp(key, "cert-pin") != 0 &&
                strcmp(key, "keepalive") != 0) /* xmrig's, ignored with a warning */
                return key_error(r, key, "unknown pool key (pools take url, user, pass, cert-pin, keepalive)");
            if (apply_value(r, key, cli_find_option(r->o->command, key), value) != 0)
                return -1;
        }
    }
    return 0;
}

int cli_config_parse(cli_options *o, const char *name, const char *text, size_t len, char *err,
                     size_t err_len)
{
    config_reader r = {.o = o, .name = name, .text = text, .len = len, .err = err, .err_len = err_len};
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        snprintf(err, err_len, "%s:%d: not valid JSON: %s", name, jerr.line, jerr.text);
        return -1;
    }
    int rc = 0;
    if (!json_is_object(root)) {
        snprintf(err, err_len, "%s: wants a JSON object of options", name);
        rc = -1;
    }
    const char *key;
    json_t *value;
    if (rc == 0) {
        json_object_foreach(root, key, value) {
            visit_key(&r, key);
            const cli_option *opt = cli_find_option(o->command, key);
            if (strcmp(key, "pools") == 0 && cli_find_option(o->command, "url") != NULL) {
                rc = apply_pools(&r, value);
            } else if (opt != NULL && strcmp(key, "max-temp") == 0 && json_is_object(value)) {
                rc = apply_per_device(&r, key, opt, value);
            } else if (opt == NULL || strcmp(key, "config") == 0 || strcmp(key, "help") == 0 ||
                       strcmp(key, "help-env") == 0 || strcmp(key, "version") == 0) {
                rc = key_error(&r, key, "unknown key (keys are lode's long option names)");
            } else if (json_is_array(value) && strcmp(key, "url") == 0) {
                size_t i;
                json_t *item;
                json_array_foreach(value, i, item) {
                    if ((rc = apply_value(&r, key, opt, item)) != 0)
                        break;
                }
            } else {
                rc = apply_value(&r, key, opt, value);
            }
            if (rc != 0)
                break;
        }
    }
    json_decref(root);
    return rc;
}

int cli_config_load(cli_options *o, const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_len, "cannot read config file %s: %s", path, strerror(errno));
        return -1;
    }
    char *text = malloc(CONFIG_MAX_BYTES + 1);
    size_t len = text ? fread(text, 1, CONFIG_MAX_BYTES + 1, f) : 0;
    bool read_error = ferror(f);
    fclose(f);
    if (text == NULL || read_error || len > CONFIG_MAX_BYTES) {
        snprintf(err, err_len, "%s: %s", path,
                 text == NULL ? "out of memory" : read_error ? "read error" : "larger than 1 MiB");
        free(text);
        return -1;
    }
    int rc = cli_config_parse(o, path, text, len, err, err_len);
    free(text);
    return rc;
}
