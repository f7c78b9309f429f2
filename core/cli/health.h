/* The device-health options turned into the dispatcher's settings
 * (core/cli/health.c). */
#ifndef LODE_CLI_HEALTH_H
#define LODE_CLI_HEALTH_H

#include "core/cli/options.h"

struct lode_dispatcher_config;
/* Fills the health settings of a dispatcher config whose devices are set
 * (--max-temp per device, --max-restarts, --hang-timeout). *temps holds the
 * per-device limits until the dispatcher starts (it copies them): free it
 * then. Returns 0, or an exit status after saying why. */
int cli_health_config(const cli_options *o, struct lode_dispatcher_config *config, double **temps);

#endif
