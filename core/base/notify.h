/*
 * notify.h - telling a service manager how the host is doing.
 *
 * systemd's notification protocol, without libsystemd: a datagram to the
 * socket named by $NOTIFY_SOCKET ("READY=1", "STATUS=...", "WATCHDOG=1",
 * "STOPPING=1"). With Type=notify the unit is started once trellis serves
 * (active or standby); with WatchdogSec= the scheduling loop pings on every
 * turn while it is healthy, so a host that is stopped (SIGSTOP) or stuck
 * stops pinging and systemd restarts it, which also frees the state lock
 * for a standby. Without $NOTIFY_SOCKET every call does nothing.
 */
#ifndef TRELLIS_NOTIFY_H
#define TRELLIS_NOTIFY_H

#include <stdint.h>

#include "util.h"

/* Send one notification (printf-style); 0, or -1 when there is no socket
 * or the send failed. */
int notify_send(const char *fmt, ...) UTIL_PRINTF(1, 2);
/* The watchdog interval systemd asked for ($WATCHDOG_USEC, for this
 * process), in milliseconds; 0 when none. */
uint64_t notify_watchdog_ms(void);

#endif
