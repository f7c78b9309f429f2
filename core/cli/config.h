/* Config files (core/cli/config.c): JSON keyed by long option names,
 * applied exactly as the command line's options. */
#ifndef LODE_CLI_CONFIG_H
#define LODE_CLI_CONFIG_H

#include <stddef.h>

#include "core/cli/options.h"

/* Reads a JSON config file (keys = long option names; "pools": [{"url",
 * "user", "pass", "cert-pin"}]). Returns 0, or -1 with "FILE:LINE: ..." in
 * err naming the bad key. */
int cli_config_load(cli_options *o, const char *path, char *err, size_t err_len);
/* The same on text already in memory (name is used in messages). */
int cli_config_parse(cli_options *o, const char *name, const char *text, size_t len, char *err,
                     size_t err_len);

#endif
