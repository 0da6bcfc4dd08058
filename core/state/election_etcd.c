/*
 * election_etcd.c - the etcd store's election (election.h), etcd's own
 * recipe: each host grants a lease with the config's TTL and creates its
 * candidate key <prefix>/election/<lease id in hex> under it; the
 * candidate whose key has the lowest create revision leads. A keeper
 * thread renews the lease every third of the TTL and, for a standby,
 * looks every half second whether its key has become the lowest (then it
 * wakes the waiting run loop through a pipe).
 *
 * A host stops leading when a renewal's reply carries no TTL (the lease
 * is gone), when its key is gone, or when no renewal has succeeded for a
 * whole TTL (counted from when the last good renewal was sent, so the
 * host gives up no later than etcd does). election_leading is the store's
 * fence; the key and its create revision are also put into every
 * transaction the etcd store sends, so etcd itself refuses the writes of
 * a host that was paused past its lease and has not noticed yet.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "election_impl.h"
#include "base64.h"
#include "etcdclient.h"
#include "keeper.h"
#include "log.h"
#include "util.h"

typedef struct etcd_election {
    election base; /* first */
    etcd_client *cl;
    char *dir, *dir_end; /* "<prefix>/election/" and its range_end */
    char *where;
    uint32_t ttl_s;
    keeper *k;     /* its lock guards everything below */
    int64_t lease; /* 0: none */
    char key[256]; /* the candidate key, "" when none */
    int64_t create_rev;
    int leading, waiting;
    int lost; /* the lease or the key is gone */
    char lost_why[1024];
    uint64_t renewed_ms; /* when the last good renewal was sent */
    uint64_t next_renew; /* the keeper thread's own */
} etcd_election;

static json_object *jint(int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return json_object_new_string(buf);
}

static json_object *jb64(const char *s)
{
    char *b = base64_encode(s, strlen(s));
    json_object *j = json_object_new_string(b);
    free(b);
    return j;
}

static const char *ee_where(const election *ee)
{
    return ((const etcd_election *)ee)->where;
}

/* The lowest candidate: 1 when it is ours, 0 another (holder says who),
 * -1 with err. */
static int lowest(etcd_election *e, const char *own, char *holder, size_t holderlen, char *err,
                  size_t errlen)
{
    json_object *req = json_object_new_object();
    json_object_object_add(req, "key", jb64(e->dir));
    json_object_object_add(req, "range_end", jb64(e->dir_end));
    json_object_object_add(req, "limit", jint(1));
    json_object_object_add(req, "sort_order", json_object_new_string("ASCEND"));
    json_object_object_add(req, "sort_target", json_object_new_string("CREATE"));
    json_object *reply = etcd_call(e->cl, "kv/range", req, 1, NULL, err, errlen);
    json_object_put(req);
    if (!reply)
        return -1;
    etcd_kv *kvs = NULL;
    size_t n = 0, cap = 0;
    int64_t rev;
    int more, rc;
    if (etcd_parse_range(reply, &kvs, &n, &cap, &rev, &more, err, errlen) < 0)
        rc = -1;
    else if (!n)
        rc = errf(err, errlen, "%s: no candidate key, not even this host's", e->where);
    else if (strcmp(kvs[0].key, own) == 0)
        rc = 1;
    else {
        snprintf(holder, holderlen, "%s", kvs[0].value_len ? kvs[0].value : kvs[0].key);
        rc = 0;
    }
    for (size_t i = 0; i < n; i++)
        etcd_kv_free(&kvs[i]);
    free(kvs);
    json_object_put(reply);
    return rc;
}

