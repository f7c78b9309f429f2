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
 * results.json.txt, optionally results.txt.
 *
 * No result lost or reported twice. A finished assignment goes through
 * these steps, each durable (fsync) before the next; a kill at any instant
 * leaves either the result unwritten or a record that stops a second report:
 *   1. the checkpoint says "finished, result pending" with the lengths of
 *      the results files (even with --no-checkpoints: it is the record);
 *   2. the legacy lines, then the JSON line, are appended (a restart in
 *      state 1 looks after those lengths for this assignment's lines and
 *      appends only what is missing);
 *   3. the checkpoint says "reported" (a restart only cleans up);
 *   4. the worktodo line is removed (temporary file, fsync, rename, fsync
 *      of the directory);
 *   5. the checkpoint is removed.
 * A result that cannot be written stops lode (exit 1) with the checkpoint
 * and the worktodo line kept; the next run writes it. The worktodo file is
 * locked (flock on FILE.lock) for the whole run. */
#include "core/cli/tf.h"
#include "core/base/settings.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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
#define ECHO_MAX 80      /* bytes of a malformed line shown in its message */

typedef struct tf_options {
    const char *devices;
    unsigned threads;
    const char *worktodo, *results, *legacy, *ckp_dir, *class_log, *user, *computer;
    double ckp_interval, progress_interval;
    bool progress_ckp; /* false: --no-checkpoints (the finish record is still written) */
    bool selftest, quiet;
} tf_options;

typedef struct assignment {
    char aid[64]; /* "" or "N/A" or the key */
    uint32_t p;
    unsigned bit_min, bit_max;
    char line[LINE_MAX_LEN + 2]; /* the worktodo line as read (no newline, no final CR) */
    size_t line_len;
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

/* Test hook: LODE_TF_CRASH_AT=STEP kills lode (SIGKILL, as a power cut
 * would) the first time it reaches STEP; tests/test_tf.py uses it to check
 * every step of the finishing order. */
static void crash_point(const char *step)
{
    const char *want = lode_setting_text(LODE_SETTING_TF_CRASH_AT);
    if (want != NULL && strcmp(want, step) == 0)
        raise(SIGKILL);
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

/* ---- files ---- */

/* Makes a rename or unlink in path's directory durable. */
static int fsync_dir_of(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : -1; /* EINVAL: cannot be synced */
    close(fd);
    return rc;
}

/* Writes text to path through path.tmp, fsync, rename and fsync of the
 * directory: at every instant path holds the old or the new text, whole. */
static int write_atomic(const char *path, const char *text, size_t len)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    bool ok = true;
    for (size_t o = 0; ok && o < len;) {
        ssize_t w = write(fd, text + o, len - o);
        ok = w > 0;
        o += ok ? (size_t)w : 0;
    }
    ok = ok && fsync(fd) == 0;
    int saved = errno;
    ok &= close(fd) == 0;
    if (ok && rename(tmp, path) == 0)
        return fsync_dir_of(path);
    saved = ok ? errno : saved;
    remove(tmp);
    errno = saved ? saved : EIO;
    return -1;
}

/* The whole content of a regular file (NUL-terminated for convenience; it
 * may hold NUL bytes: use *len). NULL with errno set, EISDIR for a
 * directory and EINVAL for anything else that is not a regular file. */
static char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC /* a FIFO must not block */);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf != NULL) {
        if (n == cap) {
            char *g = realloc(buf, 2 * cap + 1);
            if (g == NULL) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = g;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0) {
            int e = errno;
            free(buf);
            buf = NULL;
            errno = e;
        } else if (got == 0) {
            break;
        } else {
            n += (size_t)got;
        }
    }
    close(fd);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* Appends text (whole lines) to path and fsyncs it. A file whose last line
 * was cut short (a full disk) gets a newline first, so that the new line
 * stays a line of its own; a failed append is cut off again. */
