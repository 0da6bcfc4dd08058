/*
 * election_kube.c - the Kubernetes API store's election (election.h): a
 * coordination.k8s.io/v1 Lease, with client-go's leader election
 * algorithm and defaults (lease 15 s, renew deadline 10 s, retry period
 * 2 s; the renew deadline and retry period are two thirds and two
 * fifteenths of store.lease_ttl_s).
 *
 * A candidate reads the Lease; it takes it when there is none (creating
 * it), when the holder is empty (released), or when the record has not
 * changed for a whole lease duration as this host observed it (its own
 * clock, never the renewTime written by another host's clock); taking and
 * renewing are updates guarded by the Lease's resourceVersion, so two
 * candidates never both succeed. The leader renews every retry period and
 * steps down when no renewal succeeded within the renew deadline, or when
 * it reads another holder. Resigning releases the Lease (holder emptied,
 * duration 1 s), as client-go's ReleaseOnCancel.
 *
 * What this cannot fence: the API server has no transactions over
 * several objects, so a write cannot carry "only while this Lease is
 * mine" as etcd's compare does. A leader paused past its lease (SIGSTOP)
 * that resumes may send the writes it had already passed the fence for
 * before it notices (election_leading is asked before every request a
 * write sends, and a request may take up to store.timeout_ms); what
 * guards those writes is each object's own precondition: every patch
 * carries the resourceVersion it was made against and a Pod's binding is
 * refused once the Pod is bound, so a stale leader's write over what the
 * new leader changed is refused (409), never applied over it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "election_impl.h"
#include "keeper.h"
#include "kubeapi.h"
#include "log.h"
#include "util.h"

typedef struct kube_election {
    election base; /* first */
    kubeapi *api;
    char *path, *coll; /* the Lease's path, its namespace's leases */
    char *ns, *name, *identity, *where;
    uint32_t ttl_s, renew_deadline_ms, retry_ms;
    keeper *k; /* its lock guards everything below */
    int leading, waiting, lost;
    char lost_why[2048];
    uint64_t renewed_ms; /* when the last good renewal was sent */
    char *observed_rv;   /* the record as last read, and when it changed */
    uint64_t observed_ms;
} kube_election;

