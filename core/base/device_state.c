#include "core/base/device_state.h"

const char *lode_device_state_name(lode_device_state state)
{
    switch (state) {
    case LODE_DEVICE_STARTING: return "starting";
    case LODE_DEVICE_MINING: return "mining";
    case LODE_DEVICE_PAUSED: return "paused";
    case LODE_DEVICE_PAUSED_THERMAL: return "paused-thermal";
    case LODE_DEVICE_RESTARTING: return "restarting";
    case LODE_DEVICE_FAILED: return "failed";
    case LODE_DEVICE_QUARANTINED: return "quarantined";
    }
    return "unknown";
}