/* Renew the lease: 1 renewed, 0 gone (why says), -1 no answer. */
static int keepalive(etcd_election *e, int64_t lease, char *why, size_t whylen)
{
    json_object *req = json_object_new_object();
    json_object_object_add(req, "ID", jint(lease));
    json_object *reply = etcd_call(e->cl, "lease/keepalive", req, 1, NULL, why, whylen);
    json_object_put(req);
    if (!reply)
        return -1;
    json_object *r;
    int64_t ttl = 0;
    int rc;
    if (!json_object_object_get_ex(reply, "result", &r) || etcd_int64(r, "TTL", &ttl) < 0)
        rc = errf(why, whylen, "an unreadable reply to a lease renewal") + 0;
    else if (ttl <= 0)
        rc = errf(why, whylen, "lease %llx expired (the renewal's reply carries no TTL)",
                  (unsigned long long)lease) +
             1;
    else
        rc = 1;
    json_object_put(reply);
    return rc;
}

/* Whether key still exists with create revision rev: 1, 0, -1 no answer. */
static int key_held(etcd_election *e, const char *key, int64_t rev)
{
    json_object *req = json_object_new_object();
    json_object_object_add(req, "key", jb64(key));
    char err[256];
    json_object *reply = etcd_call(e->cl, "kv/range", req, 1, NULL, err, sizeof err);
    json_object_put(req);
    if (!reply)
        return -1;
    etcd_kv *kvs = NULL;
    size_t n = 0, cap = 0;
    int64_t r;
    int more, rc = -1;
    if (etcd_parse_range(reply, &kvs, &n, &cap, &r, &more, err, sizeof err) == 0)
        rc = n && kvs[0].create_revision == rev;
    for (size_t i = 0; i < n; i++)
        etcd_kv_free(&kvs[i]);
    free(kvs);
    json_object_put(reply);
    return rc;
}

/* One round of the keeper: renew the lease every third of the TTL (every
 * half second while renewals fail), then look whether the leader's key
 * is still there, or whether a waiting standby's key is now the lowest. */
static uint32_t tick(void *ud)
{
    etcd_election *e = ud;
    uint32_t renew_every = e->ttl_s * 1000 / 3;
    keeper_lock(e->k);
    uint64_t now = clock_mono_ms();
    int64_t lease = e->lease;
    char key[256];
    snprintf(key, sizeof key, "%s", e->key);
    int64_t rev = e->create_rev;
    int leading = e->leading, waiting = e->waiting, lost = e->lost;
    keeper_unlock(e->k);
    char why[512];
    if (lease && !lost && now >= e->next_renew) {
        int rc = keepalive(e, lease, why, sizeof why);
        keeper_lock(e->k);
        if (rc == 1 && e->lease == lease && e->renewed_ms < now)
            e->renewed_ms = now;
        if (e->lease == lease && !e->lost &&
            (rc == 0 || clock_mono_ms() - e->renewed_ms > (uint64_t)e->ttl_s * 1000)) {
            e->lost = 1;
            snprintf(e->lost_why, sizeof e->lost_why, "%s: %s", e->where,
                     rc == 0 ? why : "the lease was not renewed for a whole TTL");
            if (e->waiting)
                keeper_wake(e->k, 'n');
        }
        lost = e->lost;
        keeper_unlock(e->k);
        e->next_renew = now + (rc == 1 ? renew_every : 500);
    }
    if (lease && !lost && key[0]) {
        char holder[256];
        int rc = leading   ? key_held(e, key, rev)
                 : waiting ? lowest(e, key, holder, sizeof holder, why, sizeof why)
                           : -1;
        keeper_lock(e->k);
        if (e->lease == lease && !e->lost) {
            if (leading && rc == 0) {
                e->lost = 1;
                snprintf(e->lost_why, sizeof e->lost_why, "%s: the candidate key %s is gone",
                         e->where, key);
            } else if (!leading && waiting && rc == 1 && e->waiting) {
                e->waiting = 0;
                keeper_wake(e->k, 'y');
            }
        }
        keeper_unlock(e->k);
    }
    return 500;
}

