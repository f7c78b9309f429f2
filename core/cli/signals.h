/* Stop requests: SIGINT, SIGTERM and SIGHUP (core/cli/signals.c). */
#ifndef LODE_CLI_SIGNALS_H
#define LODE_CLI_SIGNALS_H

#include <stdatomic.h>
#include <stdbool.h>

/* Set by SIGINT, SIGTERM and SIGHUP; commands poll it. */
bool cli_interrupted(void);
/* A second Ctrl-C: stop now, even where the first lets a unit of work finish. */
bool cli_interrupted_twice(void);
/* Set with cli_interrupted: an abort flag for device calls the command
 * makes itself (the self-tests of --selftest). */
const atomic_int *cli_stop_flag(void);
/* SIGINT, SIGTERM, SIGHUP set cli_interrupted, taken by a thread of their
 * own (core/cli/signals.c) that the first look at them starts; SIGPIPE is
 * ignored. First thing in main, before any thread starts. */
void cli_install_signal_handlers(void);
/* In the child of a fork, which has no signal thread: it starts its own. */
void cli_signals_after_fork(void);
/* Readable once a stop request came (for poll loops). */
int cli_stop_fd(void);

#endif
