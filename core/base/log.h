/* Log lines: "[2026-11-22 10:00:00] message" on stderr, coloured by level
 * when stderr is a terminal and NO_COLOR is unset or empty (cpuminer's look),
 * and optionally to a file
 * (--log-file), to syslog (--syslog) and as one JSON object per line
 * (--log-format json). Thread-safe.
 *
 * Every line reaches each sink in a single write(2): a line is never
 * interleaved with another, and a kill at any instant loses at most the line
 * being written. A sink that cannot be written (a full disk, a closed pipe)
 * drops the line and counts it; lode never blocks or stops for its log. */
#ifndef LODE_CORE_LOG_H
#define LODE_CORE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NOTICE: what a run is for (the end-of-run summary); shown even with -q,
 * which hides INFO and DEBUG. */
typedef enum lode_log_level {
    LODE_LOG_ERROR,
    LODE_LOG_WARN,
    LODE_LOG_NOTICE,
    LODE_LOG_INFO,
    LODE_LOG_DEBUG
} lode_log_level;

typedef enum lode_log_format {
    LODE_LOG_FORMAT_TEXT, /* "[local time] message" */
    LODE_LOG_FORMAT_JSON  /* {"ts": "...Z", "level": "info", "msg": "...", "event": ..., fields} */
} lode_log_format;

void lode_log_configure(bool quiet, bool color);
void lode_log(lode_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Where lines go besides stderr. Call before threads log (start-up). */
void lode_log_set_format(lode_log_format format);
lode_log_format lode_log_get_format(void);
/* Appends to path (created 0644 if missing). Returns 0, or -1 with the
 * reason in err. A second call replaces the file. When path is moved away or
 * replaced (logrotate), the next line opens it anew; with copytruncate the
 * lines go on at the new end (O_APPEND). */
int lode_log_open_file(const char *path, char *err, size_t err_len);
/* syslog(3) with ident "lode", facility LOG_DAEMON; levels map to LOG_ERR,
 * LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG. */
void lode_log_open_syslog(void);
/* stderr on (the default) or off (--background once running: nobody reads it). */
void lode_log_set_stderr(bool on);
/* Lines the log file could not take (write errors such as ENOSPC). */
uint64_t lode_log_file_dropped(void);
/* Closes the file and syslog (at exit). */
void lode_log_close(void);

/* Events: a log line that also carries named fields, for --log-format json
 * (and whatever reads it). In text mode only the message is printed, so
 * converting a lode_log call changes nothing there. Call it like
 *
 *   lode_log_event(LODE_LOG_INFO, "share", LODE_LOG_FIELDS(
 *                      LODE_LOG_STR("result", "accepted"), LODE_LOG_STR("pool", url),
 *                      LODE_LOG_NUM("difficulty", diff)),
 *                  "accepted: %llu/%llu", a, n);
 *
 * The JSON line is {"ts", "level", "msg", "event": "share", "result": ...}.
 * A NULL string field is written as null. Field names must not be ts, level,
 * msg or event. */
typedef enum lode_log_field_type {
    LODE_LOG_FIELD_END,
    LODE_LOG_FIELD_STR,
    LODE_LOG_FIELD_INT,
    LODE_LOG_FIELD_NUM,
    LODE_LOG_FIELD_BOOL
} lode_log_field_type;

typedef struct lode_log_field {
    const char *key;
    lode_log_field_type type;
    const char *s;
    long long i;
    double d;
} lode_log_field;

#define LODE_LOG_STR(k, v) ((lode_log_field){.key = (k), .type = LODE_LOG_FIELD_STR, .s = (v)})
#define LODE_LOG_INT(k, v) ((lode_log_field){.key = (k), .type = LODE_LOG_FIELD_INT, .i = (long long)(v)})
#define LODE_LOG_NUM(k, v) ((lode_log_field){.key = (k), .type = LODE_LOG_FIELD_NUM, .d = (double)(v)})
#define LODE_LOG_BOOL(k, v) ((lode_log_field){.key = (k), .type = LODE_LOG_FIELD_BOOL, .i = (v) ? 1 : 0})
/* A field list ending in an END entry. */
#define LODE_LOG_FIELDS(...) ((const lode_log_field[]){__VA_ARGS__, {.type = LODE_LOG_FIELD_END}})

void lode_log_event(lode_log_level level, const char *event, const lode_log_field *fields, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Copies text from a pool or node keeping printable ASCII only (anything
 * else becomes '?'), so it cannot inject terminal escapes into the log;
 * truncated to cap - 1 bytes, always terminated. NULL in gives "". out may
 * be in (sanitising in place). */
void lode_log_printable(char *out, size_t cap, const char *in);

#endif