/* Revoke the lease (its key goes with it); under no lock. */
static void lease_revoke(etcd_election *e, int64_t lease)
{
    if (!lease)
        return;
    json_object *req = json_object_new_object();
    json_object_object_add(req, "ID", jint(lease));
    char err[512];
    json_object *reply = etcd_call(e->cl, "lease/revoke", req, 1, NULL, err, sizeof err);
    json_object_put(req);
    if (!reply && !strstr(err, "lease not found")) /* gone already: nothing to do */
        log_warn("%s: cannot revoke lease %llx (it expires by itself): %s", e->where,
                 (unsigned long long)lease, err);
    json_object_put(reply);
}

/* A lease and a candidate key under it. 0, or -1 with err. */
static int stand(etcd_election *e, char *err, size_t errlen)
{
    json_object *req = json_object_new_object();
    json_object_object_add(req, "TTL", jint(e->ttl_s));
    json_object *reply = etcd_call(e->cl, "lease/grant", req, 0, NULL, err, errlen);
    json_object_put(req);
    if (!reply)
        return errprefix(err, errlen, "%s: cannot grant a lease", e->where);
    int64_t lease = 0;
    etcd_int64(reply, "ID", &lease);
    json_object_put(reply);
    if (!lease)
        return errf(err, errlen, "%s: the lease granted has no ID", e->where);
    char key[256], host[128] = "?";
    gethostname(host, sizeof host - 1);
    snprintf(key, sizeof key, "%s%llx", e->dir, (unsigned long long)lease);
    char *holder = xasprintf("%s pid %d", host, (int)getpid());
    req = json_object_new_object();
    json_object *cmp = json_object_new_array(), *c = json_object_new_object();
    json_object_object_add(c, "key", jb64(key));
    json_object_object_add(c, "target", json_object_new_string("CREATE"));
    json_object_object_add(c, "result", json_object_new_string("EQUAL"));
    json_object_object_add(c, "create_revision", jint(0));
    json_object_array_add(cmp, c);
    json_object *succ = json_object_new_array(), *op = json_object_new_object(),
                *put = json_object_new_object();
    json_object_object_add(put, "key", jb64(key));
    json_object_object_add(put, "value", jb64(holder));
    json_object_object_add(put, "lease", jint(lease));
    json_object_object_add(op, "request_put", put);
    json_object_array_add(succ, op);
    json_object_object_add(req, "compare", cmp);
    json_object_object_add(req, "success", succ);
    free(holder);
    reply = etcd_call(e->cl, "kv/txn", req, 0, NULL, err, errlen);
    json_object_put(req);
    if (!reply) {
        lease_revoke(e, lease);
        return errprefix(err, errlen, "%s: cannot create the candidate key", e->where);
    }
    json_object *h, *sv;
    int64_t rev = 0;
    int ok = json_object_object_get_ex(reply, "succeeded", &sv) && json_object_get_boolean(sv) &&
             json_object_object_get_ex(reply, "header", &h) &&
             etcd_int64(h, "revision", &rev) == 0 && rev > 0;
    json_object_put(reply);
    if (!ok) {
        lease_revoke(e, lease);
        return errf(err, errlen, "%s: the candidate key %s exists already", e->where, key);
    }
    keeper_lock(e->k);
    e->lease = lease;
    snprintf(e->key, sizeof e->key, "%s", key);
    e->create_rev = rev; /* the txn's revision is the key's create revision */
    e->lost = 0;
    e->lost_why[0] = '\0';
    e->leading = e->waiting = 0;
    e->renewed_ms = clock_mono_ms();
    keeper_unlock(e->k);
    if (keeper_start(e->k) < 0)
        return errf(err, errlen, "cannot start the lease keeper thread");
    return 0;
}

/* Forget the candidacy (lost or resigned); the lease is revoked. */
static void drop(etcd_election *e)
{
    keeper_lock(e->k);
    int64_t lease = e->lease;
    e->lease = 0;
    e->key[0] = '\0';
    e->leading = e->waiting = 0;
    e->lost = 0;
    keeper_unlock(e->k);
    lease_revoke(e, lease);
}

