/* The commands main.c runs, each in a file of its own. */
#ifndef LODE_CLI_COMMANDS_H
#define LODE_CLI_COMMANDS_H

#include <stdio.h>

#include "core/cli/options.h"

int cmd_benchmark(const cli_options *o);
int cmd_scan(const cli_options *o);
int cmd_hash(const cli_options *o);
/* lode -V: the build, the backends and what they found, the libraries. */
int cmd_version(void);
int cmd_mine(const cli_options *o);
/* lode tf, with the operands (EXPONENT BIT_MIN BIT_MAX, or none). */
int cmd_tf(const cli_options *o, int argc, char **argv);
int cmd_check(const cli_options *o, int argc, char **argv);
void cmd_check_usage(FILE *out);
/* lode tf --help */
void cmd_tf_usage(FILE *out);

#endif
