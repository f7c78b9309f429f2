/* Other miners' options (compat_options.c): the setters of their rows in
 * the option table, and the warnings for those lode ignores. */
#ifndef LODE_CLI_COMPAT_OPTIONS_H
#define LODE_CLI_COMPAT_OPTIONS_H

#include "core/cli/options.h"

/* Setters (cli_setter). An ignored option: remembered for its warning. */
int cli_set_ignored(cli_options *o, const cli_option *opt, const char *value, char *err, size_t err_len);
int cli_set_scrypt(cli_options *o, const cli_option *opt, const char *value, char *err, size_t err_len);
int cli_set_api_listen(cli_options *o, const cli_option *opt, const char *value, char *err, size_t err_len);
int cli_set_shares_limit(cli_options *o, const cli_option *opt, const char *value, char *err, size_t err_len);
/* One warning for each ignored option of another miner that was given. */
void cli_warn_ignored_options(const cli_options *o);

#endif