static int append_record(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    off_t before = regular ? st.st_size : 0;
    char last = '\n';
    if (regular && before > 0 && pread(fd, &last, 1, before - 1) != 1)
        last = '\n';
    bool ok = last == '\n' || write(fd, "\n", 1) == 1;
    for (size_t o = 0; ok && o < len;) {
        ssize_t w = write(fd, text + o, len - o);
        ok = w > 0;
        o += ok ? (size_t)w : 0;
    }
    ok = ok && fsync(fd) == 0;
    int saved = errno;
    if (!ok && regular && ftruncate(fd, before) == 0)
        (void)fsync(fd);
    ok &= close(fd) == 0;
    if (!ok)
        errno = saved ? saved : EIO;
    return ok ? 0 : -1;
}

/* Shows at most ECHO_MAX bytes of s[0..n) with every byte that is not
 * printable ASCII as \xNN (escape sequences, NUL), and the full length when
 * it was cut. */
static void sanitize(const char *s, size_t n, char *out, size_t out_len)
{
    size_t o = 0;
    for (size_t i = 0; i < n && i < ECHO_MAX && o + 5 < out_len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, out_len - o, "\\x%02x", c);
    }
    out[o] = '\0';
    if (n > ECHO_MAX)
        snprintf(out + o, out_len - o, "... (%zu bytes)", n);
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

/* The next line of text[0..len) from *pos: its bytes without the newline
 * and a final CR. false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
{
    if (*pos >= len)
        return false;
    const char *s = text + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    size_t k = nl ? (size_t)(nl - s) : len - *pos;
    *pos += k + (nl != NULL);
    if (k > 0 && s[k - 1] == '\r')
        k--;
    *line = s;
    *n = k;
    return true;
}

/* One line (raw bytes, any content): 1 = an assignment, 0 = blank or
 * comment, -1 = malformed (why). */
static int parse_line(const char *raw, size_t len, assignment *a, char *why, size_t why_len)
{
    size_t skip = 0;
    while (skip < len && (raw[skip] == ' ' || raw[skip] == '\t'))
        skip++;
    if (skip == len || (len - skip >= 2 && (memcmp(raw + skip, "//", 2) == 0 ||
                                            memcmp(raw + skip, "\\\\", 2) == 0)))
        return 0;
    if (memchr(raw, '\0', len) != NULL) {
        snprintf(why, why_len, "contains a NUL byte");
        return -1;
    }
    if (len > LINE_MAX_LEN) {
        snprintf(why, why_len, "longer than %d characters", LINE_MAX_LEN);
        return -1;
    }
    char line[LINE_MAX_LEN + 1];
    memcpy(line, raw, len);
    line[len] = '\0';
    const char *s = line + skip;
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
    memcpy(a->line, raw, len);
    a->line_len = len;
    return 1;
}

/* Removes the first line equal to the assignment's from the worktodo file
 * (re-read now: the user may have edited it), through a temporary file and
 * rename; every other byte stays as it is. 0 also when the line is gone. */
static int remove_line(const char *path, const assignment *a)
{
    size_t len;
    char *text = read_file(path, &len);
    if (text == NULL)
        return errno == ENOENT ? 0 : -1;
    size_t pos = 0, at = 0, n;
    const char *line;
    bool found = false;
    while (!found && (at = pos, next_line(text, len, &pos, &line, &n)))
        found = n == a->line_len && memcmp(line, a->line, n) == 0;
    int rc = 0;
    if (found) {
        /* text[at..pos) is the line with its newline: the rest moves up. */
        memmove(text + at, text + pos, len - pos);
        rc = write_atomic(path, text, len - (pos - at));
    }
    free(text);
    return rc;
}

/* Does text[0..len) end with tail[0..n) at a line start? */
static bool ends_with_lines(const char *text, size_t len, const char *tail, size_t n)
{
    return n <= len && memcmp(text + len - n, tail, n) == 0 && (n == len || text[len - n - 1] == '\n');
}

/* worktodo.add beside the worktodo file (mfaktc's habit: a place to drop
 * new work while lode runs) is appended to the worktodo file. It is first
 * renamed to worktodo.add.merging; the worktodo file is rewritten (rename)
 * with it at its end, then the .merging file is removed. A kill before the
 * removal leaves a .merging file whose text already ends the worktodo file:
 * the next run only removes it (no assignment is added twice). Returns how
 * many bytes were merged, or -1 (nothing lost). */
