/* The HTTP API (core/api) wired into a run (core/cli/run_api.c). */
#ifndef LODE_CLI_RUN_API_H
#define LODE_CLI_RUN_API_H

#include "core/base/algo.h"
#include "core/cli/options.h"

struct lode_api;
struct lode_api_primenet;
struct lode_dispatcher;
struct lode_gbt;
struct lode_stratum;
struct lode_tf_driver;

/* What the program tells the API. */
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

#endif
