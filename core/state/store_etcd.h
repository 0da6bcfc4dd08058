/*
 * store_etcd.h - the etcd store: the state in an etcd cluster (v3), shared
 * by several trellis hosts of which one leads (election_etcd.c).
 *
 * Key layout: <prefix>/o/<Kind>/<namespace>/<name>, the namespace segment
 * empty for a cluster-scoped object (<prefix>/o/Node//node-1): the key is
 * the prefix, "/o/" and the object's id. The value is the object's JSON;
 * metadata.resourceVersion, as read, is the key's mod_revision in digits
 * (and is never written). <prefix>/election/ holds the election's keys.
 */
#ifndef TRELLIS_STORE_ETCD_H
#define TRELLIS_STORE_ETCD_H

#include <stddef.h>

#include "cfg.h"
#include "store.h"

/* An etcd store of sc (borrowed). Nothing is asked of etcd until list or
 * get: a store that is down opens. NULL with err for a bad config. */
store *store_etcd_open(const cfg_store *sc, int dry_run, char *err, size_t errlen);

/* How many writes flush has made and how many transactions they took
 * (for benchmarks and tests). */
void store_etcd_counts(store *s, size_t *writes, size_t *txns);

#endif
