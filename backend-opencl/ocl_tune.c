/* The OpenCL tuning cache and environment override (ocl_tune.h). */
#include "backend-opencl/ocl_tune.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend-opencl/ocl_program.h"
#include "core/log.h"

#ifndef LODE_VERSION
#define LODE_VERSION "unknown"
#endif

#define LINE_LEN 1024
#define MAX_ENTRIES 256

/* Workers of several devices in one process share the file. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int cache_path(char *out, size_t len, bool make)
{
    char dir[600];
    if (ocl_cache_dir(dir, sizeof dir, "", make) != 0)
        return -1;
    int n = snprintf(out, len, "%s/opencl-tune.json", dir);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Keeps a string safe inside JSON quotes without an escaper. */
static void json_safe(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src[i] != '\0' && i + 1 < len; i++)
        dst[i] = (src[i] == '"' || src[i] == '\\' || (unsigned char)src[i] < 0x20) ? '_' : src[i];
    dst[i] = '\0';
}

/* Every entry starts with the fields that name its slot, then the
 * versions it is valid for, in a fixed order: matching is a prefix test. */
static void slot_prefix(const ocl_tune_key *k, char *out, size_t len)
{
    char dev[160], plat[160], var[64];
    json_safe(dev, sizeof dev, k->device);
    json_safe(plat, sizeof plat, k->platform);
    json_safe(var, sizeof var, k->variant);
    snprintf(out, len, "{\"device\": \"%s\", \"platform\": \"%s\", \"algo\": \"%s\", \"variant\": \"%s\", ",
             dev, plat, k->algo, var);
}

static void full_prefix(const ocl_tune_key *k, char *out, size_t len)
{
    char slot[600], drv[160];
    slot_prefix(k, slot, sizeof slot);
    json_safe(drv, sizeof drv, k->driver);
    snprintf(out, len, "%s\"driver\": \"%s\", \"lode\": \"%s\", ", slot, drv, LODE_VERSION);
}

int ocl_tune_load(const ocl_tune_key *key, ocl_tune_params *out)
{
    char path[700], prefix[900], line[LINE_LEN];
    if (cache_path(path, sizeof path, false) != 0)
        return -1;
    full_prefix(key, prefix, sizeof prefix);
    const size_t plen = strlen(prefix);
    int rc = -1;
    pthread_mutex_lock(&cache_lock);
    FILE *f = fopen(path, "r");
    while (f != NULL && rc != 0 && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, prefix, plen) != 0)
            continue;
        unsigned ls, per, batch;
        double rate;
        if (sscanf(line + plen, "\"local_size\": %u, \"per_item\": %u, \"batch\": %u, \"rate\": %lf",
                   &ls, &per, &batch, &rate) == 4 && ls >= 1 && ls <= 4096 && per >= 1 &&
            per <= 4096 && rate > 0) {
            *out = (ocl_tune_params){.local_size = ls, .per_item = per, .batch = batch, .rate = rate};
            rc = 0;
        }
    }
    if (f != NULL)
        fclose(f);
    pthread_mutex_unlock(&cache_lock);
    return rc;
}

int ocl_tune_store(const ocl_tune_key *key, const ocl_tune_params *p)
{
    char path[700], tmp[760], slot[600], prefix[900], line[LINE_LEN];
    if (cache_path(path, sizeof path, true) != 0) {
        lode_log(LODE_LOG_WARN, "opencl: no cache folder for the tuning (set XDG_CACHE_HOME or HOME)");
        return -1;
    }
    slot_prefix(key, slot, sizeof slot);
    full_prefix(key, prefix, sizeof prefix);
    pthread_mutex_lock(&cache_lock);
    /* Keep every other entry, drop this slot's (current or stale), append
     * the new one, and replace the file in one rename. */
    static char kept[MAX_ENTRIES][LINE_LEN];
    int n = 0;
    FILE *f = fopen(path, "r");
    while (f != NULL && n < MAX_ENTRIES - 1 && fgets(line, sizeof line, f) != NULL) {
        if (line[0] != '{' || strncmp(line, slot, strlen(slot)) == 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        size_t l = strlen(line);
        if (l > 0 && line[l - 1] == ',')
            line[l - 1] = '\0';
        snprintf(kept[n++], LINE_LEN, "%s", line);
    }
    if (f != NULL)
        fclose(f);
    snprintf(kept[n++], LINE_LEN, "%s\"local_size\": %u, \"per_item\": %u, \"batch\": %u, \"rate\": %.6g}",
             prefix, p->local_size, p->per_item, p->batch, p->rate);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int rc = -1;
    f = fopen(tmp, "w");
    if (f != NULL) {
        fputs("[\n", f);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%s\n", kept[i], i + 1 < n ? "," : "");
        fputs("]\n", f);
        rc = fclose(f) == 0 && rename(tmp, path) == 0 ? 0 : -1;
        if (rc != 0)
            remove(tmp);
    }
    pthread_mutex_unlock(&cache_lock);
    if (rc != 0)
        lode_log(LODE_LOG_WARN, "opencl: cannot write the tuning cache %s: %s", path, strerror(errno));
    return rc;
}

static bool parse_spec(const char *spec, size_t len, ocl_tune_params *p)
{
    char buf[256];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, spec, len);
    buf[len] = '\0';
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '='), *end;
        if (eq == NULL)
            return false;
        *eq = '\0';
        unsigned long v = strtoul(eq + 1, &end, 10);
        if (*end != '\0' || v == 0 || v > 1ul << 24)
            return false;
        if (strcmp(kv, "ls") == 0 && v <= 4096)
            p->local_size = (unsigned)v;
        else if ((strcmp(kv, "npt") == 0 || strcmp(kv, "il") == 0) && v <= 4096)
            p->per_item = (unsigned)v;
        else if (strcmp(kv, "batch") == 0)
            p->batch = (unsigned)v;
        else
            return false;
    }
    return true;
}

static void log_malformed(void)
{
    lode_log(LODE_LOG_WARN, "opencl: ignoring LODE_OPENCL_TUNE='%s' (want off, retune or "
             "ALGO:ls=N,npt=N,il=N,batch=N;...)", getenv("LODE_OPENCL_TUNE"));
}

ocl_tune_mode ocl_tune_env(const char *algo, ocl_tune_params *p)
{
    static pthread_once_t warn_once = PTHREAD_ONCE_INIT;
    const char *env = getenv("LODE_OPENCL_TUNE");
    if (env == NULL || env[0] == '\0')
        return OCL_TUNE_AUTO;
    if (strcmp(env, "off") == 0)
        return OCL_TUNE_OFF;
    if (strcmp(env, "retune") == 0)
        return OCL_TUNE_RETUNE;
    const size_t algo_len = strlen(algo);
    for (const char *s = env; *s != '\0';) {
        size_t len = strcspn(s, ";");
        const char *colon = memchr(s, ':', len);
        if (colon == NULL)
            goto malformed;
        if ((size_t)(colon - s) == algo_len && strncmp(s, algo, algo_len) == 0) {
            ocl_tune_params q = *p;
            if (!parse_spec(colon + 1, len - (size_t)(colon + 1 - s), &q))
                goto malformed;
            *p = q;
            return OCL_TUNE_FIXED;
        }
        s += len + (s[len] == ';');
    }
    return OCL_TUNE_AUTO;
malformed:
    pthread_once(&warn_once, log_malformed);
    return OCL_TUNE_AUTO;
}
