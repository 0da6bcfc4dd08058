/*
 * clock.h - wall-clock time as the host sees it: one reading per run.
 *
 * Plugins never call time(): a decision that depends on the age of a
 * heartbeat must be the same every time the same state is scheduled at the
 * same instant. A one-shot run reads the clock once (or takes it from
 * --now / the config's `now`); `trellis run` reads it once per loop turn.
 * Times are milliseconds since the Unix epoch, as int64; texts are RFC 3339
 * ("2026-11-25T19:09:02Z", "2026-11-25T20:09:02.5+01:00").
 */
#ifndef TRELLIS_CLOCK_H
#define TRELLIS_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* The system's wall clock now. */
int64_t clock_wall_ms(void);

/* A monotonic clock in milliseconds (intervals, timeouts, leases). */
uint64_t clock_mono_ms(void);

struct timespec;
/* The CLOCK_REALTIME instant ms from now, as pthread_cond_timedwait
 * wants its deadline. */
void clock_deadline(struct timespec *ts, uint32_t ms);

/* Parse an RFC 3339 date-time (a 'T' or ' ' between date and time, 'Z'
 * or a numeric offset, optional fraction of a second): 0 and *ms, or -1
 * when text is not one (a date without a time, an out-of-range field,
 * trailing characters). */
int clock_parse(const char *text, int64_t *ms);

/* Format ms as "YYYY-MM-DDTHH:MM:SSZ" (whole seconds, UTC, as Kubernetes
 * writes timestamps) into buf, which holds at least CLOCK_TEXT_MAX bytes. */
#define CLOCK_TEXT_MAX 32
void clock_format(int64_t ms, char *buf, size_t len);

#endif
