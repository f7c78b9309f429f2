/* libFuzzer target: the config-file reader (core/cli/config.c) on any
 * bytes. It must answer 0 or an error, never crash or leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/cli/config.h"
#include "core/cli/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cli_options o = {0};
    char err[512];
    if (cli_config_parse(&o, "fuzz.json", (const char *)data, size, err, sizeof err) != 0 && err[0] == '\0')
        __builtin_trap(); /* an error must say why */
    cli_options_free(&o);
    return 0;
}
