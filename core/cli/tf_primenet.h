/* `lode tf --primenet`: the PrimeNet client (core/primenet) beside the
 * class driver, for core/cli/tf.c. */
#ifndef LODE_CLI_TF_PRIMENET_H
#define LODE_CLI_TF_PRIMENET_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cli/options.h"
#include "core/tf/class_driver.h"

/* The PrimeNet options against the rest (argc: assignments on the command
 * line). 0, or EXIT_USAGE (said). */
int cli_tf_primenet_check(const cli_options *o, int argc);
/* With --primenet, before the worktodo is checked: a missing worktodo
 * file is created empty (the client fills it), and --unreserve or
 * --unreserve-all gives the work back under the worktodo lock. -1: go on;
 * else the exit status (EXIT_USAGE when the file cannot be created). */
int cli_tf_primenet_prepare(const cli_options *o, const char *worktodo);

typedef struct cli_tf_primenet cli_tf_primenet;
/* Starts the client for the driver's files (sets the driver's result
 * callback, and user and computer of its JSON lines where not given).
 * model: the devices' names. NULL with the reason logged. */
cli_tf_primenet *cli_tf_primenet_start(const cli_options *o, lode_tf_driver *d, const char *model);
/* The HTTP API's PrimeNet section (cli_api_source.primenet; user: p). */
struct lode_api_primenet;
void cli_tf_primenet_api_status(void *user, struct lode_api_primenet *out);
/* The driver's stop request: Ctrl-C, or PrimeNet refused the user. */
bool cli_tf_primenet_stop_asked(void);
/* Runs the list as lode_tf_driver_run_list, and when it runs out waits
 * for the client's assignments (until a stop; with --no-more-work it
 * returns). LODE_TF_DONE, _STOPPED or _FAILED. */
int cli_tf_primenet_run(cli_tf_primenet *p, lode_tf_driver *d, lode_tf_assignment **list, size_t *count);
/* The exit status of a run that ended with status (EXIT_REFUSED when
 * PrimeNet refused the user); a finished run first sends what is queued.
 * Frees p. */
int cli_tf_primenet_end(cli_tf_primenet *p, int status);

#endif
