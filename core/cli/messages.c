/* The program's messages on stderr and the check of its output
 * (messages.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/cli/messages.h"

int cli_finish_output(int status)
{
    int failed = fflush(stdout) != 0 ? errno : 0;
    if (failed != 0 || ferror(stdout)) {
        /* stderr may be closed as well; the exit status still tells. */
        cli_error("cannot write the output: %s", failed ? strerror(failed) : "a write to stdout failed");
        return status == 0 ? EXIT_RUNTIME : status;
    }
    return status;
}

/* "lode: error: ..." (or "lode: ...") on stderr, or with --log-format json
 * a line like every other: each line of stderr is then one JSON object. */
static void stderr_line(bool error, const char *fmt, va_list ap)
{
    char small[1024];
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    char *msg = n >= (int)sizeof small ? malloc((size_t)n + 1) : NULL;
    if (msg != NULL)
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
    const char *text = msg != NULL ? msg : small; /* truncated rather than lost */
    if (lode_log_get_format() == LODE_LOG_FORMAT_JSON)
        lode_log(error ? LODE_LOG_ERROR : LODE_LOG_NOTICE, "%s", text);
    else
        fprintf(stderr, "lode: %s%s\n", error ? "error: " : "", text);
    free(msg);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stderr_line(true, fmt, ap);
    va_end(ap);
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stderr_line(false, fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stderr_line(true, fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}
