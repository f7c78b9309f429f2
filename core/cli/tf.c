/* `lode tf`: trial factoring of Mersenne numbers the way GIMPS users run
 * mfaktc.
 *
 *   lode tf EXPONENT BIT_MIN BIT_MAX [options]   one assignment
 *   lode tf [--worktodo FILE] [options]          every Factor= line, in order
 *   lode tf --selftest [-d LIST]                 every known factor, every device
 *
 * Classes run in ascending order, one dispatcher job per class (all
 * workers of all devices share it). A checkpoint (M<p>_<a>_<b>.ckp: the
 * next class, the factors so far, a CRC-32) is written by rename every
 * --checkpoint-interval seconds and on Ctrl-C, after a whole class: a
 * SIGKILL loses at most the classes since the last one and a class is never
 * skipped. Results: the legacy lines on stdout, one PrimeNet JSON line in
 * results.json.txt, optionally results.txt. */
#include "core/cli/tf.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/cli/cli.h"
#include "core/dispatch.h"
#include "core/log.h"
#include "core/status.h"
#include "core/tf_ref.h"
#include "core/tf_selftest.h"

#define MAX_FACTORS 64
#define LINE_MAX_LEN 100 /* mfaktc's worktodo limit */

typedef struct tf_options {
    const char *devices;
    unsigned threads;
    const char *worktodo, *results, *legacy, *ckp_dir, *class_log, *user, *computer;
    double ckp_interval, progress_interval;
    bool selftest, quiet;
} tf_options;

typedef struct assignment {
    char aid[64]; /* "" or "N/A" or the key */
    uint32_t p;
    unsigned bit_min, bit_max;
    char line[LINE_MAX_LEN + 2]; /* the worktodo line as read (no newline) */
} assignment;

/* Confirmed hits of the running class. */
typedef struct hit_log {
    pthread_mutex_t lock;
    uint64_t n[MAX_FACTORS];
    uint64_t seq[MAX_FACTORS];
    int count;
} hit_log;

static void on_found(void *user, const lode_found *f)
{
    hit_log *h = user;
    pthread_mutex_lock(&h->lock);
    if (h->count < MAX_FACTORS) {
        h->n[h->count] = f->hit.index;
        h->seq[h->count++] = f->job_seq;
    }
    pthread_mutex_unlock(&h->lock);
}

/* ---- CRC-32 (poly 0xEDB88320, as zlib.crc32) ---- */
static uint32_t crc32_of(const void *data, size_t len)
{
    const uint8_t *b = data;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        c ^= b[i];
        for (int j = 0; j < 8; j++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return c ^ 0xFFFFFFFFu;
}

/* Writes text to path through path.tmp, fsync and rename. */
static int write_atomic(const char *path, const char *text, size_t len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL)
        return -1;
    bool ok = fwrite(text, 1, len, f) == len && fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *g = realloc(buf, 2 * cap + 1);
            if (g == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = g;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* ---- worktodo ---- */

static bool parse_uint(const char *s, const char **end, uint64_t max, uint64_t *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s))
        return false;
    uint64_t v = 0;
    while (isdigit((unsigned char)*s)) {
        v = v * 10 + (uint64_t)(*s++ - '0');
        if (v > max)
            return false;
    }
    while (*s == ' ' || *s == '\t')
        s++;
    *end = s;
    *out = v;
    return true;
}

