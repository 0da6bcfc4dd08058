/*
 * store.c - the one place that turns a config's store into a store.
 */
#include "config.h"

#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_file.h"
#include "util.h"
#ifdef HAVE_ETCD
#include "store_etcd.h"
#include "store_kube.h"
#endif

int store_type_built(const char *type)
{
    if (!type || strcmp(type, "file") == 0)
        return 1;
#ifdef HAVE_ETCD
    if (strcmp(type, "etcd") == 0 || strcmp(type, "kubernetes") == 0)
        return 1;
#endif
    return 0;
}

const char *store_dir(const cfg_store *sc, const char *state_dir)
{
    if (state_dir)
        return state_dir;
    if (!sc || !sc->type || strcmp(sc->type, "file") == 0)
        return sc ? sc->path : NULL;
    return NULL;
}

const char *store_where(const cfg_store *sc, const char *state_dir, char *buf, size_t len)
{
    const char *dir = store_dir(sc, state_dir);
    if (dir || !sc || !sc->type || strcmp(sc->type, "file") == 0)
        snprintf(buf, len, "%s", dir ? dir : "(no state directory)");
    else if (strcmp(sc->type, "kubernetes") == 0)
        snprintf(buf, len, "kubernetes %s%s%s", sc->kubeconfig ? sc->kubeconfig : "(KUBECONFIG)",
                 sc->context ? " context " : "", sc->context ? sc->context : "");
    else
        snprintf(buf, len, "%s %s%s %s", sc->type, sc->n_endpoints ? sc->endpoints[0] : "",
                 sc->n_endpoints > 1 ? ",..." : "", sc->prefix ? sc->prefix : "");
    return buf;
}

store *store_open(const cfg_store *sc, const char *state_dir, int dry_run, char *err, size_t errlen)
{
    const char *type = state_dir || !sc ? "file" : sc->type;
    if (!type || strcmp(type, "file") == 0) {
        const char *location = store_dir(sc, state_dir);
        if (!location) {
            errf(err, errlen,
                 "the file store needs a state directory: give --state DIR or store.path");
            return NULL;
        }
        return store_file_open(location, dry_run, err, errlen);
    }
    if (strcmp(type, "etcd") == 0) {
#ifdef HAVE_ETCD
        return store_etcd_open(sc, dry_run, err, errlen);
#else
        errf(err, errlen,
             "%s:%d: store.type 'etcd': this trellis was built without the etcd store "
             "(configure --with-etcd, which needs libcurl)",
             sc->file ? sc->file : "", sc->line);
        return NULL;
#endif
    }
    if (strcmp(type, "kubernetes") == 0) {
#ifdef HAVE_ETCD
        return store_kube_open(sc, dry_run, err, errlen);
#else
        errf(err, errlen,
             "%s:%d: store.type 'kubernetes': this trellis was built without the Kubernetes API "
             "store (configure --with-etcd, which needs libcurl)",
             sc->file ? sc->file : "", sc->line);
        return NULL;
#endif
    }
    errf(err, errlen,
         "store.type '%s': expected file, etcd or kubernetes (the stores this build has)", type);
    return NULL;
}
