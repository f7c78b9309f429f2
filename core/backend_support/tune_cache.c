/* The tuning cache and environment override of the GPU backends
 * (tune_cache.h). All JSON goes through jansson. */
#include "core/backend_support/tune_cache.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/log.h"

#ifndef LODE_VERSION
#define LODE_VERSION "unknown"
#endif

/* A real cache is a few kB; anything far bigger is not ours, and reading it
 * would only cost memory. */
#define MAX_FILE_BYTES (1u << 20)
/* Entries kept on a store, the new one included: bounds the file. */
#define MAX_ENTRIES 256
#define MAX_ENV_VALUE (1ul << 24)

/* Workers of several devices (and backends) in one process share the file;
 * other processes are kept safe by the rename. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* $XDG_CACHE_HOME/lode, else $HOME/.cache/lode; with make, created. */
static int cache_dir(char *out, size_t len, bool make)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char base[512];
    int n;
    /* The XDG spec ignores a relative XDG_CACHE_HOME. */
    if (xdg != NULL && xdg[0] == '/')
        n = snprintf(base, sizeof base, "%s", xdg);
    else if (home != NULL && home[0] != '\0')
        n = snprintf(base, sizeof base, "%s/.cache", home);
    else
        return -1;
    if (n < 0 || (size_t)n >= sizeof base)
        return -1;
    n = snprintf(out, len, "%s/lode", base);
    if (n < 0 || (size_t)n >= len)
        return -1;
    if (make && ((mkdir(base, 0755) != 0 && errno != EEXIST) || (mkdir(out, 0755) != 0 && errno != EEXIST)))
        return -1;
    return 0;
}

static int cache_path(char *out, size_t len, bool make)
{
    char dir[600];
    if (cache_dir(dir, sizeof dir, make) != 0)
        return -1;
    int n = snprintf(out, len, "%s/tune.json", dir);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* The cache's entries as a new array: empty when there is no file, and
 * (with a warning) when the file is not a JSON array of sane size. */
static json_t *read_entries(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        if (errno != ENOENT)
            lode_log(LODE_LOG_WARN, "tuning cache %s: %s; ignoring it", path, strerror(errno));
        return json_array();
    }
    struct stat st;
    const char *why = NULL;
    char *buf = NULL;
    size_t len = 0;
    /* Not a regular file (a FIFO, a device) could block or never end. */
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_size > (off_t)MAX_FILE_BYTES)
        why = "too large";
    else if ((buf = malloc(MAX_FILE_BYTES + 1)) == NULL)
        why = "out of memory";
    else if ((len = fread(buf, 1, MAX_FILE_BYTES + 1, f)) > MAX_FILE_BYTES)
        why = "too large"; /* it grew since the fstat */
    fclose(f);

    json_t *root = NULL;
    if (why == NULL) {
        json_error_t err;
        root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
        if (root == NULL) {
            lode_log(LODE_LOG_WARN, "tuning cache %s: not JSON (line %d: %s); ignoring it", path, err.line,
                     err.text);
        } else if (!json_is_array(root)) {
            json_decref(root);
            root = NULL;
            why = "not a JSON array";
        }
    }
    free(buf);
    if (why != NULL)
        lode_log(LODE_LOG_WARN, "tuning cache %s: %s; ignoring it", path, why);
    return root != NULL ? root : json_array();
}

static bool str_is(const json_t *obj, const char *name, const char *want)
{
    const char *s = json_string_value(json_object_get(obj, name));
    return s != NULL && strcmp(s, want) == 0;
}

static const char *platform_of(const lode_tune_key *key) { return key->platform ? key->platform : ""; }

/* Same backend, device, platform, algorithm and variant, whatever the versions. */
static bool same_slot(const json_t *entry, const lode_tune_key *key)
{
    return json_is_object(entry) && str_is(entry, "backend", key->backend) &&
           str_is(entry, "device", key->device) && str_is(entry, "platform", platform_of(key)) &&
           str_is(entry, "algo", key->algo) && str_is(entry, "variant", key->variant);
}

