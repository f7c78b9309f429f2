/* systemd's notify protocol (core/cli/notify.c). */
#ifndef LODE_CLI_NOTIFY_H
#define LODE_CLI_NOTIFY_H

#include <stddef.h>

struct lode_dispatcher;

/* systemd's notify protocol (core/cli/notify.c, docs/OPERATIONS.md): with
 * NOTIFY_SOCKET set, READY=1 once the work has started, a STATUS line
 * (algorithm, total rate, what extra adds) every few seconds, WATCHDOG=1
 * at half of WATCHDOG_USEC while some device mines or may (not when every
 * one is restarting, failed or quarantined), STOPPING=1 at the end. A
 * thread of its own does it; NULL where nobody listens (or this lode was
 * built without libsystemd: then NOTIFY_SOCKET is warned about). */
typedef struct cli_notify cli_notify;
/* Writes what the STATUS line adds ("accepted 12, rejected 0"). Called on
 * the notify thread. */
typedef void (*cli_status_extra)(void *user, char *out, size_t len);
cli_notify *cli_notify_ready(struct lode_dispatcher *m, const char *what, const char *unit, cli_status_extra extra,
                             void *user);
/* STOPPING=1, and the thread ends; before the dispatcher is freed. NULL: nothing. */
void cli_notify_stop(cli_notify *n);

#endif
