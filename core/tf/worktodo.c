#include "core/tf/worktodo.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/base/tf_ref.h"
#include "core/tf/fileio.h"

/* One rewrite of the worktodo file at a time within the process: the class
 * driver removes finished lines while the PrimeNet client adds and edits
 * others (FILE.lock keeps other processes off). */
static pthread_mutex_t rewrite_lock = PTHREAD_MUTEX_INITIALIZER;

void lode_tf_worktodo_escape(const char *s, size_t n, char *out, size_t out_len)
{
    size_t o = 0;
    if (out_len == 0)
        return;
    for (size_t i = 0; i < n && i < LODE_TF_ECHO_MAX && o + 5 < out_len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, out_len - o, "\\x%02x", c);
    }
    out[o] = '\0';
    if (n > LODE_TF_ECHO_MAX)
        snprintf(out + o, out_len - o, "... (%zu bytes)", n);
}

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

int lode_tf_worktodo_parse_line(const char *raw, size_t len, lode_tf_assignment *a, char *why, size_t why_len)
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
    if (len > LODE_TF_LINE_MAX) {
        snprintf(why, why_len, "longer than %d characters", LODE_TF_LINE_MAX);
        return -1;
    }
    char line[LODE_TF_LINE_MAX + 1];
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

int lode_tf_worktodo_load(const char *path, lode_tf_assignment **list, size_t *count, int *bad_lines, bool log)
{
    *list = NULL;
    *count = 0;
    *bad_lines = 0;
    lode_tf_lines *lines = lode_tf_lines_open(path); /* a line at a time: any size, little memory */
    if (lines == NULL)
        return -1;
    unsigned lineno = 0;
    size_t n;
    const char *line;
    int got;
    while ((got = lode_tf_lines_next(lines, &line, &n)) == 1) {
        lineno++;
        lode_tf_assignment a;
        char why[256];
        size_t kept = n < LODE_TF_LINE_KEEP ? n : LODE_TF_LINE_KEEP; /* longer is malformed anyway */
        int r = lode_tf_worktodo_parse_line(line, kept, &a, why, sizeof why);
        if (r < 0) {
            if (log) {
                char shown[LODE_TF_ECHO_MAX * 4 + 64];
                lode_tf_worktodo_escape(line, n, shown, sizeof shown); /* reads ECHO_MAX bytes at most */
                lode_log(LODE_LOG_ERROR, "%s:%u: malformed line '%s': %s (line kept, skipped)", path, lineno,
                         shown, why);
            }
            (*bad_lines)++;
        } else if (r == 1) {
            lode_tf_assignment *g = realloc(*list, (*count + 1) * sizeof **list);
            if (g == NULL) {
                got = -1;
                errno = ENOMEM;
                break;
            }
            *list = g;
            (*list)[(*count)++] = a;
        }
    }
    int e = errno;
    lode_tf_lines_close(lines);
    if (got < 0) {
        free(*list);
        *list = NULL;
        *count = 0;
        errno = e;
        return -1;
    }
    return 0;
}

/* Is line[0..n) a's keyless line with a key put in after "Factor=" (what
 * registering it with PrimeNet makes of it)? */
static bool is_keyed_copy(const char *line, size_t n, const lode_tf_assignment *a)
{
    const char *eq = memchr(a->line, '=', a->line_len);
    if (a->aid[0] != '\0' || eq == NULL || n != a->line_len + 33)
        return false;
    size_t head = (size_t)(eq - a->line) + 1;
    if (memcmp(line, a->line, head) != 0 || line[head + 32] != ',' ||
        memcmp(line + head + 33, a->line + head, a->line_len - head) != 0)
        return false;
    for (size_t i = head; i < head + 32; i++)
        if (!isxdigit((unsigned char)line[i]))
            return false;
    return true;
}

/* Replaces the text of the first line equal to a's (else its keyed copy,
 * when keyed_too) with with[0..with_len), its CR and newline kept, or
 * removes the line (with NULL). Under rewrite_lock. */
static int replace_line(const char *path, const lode_tf_assignment *a, bool keyed_too, const char *with,
                        size_t with_len)
{
    size_t len;
    char *text = lode_tf_read_file(path, &len);
    if (text == NULL)
        return errno == ENOENT ? 0 : -1;
    size_t at = 0, end = 0, n = 0;
    bool found = false;
    for (int round = 0; round < (keyed_too ? 2 : 1) && !found; round++) {
        size_t pos = 0;
        const char *line;
        while (!found && (at = pos, lode_tf_next_line(text, len, &pos, &line, &n)))
            found = round == 0 ? n == a->line_len && memcmp(line, a->line, n) == 0 : is_keyed_copy(line, n, a);
        end = pos;
    }
    int rc = 0;
    if (found) {
        /* text[at..end) is the line with its newline, text[at..at+n) its
         * text: a replacement keeps the CR and newline. */
        size_t cut = with != NULL ? n : end - at, put = with != NULL ? with_len : 0;
        char *out = malloc(len - cut + put + 1);
        if (out == NULL) {
            free(text);
            errno = ENOMEM;
            return -1;
        }
        memcpy(out, text, at);
        memcpy(out + at, with != NULL ? with : "", put);
        memcpy(out + at + put, text + at + cut, len - at - cut);
        rc = lode_tf_write_atomic(path, out, len - cut + put);
        free(out);
    }
    free(text);
    return rc;
}