/* An entry of the shape a store writes: anything else is dropped on a store. */
static bool well_formed(const json_t *entry)
{
    static const char *const fields[] = {"backend", "device", "platform", "algo", "variant", "driver", "lode"};
    if (!json_is_object(entry) || !json_is_object(json_object_get(entry, "params")))
        return false;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!json_is_string(json_object_get(entry, fields[i])))
            return false;
    return true;
}

int lode_tune_load(const lode_tune_key *key, const char *const names[], double values[], size_t n)
{
    char path[700];
    if (cache_path(path, sizeof path, false) != 0)
        return -1;
    pthread_mutex_lock(&cache_lock);
    json_t *entries = read_entries(path);
    pthread_mutex_unlock(&cache_lock);

    int rc = -1;
    size_t i;
    json_t *entry;
    json_array_foreach(entries, i, entry) {
        if (!same_slot(entry, key) || !str_is(entry, "driver", key->driver) ||
            !str_is(entry, "lode", LODE_VERSION))
            continue;
        json_t *params = json_object_get(entry, "params");
        bool complete = json_is_object(params);
        /* Check every value before writing any: a partial entry changes nothing. */
        for (size_t k = 0; complete && k < n; k++) {
            json_t *v = json_object_get(params, names[k]);
            complete = json_is_number(v) && isfinite(json_number_value(v));
        }
        if (!complete)
            continue;
        for (size_t k = 0; k < n; k++)
            values[k] = json_number_value(json_object_get(params, names[k]));
        rc = 0;
        break;
    }
    json_decref(entries);
    return rc;
}

/* Whole numbers stay integers in the file, so it reads as it was meant. */
static json_t *number(double v)
{
    if (!isfinite(v))
        return NULL;
    if (v == floor(v) && fabs(v) < 9007199254740992.0 /* 2^53 */)
        return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *new_entry(const lode_tune_key *key, const char *const names[], const double values[], size_t n)
{
    json_t *params = json_object();
    for (size_t k = 0; params != NULL && k < n; k++)
        if (json_object_set_new(params, names[k], number(values[k])) != 0) {
            json_decref(params);
            params = NULL;
        }
    if (params == NULL)
        return NULL;
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "backend", key->backend, "device", key->device,
                     "platform", platform_of(key), "algo", key->algo, "variant", key->variant, "driver",
                     key->driver, "lode", LODE_VERSION, "params", params);
}

/* Writes entries under a temporary name beside path and renames it over
 * path: readers see the old file or the new one, never half of one. */
static int write_entries(const char *path, const json_t *entries)
{
    char tmp[760];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return -1;
    (void)fchmod(fd, 0644); /* mkstemp's 0600 is stricter than a cache needs */
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        int e = errno;
        close(fd);
        remove(tmp);
        errno = e;
        return -1;
    }
    int rc = json_dumpf(entries, f, JSON_INDENT(1) | JSON_REAL_PRECISION(12)) == 0 && fputc('\n', f) != EOF &&
                     fflush(f) == 0 && fsync(fileno(f)) == 0 /* durable before it replaces the old file */
                 ? 0
                 : -1;
    int e = errno;
    if (fclose(f) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        e = errno;
    }
    if (rc != 0)
        remove(tmp);
    errno = e;
    return rc;
}

int lode_tune_store(const lode_tune_key *key, const char *const names[], const double values[], size_t n)
{
    char path[700];
    if (cache_path(path, sizeof path, true) != 0) {
        lode_log(LODE_LOG_WARN, "%s: no cache folder for the tuning (set XDG_CACHE_HOME or HOME)", key->backend);
        return -1;
    }
    json_t *entry = new_entry(key, names, values, n);
    if (entry == NULL) {
        /* A value that is not finite, or a name that is not UTF-8. */
        lode_log(LODE_LOG_WARN, "%s: tuning of %s not cached: it has no JSON form", key->backend, key->device);
        return -1;
    }
    pthread_mutex_lock(&cache_lock);
    /* Keep every other well-formed entry, drop this slot's (current or
     * stale), and append the new one. */
    json_t *old = read_entries(path), *out = json_array(), *e;
    size_t i;
    json_array_foreach(old, i, e) {
        if (json_array_size(out) + 1 >= MAX_ENTRIES)
            break;
        if (well_formed(e) && !same_slot(e, key))
            json_array_append(out, e);
    }
    json_decref(old);
    int rc = json_array_append_new(out, entry);
    if (rc == 0)
        rc = write_entries(path, out);
    int err = errno;
    pthread_mutex_unlock(&cache_lock);
    json_decref(out);
    if (rc != 0)
        lode_log(LODE_LOG_WARN, "%s: cannot write the tuning cache %s: %s", key->backend, path, strerror(err));
    return rc;
}