/* One line: 1 = an assignment, 0 = blank or comment, -1 = malformed (why). */
static int parse_line(const char *line, assignment *a, char *why, size_t why_len)
{
    size_t len = strlen(line);
    const char *s = line;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0' || strncmp(s, "//", 2) == 0 || strncmp(s, "\\\\", 2) == 0)
        return 0;
    if (len > LINE_MAX_LEN) {
        snprintf(why, why_len, "longer than %d characters", LINE_MAX_LEN);
        return -1;
    }
    if (strncasecmp(s, "Factor=", 7) != 0) {
        snprintf(why, why_len, "not a Factor= assignment");
        return -1;
    }
    s += 7;
    int commas = 0;
    for (const char *c = s; *c; c++)
        commas += *c == ',';
    if (commas != 2 && commas != 3) {
        snprintf(why, why_len, "want Factor=[AID,]exponent,bit_min,bit_max");
        return -1;
    }
    memset(a, 0, sizeof *a);
    if (commas == 3) {
        const char *comma = strchr(s, ',');
        size_t n = (size_t)(comma - s);
        if (n == 0 || n >= sizeof a->aid) {
            snprintf(why, why_len, "bad assignment key");
            return -1;
        }
        memcpy(a->aid, s, n);
        s = comma + 1;
    }
    while (*s == ' ')
        s++;
    if (*s == 'M' || *s == 'm')
        s++;
    uint64_t p, lo, hi;
    const char *e;
    if (!parse_uint(s, &e, UINT32_MAX, &p) || *e != ',' || !parse_uint(e + 1, &e, 1000, &lo) ||
        *e != ',' || !parse_uint(e + 1, &e, 1000, &hi) ||
        (isalnum((unsigned char)*e) && isdigit((unsigned char)e[-1]))) { /* "36 text": a comment */
        snprintf(why, why_len, "want numbers: Factor=[AID,]exponent,bit_min,bit_max");
        return -1;
    }
    if (lode_tf_validate((uint32_t)p, (unsigned)lo, (unsigned)hi, why, why_len) != 0)
        return -1;
    a->p = (uint32_t)p;
    a->bit_min = (unsigned)lo;
    a->bit_max = (unsigned)hi;
    snprintf(a->line, sizeof a->line, "%s", line);
    return 1;
}

/* Removes the first line equal to `line` from the worktodo file (re-read
 * now: the user may have edited it), through a temporary file and rename. */
static int remove_line(const char *path, const char *line)
{
    size_t len;
    char *text = read_file(path, &len);
    if (text == NULL)
        return -1;
    char *out = malloc(len + 1);
    size_t o = 0;
    bool removed = false;
    for (char *s = text; out != NULL && *s;) {
        char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        size_t cmp = n > 0 && s[n - 1] == '\r' ? n - 1 : n;
        if (!removed && cmp == strlen(line) && memcmp(s, line, cmp) == 0) {
            removed = true;
        } else {
            memcpy(out + o, s, n);
            o += n;
            if (nl)
                out[o++] = '\n';
        }
        s += n + (nl != NULL);
    }
    int rc = out != NULL ? write_atomic(path, out, o) : -1;
    free(out);
    free(text);
    return rc;
}

/* worktodo.add beside the worktodo file (mfaktc's habit: a place to drop
 * new work while lode runs): appended to the worktodo file by rename, then
 * removed. Returns how many bytes were merged, or -1 (nothing lost: the
 * .add file is removed only after the merged file is in place). */
static long merge_add_file(const char *worktodo)
{
    char add[4096];
    const char *slash = strrchr(worktodo, '/');
    int dir = slash ? (int)(slash - worktodo + 1) : 0;
    if (snprintf(add, sizeof add, "%.*sworktodo.add", dir, worktodo) >= (int)sizeof add)
        return -1;
    size_t add_len, len = 0;
    char *extra = read_file(add, &add_len);
    if (extra == NULL)
        return errno == ENOENT ? 0 : -1;
    char *text = read_file(worktodo, &len);
    if (text == NULL && errno != ENOENT) {
        free(extra);
        return -1;
    }
    char *both = malloc(len + add_len + 2);
    long rc = -1;
    if (both != NULL) {
        size_t o = 0;
        if (len > 0) {
            memcpy(both, text, len);
            o = len;
            if (both[o - 1] != '\n')
                both[o++] = '\n';
        }
        memcpy(both + o, extra, add_len);
        o += add_len;
        if (write_atomic(worktodo, both, o) == 0 && remove(add) == 0)
            rc = (long)add_len;
    }
    free(both);
    free(text);
    free(extra);
    if (rc > 0)
        lode_log(LODE_LOG_INFO, "%s: merged into %s", add, worktodo);
    return rc;
}

/* Reads the worktodo file's valid assignments into *list (in order);
 * malformed lines are counted in *bad_lines and, if log, named. */