static long merge_add_file(const char *worktodo)
{
    char add[4096], merging[4200];
    const char *slash = strrchr(worktodo, '/');
    int dir = slash ? (int)(slash - worktodo + 1) : 0;
    if (snprintf(add, sizeof add, "%.*sworktodo.add", dir, worktodo) >= (int)sizeof add)
        return -1;
    snprintf(merging, sizeof merging, "%s.merging", add);
    long total = 0;
    bool took_add = false;
    for (int round = 0; round < 3; round++) { /* a leftover .merging, then worktodo.add */
        size_t add_len, len = 0;
        char *extra = read_file(merging, &add_len);
        if (extra == NULL && errno != ENOENT) {
            lode_log(LODE_LOG_ERROR, "cannot read %s: %s", merging, strerror(errno));
            return -1;
        }
        if (extra == NULL) { /* nothing being merged: take worktodo.add, if any */
            if (took_add)
                break;
            struct stat st;
            if (stat(add, &st) != 0)
                return errno == ENOENT ? total : -1;
            if (!S_ISREG(st.st_mode)) { /* left alone */
                errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
                return -1;
            }
            if (rename(add, merging) != 0 || fsync_dir_of(merging) != 0)
                return -1;
            took_add = true;
            crash_point("add-renamed");
            continue;
        }
        char *text = read_file(worktodo, &len);
        if (text == NULL && errno != ENOENT) {
            free(extra);
            return -1;
        }
        int rc = 0;
        if (text == NULL || !ends_with_lines(text, len, extra, add_len)) {
            char *both = malloc(len + add_len + 2);
            rc = -1;
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
                rc = write_atomic(worktodo, both, o);
                free(both);
            }
            if (rc == 0)
                total += (long)add_len;
        }
        free(text);
        free(extra);
        if (rc != 0)
            return -1;
        crash_point("add-merged");
        if (unlink(merging) != 0 || fsync_dir_of(merging) != 0)
            return -1;
        lode_log(LODE_LOG_INFO, "%s: merged into %s", add, worktodo);
    }
    return total;
}

/* Reads the worktodo file's valid assignments into *list (in order);
 * malformed lines are counted in *bad_lines and, if log, named (cut and
 * with unprintable bytes escaped). */
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
    size_t pos = 0, n;
    const char *line;
    while (next_line(text, len, &pos, &line, &n)) {
        lineno++;
        assignment a;
        char why[256];
        int r = parse_line(line, n, &a, why, sizeof why);
        if (r < 0) {
            if (log) {
                char shown[ECHO_MAX * 4 + 64];
                sanitize(line, n, shown, sizeof shown);
                lode_log(LODE_LOG_ERROR, "%s:%u: malformed line '%s': %s (line kept, skipped)", path, lineno,
                         shown, why);
            }
            (*bad_lines)++;
        } else if (r == 1) {
            assignment *g = realloc(*list, (*count + 1) * sizeof **list);
            if (g == NULL) {
                free(text);
                free(*list);
                *list = NULL;
                return -1;
            }
            *list = g;
            (*list)[(*count)++] = a;
        }
    }
    free(text);
    return 0;
}

/* Locks the worktodo file for this process (flock on FILE.lock, which
 * holds the pid; the lock dies with the process, the file stays). Returns
 * the descriptor to keep open, or -1 (reported). */
static int lock_worktodo(const char *worktodo)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.lock", worktodo);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        lode_log(LODE_LOG_ERROR, "cannot create the lock file %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        if (e == EWOULDBLOCK || e == EAGAIN)
            lode_log(LODE_LOG_ERROR, "%s is in use by another lode tf (pid %s, lock %s): not starting a second "
                     "one on it", worktodo, pid[0] ? pid : "unknown", path);
        else
            lode_log(LODE_LOG_ERROR, "cannot lock %s: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
        lode_log(LODE_LOG_WARN, "cannot write the pid into %s", path);
    return fd;
}

/* ---- checkpoints ---- */

enum { CKP_RUNNING, CKP_PENDING, CKP_REPORTED };

