/*
 * keeper.h - the thread that keeps an election's lease, shared by the
 * etcd store's election (election_etcd.c) and the Kubernetes API store's
 * (election_kube.c): it runs the election's tick every round until it is
 * stopped, pausing between rounds as long as the tick asks (a poke cuts
 * the pause short), and it tells a standby's run loop that it leads now
 * (or should campaign again) through a pipe the loop polls.
 *
 * The keeper's lock is the election's lock: what the tick and the
 * election's functions share is read and written under keeper_lock.
 */
#ifndef TRELLIS_KEEPER_H
#define TRELLIS_KEEPER_H

#include <stddef.h>
#include <stdint.h>

typedef struct keeper keeper;

/* One round of the keeper thread, called under no lock; returns how many
 * milliseconds to pause before the next round. */
typedef uint32_t (*keeper_tick_fn)(void *ud);

/* A keeper whose thread (not started yet) runs tick(ud) each round.
 * NULL with err when the pipe cannot be made. Free with keeper_free. */
keeper *keeper_new(keeper_tick_fn tick, void *ud, char *err, size_t errlen);

/* Start the thread unless it runs already: 0, or -1 when it cannot be
 * started. Called under no lock. */
int keeper_start(keeper *k);

void keeper_lock(keeper *k);
void keeper_unlock(keeper *k);

/* Under the lock: end the current pause, so the next round runs now. */
void keeper_poke(keeper *k);

/* Tell the run loop: 'y' this host leads now, 'n' campaign again. */
void keeper_wake(keeper *k, char c);

/* The descriptor the run loop polls for keeper_wake (owned by k). */
int keeper_fd(const keeper *k);

/* Read what keeper_wake wrote since the last call: its last character,
 * or 'n' when nothing was written. Does not block. */
char keeper_drain(keeper *k);

/* Stop the thread and wait for it (nothing when it never started); the
 * lock stays usable until keeper_free. Called under no lock. */
void keeper_stop(keeper *k);

/* keeper_stop, then free everything (NULL: nothing). */
void keeper_free(keeper *k);

#endif
