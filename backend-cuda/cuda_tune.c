/* The CUDA tuning cache and environment override (cuda_tune.h). */
#include "backend-cuda/cuda_tune.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "core/log.h"

#ifndef LODE_VERSION
#define LODE_VERSION "unknown"
#endif

#define LINE_MAX_LEN 1024
#define MAX_ENTRIES 256

/* Workers of several GPUs in one process share the file. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

void cuda_tune_driver_version(char *out, unsigned len)
{
    int v = 0;
    cudaDriverGetVersion(&v);
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." */
    char line[256] = "";
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f != NULL) {
        if (fgets(line, sizeof line, f) == NULL)
            line[0] = '\0';
        fclose(f);
    }
    /* The first word shaped like 580.159.04 after "Module". */
    char module[32] = "";
    const char *p = strstr(line, "Module");
    while (p != NULL && *p != '\0' && module[0] == '\0') {
        p += strcspn(p, "0123456789");
        unsigned a, b;
        int n = 0;
        if (sscanf(p, "%u.%u%n", &a, &b, &n) == 2 && n > 0)
            sscanf(p, "%31[0-9.]", module);
        else
            p += strspn(p, "0123456789");
    }
    snprintf(out, len, "%s%scuda %d", module, module[0] ? " " : "", v);
}

/* Keeps a string safe inside JSON quotes without an escaper. */
static void json_safe(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src[i] != '\0' && i + 1 < len; i++)
        dst[i] = (src[i] == '"' || src[i] == '\\' || (unsigned char)src[i] < 0x20) ? '_' : src[i];
    dst[i] = '\0';
}

static int cache_path(char *out, size_t len, bool make_dir)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[512];
    if (xdg != NULL && xdg[0] == '/')
        snprintf(dir, sizeof dir, "%s/lode", xdg);
    else if (home != NULL && home[0] != '\0')
        snprintf(dir, sizeof dir, "%s/.cache/lode", home);
    else
        return -1;
    if (make_dir) {
        /* mkdir -p of the last two levels ($HOME/.cache may not exist). */
        char parent[512];
        snprintf(parent, sizeof parent, "%s", dir);
        char *slash = strrchr(parent, '/');
        if (slash != NULL && slash != parent) {
            *slash = '\0';
            if (mkdir(parent, 0755) != 0 && errno != EEXIST)
                return -1;
        }
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
    }
    int n = snprintf(out, len, "%s/cuda-tune.json", dir);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* The string value of "name": "..." in a one-line object. */
static bool field_str(const char *line, const char *name, char *out, size_t len)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", name);
    const char *p = strstr(line, pat);
    if (p == NULL)
        return false;
    p += strlen(pat);
    const char *q = strchr(p, '"');
    if (q == NULL || (size_t)(q - p) >= len)
        return false;
    memcpy(out, p, (size_t)(q - p));
    out[q - p] = '\0';
    return true;
}

static bool field_num(const char *line, const char *name, double *out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", name);
    const char *p = strstr(line, pat);
    if (p == NULL)
        return false;
    char *end;
    *out = strtod(p + strlen(pat), &end);
    return end != p + strlen(pat);
}

/* Same device, algorithm and variant (whatever the versions). */
static bool same_slot(const char *line, const cuda_tune_key *key, const char *device)
{
    char v[160];
    return field_str(line, "device", v, sizeof v) && strcmp(v, device) == 0 &&
           field_str(line, "algo", v, sizeof v) && strcmp(v, key->algo) == 0 &&
           field_str(line, "variant", v, sizeof v) && strcmp(v, key->variant) == 0;
}

int cuda_tune_load(const cuda_tune_key *key, cuda_tune_params *out)
{
    char path[600], device[128], line[LINE_MAX_LEN], v[160];
    if (cache_path(path, sizeof path, false) != 0)
        return -1;
    json_safe(device, sizeof device, key->device);
    pthread_mutex_lock(&cache_lock);
    FILE *f = fopen(path, "r");
    int rc = -1;
    while (f != NULL && rc != 0 && fgets(line, sizeof line, f) != NULL) {
        double tpb, npt, waves, rate;
        if (!same_slot(line, key, device) || !field_str(line, "driver", v, sizeof v) ||
            strcmp(v, key->driver) != 0 || !field_str(line, "lode", v, sizeof v) ||
            strcmp(v, LODE_VERSION) != 0)
            continue;
        if (field_num(line, "threads_per_block", &tpb) && field_num(line, "nonces_per_thread", &npt) &&
            field_num(line, "waves", &waves) && field_num(line, "rate", &rate) && tpb >= 32 &&
            tpb <= 1024 && npt >= 0 && npt < 1e6 && waves >= 0 && waves < 64) {
            out->threads_per_block = (unsigned)tpb;
            out->nonces_per_thread = (unsigned)npt;
            out->waves = (unsigned)waves;
            out->rate = rate;
            rc = 0;
        }
    }
    if (f != NULL)
        fclose(f);
    pthread_mutex_unlock(&cache_lock);
    return rc;
}

