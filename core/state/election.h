/*
 * election.h - which of several hosts writes a state: leader election, as
 * the store provides it.
 *
 * A long-running host campaigns; while another host leads it waits as a
 * standby on a descriptor, then campaigns again; while it leads it checks
 * every loop turn and before every write (the store's fence) that it still
 * does, and steps down when it does not. The file store's election is the
 * lock of <dir>/.trellis.lock (statelock.h): flock, the holder's pid in the
 * file, and the check that the locked file is still the one at the path.
 * The etcd store's is a lease and a candidate key (election_etcd.c); the
 * interface is the same.
 */
#ifndef TRELLIS_ELECTION_H
#define TRELLIS_ELECTION_H

#include <stddef.h>

#include "cfg.h"

typedef struct election election;

/* The election of the store store_open opens for the same arguments (the
 * file store's lock at state_dir, else the store sc names). NULL with
 * err. */
election *election_open(const cfg_store *sc, const char *state_dir, char *err, size_t errlen);
void election_free(election *e); /* resigns first when leading */
/* What is elected for, for messages (the file store: the lock's path). */
const char *election_where(const election *e);
/* Try to lead, without waiting: 1 leading; 0 another host leads (holder
 * says which, e.g. "pid 4242"); -1 with err. */
int election_campaign(election *e, char *holder, size_t holderlen, char *err, size_t errlen);
/* While another leads: a descriptor that becomes readable when the
 * standby should call election_wait_done; -1 with err. */
int election_wait_fd(election *e, char *err, size_t errlen);
/* After the descriptor was readable: 1 leading now; 0 campaign again
 * (what was waited on went away); -1 with err. */
int election_wait_done(election *e, char *err, size_t errlen);
/* Whether this host still leads: 1, or 0 with why (the lock file was
 * removed or replaced). Any thread (the binder's fence). */
int election_leading(election *e, char *why, size_t whylen);
/* Stop leading: a standby may take over. */
void election_resign(election *e);

struct store;
/* Fence st's writes with e: st asks election_leading before each flush,
 * and a store that can also puts e's key into every write it sends. e
 * must outlive st's writes. */
void election_fence(election *e, struct store *st);
/* A one-shot command that writes st (schedule, deschedule, the library's
 * run): lead at once or fail, and fence st's writes with the election.
 * Another leader is an error naming it and what to do. A dry run holds
 * nothing (the election returned does not lead). NULL with err; free it
 * with election_free, which also removes a lock file this hold made. */
election *election_hold(const cfg_store *sc, const char *state_dir, int dry_run, struct store *st,
                        char *err, size_t errlen);

#endif
