/* What a configured device is doing, as the dispatcher keeps it and the
 * logs, the summary and the API show it: one list of states and names for
 * every layer (the API knows no dispatcher). */
#ifndef LODE_BASE_DEVICE_STATE_H
#define LODE_BASE_DEVICE_STATE_H

typedef enum lode_device_state {
    LODE_DEVICE_STARTING,       /* its workers are opening and self-testing */
    LODE_DEVICE_MINING,         /* at least one worker takes work */
    LODE_DEVICE_PAUSED,         /* paused by the user (lode_dispatcher_set_paused) */
    LODE_DEVICE_PAUSED_THERMAL, /* above its temperature limit */
    LODE_DEVICE_RESTARTING,     /* closed after a device error or a hang, reopening */
    LODE_DEVICE_FAILED,         /* no worker passed its self-test, or every worker failed */
    LODE_DEVICE_QUARANTINED,    /* given up: restarts exhausted, or its hits keep failing */
} lode_device_state;
#define LODE_DEVICE_STATE_COUNT (LODE_DEVICE_QUARANTINED + 1)

/* "starting", "mining", "paused", "paused-thermal", "restarting", "failed",
 * "quarantined". */
const char *lode_device_state_name(lode_device_state state);

#endif
