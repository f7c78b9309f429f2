/* The options of the `lode` program's commands: what they set
 * (cli_options), the one table of them (option_table.c) and how they are
 * looked up and applied (options.c). */
#ifndef LODE_CLI_OPTIONS_H
#define LODE_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/base/algo.h"

#define CLI_MAX_POOLS 16
#define CLI_MAX_TEMPS 32
#define CLI_MAX_ALLOW_HOSTS 16 /* LODE_API_MAX_ALLOW_HOSTS */

/* One -o URL with the credentials given after it. */
typedef struct cli_pool {
    const char *url, *user, *pass, *cert_pin;
} cli_pool;

/* The commands whose options differ: `lode` itself (mining, --benchmark,
 * --selftest, --list-devices, scan, hash), `lode tf` and `lode check`. */
enum { CLI_CMD_MINER = 0, CLI_CMD_TF = 1, CLI_CMD_CHECK = 2 };
#define CLI_MINER (1u << CLI_CMD_MINER)
#define CLI_TF (1u << CLI_CMD_TF)
#define CLI_CHECK (1u << CLI_CMD_CHECK)
#define CLI_ALL (CLI_MINER | CLI_TF) /* the commands that mine or factor (service options) */
#define CLI_EVERY (CLI_ALL | CLI_CHECK)

typedef struct cli_options {
    int command;           /* CLI_CMD_*: the options that apply (cli_options_init) */
    bool algo_given;
    lode_algo algo;
    const char *devices;   /* --devices LIST, NULL = every device */
    unsigned threads;      /* --threads N, 0 = the devices' defaults */
    double time_limit;     /* --time-limit S, 0 = until Ctrl-C */
    const char *variant;   /* --variant NAME: force an implementation */
    bool benchmark, list_devices, selftest, quiet, no_color;
    const char *header;    /* scan: --header HEX */
    const char *target;    /* scan: --target HEX */
    const char *versions;  /* scan -a sha256d: --versions V,V,... (each nonce hashed under each) */
    bool start_given, count_given;
    uint64_t start, count; /* scan: --start N --count M */
    const char *operand;   /* hash: the header */
    const char *tf_class;  /* scan -a tf: --tf-class P,BIT_MIN,BIT_MAX,CLASS */

    /* Mining: pools in priority order (stratum), or one node (http). */
    cli_pool pools[CLI_MAX_POOLS];
    size_t pool_count;
    cli_pool defaults;         /* -u/-p/--cert-pin given before any -o */
    const char *coinbase_addr; /* solo: the payout address */
    const char *cookie;        /* solo: the node's .cookie file */
    const char *coinbase_tag;  /* solo: text in the coinbase */
    double suggest_diff;       /* 0 = do not suggest */
    bool no_version_rolling, no_redirect, allow_redirect_host;
    unsigned failover_after;   /* 0 = the default */
    double retry_pause, stall_timeout, log_interval, failover_return; /* 0 = the defaults */
    const char *proxy;         /* -x URL: every pool through this proxy; NULL = direct */

    /* Service habits (every command). */
    const char *log_file;      /* --log-file FILE */
    bool log_syslog, log_json, background;
    int cpu_priority;          /* 0..5; -1 = leave as started */

    /* The HTTP API (core/api): off unless api_bind is given. */
    const char *api_bind, *api_token, *api_token_file;
    const char *api_allow_hosts[CLI_MAX_ALLOW_HOSTS]; /* --api-allow-host, one name each */
    size_t api_allow_host_count;

    /* Other miners' options (compat_options.c). */
    bool protocol_dump;        /* -P: log the stratum traffic, credentials masked */
    uint64_t shares_limit;     /* --shares-limit N: stop after N accepted shares; 0 = none */
    unsigned compat_ignored;   /* bits of the ignored ones given (one warning each) */

    /* Device health (docs/OPERATIONS.md, "Device health"). */
    struct {
        char device[32]; /* a device id ("cuda:0"), a backend ("cuda"), "" = every device */
        double celsius;
    } max_temps[CLI_MAX_TEMPS]; /* --max-temp, in the order given */
    size_t max_temp_count;
    bool max_restarts_given;
    unsigned max_restarts;     /* --max-restarts N */
    bool hang_timeout_given;
    double hang_timeout;       /* --hang-timeout S, 0 = no watchdog */

    /* lode tf (defaults from cli_options_init). */
    struct {
        const char *worktodo;   /* NULL: worktodo.txt, unless an assignment is given */
        const char *results;    /* results.json.txt */
        const char *legacy;     /* --legacy-results FILE, NULL = none */
        const char *ckp_dir;    /* . */
        const char *class_log;  /* NULL = none */
        const char *user, *computer; /* UTF-8, for the JSON results; NULL = none */
        double ckp_interval;    /* 60 s; 0 = every class */
        double progress_interval; /* 10 s */
        bool no_checkpoints;
        bool stages;            /* --stages: one bit level at a time */
        unsigned stop_after_factor; /* 0, 1 (the default), 2 */
        double add_delay;       /* --worktodo-add-delay: 600 s; 0 = every class */
        const char *verify;     /* --verify PROOF_FILE: check a proof file, no device */
        /* The PrimeNet client (core/cli/tf_primenet.c). */
        bool primenet, no_more_work, unreserve_all;
        unsigned work_pref;     /* 12 */
        double days_of_work;    /* 1 */
        const char *primenet_url; /* NULL: PrimeNet's own */
        uint32_t unreserve;     /* --unreserve EXPONENT; 0: none */
    } tf;

    /* lode check (docs/CHECK.md). */
    struct {
        lode_algo algos[LODE_ALGO_COUNT]; /* -a, in the order given; none = every algorithm */
        size_t algo_count;
        uint64_t jobs;        /* --jobs N per device x variant x algorithm; 0 = the default */
        double duration;      /* --duration: seconds; 0 = a job count */
        bool seed_given;
        uint64_t seed;
        bool json;
    } check;

    /* Strings made while reading config files, freed by cli_options_free. */
    char **owned;
    size_t owned_count;
} cli_options;

