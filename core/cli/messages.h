/* The exit statuses of the `lode` program and its messages on stderr
 * (core/cli/messages.c). */
#ifndef LODE_CLI_MESSAGES_H
#define LODE_CLI_MESSAGES_H

/* Exit statuses (listed in --help and the README): 0 success, 1 a failure
 * at run time (a self-test failed, every device failed or was quarantined,
 * a result could not be written), 2 bad input, 3 the pool or node refused the configuration
 * (credentials, payout address, algorithm: retrying cannot help), 130
 * interrupted by a signal (SIGINT, SIGTERM, SIGHUP). */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_REFUSED = 3, EXIT_INTERRUPTED = 130 };

/* Prints "lode: error: ..." on stderr (with --log-format json, a JSON
 * error line); cli_usage_error returns EXIT_USAGE. cli_note: "lode: ..."
 * (a JSON notice line). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Flushes stdout; if anything written there was lost (a closed pipe, a
 * full disk) says so on stderr and turns a 0 status into EXIT_RUNTIME. */
int cli_finish_output(int status);

#endif