int cuda_tune_store(const cuda_tune_key *key, const cuda_tune_params *p)
{
    char path[600], tmp[640], device[128], driver[64];
    if (cache_path(path, sizeof path, true) != 0) {
        lode_log(LODE_LOG_WARN, "cuda: no cache folder for the tuning (set XDG_CACHE_HOME or HOME)");
        return -1;
    }
    json_safe(device, sizeof device, key->device);
    json_safe(driver, sizeof driver, key->driver);
    pthread_mutex_lock(&cache_lock);
    /* Keep every other entry, drop this slot's, append the new one, and
     * replace the file in one rename so readers never see half of it. */
    static char kept[MAX_ENTRIES][LINE_MAX_LEN];
    int n = 0;
    FILE *f = fopen(path, "r");
    char line[LINE_MAX_LEN];
    while (f != NULL && n < MAX_ENTRIES - 1 && fgets(line, sizeof line, f) != NULL) {
        if (strchr(line, '{') == NULL || same_slot(line, key, device))
            continue;
        line[strcspn(line, "\n")] = '\0';
        size_t l = strlen(line);
        if (l > 0 && line[l - 1] == ',')
            line[l - 1] = '\0';
        snprintf(kept[n++], LINE_MAX_LEN, "%s", line);
    }
    if (f != NULL)
        fclose(f);
    snprintf(kept[n++], LINE_MAX_LEN,
             "{\"device\": \"%s\", \"driver\": \"%s\", \"lode\": \"%s\", \"algo\": \"%s\", "
             "\"variant\": \"%s\", \"threads_per_block\": %u, \"nonces_per_thread\": %u, "
             "\"waves\": %u, \"rate\": %.6g}",
             device, driver, LODE_VERSION, key->algo, key->variant, p->threads_per_block,
             p->nonces_per_thread, p->waves, p->rate);
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
        lode_log(LODE_LOG_WARN, "cuda: cannot write the tuning cache %s: %s", path, strerror(errno));
    return rc;
}

static bool parse_spec(const char *spec, size_t len, cuda_tune_params *p)
{
    char buf[256];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, spec, len);
    buf[len] = '\0';
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq == NULL)
            return false;
        *eq = '\0';
        char *end;
        unsigned long v = strtoul(eq + 1, &end, 10);
        if (*end != '\0' || v == 0 || v > 1u << 20)
            return false;
        if (strcmp(kv, "tpb") == 0 && v % 32 == 0 && v <= 1024)
            p->threads_per_block = (unsigned)v;
        else if (strcmp(kv, "npt") == 0)
            p->nonces_per_thread = (unsigned)v;
        else if (strcmp(kv, "waves") == 0 && v <= 16)
            p->waves = (unsigned)v;
        else
            return false;
    }
    return true;
}

static void log_malformed(void)
{
    lode_log(LODE_LOG_WARN, "cuda: ignoring LODE_CUDA_TUNE='%s' (want off, retune or "
             "ALGO:tpb=N,npt=N,waves=N;...)", getenv("LODE_CUDA_TUNE"));
}

cuda_tune_mode cuda_tune_env(const char *algo, cuda_tune_params *p)
{
    static pthread_once_t warn_once = PTHREAD_ONCE_INIT;
    const char *env = getenv("LODE_CUDA_TUNE");
    if (env == NULL || env[0] == '\0')
        return CUDA_TUNE_AUTO;
    if (strcmp(env, "off") == 0)
        return CUDA_TUNE_OFF;
    if (strcmp(env, "retune") == 0)
        return CUDA_TUNE_RETUNE;
    size_t algo_len = strlen(algo);
    for (const char *s = env; *s != '\0';) {
        size_t len = strcspn(s, ";");
        const char *colon = memchr(s, ':', len);
        if (colon == NULL)
            goto malformed;
        if ((size_t)(colon - s) == algo_len && strncmp(s, algo, algo_len) == 0) {
            cuda_tune_params q = *p;
            if (!parse_spec(colon + 1, len - (size_t)(colon + 1 - s), &q))
                goto malformed;
            *p = q;
            return CUDA_TUNE_FIXED;
        }
        s += len + (s[len] == ';');
    }
    return CUDA_TUNE_AUTO;
malformed:
    pthread_once(&warn_once, log_malformed);
    return CUDA_TUNE_AUTO;
}
