/* The devices' commands (core/cli/devices.c): --list-devices, --selftest,
 * and the --variant check of the others. */
#ifndef LODE_CLI_DEVICES_H
#define LODE_CLI_DEVICES_H

#include <stddef.h>

#include "core/base/algo.h"
#include "core/cli/options.h"

struct lode_device_ref;
/* With --variant NAME: 0 if some of the devices has that variant of algo;
 * otherwise a usage error that lists each device's variants (EXIT_USAGE). */
int cli_check_variant(const cli_options *o, lode_algo algo, const struct lode_device_ref *devices,
                      size_t count);
int cmd_list_devices(void);
int cmd_selftest(const cli_options *o);

#endif
