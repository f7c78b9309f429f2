#include "core/tf/results.h"

#include <ctype.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "core/base/tf_ref.h"
#include "core/tf/checkpoint.h"
#include "core/tf/fileio.h"

static bool is_hex32(const char *s)
{
    if (strlen(s) != 32)
        return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return false;
    return true;
}

const char *lode_tf_result_os(const char *sysname)
{
    return strcmp(sysname, "Darwin") == 0 ? "macOS" : sysname;
}

const char *lode_tf_result_arch(const char *machine)
{
    if (strcmp(machine, "amd64") == 0 || strcmp(machine, "x86_64") == 0)
        return "x86_64";
    if (strcmp(machine, "aarch64") == 0 || strcmp(machine, "arm64") == 0)
        return "ARM64";
    if (strlen(machine) == 4 && machine[0] == 'i' && strcmp(machine + 2, "86") == 0)
        return "x86_32";
    return machine;
}

char *lode_tf_result_json(const lode_tf_assignment *a, const uint64_t *k, int factors,
                          const lode_tf_report_info *info)
{
    struct utsname un;
    const char *os = info->os, *arch = info->arch, *ts = info->timestamp;
    if (os == NULL || arch == NULL) {
        bool got = uname(&un) == 0;
        os = os ? os : got ? lode_tf_result_os(un.sysname) : "Linux";
        arch = arch ? arch : got ? lode_tf_result_arch(un.machine) : "unknown";
    }
    char now_text[32];
    if (ts == NULL) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(now_text, sizeof now_text, "%Y-%m-%d %H:%M:%S", &tm);
        ts = now_text;
    }
    if (factors > LODE_TF_MAX_FACTORS)
        factors = LODE_TF_MAX_FACTORS;
    char factors_csv[LODE_TF_MAX_FACTORS * 42] = "";
    size_t fc = 0;
    json_t *list = json_array();
    for (int i = 0; i < factors; i++) {
        char q[48];
        lode_tf_u128_str(lode_tf_q(a->p, k[i]), q);
        fc += (size_t)snprintf(factors_csv + fc, sizeof factors_csv - fc, "%s%s", i ? "," : "", q);
        json_array_append_new(list, json_string(q));
    }
    size_t sum_len = strlen(factors_csv) + strlen(info->version) + strlen(info->kernel) +
                     strlen(info->details) + strlen(os) + strlen(arch) + strlen(ts) + 128;
    char *sum_text = malloc(sum_len);
    if (sum_text == NULL) {
        json_decref(list);
        return NULL;
    }
    snprintf(sum_text, sum_len, "%u;TF;%s;;%u;%u;%d;;;lode;%s;%s;%s;%s;%s;%s", a->p, factors_csv, a->bit_min,
             a->bit_max, !info->partial, info->version, info->kernel, info->details, os, arch, ts);
    char sum[16];
    snprintf(sum, sizeof sum, "%08X", lode_tf_crc32(sum_text, strlen(sum_text)));
    free(sum_text);
    json_t *r = json_object();
    json_object_set_new(r, "exponent", json_integer(a->p));
    json_object_set_new(r, "worktype", json_string("TF"));
    json_object_set_new(r, "status", json_string(factors ? "F" : "NF"));
    json_object_set_new(r, "bitlo", json_integer(a->bit_min));
    json_object_set_new(r, "bithi", json_integer(a->bit_max));
    json_object_set_new(r, "rangecomplete", json_boolean(!info->partial));
    if (factors)
        json_object_set(r, "factors", list);
    json_object_set_new(r, "program", json_pack("{s:s, s:s, s:s, s:s}", "name", "lode", "version", info->version,
                                                "kernel", info->kernel, "details", info->details));
    json_object_set_new(r, "timestamp", json_string(ts));
    if (info->user)
        json_object_set_new(r, "user", json_string(info->user));
    if (info->computer)
        json_object_set_new(r, "computer", json_string(info->computer));
    if (is_hex32(a->aid))
        json_object_set_new(r, "aid", json_string(a->aid));
    json_object_set_new(r, "os", json_pack("{s:s, s:s}", "os", os, "architecture", arch));
    if (info->proof != NULL) {
        const lode_tf_proof_summary *pf = info->proof;
        /* expected to one decimal, as the proof file's header */
        json_object_set_new(r, "lode_proof", json_pack("{s:i, s:i, s:f, s:s, s:s}", "t", (int)pf->t, "count",
                                                       (int)pf->count, "expected",
                                                       (double)(long long)(pf->expected * 10 + 0.5) / 10,
                                                       "sha256", pf->sha256,
                                                       "file", pf->file));
    }
    json_object_set_new(r, "checksum", json_pack("{s:i, s:s}", "version", 1, "checksum", sum));
    json_decref(list);
    char *body = json_dumps(r, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)); /* expected: 1299.9 */
    json_decref(r);
    char *line = body ? malloc(strlen(body) + 2) : NULL;
    if (line != NULL)
        sprintf(line, "%s\n", body);
    free(body);
    return line;
}

