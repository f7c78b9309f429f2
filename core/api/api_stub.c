/* A lode built without libmicrohttpd (-DLODE_MICROHTTPD=OFF, the portable
 * preset): --api-bind is refused with the reason. */
#include <stdio.h>

#include "core/api/api_internal.h"

bool lode_api_available(void)
{
    return false;
}

lode_api *lode_api_start(const lode_api_config *config, char *err, size_t err_len)
{
    (void)config;
    snprintf(err, err_len, "this lode was built without libmicrohttpd (-DLODE_MICROHTTPD=OFF): no HTTP API; "
             "install libmicrohttpd-dev and libjs-chart.js and build again");
    return NULL;
}

unsigned lode_api_port(const lode_api *api)
{
    (void)api;
    return 0;
}

void lode_api_stop(lode_api *api)
{
    (void)api;
}