/* Now as a Kubernetes MicroTime. */
static void micro_now(char *buf, size_t len)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char d[32];
    strftime(d, sizeof d, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06ldZ", d, (long)tv.tv_usec);
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static int64_t jint(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static const char *ke_where(const election *ee)
{
    return ((const kube_election *)ee)->where;
}

/* The Lease as this host writes it: held by holder ("" released). */
static char *lease_body(kube_election *e, const char *rv, const char *holder, int duration_s,
                        const char *acquire, int64_t transitions)
{
    char now[40];
    micro_now(now, sizeof now);
    json_object *l = json_object_new_object(), *md = json_object_new_object(),
                *sp = json_object_new_object();
    json_object_object_add(l, "apiVersion", json_object_new_string("coordination.k8s.io/v1"));
    json_object_object_add(l, "kind", json_object_new_string("Lease"));
    json_object_object_add(md, "name", json_object_new_string(e->name));
    json_object_object_add(md, "namespace", json_object_new_string(e->ns));
    if (rv)
        json_object_object_add(md, "resourceVersion", json_object_new_string(rv));
    json_object_object_add(l, "metadata", md);
    json_object_object_add(sp, "holderIdentity", json_object_new_string(holder));
    json_object_object_add(sp, "leaseDurationSeconds", json_object_new_int(duration_s));
    json_object_object_add(sp, "acquireTime", json_object_new_string(acquire ? acquire : now));
    json_object_object_add(sp, "renewTime", json_object_new_string(now));
    json_object_object_add(sp, "leaseTransitions", json_object_new_int64(transitions));
    json_object_object_add(l, "spec", sp);
    char *text = xstrdup(json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN));
    json_object_put(l);
    return text;
}

/* Remember what the record was when read (under the keeper's lock). */
static void observe(kube_election *e, const char *rv)
{
    if (!e->observed_rv || strcmp(e->observed_rv, rv) != 0) {
        free(e->observed_rv);
        e->observed_rv = xstrdup(rv);
        e->observed_ms = clock_mono_ms();
    }
}

/* client-go's tryAcquireOrRenew: 1 this host holds the Lease now (taken
 * or renewed), 0 another does (holder says which), -1 with err. */
static int try_acquire(kube_election *e, char *holder, size_t holderlen, char *err, size_t errlen)
{
    long status;
    json_object *reply;
    int hr = kubeapi_call(e->api, "GET", e->path, NULL, NULL, &status, &reply, err, errlen);
    if (hr != HTTPC_ANSWERED)
        return errprefix(err, errlen, "%s", e->where);
    if (status == 404) {
        json_object_put(reply);
        char *body = lease_body(e, NULL, e->identity, (int)e->ttl_s, NULL, 0);
        hr = kubeapi_call(e->api, "POST", e->coll, body, NULL, &status, &reply, err, errlen);
        free(body);
        int rc = -1;
        if (hr != HTTPC_ANSWERED)
            errprefix(err, errlen, "%s: creating the Lease", e->where);
        else if (status == 201 || status == 200)
            rc = 1;
        else if (status == 409)
            rc = errf(holder, holderlen, "another host, which created it just now") * 0;
        else
            errf(err, errlen, "%s: creating the Lease: HTTP %ld: %s", e->where, status,
                 kubeapi_message(reply));
        if (rc == 1) {
            json_object *md;
            keeper_lock(e->k);
            if (json_object_object_get_ex(reply, "metadata", &md) && jstr(md, "resourceVersion"))
                observe(e, jstr(md, "resourceVersion"));
            keeper_unlock(e->k);
        }
        json_object_put(reply);
        return rc;
    }
    if (status != 200 || !reply) {
        errf(err, errlen, "%s: HTTP %ld: %s", e->where, status, kubeapi_message(reply));
        json_object_put(reply);
        return -1;
    }
    json_object *md = NULL, *sp = NULL;
    json_object_object_get_ex(reply, "metadata", &md);
    json_object_object_get_ex(reply, "spec", &sp);
    const char *rv = jstr(md, "resourceVersion"), *h = jstr(sp, "holderIdentity");
    int64_t dur = jint(sp, "leaseDurationSeconds"), trans = jint(sp, "leaseTransitions");
    char *acq = jstr(sp, "acquireTime") ? xstrdup(jstr(sp, "acquireTime")) : NULL;
    char *rvc = xstrdup(rv ? rv : "");
    int mine = h && strcmp(h, e->identity) == 0;
    keeper_lock(e->k);
    observe(e, rvc);
    int expired = clock_mono_ms() >= e->observed_ms + (uint64_t)(dur > 0 ? dur : e->ttl_s) * 1000u;
    keeper_unlock(e->k);
    if (h && *h && !mine && !expired) {
        snprintf(holder, holderlen, "%s", h);
        json_object_put(reply);
        free(acq);
        free(rvc);
        return 0;
    }
    char *body =
        lease_body(e, rvc, e->identity, (int)e->ttl_s, mine ? acq : NULL, mine ? trans : trans + 1);
    json_object_put(reply);
    free(acq);
    hr = kubeapi_call(e->api, "PUT", e->path, body, NULL, &status, &reply, err, errlen);
    free(body);
    free(rvc);
    int rc;
    if (hr != HTTPC_ANSWERED) {
        rc = errprefix(err, errlen, "%s: updating the Lease", e->where);
    } else if (status == 200) {
        rc = 1;
        if (json_object_object_get_ex(reply, "metadata", &md) && jstr(md, "resourceVersion")) {
            keeper_lock(e->k);
            observe(e, jstr(md, "resourceVersion"));
            keeper_unlock(e->k);
        }
    } else if (status == 409) {
        snprintf(holder, holderlen, "another host, which updated the Lease just now");
        rc = 0;
    } else {
        rc = errf(err, errlen, "%s: updating the Lease: HTTP %ld: %s", e->where, status,
                  kubeapi_message(reply));
    }
    json_object_put(reply);
    return rc;
}

/* One round of the keeper, every retry period: a leader renews (and
 * steps down past the renew deadline or when another holds the Lease), a
 * waiting standby tries to take it. */
static uint32_t tick(void *ud)
{
    kube_election *e = ud;
    keeper_lock(e->k);
    int leading = e->leading, waiting = e->waiting, lost = e->lost;
    keeper_unlock(e->k);
    if ((leading && !lost) || waiting) {
        uint64_t sent = clock_mono_ms();
        char holder[256] = "", err[512] = "";
        int rc = try_acquire(e, holder, sizeof holder, err, sizeof err);
        keeper_lock(e->k);
        if (e->leading && !e->lost) {
            if (rc == 1) {
                e->renewed_ms = sent;
            } else if (rc == 0) {
                e->lost = 1;
                snprintf(e->lost_why, sizeof e->lost_why, "%s: the Lease is held by %s", e->where,
                         holder);
            } else if (clock_mono_ms() - e->renewed_ms > e->renew_deadline_ms) {
                e->lost = 1;
                snprintf(e->lost_why, sizeof e->lost_why,
                         "%s: the Lease was not renewed within the renew deadline (%u ms): %s",
                         e->where, e->renew_deadline_ms, err);
            } else {
                log_warn("%s: cannot renew the Lease: %s", e->where, err);
            }
        } else if (e->waiting && rc == 1) {
            e->waiting = 0;
            e->leading = 1;
            e->renewed_ms = sent;
            keeper_wake(e->k, 'y');
        }
        keeper_unlock(e->k);
    }
    return e->retry_ms;
}

static int ke_campaign(election *ee, char *holder, size_t holderlen, char *err, size_t errlen)
{
    kube_election *e = (kube_election *)ee;
    uint64_t sent = clock_mono_ms();
    int rc = try_acquire(e, holder, holderlen, err, errlen);
    keeper_lock(e->k);
    if (rc == 1) {
        e->leading = 1;
        e->lost = 0;
        e->renewed_ms = sent;
    }
    keeper_unlock(e->k);
    if (rc == 1 && keeper_start(e->k) < 0)
        return errf(err, errlen, "cannot start the Lease keeper thread");
    return rc;
}

static int ke_wait_fd(election *ee, char *err, size_t errlen)
{
    kube_election *e = (kube_election *)ee;
    keeper_lock(e->k);
    e->waiting = 1;
    e->leading = 0;
    e->lost = 0;
    keeper_poke(e->k);
    keeper_unlock(e->k);
    if (keeper_start(e->k) < 0)
        return errf(err, errlen, "cannot start the Lease keeper thread");
    return keeper_fd(e->k);
}

static int ke_wait_done(election *ee, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    kube_election *e = (kube_election *)ee;
    char c = keeper_drain(e->k);
    keeper_lock(e->k);
    int lead = c == 'y' && e->leading && !e->lost;
    e->waiting = 0;
    keeper_unlock(e->k);
    return lead;
}

static int ke_leading(election *ee, char *why, size_t whylen)
{
    kube_election *e = (kube_election *)ee;
    keeper_lock(e->k);
    int rc = 1;
    uint64_t since = clock_mono_ms() - e->renewed_ms;
    if (!e->leading)
        rc = errf(why, whylen, "%s: this host does not lead", e->where) + 1;
    else if (e->lost)
        rc = errf(why, whylen, "%s", e->lost_why) + 1;
    else if (since > e->renew_deadline_ms)
        rc = errf(why, whylen, "%s: the Lease was not renewed for %.1f s (renew deadline %.1f s)",
                  e->where, (double)since / 1000.0, e->renew_deadline_ms / 1000.0) +
             1;
    keeper_unlock(e->k);
    return rc;
}

/* Give the Lease up when this host holds it: holder emptied. */
static void release(kube_election *e)
{
    keeper_lock(e->k);
    int had = e->leading && !e->lost;
    e->leading = e->waiting = 0;
    keeper_unlock(e->k);
    if (!had)
        return;
    long status;
    json_object *reply;
    char err[512];
    if (kubeapi_call(e->api, "GET", e->path, NULL, NULL, &status, &reply, err, sizeof err) !=
            HTTPC_ANSWERED ||
        status != 200) {
        json_object_put(reply);
        return;
    }
    json_object *md = NULL, *sp = NULL;
    json_object_object_get_ex(reply, "metadata", &md);
    json_object_object_get_ex(reply, "spec", &sp);
    const char *h = jstr(sp, "holderIdentity");
    if (h && strcmp(h, e->identity) == 0) {
        char *body =
            lease_body(e, jstr(md, "resourceVersion"), "", 1, NULL, jint(sp, "leaseTransitions"));
        json_object *r2;
        kubeapi_call(e->api, "PUT", e->path, body, NULL, &status, &r2, err, sizeof err);
        json_object_put(r2);
        free(body);
    }
    json_object_put(reply);
}

static void ke_resign(election *ee)
{
    release((kube_election *)ee);
}

static void ke_destroy(election *ee)
{
    kube_election *e = (kube_election *)ee;
    keeper_stop(e->k);
    release(e);
    keeper_free(e->k);
    kubeapi_free(e->api);
    free(e->path);
    free(e->coll);
    free(e->ns);
    free(e->name);
    free(e->identity);
    free(e->where);
    free(e->observed_rv);
    free(e);
}

static const election_ops kube_election_ops = {
    .where = ke_where,
    .campaign = ke_campaign,
    .wait_fd = ke_wait_fd,
    .wait_done = ke_wait_done,
    .leading = ke_leading,
    .resign = ke_resign,
    .destroy = ke_destroy,
};

election *election_kube_open(const cfg_store *sc, char *err, size_t errlen)
{
    kubeapi *api = kubeapi_new(sc, err, errlen);
    if (!api)
        return NULL;
    kube_election *e = xcalloc(1, sizeof *e);
    e->base.ops = &kube_election_ops;
    e->k = keeper_new(tick, e, err, errlen);
    if (!e->k) {
        kubeapi_free(api);
        free(e);
        return NULL;
    }
    e->api = api;
    e->ns = xstrdup(sc->lease_namespace ? sc->lease_namespace : "kube-system");
    e->name = xstrdup(sc->lease_name ? sc->lease_name : "trellis");
    e->coll = xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases", e->ns);
    e->path = xasprintf("%s/%s", e->coll, e->name);
    e->where = xasprintf("Lease %s/%s at %s", e->ns, e->name, kubeapi_server(api));
    e->ttl_s = sc->lease_ttl_s ? sc->lease_ttl_s : 15;
    e->renew_deadline_ms = e->ttl_s * 2000 / 3;
    e->retry_ms = e->ttl_s * 2000 / 15;
    char host[128] = "trellis";
    gethostname(host, sizeof host - 1);
    unsigned rnd = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&rnd, sizeof rnd, 1, f) != 1)
            rnd = 0;
        fclose(f);
    }
    e->identity = xasprintf("%s_%ld_%08x", host, (long)getpid(), rnd);
    return &e->base;
}