typedef struct progress {
    unsigned next_class;   /* every needed class below it is done */
    unsigned classes_done; /* needed classes done */
    uint64_t k[MAX_FACTORS];
    int factors;
    long class_log_offset; /* length of the class log when saved */
    int state;             /* CKP_*: a finished assignment's result */
    long results_offset;   /* CKP_PENDING: the results files' lengths */
    long legacy_offset;    /*   before the result was appended (-1: none) */
    char aid[64];          /* the assignment key the state is about */
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
    if (pr->state != CKP_RUNNING) {
        n += snprintf(buf + n, sizeof buf - (size_t)n, "aid %s\n", a->aid);
        if (pr->state == CKP_PENDING)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "results_offset %ld\nlegacy_offset %ld\n",
                          pr->results_offset, pr->legacy_offset);
        else
            n += snprintf(buf + n, sizeof buf - (size_t)n, "reported 1\n");
    }
    uint32_t crc = crc32_of(buf, (size_t)n);
    n += snprintf(buf + n, sizeof buf - (size_t)n, "crc32 %08X\n", crc);
    return write_atomic(path, buf, (size_t)n);
}

/* 1 = resumed, 0 = no usable checkpoint (none, or another assignment's),
 * -1 = a damaged one (reported; the assignment starts over). A finished
 * state recorded for another assignment key is dropped (the classes are
 * kept: the new key gets its own result). */
