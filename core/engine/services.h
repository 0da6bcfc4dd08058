/*
 * services.h - what the scheduler offers the host table (hostapi.c).
 *
 * The host table implements the SDK's functions; those that change or
 * read the host's state (evict, create_target, the store writes, permits,
 * lookup_object, foreach_object, clock_now) go through this narrow interface, which
 * the scheduler fills in and hands to every plugin instance it creates
 * (trellis_plugin.svc). The host table therefore never calls the
 * scheduler, and the loader never calls the host table: it receives it.
 * A plugin instance without services (a listing's probe) is refused these
 * functions.
 */
#ifndef TRELLIS_SERVICES_H
#define TRELLIS_SERVICES_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "trellis/plugin.h"

typedef struct host_services {
    void *ud;
    /* post-filter: clear victim's placement and queue it again */
    int (*evict)(void *ud, trellis_cycle *c, const trellis_plugin *pl, const trellis_object *victim,
                 const char *reason, char *err, size_t errlen);
    /* post-filter: create a target of the profile's kind from JSON */
    int (*create_target)(void *ud, trellis_cycle *c, const trellis_plugin *pl, const char *json,
                         char *err, size_t errlen);
    /* allow or reject a workload waiting on permit: 0, -1 when none waits */
    int (*permit)(void *ud, const char *ns, const char *name, int allow, const char *reason);
    const trellis_object *(*lookup)(void *ud, const char *kind, const char *ns, const char *name);
    int (*foreach)(void *ud, const char *kind, const char *ns,
                   int (*cb)(const trellis_object *o, void *cbud), void *cbud);
    /* the wall clock decisions see (ms since the epoch) */
    int64_t (*now)(void *ud);
    /* writes through the store: edits of o (or its subresource), a new
     * object from JSON, o's deletion */
    int (*patch)(void *ud, const trellis_plugin *pl, const trellis_object *o,
                 const char *subresource, const store_edit *edits, size_t n, char *err,
                 size_t errlen);
    int (*create)(void *ud, const trellis_plugin *pl, const char *json, char *err, size_t errlen);
    int (*remove)(void *ud, const trellis_plugin *pl, const trellis_object *o, char *err,
                  size_t errlen);
    /* w's placement on target object t, as pl's profile records one */
    int (*bind)(void *ud, const trellis_plugin *pl, const trellis_object *w,
                const trellis_object *t, const store_edit *extra, size_t n_extra, char *err,
                size_t errlen);
} host_services;

struct sched;
/* The scheduler's services over s (services.c). */
void services_init(struct sched *s, host_services *out);
/* How many store writes (patch, create, remove, bind, create_target)
 * plugins have handed to the store on the calling thread: the scheduling
 * thread compares it around a cycle. */
uint64_t services_writes_here(void);
/* Hold back the patches (store_patch) plugins make on the calling thread
 * from now on: a decided hook's of a cycle that binds, written once its
 * bindings landed (KubeFleet writes a policy snapshot's status after the
 * bindings it made). */
struct held_writes;
void services_hold(void);
/* Stop holding: what was held (NULL: nothing; heldwrites.h writes it,
 * through the patch service, or drops it). */
struct held_writes *services_held(void);

#endif
