#include "core/base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "core/base/json_line.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static bool log_quiet;
static int log_color = -1; /* -1: decide on first use (colour_wanted) */
static lode_log_format log_format = LODE_LOG_FORMAT_TEXT;
static bool log_stderr = true;
static bool log_syslog;
static int file_fd = -1;
static char *file_path;
static dev_t file_dev; /* what file_path named when it was opened */
static ino_t file_ino;
static atomic_uint_fast64_t file_dropped;

/* Colour on a terminal only, and never when NO_COLOR is set to anything
 * but "" (https://no-color.org). */
static int colour_wanted(void)
{
    const char *no_color = getenv("NO_COLOR");
    return (no_color == NULL || no_color[0] == '\0') && isatty(STDERR_FILENO);
}

void lode_log_configure(bool quiet, bool color)
{
    log_quiet = quiet;
    log_color = color ? colour_wanted() : 0;
}

void lode_log_set_format(lode_log_format format)
{
    log_format = format;
}

lode_log_format lode_log_get_format(void)
{
    return log_format;
}

void lode_log_set_stderr(bool on)
{
    /* Locked: --background turns stderr off while threads log. */
    pthread_mutex_lock(&log_lock);
    log_stderr = on;
    pthread_mutex_unlock(&log_lock);
}

static int open_append(const char *path, dev_t *dev, ino_t *ino)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        *dev = st.st_dev;
        *ino = st.st_ino;
    }
    return fd;
}

int lode_log_open_file(const char *path, char *err, size_t err_len)
{
    dev_t dev = 0;
    ino_t ino = 0;
    int fd = open_append(path, &dev, &ino);
    if (fd < 0) {
        snprintf(err, err_len, "cannot open the log file %s: %s", path, strerror(errno));
        return -1;
    }
    char *copy = strdup(path);
    if (copy == NULL) {
        close(fd);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    pthread_mutex_lock(&log_lock);
    if (file_fd >= 0)
        close(file_fd);
    free(file_path);
    file_fd = fd;
    file_path = copy;
    file_dev = dev;
    file_ino = ino;
    pthread_mutex_unlock(&log_lock);
    return 0;
}

void lode_log_open_syslog(void)
{
    /* LOG_PID: several lode processes on one host stay apart. */
    openlog("lode", LOG_PID, LOG_DAEMON);
    log_syslog = true;
}

uint64_t lode_log_file_dropped(void)
{
    return atomic_load(&file_dropped);
}

void lode_log_close(void)
{
    pthread_mutex_lock(&log_lock);
    if (file_fd >= 0)
        close(file_fd);
    file_fd = -1;
    free(file_path);
    file_path = NULL;
    if (log_syslog)
        closelog();
    log_syslog = false;
    pthread_mutex_unlock(&log_lock);
}

/* One write(2) for the whole line where the kernel takes it; a short write
 * (a disk that just filled up) is ended with a newline so the lines after it
 * start whole. Never retries an error: the line is dropped. */
static bool write_line(int fd, const char *line, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, line + done, len - done);
        if (w > 0)
            done += (size_t)w;
        else if (!(w < 0 && errno == EINTR))
            break;
    }
    if (done > 0 && done < len && line[len - 1] == '\n') {
        ssize_t w = write(fd, "\n", 1);
        (void)w;
    }
    return done == len;
}

/* Under log_lock: the path names another file now, or none (logrotate
 * moved it away): open it anew, as Python's WatchedFileHandler does, so no
 * signal is needed (a library lode loads may own SIGUSR1: PoCL does). The
 * old file stays if the path cannot be opened: better a renamed file than
 * no log. A stat per line costs nothing beside a log line. */
static void reopen_if_moved(void)
{
    if (file_path == NULL)
        return;
    struct stat st;
    if (stat(file_path, &st) == 0 && st.st_dev == file_dev && st.st_ino == file_ino)
        return;
    dev_t dev = 0;
    ino_t ino = 0;
    int fd = open_append(file_path, &dev, &ino);
    if (fd < 0)
        return;
    close(file_fd);
    file_fd = fd;
    file_dev = dev;
    file_ino = ino;
}

static const char *level_name(lode_log_level level)
{
    static const char *names[] = {"error", "warning", "notice", "info", "debug"};
    return names[level];
}

static int syslog_priority(lode_log_level level)
{
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG};
    return prio[level];
}

static json_t *text_value(const char *text)
{
    if (text == NULL)
        return json_null();
    json_t *s = json_string(text);
    if (s != NULL)
        return s;
    /* Not UTF-8: keep what can be shown. */
    size_t cap = strlen(text) + 1;
    char *clean = malloc(cap);
    if (clean == NULL)
        return json_null();
    lode_log_printable(clean, cap, text);
    s = json_string(clean);
    free(clean);
    return s ? s : json_null();
}

