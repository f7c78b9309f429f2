/* The device-health options (--max-temp, --max-restarts, --hang-timeout)
 * turned into the dispatcher's settings (core/dispatch/dispatch.h). */
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/cli/health.h"
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/dispatch/dispatch.h"

/* Whether a --max-temp entry names the device: its id, or its backend. */
static bool names(const char *entry, const lode_device_ref *ref)
{
    return strcmp(entry, ref->id) == 0 || strcmp(entry, lode_device_backend_name(ref)) == 0;
}

int cli_health_config(const cli_options *o, lode_dispatcher_config *config, double **temps)
{
    *temps = NULL;
    if (o->max_restarts_given)
        config->max_restarts = o->max_restarts == 0 ? -1 : (int)o->max_restarts;
    if (o->hang_timeout_given)
        config->hang_timeout_s = o->hang_timeout == 0 ? -1 : o->hang_timeout;
    if (o->max_temp_count == 0)
        return 0;
    double *limits = calloc(config->device_count ? config->device_count : 1, sizeof *limits);
    if (limits == NULL) {
        lode_log(LODE_LOG_ERROR, "out of memory");
        return EXIT_RUNTIME;
    }
    /* A limit for every device, then per backend, then per device: the
     * narrower wins whatever the order, the later among equals. */
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < o->max_temp_count; i++) {
            const char *entry = o->max_temps[i].device;
            int width = entry[0] == '\0' ? 0 : strchr(entry, ':') == NULL ? 1 : 2;
            if (width != pass)
                continue;
            bool used = false;
            for (size_t d = 0; d < config->device_count; d++)
                if (width == 0 || names(entry, &config->devices[d])) {
                    limits[d] = o->max_temps[i].celsius;
                    used = true;
                }
            if (!used)
                lode_log(LODE_LOG_WARN, "--max-temp %s=%g: no such device among those selected", entry,
                         o->max_temps[i].celsius);
        }
    config->max_temp_c = limits;
    *temps = limits;
    return 0;
}