/* The one option table: every option of every command, for the command
 * line (getopt), config files (keys = long names) and --help. An option
 * that means different things to two commands has an entry for each. */
struct cli_option;
/* Applies an option's value (NULL for a flag) to o: 0, or -1 with the
 * reason in err. */
typedef int (*cli_setter)(cli_options *o, const struct cli_option *opt, const char *value, char *err,
                          size_t err_len);
typedef struct cli_option {
    const char *name;   /* long name, and config-file key */
    char short_name;    /* 0: none */
    const char *arg;    /* the value's name in --help; NULL: a flag, no value */
    unsigned commands;  /* CLI_MINER, CLI_TF: where it applies */
    bool numeric;       /* a config file may give it as a JSON number */
    cli_setter set;     /* NULL: an alias (same_as), or acted on at once by main.c */
    size_t field;       /* the member of cli_options a generic setter writes (offsetof) */
    const char *help;   /* --help text ('\n': a continuation line); NULL: not listed */
    const char *same_as; /* another miner's spelling: applying it applies this option */
} cli_option;

extern const cli_option cli_option_table[];
/* Zeroes o and sets command's defaults. */
void cli_options_init(cli_options *o, int command);
/* The table entry of a long option name for a command, or NULL. */
const cli_option *cli_find_option(int command, const char *name);
/* getopt_long's tables for a command: longs (cap entries, 0-terminated;
 * each val is 256 + the table index) and shorts (":a:d:..."). */
void cli_getopt_tables(int command, struct option *longs, size_t cap, char *shorts, size_t shorts_cap);
/* The entry getopt_long's return value c (a short option or 256 + index)
 * stands for in command, or NULL. */
const cli_option *cli_option_of(int command, int c);
/* Lists command's options, one per entry with help text. */
void cli_print_options(FILE *out, int command);

/* Applies one option by its long name (as on the command line, without
 * the dashes) to o, with the setter of o->command's row; value is NULL for
 * options without one. Returns 0, or -1 with the reason in err. The
 * command line and config files both go through here, so they accept
 * exactly the same things. */
int cli_apply_option(cli_options *o, const char *name, const char *value, char *err, size_t err_len);
void cli_options_free(cli_options *o);
/* A copy of s that lives as long as o (NULL if out of memory). */
const char *cli_keep(cli_options *o, const char *s);

#endif