static int load_worktodo(const char *path, assignment **list, size_t *count, int *bad_lines, bool log)
{
    size_t len;
    char *text = read_file(path, &len);
    *list = NULL;
    *count = 0;
    *bad_lines = 0;
    if (text == NULL)
        return -1;
    unsigned lineno = 0;
    for (char *s = text; *s;) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        size_t n = strlen(s);
        if (n > 0 && s[n - 1] == '\r')
            s[n - 1] = '\0';
        lineno++;
        assignment a;
        char why[256];
        int r = parse_line(s, &a, why, sizeof why);
        if (r < 0) {
            if (log)
                lode_log(LODE_LOG_ERROR, "%s:%u: malformed line '%s': %s (line kept, skipped)", path, lineno, s,
                         why);
            (*bad_lines)++;
        } else if (r == 1) {
            assignment *g = realloc(*list, (*count + 1) * sizeof **list);
            if (g == NULL) {
                free(text);
                return -1;
            }
            *list = g;
            (*list)[(*count)++] = a;
        }
        s = nl ? nl + 1 : s + n;
    }
    free(text);
    return 0;
}

/* ---- checkpoints ---- */

typedef struct progress {
    unsigned next_class;   /* every needed class below it is done */
    unsigned classes_done; /* needed classes done */
    uint64_t k[MAX_FACTORS];
    int factors;
    long class_log_offset; /* length of the class log when saved */
    long results_offset;   /* -1; else the results file's length just before
                              the result was appended (a SIGKILL between the
                              append and the checkpoint's removal must not
                              report it twice) */
} progress;

static void ckp_path(const tf_options *o, const assignment *a, char *out, size_t len)
{
    snprintf(out, len, "%s/M%u_%u_%u.ckp", o->ckp_dir, a->p, a->bit_min, a->bit_max);
}

static int ckp_save(const char *path, const assignment *a, const progress *pr)
{
    char buf[4096];
    int n = snprintf(buf, sizeof buf, "lode-tf-checkpoint 1\nexponent %u\nbits %u %u\nnext_class %u\n"
                     "classes_done %u\nclass_log %ld\nfactors %d",
                     a->p, a->bit_min, a->bit_max, pr->next_class, pr->classes_done,
                     pr->class_log_offset, pr->factors);
    for (int i = 0; i < pr->factors; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %llu", (unsigned long long)pr->k[i]);
    n += snprintf(buf + n, sizeof buf - (size_t)n, "\n");
    if (pr->results_offset >= 0)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "results_offset %ld\n", pr->results_offset);
    uint32_t crc = crc32_of(buf, (size_t)n);
    n += snprintf(buf + n, sizeof buf - (size_t)n, "crc32 %08X\n", crc);
    return write_atomic(path, buf, (size_t)n);
}

/* 1 = resumed, 0 = no usable checkpoint (none, or another assignment's),
 * -1 = a damaged one (reported; the assignment starts over). */
static int ckp_load(const char *path, const assignment *a, progress *pr)
{
    size_t len;
    char *text = read_file(path, &len);
    if (text == NULL)
        return 0;
    char *crc_at = strstr(text, "crc32 ");
    unsigned crc = 0, p = 0, lo = 0, hi = 0;
    progress q = {.results_offset = -1};
    int rc = -1, used = 0;
    if (crc_at != NULL && sscanf(crc_at, "crc32 %8X", &crc) == 1 &&
        crc32_of(text, (size_t)(crc_at - text)) == crc &&
        sscanf(text, "lode-tf-checkpoint 1\nexponent %u\nbits %u %u\nnext_class %u\nclasses_done %u\n"
               "class_log %ld\nfactors %d%n", &p, &lo, &hi, &q.next_class, &q.classes_done,
               &q.class_log_offset, &q.factors, &used) == 7 &&
        q.factors >= 0 && q.factors <= MAX_FACTORS && q.next_class <= LODE_TF_CLASSES) {
        const char *s = text + used;
        rc = 1;
        for (int i = 0; i < q.factors && rc == 1; i++) {
            char *end;
            errno = 0;
            q.k[i] = strtoull(s, &end, 10);
            if (end == s || errno != 0)
                rc = -1;
            s = end;
        }
        if (rc == 1 && sscanf(s, " results_offset %ld", &q.results_offset) != 1)
            q.results_offset = -1;
        if (rc == 1 && (p != a->p || lo != a->bit_min || hi != a->bit_max))
            rc = 0;
    }
    free(text);
    if (rc == 1)
        *pr = q;
    else if (rc < 0)
        lode_log(LODE_LOG_WARN, "checkpoint %s is damaged (bad checksum): starting over", path);
    return rc;
}

/* ---- results ---- */

static bool is_hex32(const char *s)
{
    if (strlen(s) != 32)
        return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return false;
    return true;
}