static int ckp_load(const char *path, const assignment *a, progress *pr)
{
    size_t len;
    char *text = read_file(path, &len);
    if (text == NULL)
        return 0;
    char *crc_at = NULL; /* the last "crc32 " line (an aid could hold the text) */
    for (char *s = text; (s = strstr(s, "\ncrc32 ")) != NULL; s++)
        crc_at = s + 1;
    unsigned crc = 0, p = 0, lo = 0, hi = 0;
    progress q = {.results_offset = -1, .legacy_offset = -1};
    int rc = -1, used = 0;
    if (strlen(text) == len && crc_at != NULL && sscanf(crc_at, "crc32 %8X", &crc) == 1 &&
        crc32_of(text, (size_t)(crc_at - text)) == crc &&
        sscanf(text, "lode-tf-checkpoint 1\nexponent %u\nbits %u %u\nnext_class %u\nclasses_done %u\n"
               "class_log %ld\nfactors %d%n", &p, &lo, &hi, &q.next_class, &q.classes_done,
               &q.class_log_offset, &q.factors, &used) == 7 &&
        q.factors >= 0 && q.factors <= MAX_FACTORS && q.next_class <= LODE_TF_CLASSES) {
        char *s = text + used;
        rc = 1;
        for (int i = 0; i < q.factors && rc == 1; i++) {
            char *end;
            errno = 0;
            q.k[i] = strtoull(s, &end, 10);
            if (end == s || errno != 0)
                rc = -1;
            s = end;
        }
        /* Optional "key value" lines up to the checksum. */
        for (s = strchr(s, '\n'); rc == 1 && s != NULL && s + 1 < crc_at; s = strchr(s + 1, '\n')) {
            char *l = s + 1, *end = strchr(l, '\n');
            size_t n = (size_t)(end - l);
            if (strncmp(l, "aid ", 4) == 0 && n - 4 < sizeof q.aid)
                snprintf(q.aid, sizeof q.aid, "%.*s", (int)(n - 4), l + 4);
            else if (sscanf(l, "results_offset %ld", &q.results_offset) == 1)
                q.state = CKP_PENDING;
            else if (sscanf(l, "legacy_offset %ld", &q.legacy_offset) == 1)
                ;
            else if (strncmp(l, "reported 1\n", 11) == 0)
                q.state = CKP_REPORTED;
        }
        if (q.state != CKP_RUNNING && q.next_class < LODE_TF_CLASSES)
            rc = -1;
        if (rc == 1 && (p != a->p || lo != a->bit_min || hi != a->bit_max))
            rc = 0;
        if (rc == 1 && q.state != CKP_RUNNING && strcmp(q.aid, a->aid) != 0)
            q.state = CKP_RUNNING;
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

static long file_length(const char *path)
{
    struct stat st;
    return path != NULL && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long)st.st_size : 0;
}

/* Is this assignment's JSON line (json) or legacy summary line (!json) in
 * the file after offset, whole (newline-terminated)? An earlier run was
 * stopped between the append and the checkpoint that says so. */
static bool already_written(const char *path, long offset, const assignment *a, bool json)
{
    size_t len;
    char *text = path != NULL && offset >= 0 ? read_file(path, &len) : NULL;
    if (text == NULL)
        return false;
    char summary[96];
    snprintf(summary, sizeof summary, " for M%u from 2^%u to 2^%u ", a->p, a->bit_min, a->bit_max);
    bool found = false;
    size_t pos = (size_t)offset, n;
    const char *line;
    while (!found && pos <= len && next_line(text, len, &pos, &line, &n)) {
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

/* The PrimeNet JSON line (with its newline), built through jansson; NULL
 * when out of memory. */
static char *result_json(const tf_options *o, const assignment *a, const progress *pr, const char *kernel,
                         const char *details)
{
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
    char factors_csv[MAX_FACTORS * 42] = "";
    size_t fc = 0;
    json_t *factors = json_array();
    for (int i = 0; i < pr->factors; i++) {
        char q[48];
        lode_tf_u128_str(lode_tf_q(a->p, pr->k[i]), q);
        fc += (size_t)snprintf(factors_csv + fc, sizeof factors_csv - fc, "%s%s", i ? "," : "", q);
        json_array_append_new(factors, json_string(q));
    }
    char sum_text[8192];
    snprintf(sum_text, sizeof sum_text, "%u;TF;%s;;%u;%u;1;;;lode;%s;%s;%s;%s;%s;%s", a->p, factors_csv,
             a->bit_min, a->bit_max, LODE_VERSION, kernel, details, os, arch, ts);
    char sum[16];
    snprintf(sum, sizeof sum, "%08X", crc32_of(sum_text, strlen(sum_text)));
    json_t *r = json_object();
    json_object_set_new(r, "exponent", json_integer(a->p));
    json_object_set_new(r, "worktype", json_string("TF"));
    json_object_set_new(r, "status", json_string(pr->factors ? "F" : "NF"));
    json_object_set_new(r, "bitlo", json_integer(a->bit_min));
    json_object_set_new(r, "bithi", json_integer(a->bit_max));
    json_object_set_new(r, "rangecomplete", json_true());
    if (pr->factors)
        json_object_set(r, "factors", factors);
    json_object_set_new(r, "program", json_pack("{s:s, s:s, s:s, s:s}", "name", "lode", "version", LODE_VERSION,
                                                "kernel", kernel, "details", details));
    json_object_set_new(r, "timestamp", json_string(ts));
    if (o->user)
        json_object_set_new(r, "user", json_string(o->user));
    if (o->computer)
        json_object_set_new(r, "computer", json_string(o->computer));
    if (is_hex32(a->aid))
        json_object_set_new(r, "aid", json_string(a->aid));
    json_object_set_new(r, "os", json_pack("{s:s, s:s}", "os", os, "architecture", arch));
    json_object_set_new(r, "checksum", json_pack("{s:i, s:s}", "version", 1, "checksum", sum));
    json_decref(factors);
    char *body = json_dumps(r, JSON_PRESERVE_ORDER);
    json_decref(r);
    char *line = body ? malloc(strlen(body) + 2) : NULL;
    if (line != NULL)
        sprintf(line, "%s\n", body);
    free(body);
    return line;
}

/* Prints the legacy lines on stdout and returns them for results.txt. */
static void legacy_lines(const assignment *a, progress *pr, const char *kernel, char *legacy, size_t size)
{
    qsort(pr->k, (size_t)pr->factors, sizeof pr->k[0], by_k);
    size_t lg = 0;
    legacy[0] = '\0';
    for (int i = 0; i < pr->factors; i++) {
        char q[48];
        lode_tf_u128_str(lode_tf_q(a->p, pr->k[i]), q);
        printf("M%u has a factor: %s\n", a->p, q);
        lg += (size_t)snprintf(legacy + lg, size - lg, "M%u has a factor: %s [TF:%u:%u:lode %s %s]\n", a->p, q,
                               a->bit_min, a->bit_max, LODE_VERSION, kernel);
    }
    if (pr->factors == 0) {
        printf("no factor for M%u from 2^%u to 2^%u\n", a->p, a->bit_min, a->bit_max);
        snprintf(legacy + lg, size - lg, "no factor for M%u from 2^%u to 2^%u [lode %s %s]\n", a->p, a->bit_min,
                 a->bit_max, LODE_VERSION, kernel);
    } else {
        printf("found %d factor%s for M%u from 2^%u to 2^%u\n", pr->factors, pr->factors > 1 ? "s" : "",
               a->p, a->bit_min, a->bit_max);
        snprintf(legacy + lg, size - lg, "found %d factor%s for M%u from 2^%u to 2^%u [lode %s %s]\n",
                 pr->factors, pr->factors > 1 ? "s" : "", a->p, a->bit_min, a->bit_max, LODE_VERSION, kernel);
    }
    fflush(stdout);
}

/* Steps 1 to 5 of the order at the top of this file for a finished
 * assignment. 0, or EXIT_RUNTIME with the reason logged (the checkpoint and
 * the worktodo line are kept: the next run goes on from there). */
static int finish(const tf_options *o, const char *path, const assignment *a, progress *pr,
                  const char *kernel, const char *details)
{
    char legacy[8192];
    legacy_lines(a, pr, kernel, legacy, sizeof legacy);
    if (pr->state == CKP_REPORTED) {
        lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: the result is already in %s", a->p, a->bit_min, a->bit_max,
                 o->results);
    } else {
        bool resumed = pr->state == CKP_PENDING;
        if (!resumed) {
            pr->state = CKP_PENDING;
            pr->results_offset = file_length(o->results);
            pr->legacy_offset = file_length(o->legacy);
            if (ckp_save(path, a, pr) != 0) {
                lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s; the result is not written (it "
                         "could not be guarded against a second report); the next run tries again", path,
                         strerror(errno));
                return EXIT_RUNTIME;
            }
            crash_point("pending-saved");
        }
        if (o->legacy != NULL && !(resumed && already_written(o->legacy, pr->legacy_offset, a, false))) {
            if (append_record(o->legacy, legacy, strlen(legacy)) != 0) {
                lode_log(LODE_LOG_ERROR, "cannot append to %s: %s; the result stays in %s and the next run "
                         "writes it", o->legacy, strerror(errno), path);
                return EXIT_RUNTIME;
            }
            crash_point("legacy-appended");
        }
        if (resumed && already_written(o->results, pr->results_offset, a, true)) {
            lode_log(LODE_LOG_INFO, "M%u 2^%u..2^%u: the result is already in %s", a->p, a->bit_min,
                     a->bit_max, o->results);
        } else {
            char *json = result_json(o, a, pr, kernel, details);
            int rc = json != NULL ? append_record(o->results, json, strlen(json)) : -1;
            free(json);
            if (rc != 0) {
                lode_log(LODE_LOG_ERROR, "cannot append to %s: %s; the result stays in %s and the next run "
                         "writes it", o->results, strerror(errno), path);
                return EXIT_RUNTIME;
            }
            crash_point("result-appended");
        }
        pr->state = CKP_REPORTED;
        if (ckp_save(path, a, pr) != 0) /* the pending record still guards it */
            lode_log(LODE_LOG_WARN, "cannot write checkpoint %s: %s", path, strerror(errno));
        crash_point("reported-saved");
    }
    if (o->worktodo != NULL) {
        if (remove_line(o->worktodo, a) != 0) {
            lode_log(LODE_LOG_ERROR, "cannot remove the finished line from %s: %s; %s records that it is "
                     "reported and the next run removes it", o->worktodo, strerror(errno), path);
            return EXIT_RUNTIME;
        }
        crash_point("worktodo-rewritten");
    }
    if (unlink(path) != 0 && errno != ENOENT)
        lode_log(LODE_LOG_WARN, "cannot remove %s: %s", path, strerror(errno));
    else
        (void)fsync_dir_of(path);
    crash_point("checkpoint-removed");
    return 0;
}

/* Removes the checkpoints in the checkpoint directory that say "reported"
 * for an assignment no longer in the worktodo file: a run killed between
 * removing the line (step 4) and the checkpoint (step 5) leaves one. */
static void remove_stale_records(const tf_options *o, const assignment *list, size_t count)
{
    DIR *dir = opendir(o->ckp_dir);
    if (dir == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        assignment a = {0};
        char again[256];
        if (sscanf(e->d_name, "M%u_%u_%u.ckp", &a.p, &a.bit_min, &a.bit_max) != 3)
            continue;
        snprintf(again, sizeof again, "M%u_%u_%u.ckp", a.p, a.bit_min, a.bit_max);
        bool listed = strcmp(again, e->d_name) != 0;
        for (size_t i = 0; i < count && !listed; i++)
            listed = list[i].p == a.p && list[i].bit_min == a.bit_min && list[i].bit_max == a.bit_max;
        char path[4096];
        ckp_path(o, &a, path, sizeof path);
        progress pr;
        size_t len;
        char *text = listed ? NULL : read_file(path, &len);
        bool reported = text != NULL && strstr(text, "\nreported 1\n") != NULL;
        free(text);
        if (reported && ckp_load(path, &a, &pr) == 1) { /* any key: the line is gone */
            if (unlink(path) == 0)
                lode_log(LODE_LOG_INFO, "removed %s: its result is reported and its line is gone", path);
        }
    }
    closedir(dir);
}

/* "3d 04h 05m", "4h 05m", "5m 06s", "7s". */
static void format_eta(double s, char *out, size_t len)
{
    if (!(s >= 0) || s > 1e12)
        s = 0;
    unsigned long long t = (unsigned long long)(s + 0.5);
    unsigned long long d = t / 86400, h = t / 3600 % 24, m = t / 60 % 60, sec = t % 60;
    if (d)
        snprintf(out, len, "%llud %02lluh %02llum", d, h, m);
    else if (h)
        snprintf(out, len, "%lluh %02llum", h, m);
    else if (m)
        snprintf(out, len, "%llum %02llus", m, sec);
    else
        snprintf(out, len, "%llus", sec);
}

/* ---- running one assignment ---- */

/* 0 done, EXIT_INTERRUPTED, EXIT_RUNTIME. */
static int run_assignment(const tf_options *o, lode_miner *m, hit_log *hits, const assignment *a,
                          const char *kernel, const char *details)
{
    char path[4096];
    ckp_path(o, a, path, sizeof path);
    progress pr = {.results_offset = -1, .legacy_offset = -1};
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
                bool saved = false;
                if (o->progress_ckp && !(saved = ckp_save(path, a, &pr) == 0))
                    lode_log(LODE_LOG_ERROR, "cannot write checkpoint %s: %s", path, strerror(errno));
                lode_log(LODE_LOG_INFO, "stopped in class %u: %s", c,
                         saved ? "progress before it saved"
                               : o->progress_ckp ? "progress NOT saved"
                                                 : "progress not saved (--no-checkpoints)");
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
        bool stop = cli_interrupted(), saved = false;
        if (o->progress_ckp && (stop || now - last_ckp >= o->ckp_interval)) {
            if (!(saved = ckp_save(path, a, &pr) == 0))
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
            char eta_text[48];
            format_eta(eta, eta_text, sizeof eta_text);
            lode_log(LODE_LOG_INFO, "M%u %u-%u class %4u: %5.1f%%, %.3g candidates/s, %.2f GHz-days/day, ETA %s",
                     a->p, a->bit_min, a->bit_max, c, 100.0 * pr.classes_done / LODE_TF_NEEDED_CLASSES,
                     (double)(cand - cand0) / el, ghz_days * frac / (el / 86400.0), eta_text);
            last_line = now;
        }
        if (stop && pr.classes_done < LODE_TF_NEEDED_CLASSES) { /* else: report it first */
            lode_log(LODE_LOG_INFO, "interrupted after class %u: %s", c,
                     saved ? "progress saved"
                           : o->progress_ckp ? "progress NOT saved"
                                             : "progress not saved (--no-checkpoints)");
            status = EXIT_INTERRUPTED;
            break;
        }
    }
    if (class_log != NULL)
        fclose(class_log);
    if (status != 0)
        return status;
    return finish(o, path, a, &pr, kernel, details);
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
            "                            after each finished assignment; FILE.lock keeps a\n"
            "                            second lode tf off the same file\n"
            "      --results FILE        PrimeNet JSON results (results.json.txt)\n"
            "      --legacy-results FILE also append the legacy lines here (e.g. results.txt)\n"
            "      --checkpoint-dir DIR  where M<p>_<a>_<b>.ckp live (.)\n"
            "      --checkpoint-interval S  seconds between checkpoints (60; 0 = every class)\n"
            "      --no-checkpoints      no progress saves (a finished assignment's short-lived\n"
            "                            record against a second report is still written)\n"
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
                    .progress_interval = 10, .progress_ckp = true};
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
        case 7:
        case 8: {
            json_t *s = json_string(optarg); /* NULL: not UTF-8 */
            if (s == NULL)
                return cli_usage_error("--%s wants UTF-8 text", c == 7 ? "user" : "computer");
            json_decref(s);
            *(c == 7 ? &o.user : &o.computer) = optarg;
            break;
        }
        case 9: o.class_log = optarg; break;
        case 10: o.selftest = true; break;
        case ':': return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("unknown option '%s' (see lode tf --help)", argv[optind - 1]);
        }
    }
    if (no_ckp)
        o.progress_ckp = false;
    lode_log_configure(o.quiet, false);
    cli_install_signal_handlers();
    if (o.selftest)
        return optind == argc ? run_selftest(&o) : cli_usage_error("--selftest takes no assignment");

    /* The assignments: from the command line, or the worktodo file. */
    int lock_fd = -1;
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
        if (parse_line(line, strlen(line), list, why, sizeof why) != 1) {
            free(list);
            return cli_usage_error("M%s %s..%s: %s", argv[optind], argv[optind + 1], argv[optind + 2], why);
        }
        count = 1;
    } else {
        if (o.worktodo == NULL)
            o.worktodo = "worktodo.txt";
        struct stat st;
        if (stat(o.worktodo, &st) == 0 && !S_ISREG(st.st_mode))
            return cli_usage_error("cannot read %s: %s", o.worktodo,
                                   S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
        if ((lock_fd = lock_worktodo(o.worktodo)) < 0)
            return EXIT_RUNTIME;
        if (merge_add_file(o.worktodo) < 0)
            lode_log(LODE_LOG_ERROR, "cannot merge worktodo.add into %s: %s", o.worktodo, strerror(errno));
        if (load_worktodo(o.worktodo, &list, &count, &bad_lines, true) != 0) {
            close(lock_fd);
            return cli_usage_error("cannot read %s: %s", o.worktodo, strerror(errno));
        }
        remove_stale_records(&o, list, count);
        if (count == 0) {
            free(list);
            close(lock_fd);
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
        if (lock_fd >= 0)
            close(lock_fd);
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
    for (char *s = kernel; *s; s++) /* printable ASCII: the JSON line and its checksum agree */
        *s = *s >= 0x20 && *s < 0x7f ? *s : '?';
    for (char *s = details; *s; s++)
        *s = *s >= 0x20 && *s < 0x7f ? *s : '?';
    hit_log hits = {.lock = PTHREAD_MUTEX_INITIALIZER};
    lode_miner_config cfg = {.algo = LODE_ALGO_TF, .devices = devices, .device_count = ndev,
                             .threads = o.threads, .chunk_ms = 100,
                             .callbacks = {.user = &hits, .found = on_found}};
    lode_miner *m = lode_miner_start(&cfg, err, sizeof err);
    free(devices);
    if (m == NULL) {
        free(list);
        if (lock_fd >= 0)
            close(lock_fd);
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
        if (status == 0 && cli_interrupted())
            status = EXIT_INTERRUPTED;
        if (status != 0 || o.worktodo == NULL)
            continue;
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
    if (lock_fd >= 0)
        close(lock_fd); /* after the last write to the worktodo */
    if (status == 0 && bad_lines)
        status = EXIT_USAGE;
    return status;
}
