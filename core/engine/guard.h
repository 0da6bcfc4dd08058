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
 *
 * A plugin entry marked `ignorable` is not worth the run: the filter and
 * score blocks arm their call (GUARD_ARM), and at the deadline the
 * watchdog signals the thread, which leaves the plugin with siglongjmp
 * back to the call site; the cycle then goes on without that plugin. The
 * plugin's own state may be left half-changed; the host's is not, since
 * the jump is held off while the plugin is inside a host function
 * (guard_host_enter). A call that cannot be cut short within another
 * deadline ends the run as any other.
 */
#ifndef TRELLIS_GUARD_H
#define TRELLIS_GUARD_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "trellis/plugin.h"

/* exit status of a run ended by a plugin that did not return in time */
#define GUARD_EXIT_STUCK 4

/* What a slot held before guard_enter, for guard_leave; and, for an
 * armed call, where the watchdog jumps to. */
typedef struct guard_prev {
    const trellis_plugin *pl;
    const char *hook, *what;
    uint32_t deadline_ms;
    void *slot;
    void *prev_jump;
    sigjmp_buf jump;
} guard_prev;

/* Enter a call of pl's hook (a static string, "filter") about what (an
 * object's id or "file:line"; borrowed, must stay valid until
 * guard_leave), with a deadline (0: none). Ownership of every argument is
 * retained by the caller. */
void guard_enter(guard_prev *prev, const trellis_plugin *pl, const char *hook, const char *what,
                 uint32_t deadline_ms);
void guard_leave(const guard_prev *prev);

#define GUARD(pl, hook, what, deadline, stmt)                                                      \
    do {                                                                                           \
        guard_prev gp_;                                                                            \
        guard_enter(&gp_, (pl), (hook), (what), (deadline));                                       \
        stmt;                                                                                      \
        guard_leave(&gp_);                                                                         \
    } while (0)

/* The hook the calling thread is in ("filter", "bind", ...), or NULL when
 * it is not inside a plugin: host functions check their phase with it. */
const char *guard_hook(void);

/* Arm the call guard_enter opened so that the watchdog may cut it short.
 * The jump point must be in a frame that stays while the plugin runs and
 * that reads nothing after the jump, so the pattern is a small function:
 *   static int armed(guard_prev *gp, void (*fn)(void *), void *arg)
 *   {
 *       if (sigsetjmp(gp->jump, 1) != 0)
 *           return 1;
 *       guard_arm(gp);
 *       fn(arg);
 *       return 0;
 *   }
 * and on 1 the caller runs guard_abandoned (it logs, counts and leaves:
 * the slot is as before guard_enter) and goes on without the plugin. */
void guard_arm(guard_prev *prev);
void guard_abandoned(guard_prev *prev);

/* The thread is inside a host function that takes a lock: an armed call
 * is not cut short until guard_host_leave. */
void guard_host_enter(void);
void guard_host_leave(void);

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