/* "k=N,k=N" (len bytes at spec): each k one of names, each N in
 * 1..MAX_ENV_VALUE. With values non-NULL they are written, else only checked. */
static bool parse_values(const char *spec, size_t len, const char *const names[], double values[], size_t n)
{
    if (len == 0)
        return false; /* "sha256d:" names no value */
    while (len > 0) {
        size_t item = 0;
        while (item < len && spec[item] != ',')
            item++;
        const char *eq = memchr(spec, '=', item);
        if (eq == NULL || !isdigit((unsigned char)eq[1]))
            return false;
        size_t klen = (size_t)(eq - spec);
        size_t k = 0;
        while (k < n && !(strlen(names[k]) == klen && strncmp(names[k], spec, klen) == 0))
            k++;
        if (k == n)
            return false;
        unsigned long v = 0;
        for (const char *p = eq + 1; p < spec + item; p++) {
            if (!isdigit((unsigned char)*p))
                return false;
            v = v * 10 + (unsigned long)(*p - '0');
            if (v > MAX_ENV_VALUE)
                return false;
        }
        if (v == 0)
            return false;
        if (values != NULL)
            values[k] = (double)v;
        /* "a=1," has an empty item after the comma: malformed. */
        if (item < len && item + 1 == len)
            return false;
        spec += item + (item < len);
        len -= item + (item < len);
    }
    return true;
}

/* Each variable's complaint is logged once per process, not per device. */
static void warn_once(const char *env, const char *text)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char warned[8][64];
    pthread_mutex_lock(&lock);
    bool seen = false;
    size_t i = 0;
    for (; i < 8 && warned[i][0] != '\0'; i++)
        seen = seen || strcmp(warned[i], env) == 0;
    if (!seen && i < 8)
        snprintf(warned[i], sizeof warned[i], "%s", env);
    pthread_mutex_unlock(&lock);
    if (!seen)
        lode_log(LODE_LOG_WARN, "ignoring %s='%s' (want off, retune or ALGO:key=N,key=N;...)", env, text);
}

lode_tune_mode lode_tune_env(lode_setting_id setting, const char *algo, const char *const names[], double values[],
                             size_t n)
{
    const char *env = lode_setting_info(setting)->name;
    const char *text = lode_setting_text(setting);
    if (text == NULL || text[0] == '\0')
        return LODE_TUNE_AUTO;
    if (strcmp(text, "off") == 0)
        return LODE_TUNE_OFF;
    if (strcmp(text, "retune") == 0)
        return LODE_TUNE_RETUNE;
    /* The whole text is checked first, so that every algorithm reads the
     * same text as malformed or not. */
    const size_t algo_len = strlen(algo);
    bool fixed = false;
    for (int apply = 0; apply < 2; apply++)
        for (const char *s = text; *s != '\0';) {
            size_t len = strcspn(s, ";");
            const char *colon = memchr(s, ':', len);
            if (colon == NULL || colon == s) {
                warn_once(env, text);
                return LODE_TUNE_AUTO;
            }
            const bool mine = (size_t)(colon - s) == algo_len && strncmp(s, algo, algo_len) == 0;
            const char *spec = colon + 1;
            const size_t spec_len = len - (size_t)(spec - s);
            if (!parse_values(spec, spec_len, names, apply && mine ? values : NULL, n)) {
                warn_once(env, text);
                return LODE_TUNE_AUTO;
            }
            fixed = fixed || mine;
            s += len + (s[len] == ';');
        }
    return fixed ? LODE_TUNE_FIXED : LODE_TUNE_AUTO;
}