/* snprintf at out + *at, keeping *at the length the whole text would have. */
static void put(char *out, size_t size, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *out, size_t size, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*at < size ? out + *at : NULL, *at < size ? size - *at : 0, fmt, ap);
    va_end(ap);
    *at += w > 0 ? (size_t)w : 0;
}

size_t lode_tf_legacy_lines(const lode_tf_assignment *a, const uint64_t *k, int factors,
                            const lode_tf_report_info *info, bool tagged, char *out, size_t size)
{
    size_t at = 0;
    if (size > 0)
        out[0] = '\0';
    for (int i = 0; i < factors; i++) {
        char q[48];
        lode_tf_u128_str(lode_tf_q(a->p, k[i]), q);
        put(out, size, &at, "M%u has a factor: %s", a->p, q);
        if (tagged)
            put(out, size, &at, " [TF:%u:%u:lode %s %s]", a->bit_min, a->bit_max, info->version, info->kernel);
        put(out, size, &at, "\n");
    }
    if (factors == 0)
        put(out, size, &at, "no factor for M%u from 2^%u to 2^%u", a->p, a->bit_min, a->bit_max);
    else
        put(out, size, &at, "found %d factor%s for M%u from 2^%u to 2^%u%s", factors, factors > 1 ? "s" : "", a->p,
            a->bit_min, a->bit_max, info->partial ? " (partially tested)" : "");
    if (tagged)
        put(out, size, &at, " [lode %s %s]", info->version, info->kernel);
    put(out, size, &at, "\n");
    return at;
}

bool lode_tf_result_present(const char *path, long offset, const lode_tf_assignment *a, bool json)
{
    size_t len;
    char *text = path != NULL && offset >= 0 ? lode_tf_read_file(path, &len) : NULL;
    if (text == NULL)
        return false;
    char summary[96];
    snprintf(summary, sizeof summary, " for M%u from 2^%u to 2^%u ", a->p, a->bit_min, a->bit_max);
    bool found = false;
    size_t pos = (size_t)offset, n;
    const char *line;
    while (!found && pos <= len && lode_tf_next_line(text, len, &pos, &line, &n)) {
        if (pos > len || text[pos - 1] != '\n') /* cut short */
            break;
        if (!json) {
            char *l = strndup(line, n);
            found = l != NULL && strstr(l, summary) != NULL && (strncmp(l, "no factor", 9) == 0 ||
                                                                 strncmp(l, "found ", 6) == 0);
            free(l);
            continue;
        }
        json_t *r = json_loadb(line, n, 0, NULL);
        const char *aid = json_string_value(json_object_get(r, "aid"));
        found = r != NULL && json_integer_value(json_object_get(r, "exponent")) == a->p &&
                json_integer_value(json_object_get(r, "bitlo")) == a->bit_min &&
                json_integer_value(json_object_get(r, "bithi")) == a->bit_max &&
                json_is_string(json_object_get(r, "worktype")) &&
                strcmp(json_string_value(json_object_get(r, "worktype")), "TF") == 0 &&
                (is_hex32(a->aid) ? aid != NULL && strcmp(aid, a->aid) == 0 : aid == NULL);
        json_decref(r);
    }
    free(text);
    return found;
}