static int by_k(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int append_line(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    if (f == NULL)
        return -1;
    bool ok = fputs(line, f) >= 0 && fflush(f) == 0 && fsync(fileno(f)) == 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Did an earlier run append this assignment's result to the results file
 * after `offset` (killed before it could remove its checkpoint)? */
static bool already_reported(const char *results, long offset, const assignment *a)
{
    size_t len;
    char *text = results ? read_file(results, &len) : NULL;
    if (text == NULL)
        return false;
    char want[128];
    snprintf(want, sizeof want, "{\"exponent\":%u, \"worktype\":\"TF\",", a->p);
    char range[64];
    snprintf(range, sizeof range, "\"bitlo\":%u, \"bithi\":%u,", a->bit_min, a->bit_max);
    bool found = false;
    for (char *line = (size_t)offset <= len ? text + offset : NULL; line && *line && !found;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t n = strlen(line); /* a whole line: a kill mid-append leaves no '}' at its end */
        found = nl != NULL && n > 0 && line[n - 1] == '}' && strncmp(line, want, strlen(want)) == 0 &&
                strstr(line, range) != NULL;
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return found;
}

/* Prints the legacy lines; appends the results to the files when `write`. */
static void report(const tf_options *o, const assignment *a, progress *pr, const char *kernel,
                   const char *details, bool write)
{
    qsort(pr->k, (size_t)pr->factors, sizeof pr->k[0], by_k);
    char factors_csv[MAX_FACTORS * 42] = "", factors_json[MAX_FACTORS * 44] = "";
    size_t fc = 0, fj = 0;
    char legacy[8192] = "";
    size_t lg = 0;
    for (int i = 0; i < pr->factors; i++) {
        char q[48];
        lode_tf_u128_str(lode_tf_q(a->p, pr->k[i]), q);
        fc += (size_t)snprintf(factors_csv + fc, sizeof factors_csv - fc, "%s%s", i ? "," : "", q);
        fj += (size_t)snprintf(factors_json + fj, sizeof factors_json - fj, "%s\"%s\"", i ? "," : "", q);
        printf("M%u has a factor: %s\n", a->p, q);
        lg += (size_t)snprintf(legacy + lg, sizeof legacy - lg, "M%u has a factor: %s [TF:%u:%u:lode %s %s]\n",
                               a->p, q, a->bit_min, a->bit_max, LODE_VERSION, kernel);
    }
    if (pr->factors == 0) {
        printf("no factor for M%u from 2^%u to 2^%u\n", a->p, a->bit_min, a->bit_max);
        snprintf(legacy + lg, sizeof legacy - lg, "no factor for M%u from 2^%u to 2^%u [lode %s %s]\n",
                 a->p, a->bit_min, a->bit_max, LODE_VERSION, kernel);
    } else {
        printf("found %d factor%s for M%u from 2^%u to 2^%u\n", pr->factors, pr->factors > 1 ? "s" : "",
               a->p, a->bit_min, a->bit_max);
        snprintf(legacy + lg, sizeof legacy - lg, "found %d factor%s for M%u from 2^%u to 2^%u [lode %s %s]\n",
                 pr->factors, pr->factors > 1 ? "s" : "", a->p, a->bit_min, a->bit_max, LODE_VERSION, kernel);
    }
    fflush(stdout);
    if (!write)
        return;

    struct utsname un;
    const char *os = "Linux", *arch = "unknown";
    if (uname(&un) == 0) {
        os = un.sysname;
        arch = un.machine;
    }
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
    char sum_text[8192];
    snprintf(sum_text, sizeof sum_text, "%u;TF;%s;;%u;%u;1;;;lode;%s;%s;%s;%s;%s;%s", a->p, factors_csv,
             a->bit_min, a->bit_max, LODE_VERSION, kernel, details, os, arch, ts);
    char json[12288];
    size_t j = (size_t)snprintf(json, sizeof json,
                                "{\"exponent\":%u, \"worktype\":\"TF\", \"status\":\"%s\", \"bitlo\":%u, "
                                "\"bithi\":%u, \"rangecomplete\":true, ",
                                a->p, pr->factors ? "F" : "NF", a->bit_min, a->bit_max);
    if (pr->factors)
        j += (size_t)snprintf(json + j, sizeof json - j, "\"factors\":[%s], ", factors_json);
    j += (size_t)snprintf(json + j, sizeof json - j,
                          "\"program\":{\"name\":\"lode\", \"version\":\"%s\", \"kernel\":\"%s\", "
                          "\"details\":\"%s\"}, \"timestamp\":\"%s\"",
                          LODE_VERSION, kernel, details, ts);
    if (o->user)
        j += (size_t)snprintf(json + j, sizeof json - j, ", \"user\":\"%s\"", o->user);
    if (o->computer)
        j += (size_t)snprintf(json + j, sizeof json - j, ", \"computer\":\"%s\"", o->computer);
    if (is_hex32(a->aid))
        j += (size_t)snprintf(json + j, sizeof json - j, ", \"aid\":\"%s\"", a->aid);
    snprintf(json + j, sizeof json - j,
             ", \"os\":{\"os\": \"%s\", \"architecture\": \"%s\"}, \"checksum\":{\"version\":1, "
             "\"checksum\":\"%08X\"}}\n",
             os, arch, crc32_of(sum_text, strlen(sum_text)));
    if (o->results && append_line(o->results, json) != 0)
        lode_log(LODE_LOG_ERROR, "cannot append to %s: %s", o->results, strerror(errno));
    if (o->legacy && append_line(o->legacy, legacy) != 0)
        lode_log(LODE_LOG_ERROR, "cannot append to %s: %s", o->legacy, strerror(errno));
}

/* ---- running one assignment ---- */

/* 0 done, EXIT_INTERRUPTED, EXIT_RUNTIME. */
static int run_assignment(const tf_options *o, lode_miner *m, hit_log *hits, const assignment *a,
                          const char *kernel, const char *details)
{
    char path[4096];
    ckp_path(o, a, path, sizeof path);
    progress pr = {.results_offset = -1};
    if (ckp_load(path, a, &pr) == 1)
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: resuming from %s at class %u (%u of %u done)", a->p,
                 a->bit_min, a->bit_max, path, pr.next_class, pr.classes_done, LODE_TF_NEEDED_CLASSES);
    FILE *class_log = NULL;
    if (o->class_log != NULL) {
        /* Drop what was logged after the checkpoint: those classes run again. */
        if (truncate(o->class_log, pr.class_log_offset) != 0 && errno != ENOENT)
            lode_log(LODE_LOG_WARN, "cannot truncate %s", o->class_log);
        class_log = fopen(o->class_log, "a");
    }
    double ghz_days = lode_tf_ghz_days(a->p, a->bit_min, a->bit_max);
    lode_log(LODE_LOG_INFO, "trial factoring M%u from 2^%u to 2^%u (%.4f GHz-days)", a->p, a->bit_min,
             a->bit_max, ghz_days);
    double t0 = cli_now(), last_ckp = t0, last_line = 0;
    unsigned done_at_start = pr.classes_done;
    uint64_t cand0 = 0;
    size_t ndev = lode_miner_device_count(m);
    for (size_t d = 0; d < ndev; d++) {
        lode_device_stats st;
        lode_miner_device_stats(m, d, &st);
        cand0 += st.hashes;
    }
    int status = 0;
    for (unsigned c = pr.next_class; c < LODE_TF_CLASSES; c++) {
        if (!lode_tf_class_needed(a->p, c)) {
            pr.next_class = c + 1;
            continue;
        }
        uint64_t nb, ne;
        lode_tf_class_range(a->p, a->bit_min, a->bit_max, c, &nb, &ne);
        if (ne > nb) {
            lode_work w = {.algo = LODE_ALGO_TF,
                           .factor = {a->p, a->bit_min, a->bit_max, LODE_TF_CLASSES, c}};
            uint64_t seq = lode_miner_set_job(m, &w, nb, ne);
            int r;
            bool told = false;
            while ((r = lode_miner_wait_job(m, seq, 200)) == 0 && !cli_interrupted_twice()) {
                if (cli_interrupted() && !told) { /* the class is finished first */
                    lode_log(LODE_LOG_INFO, "finishing class %u before stopping (Ctrl-C again: stop now, "
                             "the class runs again next time)", c);
                    told = true;
                }
            }
            if (r == 0) { /* stopped mid-class: the checkpoint says this class is not done */
                if (o->ckp_dir != NULL && ckp_save(path, a, &pr) != 0)
                    lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s", path, strerror(errno));
                lode_log(LODE_LOG_INFO, "stopped in class %u: progress before it saved", c);
                status = EXIT_INTERRUPTED;
                break;
            }
            if (r < 0) {
                lode_log(LODE_LOG_ERROR, "M%u class %u: no device could finish it", a->p, c);
                status = EXIT_RUNTIME;
                break;
            }
            pthread_mutex_lock(&hits->lock);
            for (int i = 0; i < hits->count; i++)
                if (hits->seq[i] == seq && pr.factors < MAX_FACTORS)
                    pr.k[pr.factors++] = lode_tf_k(c, hits->n[i]);
            hits->count = 0;
            pthread_mutex_unlock(&hits->lock);
        }
        pr.next_class = c + 1;
        pr.classes_done++;
        if (class_log != NULL) {
            fprintf(class_log, "%u\n", c);
            fflush(class_log);
            pr.class_log_offset = ftell(class_log);
        }
        double now = cli_now();
        bool stop = cli_interrupted();
        if (o->ckp_dir != NULL && (stop || now - last_ckp >= o->ckp_interval)) {
            if (ckp_save(path, a, &pr) != 0)
                lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s", path, strerror(errno));
            last_ckp = now;
        }
        if (now - last_line >= o->progress_interval || pr.classes_done == LODE_TF_NEEDED_CLASSES) {
            uint64_t cand = 0;
            for (size_t d = 0; d < ndev; d++) {
                lode_device_stats st;
                lode_miner_device_stats(m, d, &st);
                cand += st.hashes;
            }
            double el = now - t0 > 1e-6 ? now - t0 : 1e-6;
            double frac = (double)(pr.classes_done - done_at_start) / LODE_TF_NEEDED_CLASSES;
            double left = (double)(LODE_TF_NEEDED_CLASSES - pr.classes_done);
            double eta = pr.classes_done > done_at_start ? el / (pr.classes_done - done_at_start) * left : 0;
            lode_log(LODE_LOG_INFO, "M%u %u-%u class %4u: %5.1f%%, %.3g candidates/s, %.2f GHz-days/day, ETA %.0f s",
                     a->p, a->bit_min, a->bit_max, c, 100.0 * pr.classes_done / LODE_TF_NEEDED_CLASSES,
                     (double)(cand - cand0) / el, ghz_days * frac / (el / 86400.0), eta);
            last_line = now;
        }
        if (stop) {
            lode_log(LODE_LOG_INFO, "interrupted after class %u: progress saved", c);
            status = EXIT_INTERRUPTED;
            break;
        }
    }
    if (class_log != NULL)
        fclose(class_log);
    if (status != 0)
        return status;
    bool write = true;
    if (pr.results_offset >= 0 && already_reported(o->results, pr.results_offset, a)) {
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: the result is already in %s", a->p, a->bit_min, a->bit_max,
                 o->results);
        write = false;
    } else if (o->ckp_dir != NULL) {
        struct stat st;
        pr.results_offset = o->results && stat(o->results, &st) == 0 ? (long)st.st_size : 0;
        if (ckp_save(path, a, &pr) != 0)
            lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s", path, strerror(errno));
    }
    report(o, a, &pr, kernel, details, write);
    remove(path);
    return 0;
}

static int run_selftest(const tf_options *o)
{
    lode_device_ref *devices;
    size_t count;
    char err[512];
    if (lode_registry_select(o->devices, LODE_ALGO_TF, &devices, &count, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    int failures = 0, runs = 0;
    for (size_t d = 0; d < count; d++) {
        const char *names[8];
        int k = lode_device_variants(&devices[d], LODE_ALGO_TF, names, 8);
        for (int v = 0; v < k; v++) {
            lode_open_params params = {.algo = LODE_ALGO_TF, .variant = names[v]};
            lode_handle h;
            char why[512] = "";
            int rc = lode_handle_open(&h, &devices[d], &params);
            if (rc == LODE_OK) {
                rc = lode_tf_selftest_handle(&h, false, why, sizeof why) == 0 ? LODE_OK : LODE_ERR_DEVICE;
                lode_handle_close(&h);
            } else {
                snprintf(why, sizeof why, "cannot open: %s", lode_status_str(rc));
            }
            printf("%-8s tf %-10s %zu known factors: %s%s\n", devices[d].id, names[v] ? names[v] : "default",
                   lode_tf_vector_count, rc == LODE_OK ? "ok" : "FAILED: ", rc == LODE_OK ? "" : why);
            runs++;
            failures += rc != LODE_OK;
        }
    }
    free(devices);
    printf("%d passed, %d failed\n", runs - failures, failures);
    return failures ? EXIT_RUNTIME : 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: lode tf EXPONENT BIT_MIN BIT_MAX [options]   trial-factor M(EXPONENT)\n"
            "       lode tf [--worktodo FILE] [options]          every Factor= line of worktodo.txt\n"
            "       lode tf --selftest [-d LIST]                 every known factor on every device\n"
            "\n"
            "  -d, --devices LIST        devices (cpu, cpu:0, cuda:1, ...; default: all that run tf)\n"
            "  -t, --threads N           CPU worker threads\n"
            "  -w, --worktodo FILE       assignments: Factor=[AID,]exponent,bit_min,bit_max;\n"
            "                            worktodo.add beside it is merged in at start and\n"
            "                            after each finished assignment\n"
            "      --results FILE        PrimeNet JSON results (results.json.txt)\n"
            "      --legacy-results FILE also append the legacy lines here (e.g. results.txt)\n"
            "      --checkpoint-dir DIR  where M<p>_<a>_<b>.ckp live (.)\n"
            "      --checkpoint-interval S  seconds between checkpoints (60; 0 = every class)\n"
            "      --no-checkpoints\n"
            "      --progress-interval S seconds between progress lines (10)\n"
            "      --user NAME, --computer NAME  put into the JSON results\n"
            "      --class-log FILE      append each class as it completes (for tests)\n"
            "  -q, --quiet               only warnings and errors on stderr\n"
            "\n"
            "Exponents: primes from 100000 to 2^32-1; 1 <= BIT_MIN < BIT_MAX <= 95 and\n"
            "k < 2^63.9. Exactly the factors in [2^BIT_MIN, 2^BIT_MAX) are reported.\n");
}

static int parse_seconds(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= 0) || d > 1e9)
        return -1;
    *out = d;
    return 0;
}

