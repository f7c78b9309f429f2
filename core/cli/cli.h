/* The `lode` program: options shared by its commands. */
#ifndef LODE_CLI_H
#define LODE_CLI_H

#include <getopt.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/base/algo.h"

/* Exit statuses (listed in --help and the README): 0 success, 1 a failure
 * at run time (a self-test failed, every device failed or was quarantined,
 * a result could not be written), 2 bad input, 3 the pool or node refused the configuration
 * (credentials, payout address, algorithm: retrying cannot help), 130
 * interrupted by a signal (SIGINT, SIGTERM, SIGHUP). */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_REFUSED = 3, EXIT_INTERRUPTED = 130 };

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

    /* lode check (docs/OPERATIONS.md, "Checking a machine"). */
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
typedef struct cli_option {
    const char *name;   /* long name, and config-file key */
    char short_name;    /* 0: none */
    const char *arg;    /* the value's name in --help; NULL: a flag, no value */
    unsigned commands;  /* CLI_MINER, CLI_TF: where it applies */
    bool numeric;       /* a config file may give it as a JSON number */
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
 * the dashes) to o, as o->command understands it; value is NULL for options without one. Returns 0, or -1
 * with the reason in err. The command line and config files both go through
 * here, so they accept exactly the same things. */
int cli_apply_option(cli_options *o, const char *name, const char *value, char *err, size_t err_len);
/* Applies another miner's option (compat_options.c): 0 applied, -1 with
 * the reason in err, 1 not one of them. */
int cli_apply_compat_option(cli_options *o, const char *name, const char *value, char *err, size_t err_len);
/* One warning for each ignored option of another miner that was given. */
void cli_warn_ignored_options(const cli_options *o);
/* Reads a JSON config file (keys = long option names; "pools": [{"url",
 * "user", "pass", "cert-pin"}]). Returns 0, or -1 with "FILE:LINE: ..." in
 * err naming the bad key. */
int cli_config_load(cli_options *o, const char *path, char *err, size_t err_len);
/* The same on text already in memory (name is used in messages). */
int cli_config_parse(cli_options *o, const char *name, const char *text, size_t len, char *err,
                     size_t err_len);
void cli_options_free(cli_options *o);
/* A copy of s that lives as long as o (NULL if out of memory). */
const char *cli_keep(cli_options *o, const char *s);

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
/* Flushes stdout; if anything written there was lost (a closed pipe, a
 * full disk) says so on stderr and turns a 0 status into EXIT_RUNTIME. */
int cli_finish_output(int status);
struct lode_dispatcher;
/* Waits for the miner's self-tests like lode_dispatcher_wait_ready, but gives up
 * (-1) as soon as the user presses Ctrl-C. */
int cli_wait_ready(struct lode_dispatcher *m);
/* Devices mining or that may again (restarting, paused); 0: every device
 * failed or is quarantined, nothing is left to mine. */
size_t cli_devices_left(struct lode_dispatcher *m);
struct lode_device_ref;
/* With --variant NAME: 0 if some of the devices has that variant of algo;
 * otherwise a usage error that lists each device's variants (EXIT_USAGE). */
int cli_check_variant(const cli_options *o, lode_algo algo, const struct lode_device_ref *devices,
                      size_t count);
/* Prints "lode: error: ..." on stderr (with --log-format json, a JSON
 * error line); cli_usage_error returns EXIT_USAGE. cli_note: "lode: ..."
 * (a JSON notice line). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --background (core/cli/background.c). Forks: in the parent, waits until
 * the child runs and returns 0, or returns the child's exit status once it
 * has ended, having copied the child's stderr (its errors) to its own;
 * returns EXIT_RUNTIME if it cannot fork. In the child, which is detached
 * (setsid, stdin and stdout on /dev/null, stderr a pipe to the parent),
 * returns -1: go on. */
int cli_background_start(void);
/* Tells the parent the child runs (devices self-tested, the work started)
 * and puts stderr on /dev/null; nothing outside --background or twice. */
void cli_background_running(void);

struct lode_dispatcher_config;
/* Fills the health settings of a dispatcher config whose devices are set
 * (--max-temp per device, --max-restarts, --hang-timeout). *temps holds the
 * per-device limits until the dispatcher starts (it copies them): free it
 * then. Returns 0, or an exit status after saying why. */
int cli_health_config(const cli_options *o, struct lode_dispatcher_config *config, double **temps);

/* systemd's notify protocol (core/cli/notify.c, docs/OPERATIONS.md): with
 * NOTIFY_SOCKET set, READY=1 once the work has started, a STATUS line
 * (algorithm, total rate, what extra adds) every few seconds, WATCHDOG=1
 * at half of WATCHDOG_USEC while some device mines or may (not when every
 * one is restarting, failed or quarantined), STOPPING=1 at the end. A
 * thread of its own does it; NULL where nobody listens (or this lode was
 * built without libsystemd: then NOTIFY_SOCKET is warned about). */
