/* The value parsers of the option setters
 * (option_table.c, compat_options.c). */
#ifndef LODE_CLI_OPTION_PARSE_H
#define LODE_CLI_OPTION_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/errmsg.h" /* lode_fail, the setters' error helper */

/* Each returns 0 and sets *out, or -1 (text NULL or not what it wants). */
/* A decimal integer in [0, max], nothing else. */
int cli_parse_u64(const char *text, uint64_t max, uint64_t *out);
/* A finite number above 0. */
int cli_parse_positive(const char *text, double *out);
/* Seconds from 0 to 10^9. */
int cli_parse_seconds(const char *text, double *out);
/* A time: seconds, or a number followed by s, m or h; above 0, at most
 * 10^9 s. */
int cli_parse_duration(const char *text, double *out);

#endif
