/* The `lode` program: options shared by its commands. */
#ifndef LODE_CLI_H
#define LODE_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "core/algo.h"

/* Exit statuses: 0 success, 1 a failure at run time (a self-test failed, no
 * device could work), 2 bad input, 130 interrupted by the user. */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

typedef struct cli_options {
    bool algo_given;
    lode_algo algo;
    const char *devices;   /* --devices LIST, NULL = every device */
    unsigned threads;      /* --threads N, 0 = the devices' defaults */
    double time_limit;     /* --time-limit S, 0 = until Ctrl-C */
    const char *variant;   /* --variant NAME: force an implementation */
    const char *header;    /* scan: --header HEX */
    const char *target;    /* scan: --target HEX */
    bool start_given, count_given;
    uint64_t start, count; /* scan: --start N --count M */
    const char *operand;   /* hash: the header */
} cli_options;

/* Set by SIGINT/SIGTERM; commands poll it. */
bool cli_interrupted(void);
void cli_install_signal_handlers(void);
struct lode_miner;
/* Waits for the miner's self-tests like lode_miner_wait_ready, but gives up
 * (-1) as soon as the user presses Ctrl-C. */
int cli_wait_ready(struct lode_miner *m);
/* Prints "lode: error: ..." on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int cmd_benchmark(const cli_options *o);
int cmd_scan(const cli_options *o);
int cmd_hash(const cli_options *o);
int cmd_list_devices(void);
int cmd_selftest(const cli_options *o);

#endif