int cmd_tf(int argc, char **argv)
{
    static const struct option longs[] = {
        {"devices", required_argument, NULL, 'd'}, {"threads", required_argument, NULL, 't'},
        {"worktodo", required_argument, NULL, 'w'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'}, {"results", required_argument, NULL, 1},
        {"legacy-results", required_argument, NULL, 2}, {"checkpoint-dir", required_argument, NULL, 3},
        {"checkpoint-interval", required_argument, NULL, 4}, {"no-checkpoints", no_argument, NULL, 5},
        {"progress-interval", required_argument, NULL, 6}, {"user", required_argument, NULL, 7},
        {"computer", required_argument, NULL, 8}, {"class-log", required_argument, NULL, 9},
        {"selftest", no_argument, NULL, 10}, {0}};
    tf_options o = {.results = "results.json.txt", .ckp_dir = ".", .ckp_interval = 60,
                    .progress_interval = 10};
    bool no_ckp = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":d:t:w:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'd': o.devices = optarg; break;
        case 't': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 4096)
                return cli_usage_error("--threads wants a number from 1 to 4096, not '%s'", optarg);
            o.threads = (unsigned)n;
            break;
        }
        case 'w': o.worktodo = optarg; break;
        case 'q': o.quiet = true; break;
        case 'h': usage(stdout); return 0;
        case 1: o.results = optarg; break;
        case 2: o.legacy = optarg; break;
        case 3: o.ckp_dir = optarg; break;
        case 4:
            if (parse_seconds(optarg, &o.ckp_interval) != 0)
                return cli_usage_error("--checkpoint-interval wants seconds, not '%s'", optarg);
            break;
        case 5: no_ckp = true; break;
        case 6:
            if (parse_seconds(optarg, &o.progress_interval) != 0)
                return cli_usage_error("--progress-interval wants seconds, not '%s'", optarg);
            break;
        case 7: o.user = optarg; break;
        case 8: o.computer = optarg; break;
        case 9: o.class_log = optarg; break;
        case 10: o.selftest = true; break;
        case ':': return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("unknown option '%s' (see lode tf --help)", argv[optind - 1]);
        }
    }
    if (no_ckp)
        o.ckp_dir = NULL;
    lode_log_configure(o.quiet, false);
    cli_install_signal_handlers();
    if (o.selftest)
        return optind == argc ? run_selftest(&o) : cli_usage_error("--selftest takes no assignment");

    /* The assignments: from the command line, or the worktodo file. */
    assignment *list = NULL;
    size_t count = 0;
    int bad_lines = 0;
    if (optind < argc) {
        if (argc - optind != 3 || o.worktodo != NULL)
            return cli_usage_error("want EXPONENT BIT_MIN BIT_MAX (see lode tf --help)");
        char line[LINE_MAX_LEN + 2], why[256];
        snprintf(line, sizeof line, "Factor=%s,%s,%s", argv[optind], argv[optind + 1], argv[optind + 2]);
        list = calloc(1, sizeof *list);
        if (list == NULL)
            return EXIT_RUNTIME;
        if (parse_line(line, list, why, sizeof why) != 1) {
            free(list);
            return cli_usage_error("M%s %s..%s: %s", argv[optind], argv[optind + 1], argv[optind + 2], why);
        }
        count = 1;
    } else {
        if (o.worktodo == NULL)
            o.worktodo = "worktodo.txt";
        if (merge_add_file(o.worktodo) < 0)
            lode_log(LODE_LOG_ERROR, "cannot merge worktodo.add into %s: %s", o.worktodo, strerror(errno));
        if (load_worktodo(o.worktodo, &list, &count, &bad_lines, true) != 0)
            return cli_usage_error("cannot read %s: %s", o.worktodo, strerror(errno));
        if (count == 0) {
            free(list);
            if (bad_lines)
                return EXIT_USAGE;
            lode_log(LODE_LOG_INFO, "%s has no assignments", o.worktodo);
            return 0;
        }
    }

    lode_device_ref *devices;
    size_t ndev;
    char err[512];
    if (lode_registry_select(o.devices, LODE_ALGO_TF, &devices, &ndev, err, sizeof err) != 0) {
        free(list);
        return cli_usage_error("%s", err);
    }
    char kernel[128] = "", details[256] = "";
    for (size_t d = 0; d < ndev; d++) {
        const char *names[1];
        int k = lode_device_variants(&devices[d], LODE_ALGO_TF, names, 1);
        size_t kl = strlen(kernel), dl = strlen(details);
        snprintf(kernel + kl, sizeof kernel - kl, "%s%s_%s", d ? "+" : "", devices[d].backend->name,
                 k > 0 && names[0] ? names[0] : "default");
        snprintf(details + dl, sizeof details - dl, "%s%s", d ? ", " : "", devices[d].info.name);
    }
    hit_log hits = {.lock = PTHREAD_MUTEX_INITIALIZER};
    lode_miner_config cfg = {.algo = LODE_ALGO_TF, .devices = devices, .device_count = ndev,
                             .threads = o.threads, .chunk_ms = 100,
                             .callbacks = {.user = &hits, .found = on_found}};
    lode_miner *m = lode_miner_start(&cfg, err, sizeof err);
    free(devices);
    if (m == NULL) {
        free(list);
        lode_log(LODE_LOG_ERROR, "%s", err);
        return EXIT_RUNTIME;
    }
    int status = 0;
    int ready = cli_wait_ready(m);
    if (ready <= 0) {
        lode_log(LODE_LOG_ERROR, ready < 0 ? "interrupted" : "no device passed its self-test");
        status = ready < 0 ? EXIT_INTERRUPTED : EXIT_RUNTIME;
    }
    for (size_t i = 0; status == 0 && i < count; i++) {
        status = run_assignment(&o, m, &hits, &list[i], kernel, details);
        if (status != 0 || o.worktodo == NULL)
            continue;
        if (remove_line(o.worktodo, list[i].line) != 0) {
            lode_log(LODE_LOG_ERROR, "cannot remove the finished line from %s: %s", o.worktodo,
                     strerror(errno));
            continue;
        }
        /* New work dropped into worktodo.add meanwhile: merge it, and go on
         * with whatever the file now holds (the finished line is gone). */
        long merged = merge_add_file(o.worktodo);
        if (merged < 0)
            lode_log(LODE_LOG_ERROR, "cannot merge worktodo.add into %s: %s", o.worktodo, strerror(errno));
        if (merged > 0) {
            assignment *fresh;
            size_t n;
            int bad;
            if (load_worktodo(o.worktodo, &fresh, &n, &bad, false) == 0) {
                free(list);
                list = fresh;
                count = n;
                i = (size_t)-1; /* from the top of the file again */
            }
        }
    }
    lode_miner_free(m);
    free(list);
    if (status == 0 && bad_lines)
        status = EXIT_USAGE;
    return status;
}
