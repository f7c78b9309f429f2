#include "core/tf/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/settings.h"

uint32_t lode_tf_crc32(const void *data, size_t len)
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

void lode_tf_crash_point(const char *step)
{
    const char *want = lode_setting_text(LODE_SETTING_TF_CRASH_AT);
    if (want != NULL && strcmp(want, step) == 0)
        raise(SIGKILL);
}

int lode_tf_fsync_dir_of(const char *path)
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

int lode_tf_write_atomic(const char *path, const char *text, size_t len)
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
        return lode_tf_fsync_dir_of(path);
    saved = ok ? errno : saved;
    remove(tmp);
    errno = saved ? saved : EIO;
    return -1;
}

char *lode_tf_read_file(const char *path, size_t *len)
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

struct lode_tf_lines {
    int fd;
    bool eof, stopped;
    size_t limit; /* lode_tf_lines_stop_after; 0 = none */
    size_t start, end; /* unread bytes: buf[start..end) */
    char buf[1 << 16];
    char line[LODE_TF_LINE_KEEP + 2]; /* + a CR that may yet be the line's last byte, + NUL */
};

lode_tf_lines *lode_tf_lines_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC /* a FIFO must not block */);
    if (fd < 0)
        return NULL;
    struct stat st;
    int e = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? (S_ISDIR(st.st_mode) ? EISDIR : EINVAL) : 0;
    lode_tf_lines *r = e == 0 ? calloc(1, sizeof *r) : NULL;
    if (r == NULL) {
        close(fd);
        errno = e ? e : ENOMEM;
        return NULL;
    }
    r->fd = fd;
    return r;
}

int lode_tf_lines_next(lode_tf_lines *r, const char **line, size_t *full)
{
    size_t n = 0;     /* the line's bytes so far */
    bool any = false; /* a byte or a newline seen: there is a line */
    char last = 0;    /* its last byte */
    if (r->stopped)
        return 0;
    for (;;) {
        if (r->start == r->end && !r->eof) {
            ssize_t got = read(r->fd, r->buf, sizeof r->buf);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0)
                return -1;
            r->start = 0;
            r->end = (size_t)got;
            r->eof = got == 0;
        }
        if (r->start == r->end)
            break; /* the end of the file ends the last line */
        const char *s = r->buf + r->start;
        const char *nl = memchr(s, '\n', r->end - r->start);
        size_t k = nl ? (size_t)(nl - s) : r->end - r->start;
        if (n < LODE_TF_LINE_KEEP + 1)
            memcpy(r->line + n, s, k < LODE_TF_LINE_KEEP + 1 - n ? k : LODE_TF_LINE_KEEP + 1 - n);
        n += k;
        last = k > 0 ? s[k - 1] : last;
        any = true;
        r->start += k + (nl != NULL);
        if (nl != NULL)
            break;
        if (r->limit > 0 && n > r->limit) {
            r->stopped = true;
            break;
        }
    }
    if (!any)
        return 0;
    if (n > 0 && last == '\r') /* a final CR is not part of the line */
        n--;
    *full = n;
    r->line[n < LODE_TF_LINE_KEEP ? n : LODE_TF_LINE_KEEP] = '\0';
    *line = r->line;
    return 1;
}

void lode_tf_lines_stop_after(lode_tf_lines *r, size_t limit) { r->limit = limit; }

void lode_tf_lines_close(lode_tf_lines *r)
{
    if (r == NULL)
        return;
    close(r->fd);
    free(r);
}

int lode_tf_append_record(const char *path, const char *text, size_t len)
{
    /* Read and write: the last byte is read (a write-only descriptor
     * cannot pread); write-only where the file may not be read. */
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EACCES)
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
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

bool lode_tf_next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
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