typedef struct cli_notify cli_notify;
/* Writes what the STATUS line adds ("accepted 12, rejected 0"). Called on
 * the notify thread. */
typedef void (*cli_status_extra)(void *user, char *out, size_t len);
cli_notify *cli_notify_ready(struct lode_dispatcher *m, const char *what, const char *unit, cli_status_extra extra,
                             void *user);
/* STOPPING=1, and the thread ends; before the dispatcher is freed. NULL: nothing. */
void cli_notify_stop(cli_notify *n);

/* Hashrate lines per device and a total, every interval seconds, and the
 * summary at the end: shared by --benchmark and mining. */
typedef struct cli_rate_report {
    struct lode_dispatcher *miner;
    size_t devices;
    uint64_t *last;
    const char *unit; /* cli_rate_unit */
    double start, last_time, interval;
} cli_rate_report;
int cli_rate_report_init(cli_rate_report *r, struct lode_dispatcher *m, const char *unit, double interval);
/* Logs the rates if interval seconds have passed since the last lines. */
void cli_rate_report_tick(cli_rate_report *r);
/* Stops the dispatcher's workers, waits (LODE_STOP_GRACE_MS at most) until
 * the scans they had in flight are counted and their hits re-checked, and logs the
 * summary: the rate is every hash hashed until the scans came back, not
 * only the whole scans counted before the stop (a GPU's scan of 2^31 nonces
 * is 2.4% of a 12-s benchmark). Returns the total hashrate, and *hw_errors
 * counts. */
double cli_rate_report_stop_and_summarise(cli_rate_report *r, uint64_t *hw_errors);
void cli_rate_report_free(cli_rate_report *r);
/* The device's sensors read now, as the hashrate lines show them: " 64C
 * 487W 1980MHz", "" when it has none (core/base/sensors.h). For
 * --list-devices: while a dispatcher runs, its monitor's reading
 * (lode_device_stats.sensors) is used instead. */
void cli_device_sensors_text(const struct lode_device_ref *ref, char *out, size_t len);
/* "H/s", or "sweeps/s" for Momentum (one index = one 2^26 search). */
const char *cli_rate_unit(lode_algo algo);

/* The HTTP API of a run (core/cli/api.c): what the program tells it. */
struct lode_api;
struct lode_api_primenet;
struct lode_stratum;
struct lode_gbt;
struct lode_tf_driver;
typedef struct cli_api_source {
    struct lode_dispatcher *miner;
    lode_algo algo;
    const char *kind;   /* "stratum", "gbt", "benchmark", "tf" */
    const char *where;  /* the first pool's URL, the node's, "benchmark", the worktodo */
    struct lode_stratum *stratum; /* NULL unless kind is "stratum" */
    const char *pool_urls[CLI_MAX_POOLS]; /* as given (credentials in them are not shown) */
    struct lode_gbt *gbt;
    const char *node_url;
    struct lode_tf_driver *tf;
    /* The PrimeNet client of a tf run: fills *out (zeroed before, with
     * next_contact_s -1: unknown; the client sets enabled); called by the
     * API's sampler once a second, so it must not block. NULL: no client
     * ({"enabled": false}). */
    void (*primenet)(void *user, struct lode_api_primenet *out);
    void *primenet_user;
    const char *unit;
    char variants[64][32]; /* filled by cli_api_start */
} cli_api_source;
/* Checks --api-bind and the token at the start of a command: 0, or a usage
 * error (EXIT_USAGE, logged) for a bad address, a bind beyond loopback
 * without a token, an unreadable token file, or a lode built without the API. */
int cli_api_check(const cli_options *o);
/* Starts the API if --api-bind was given (*out NULL otherwise). 0, or
 * EXIT_RUNTIME with the reason logged. src must outlive cli_api_stop. */
int cli_api_start(const cli_options *o, cli_api_source *src, struct lode_api **out);
void cli_api_stop(struct lode_api *api);

int cmd_benchmark(const cli_options *o);
int cmd_scan(const cli_options *o);
int cmd_hash(const cli_options *o);
int cmd_list_devices(void);
/* lode -V: the build, the backends and what they found, the libraries. */
int cmd_version(void);
int cmd_selftest(const cli_options *o);
int cmd_mine(const cli_options *o);
/* lode tf, with the operands (EXPONENT BIT_MIN BIT_MAX, or none). */
int cmd_tf(const cli_options *o, int argc, char **argv);
int cmd_check(const cli_options *o, int argc, char **argv);
void cmd_check_usage(FILE *out);
/* lode tf --help */
void cmd_tf_usage(FILE *out);
/* The end-of-run summary of lode tf (core/cli/tf_summary.c): the run's
 * assignments, factors and classes, and per device its rate over elapsed
 * seconds, candidates, proof entries and hardware errors. */
struct lode_tf_driver;
void cli_tf_summary(struct lode_dispatcher *m, struct lode_tf_driver *driver, double elapsed);

#endif
