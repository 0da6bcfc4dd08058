/*
 * etcdfence.c - a host that was paused past its lease, for etcd.sh: it
 * leads through the etcd election, takes the fence (its candidate key and
 * create revision) as a host does before it writes, and then turns off
 * its own checks, as if it had passed them just before it was stopped.
 * Once the file GO exists (the test stops this process, waits for the
 * lease to expire, continues it and creates GO), it patches one object:
 * only etcd's compare on the candidate key stands between it and the
 * state.
 *
 *   etcdfence STORE.cfg KIND/NAMESPACE/NAME FIELD VALUE GO
 *
 * Prints "leading KEY" once it leads, then "refused: ID: WHY" for every
 * write etcd refused. Exit 0 when the write was refused, 1 when it was
 * made, 2 when something else went wrong.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfg.h"
#include "election.h"
#include "store.h"

static char fkey[512];
static int64_t fver;

static int stale_key(void *ud, char *key, size_t keylen, int64_t *version)
{
    (void)ud;
    snprintf(key, keylen, "%s", fkey);
    *version = fver;
    return 1;
}

static int refused;
static void on_fail(void *ud, const char *id, const char *why)
{
    (void)ud;
    refused++;
    printf("refused: %s: %s\n", id, why);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s STORE.cfg KIND/NAMESPACE/NAME FIELD VALUE GO\n", argv[0]);
        return 2;
    }
    char err[2048], holder[256];
    cfg_store sc;
    if (config_load_store(argv[1], &sc, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    election *e = election_open(&sc, NULL, err, sizeof err);
    store *st = e ? store_open(&sc, NULL, 0, err, sizeof err) : NULL;
    if (!st || election_campaign(e, holder, sizeof holder, err, sizeof err) != 1) {
        fprintf(stderr, "cannot lead: %s\n", st ? err : err);
        return 2;
    }
    election_fence(e, st);
    if (!st->fence_key || !st->fence_key(st->fence_ud, fkey, sizeof fkey, &fver)) {
        fprintf(stderr, "no fence key\n");
        return 2;
    }
    st->fence = NULL;
    st->fence_key = stale_key;
    char kind[128], ns[128], name[256];
    if (sscanf(argv[2], "%127[^/]/%127[^/]/%255s", kind, ns, name) != 3) {
        fprintf(stderr, "%s: expected KIND/NAMESPACE/NAME\n", argv[2]);
        return 2;
    }
    trellis_object *o = st->ops->get(st, kind, ns, name);
    if (!o) {
        fprintf(stderr, "%s: not in the store\n", argv[2]);
        return 2;
    }
    printf("leading %s\n", fkey);
    fflush(stdout);
    for (int i = 0; i < 60 * 20 && access(argv[5], F_OK) != 0; i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    store_edit ed = {argv[3], argv[4], STORE_SET};
    if (st->ops->patch(st, o, NULL, &ed, 1, err, sizeof err) < 0) {
        fprintf(stderr, "patch: %s\n", err);
        return 2;
    }
    st->ops->flush(st, on_fail, NULL, err, sizeof err);
    object_unref(o);
    st->ops->destroy(st);
    election_free(e);
    config_store_free(&sc);
    return refused ? 0 : 1;
}