static int ee_campaign(election *ee, char *holder, size_t holderlen, char *err, size_t errlen)
{
    etcd_election *e = (etcd_election *)ee;
    keeper_lock(e->k);
    int have = e->lease && !e->lost;
    keeper_unlock(e->k);
    if (!have) {
        drop(e);
        if (stand(e, err, errlen) < 0)
            return -1;
    }
    char key[256];
    keeper_lock(e->k);
    snprintf(key, sizeof key, "%s", e->key);
    keeper_unlock(e->k);
    int rc = lowest(e, key, holder, holderlen, err, errlen);
    keeper_lock(e->k);
    if (rc == 1)
        e->leading = 1;
    keeper_unlock(e->k);
    return rc;
}

static int ee_wait_fd(election *ee, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    etcd_election *e = (etcd_election *)ee;
    keeper_lock(e->k);
    e->waiting = 1;
    if (e->lost)
        keeper_wake(e->k, 'n');
    keeper_poke(e->k);
    keeper_unlock(e->k);
    return keeper_fd(e->k);
}

static int ee_wait_done(election *ee, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    etcd_election *e = (etcd_election *)ee;
    char c = keeper_drain(e->k);
    keeper_lock(e->k);
    e->waiting = 0;
    int lead = c == 'y' && !e->lost && e->lease;
    if (lead)
        e->leading = 1;
    keeper_unlock(e->k);
    return lead;
}

static int ee_leading(election *ee, char *why, size_t whylen)
{
    etcd_election *e = (etcd_election *)ee;
    keeper_lock(e->k);
    int rc = 1;
    uint64_t since = clock_mono_ms() - e->renewed_ms;
    if (!e->leading || !e->lease)
        rc = errf(why, whylen, "%s: this host does not lead", e->where) + 1;
    else if (e->lost)
        rc = errf(why, whylen, "%s", e->lost_why) + 1;
    else if (since > (uint64_t)e->ttl_s * 1000)
        rc = errf(why, whylen, "%s: the lease was not renewed for %.1f s (TTL %u s)", e->where,
                  (double)since / 1000.0, e->ttl_s) +
             1;
    keeper_unlock(e->k);
    return rc;
}

static int ee_fence_key(election *ee, char *key, size_t keylen, int64_t *version)
{
    etcd_election *e = (etcd_election *)ee;
    keeper_lock(e->k);
    int ok = e->leading && e->lease && !e->lost;
    if (ok) {
        snprintf(key, keylen, "%s", e->key);
        *version = e->create_rev;
    }
    keeper_unlock(e->k);
    return ok;
}

static void ee_resign(election *ee)
{
    drop((etcd_election *)ee);
}

static void ee_destroy(election *ee)
{
    etcd_election *e = (etcd_election *)ee;
    keeper_stop(e->k);
    drop(e);
    keeper_free(e->k);
    etcd_client_free(e->cl);
    free(e->dir);
    free(e->dir_end);
    free(e->where);
    free(e);
}

static const election_ops etcd_election_ops = {
    .where = ee_where,
    .campaign = ee_campaign,
    .wait_fd = ee_wait_fd,
    .wait_done = ee_wait_done,
    .leading = ee_leading,
    .resign = ee_resign,
    .destroy = ee_destroy,
    .fence_key = ee_fence_key,
};

election *election_etcd_open(const cfg_store *sc, char *err, size_t errlen)
{
    etcd_client *cl = etcd_client_new(sc, err, errlen);
    if (!cl)
        return NULL;
    etcd_election *e = xcalloc(1, sizeof *e);
    e->base.ops = &etcd_election_ops;
    e->k = keeper_new(tick, e, err, errlen);
    if (!e->k) {
        etcd_client_free(cl);
        free(e);
        return NULL;
    }
    e->cl = cl;
    e->dir = xasprintf("%s/election/", etcd_client_prefix(cl));
    e->dir_end = etcd_prefix_end(e->dir);
    e->where = xasprintf("etcd %s %s", sc->endpoints[0], e->dir);
    e->ttl_s = sc->lease_ttl_s ? sc->lease_ttl_s : 15;
    return &e->base;
}
