#include "core/base/status.h"

const char *lode_status_str(int status)
{
    switch ((lode_status)status) {
    case LODE_OK: return "ok";
    case LODE_ERR_UNSUPPORTED: return "not supported by this device";
    case LODE_ERR_NO_MEMORY: return "out of memory";
    case LODE_ERR_DEVICE: return "device or driver failure";
    case LODE_ERR_HITS_OVERFLOW: return "hit buffer overflow";
    case LODE_ERR_INVALID: return "invalid argument";
    }
    return "unknown error";
}