int lode_tf_worktodo_remove(const char *path, const lode_tf_assignment *a)
{
    pthread_mutex_lock(&rewrite_lock);
    int rc = replace_line(path, a, true, NULL, 0);
    pthread_mutex_unlock(&rewrite_lock);
    return rc;
}

int lode_tf_worktodo_replace(const char *path, const lode_tf_assignment *a, const char *line, size_t len)
{
    pthread_mutex_lock(&rewrite_lock);
    int rc = replace_line(path, a, false, line, len);
    pthread_mutex_unlock(&rewrite_lock);
    return rc;
}

int lode_tf_worktodo_append(const char *path, const char *lines, size_t n)
{
    pthread_mutex_lock(&rewrite_lock);
    size_t len = 0;
    char *text = lode_tf_read_file(path, &len);
    int rc = -1;
    if (text != NULL || errno == ENOENT) {
        char *both = malloc(len + n + 2);
        if (both != NULL) {
            size_t o = len;
            memcpy(both, text != NULL ? text : "", len);
            if (o > 0 && both[o - 1] != '\n')
                both[o++] = '\n';
            memcpy(both + o, lines, n);
            o += n;
            if (n > 0 && lines[n - 1] != '\n')
                both[o++] = '\n';
            rc = lode_tf_write_atomic(path, both, o);
            free(both);
        } else {
            errno = ENOMEM;
        }
    }
    free(text);
    pthread_mutex_unlock(&rewrite_lock);
    return rc;
}

int lode_tf_worktodo_raised(const lode_tf_assignment *a, unsigned bit_min, char *out, size_t out_len)
{
    /* bit_min is the number after the second comma from the end (the line
     * parsed: Factor=[AID,]exponent,bit_min,bit_max, no comma after it). */
    size_t commas = 0, at = a->line_len;
    while (at > 0 && commas < 2)
        commas += a->line[--at] == ',';
    if (commas < 2)
        return -1;
    size_t start = at + 1, end = start;
    while (end < a->line_len && (a->line[end] == ' ' || a->line[end] == '\t'))
        end++;
    start = end;
    while (end < a->line_len && isdigit((unsigned char)a->line[end]))
        end++;
    int n = snprintf(out, out_len, "%.*s%u%.*s", (int)start, a->line, bit_min, (int)(a->line_len - end),
                     a->line + end);
    if (n < 0 || n > LODE_TF_LINE_MAX || (size_t)n >= out_len) /* a digit more than fits: the plain form */
        n = snprintf(out, out_len, "Factor=%s%s%u,%u,%u", a->aid, a->aid[0] ? "," : "", a->p, bit_min, a->bit_max);
    return n < 0 || (size_t)n >= out_len ? -1 : n;
}

/* Does text[0..len) end with tail[0..n) at a line start? */
static bool ends_with_lines(const char *text, size_t len, const char *tail, size_t n)
{
    return n <= len && memcmp(text + len - n, tail, n) == 0 && (n == len || text[len - n - 1] == '\n');
}

/* worktodo.add beside the worktodo file: 0, or -1 (ENAMETOOLONG). */
static int add_path_of(const char *worktodo, char *add, size_t len)
{
    const char *slash = strrchr(worktodo, '/');
    int dir = slash ? (int)(slash - worktodo + 1) : 0;
    if (snprintf(add, len, "%.*sworktodo.add", dir, worktodo) >= (int)len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int lode_tf_worktodo_check(const char *worktodo, char *why, size_t why_len)
{
    struct stat st;
    char add[4096];
    if (stat(worktodo, &st) == 0) {
        if (S_ISREG(st.st_mode))
            return 0;
        snprintf(why, why_len, "cannot read %s: %s", worktodo,
                 S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
        return -1;
    }
    int e = errno;
    /* A missing worktodo that worktodo.add will create is fine. */
    if (e == ENOENT && add_path_of(worktodo, add, sizeof add) == 0 && stat(add, &st) == 0)
        return 0;
    snprintf(why, why_len, "cannot read %s: %s", worktodo, strerror(e));
    return -1;
}

static long merge_add(const char *worktodo)
{
    char add[4096], merging[4200];
    if (add_path_of(worktodo, add, sizeof add) != 0)
        return -1;
    snprintf(merging, sizeof merging, "%s.merging", add);
    long total = 0;
    bool took_add = false;
    for (int round = 0; round < 3; round++) { /* a leftover .merging, then worktodo.add */
        size_t add_len, len = 0;
        char *extra = lode_tf_read_file(merging, &add_len);
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
            if (rename(add, merging) != 0 || lode_tf_fsync_dir_of(merging) != 0)
                return -1;
            took_add = true;
            lode_tf_crash_point("add-renamed");
            continue;
        }
        char *text = lode_tf_read_file(worktodo, &len);
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
                rc = lode_tf_write_atomic(worktodo, both, o);
                free(both);
            } else {
                errno = ENOMEM;
            }
            if (rc == 0)
                total += (long)add_len;
        }
        free(text);
        free(extra);
        if (rc != 0)
            return -1;
        lode_tf_crash_point("add-merged");
        if (unlink(merging) != 0 || lode_tf_fsync_dir_of(merging) != 0)
            return -1;
        lode_log(LODE_LOG_INFO, "%s: merged into %s", add, worktodo);
    }
    return total;
}

long lode_tf_worktodo_merge_add(const char *worktodo)
{
    pthread_mutex_lock(&rewrite_lock);
    long rc = merge_add(worktodo);
    pthread_mutex_unlock(&rewrite_lock);
    return rc;
}

int lode_tf_worktodo_lock(const char *worktodo)
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