static json_t *field_value(const lode_log_field *f)
{
    switch (f->type) {
    case LODE_LOG_FIELD_STR:
        return text_value(f->s);
    case LODE_LOG_FIELD_INT:
        return json_integer(f->i);
    case LODE_LOG_FIELD_NUM:
        return isfinite(f->d) ? json_real(f->d) : json_null();
    case LODE_LOG_FIELD_BOOL:
        return json_boolean(f->i);
    default:
        return json_null();
    }
}

/* {"ts":"2026-11-26T12:00:00.123Z","level":"info","msg":...,"event":...,fields} + "\n" */
static char *json_line(lode_log_level level, const char *event, const lode_log_field *fields, const char *msg,
                       const struct timespec *now)
{
    struct tm tm;
    gmtime_r(&now->tv_sec, &tm);
    char ts[64], date[32];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts, sizeof ts, "%s.%03uZ", date, (unsigned)(now->tv_nsec / 1000000) % 1000u);
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    json_object_set_new(o, "ts", json_string(ts));
    json_object_set_new(o, "level", json_string(level_name(level)));
    json_object_set_new(o, "msg", text_value(msg));
    if (event != NULL) {
        json_object_set_new(o, "event", json_string(event));
        for (const lode_log_field *f = fields; f != NULL && f->type != LODE_LOG_FIELD_END; f++)
            if (f->key != NULL)
                json_object_set_new(o, f->key, field_value(f));
    }
    return lode_json_line(o);
}

/* "[local time] " + message, coloured or not, + "\n". */
static char *text_line(lode_log_level level, const char *msg, const struct timespec *now, bool color)
{
    static const char *colors[] = {"\033[1;31m", "\033[1;33m", "", "", "\033[2m"};
    struct tm tm;
    localtime_r(&now->tv_sec, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    const char *on = color ? colors[level] : "";
    const char *off = color && colors[level][0] ? "\033[0m" : "";
    size_t cap = strlen(stamp) + strlen(on) + strlen(msg) + strlen(off) + 8;
    char *line = malloc(cap);
    if (line != NULL)
        snprintf(line, cap, "[%s] %s%s%s\n", stamp, on, msg, off);
    return line;
}

static void emit(lode_log_level level, const char *event, const lode_log_field *fields, const char *fmt,
                 va_list ap)
{
    /* -q keeps errors, warnings and the summary: what a quiet user still needs. */
    if (log_quiet && level >= LODE_LOG_INFO)
        return;
    if (level < LODE_LOG_ERROR || level > LODE_LOG_DEBUG)
        level = LODE_LOG_ERROR;
    char small[1024];
    char *msg = small;
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL)
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
    if (msg == NULL)
        msg = small; /* truncated rather than lost */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);

    bool json = log_format == LODE_LOG_FORMAT_JSON;
    char *json_text = json ? json_line(level, event, fields, msg, &now) : NULL;
    pthread_mutex_lock(&log_lock);
    if (log_color < 0)
        log_color = colour_wanted();
    if (log_stderr) {
        char *line = json ? json_text : text_line(level, msg, &now, log_color);
        if (line != NULL)
            write_line(STDERR_FILENO, line, strlen(line));
        if (!json)
            free(line);
    }
    reopen_if_moved();
    if (file_fd >= 0) {
        char *line = json ? json_text : text_line(level, msg, &now, false);
        if (line == NULL || !write_line(file_fd, line, strlen(line)))
            atomic_fetch_add(&file_dropped, 1);
        if (!json)
            free(line);
    }
    if (log_syslog) {
        /* syslog stamps the time and level itself: the message alone, or the JSON object. */
        if (json && json_text != NULL)
            syslog(syslog_priority(level), "%.*s", (int)strlen(json_text) - 1, json_text);
        else
            syslog(syslog_priority(level), "%s", msg);
    }
    pthread_mutex_unlock(&log_lock);
    free(json_text);
    if (msg != small)
        free(msg);
}

void lode_log(lode_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(level, NULL, NULL, fmt, ap);
    va_end(ap);
}

void lode_log_event(lode_log_level level, const char *event, const lode_log_field *fields, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(level, event, fields, fmt, ap);
    va_end(ap);
}

void lode_log_printable(char *out, size_t cap, const char *in)
{
    if (cap == 0)
        return;
    size_t n = 0;
    for (; in != NULL && *in != '\0' && n + 1 < cap; in++) {
        unsigned char c = (unsigned char)*in;
        out[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[n] = '\0';
}
