/* Status codes shared by the core and every backend. */
#ifndef LODE_CORE_STATUS_H
#define LODE_CORE_STATUS_H

typedef enum lode_status {
    LODE_OK = 0,
    LODE_ERR_UNSUPPORTED = -1,   /* the device cannot run this algorithm or variant */
    LODE_ERR_NO_MEMORY = -2,
    LODE_ERR_DEVICE = -3,        /* driver or device failure: the device is disabled */
    LODE_ERR_HITS_OVERFLOW = -4, /* a fixed hit buffer filled: the core rescans in halves */
    LODE_ERR_INVALID = -5,       /* bad arguments */
} lode_status;

const char *lode_status_str(int status);

#endif
