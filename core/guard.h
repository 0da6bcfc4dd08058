/*
 * guard.h - a watch over every call into a plugin.
 *
 * Each thread that calls plugins has a slot saying which plugin, which
 * hook and which object it is in, written on the way in and cleared on the
 * way out (no clock is read: a sequence number moves instead). Two things
 * read the slots:
 *
 *  - the crash handler (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT): when
 *    the host dies inside a plugin it prints, async-signal-safely, the
 *    plugin, its file, the hook and the object, and appends a record to the
 *    state's quarantine file (quarantine.h), so that the next start does
 *    not feed the same workload to the same plugin again;
 *  - the watchdog thread: a call that has not returned within its
 *    deadline is reported (log, the fatal reason /healthz serves, a
 *    quarantine record) and the process ends with exit status 4, since a
 *    thread stuck in a plugin cannot be taken back.
 *
 * Calls may nest (a post-filter runs other plugins' filters): guard_enter
 * saves what the slot held and guard_leave puts it back.
 */
#ifndef TRELLIS_GUARD_H
#define TRELLIS_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include "trellis/plugin.h"

/* exit status of a run ended by a plugin that did not return in time */
#define GUARD_EXIT_STUCK 4

/* What a slot held before guard_enter, for guard_leave. */
typedef struct guard_prev {
    const trellis_plugin *pl;
    const char *hook, *what;
    uint32_t deadline_ms;
    void *slot;
} guard_prev;

/* Enter a call of pl's hook (a static string, "filter") about what (an
 * object's id or "file:line"; borrowed, must stay valid until
 * guard_leave), with a deadline (0: none). Ownership of every argument is
 * retained by the caller. */
void guard_enter(guard_prev *prev, const trellis_plugin *pl, const char *hook, const char *what,
                 uint32_t deadline_ms);
void guard_leave(const guard_prev *prev);

#define GUARD(pl, hook, what, deadline, stmt)                                                \
    do {                                                                                     \
        guard_prev gp_;                                                                      \
        guard_enter(&gp_, (pl), (hook), (what), (deadline));                                 \
        stmt;                                                                                \
        guard_leave(&gp_);                                                                   \
    } while (0)

/* Install the crash handler (once per process). record_path (may be NULL;
 * copied) is the file crash records are appended to. */
void guard_install(const char *record_path);
/* Change the record file (a run that took over another state). */
void guard_set_record(const char *record_path);

/* Called by the watchdog with its message when a call overran its
 * deadline, before the process ends. */
typedef void (*guard_fatal_fn)(void *ud, const char *message);
/* Start the watchdog thread (once). grace_ms: how long /healthz shows the
 * reason before the process exits. */
void guard_watch(guard_fatal_fn fatal, void *ud, uint32_t grace_ms);
/* Stop the watchdog thread (tests; the process exit stops it too). */
void guard_unwatch(void);

/* How many calls overran their deadline so far (for tests). */
uint64_t guard_overruns(void);

#endif
