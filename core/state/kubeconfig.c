/*
 * kubeconfig.c - see kubeconfig.h.
 */
#include "config.h"

#include "kubeconfig.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base64.h"
#include "manifest.h"
#include "object.h"
#include "util.h"

/* The entry of list (clusters, users, contexts) named name, its inner
 * group (cluster, user, context); NULL when none. */
static const trellis_value *named(const trellis_object *doc, const char *list, const char *inner,
                                  const char *name)
{
    const trellis_value *l = object_get(doc, list);
    for (size_t i = 0; l && value_type(l) == TRELLIS_VALUE_LIST && i < value_len(l); i++) {
        const trellis_value *e = value_at(l, i);
        const char *n = value_string(value_get(e, "name"));
        if (n && strcmp(n, name) == 0)
            return value_get(e, inner);
    }
    return NULL;
}

static const char *str_of(const trellis_value *group, const char *key)
{
    const char *s = group ? value_string(value_get(group, key)) : NULL;
    return s && *s ? s : NULL;
}

static char *path_in(const char *dir, const char *p)
{
    return p[0] == '/' || !dir ? xstrdup(p) : xasprintf("%s/%s", dir, p);
}

/* A *-data field: base64 of a PEM text. NULL and err when it is not. */
static int pem_data(const char *where, const char *field, const char *b64, char **out, char *err,
                    size_t errlen)
{
    size_t n;
    char *pem = base64_decode(b64, strlen(b64), &n);
    if (!pem || n != strlen(pem) || !strstr(pem, "-----BEGIN ")) {
        free(pem);
        return errf(err, errlen, "%s: %s: expected the base64 of a PEM text", where, field);
    }
    *out = pem;
    return 0;
}

int kubeconfig_parse(const char *where, const char *dir, const char *text, size_t len,
                     const char *context, kubeconfig *kc, char *err, size_t errlen)
{
    memset(kc, 0, sizeof *kc);
    char e[512];
    trellis_object *doc = manifest_parse_document(where, text, len, e, sizeof e);
    if (!doc)
        return errf(err, errlen, "%s", e);
    int rc = -1;
    const char *ctx = context ? context : value_string(object_get(doc, "current-context"));
    const trellis_value *cx, *cl, *us;
    const char *cluster, *user, *server;
    if (!ctx || !*ctx) {
        errf(err, errlen,
             "%s: no current-context: name one (store.context) or set it (kubectl config "
             "use-context NAME)",
             where);
    } else if (!(cx = named(doc, "contexts", "context", ctx))) {
        errf(err, errlen, "%s: no context named '%s' in contexts", where, ctx);
    } else if (!(cluster = str_of(cx, "cluster"))) {
        errf(err, errlen, "%s: context '%s' names no cluster", where, ctx);
    } else if (!(cl = named(doc, "clusters", "cluster", cluster))) {
        errf(err, errlen, "%s: context '%s' names cluster '%s', which clusters does not hold",
             where, ctx, cluster);
    } else if (!(server = str_of(cl, "server")) ||
               (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)) {
        errf(err, errlen, "%s: cluster '%s': expected server: https://HOST:PORT", where, cluster);
    } else {
        kc->context = xstrdup(ctx);
        kc->server = xstrdup(server);
        size_t sl = strlen(kc->server);
        while (sl > 8 && kc->server[sl - 1] == '/')
            kc->server[--sl] = '\0';
        const trellis_value *iv = value_get(cl, "insecure-skip-tls-verify");
        int b = 0;
        if (iv && value_bool(iv, &b) == 0)
            kc->insecure = b;
        const char *s;
        rc = 0;
        if (kc->insecure &&
            (str_of(cl, "certificate-authority-data") || str_of(cl, "certificate-authority")))
            /* as client-go: which of the two was meant cannot be told */
            rc = errf(err, errlen,
                      "%s: cluster '%s': insecure-skip-tls-verify and certificate-authority "
                      "together (kubectl refuses them too): drop insecure-skip-tls-verify to "
                      "verify the server against the CA, or the CA not to verify it",
                      where, cluster);
        else if ((s = str_of(cl, "certificate-authority-data")))
            rc = pem_data(where, "certificate-authority-data", s, &kc->ca_pem, err, errlen);
        else if ((s = str_of(cl, "certificate-authority")))
            kc->ca_file = path_in(dir, s);
        user = str_of(cx, "user");
        us = user ? named(doc, "users", "user", user) : NULL;
        if (rc == 0 && user && !us)
            rc = errf(err, errlen, "%s: context '%s' names user '%s', which users does not hold",
                      where, ctx, user);
        if (rc == 0 && us && (value_get(us, "exec") || value_get(us, "auth-provider")))
            rc = errf(err, errlen,
                      "%s: user '%s' takes its credentials from an exec or auth-provider plugin, "
                      "which trellis does not run: give it a client certificate or a token",
                      where, user);
        if (rc == 0 && (s = str_of(us, "client-certificate-data")))
            rc = pem_data(where, "client-certificate-data", s, &kc->cert_pem, err, errlen);
        else if (rc == 0 && (s = str_of(us, "client-certificate")))
            kc->cert_file = path_in(dir, s);
        if (rc == 0 && (s = str_of(us, "client-key-data")))
            rc = pem_data(where, "client-key-data", s, &kc->key_pem, err, errlen);
        else if (rc == 0 && (s = str_of(us, "client-key")))
            kc->key_file = path_in(dir, s);
        if (rc == 0 && !(kc->cert_pem || kc->cert_file) != !(kc->key_pem || kc->key_file))
            rc =
                errf(err, errlen, "%s: user '%s': a client certificate needs its key", where, user);
        if (rc == 0 && (s = str_of(us, "token"))) {
            kc->token = xstrdup(s);
        } else if (rc == 0 && (s = str_of(us, "tokenFile"))) {
            char *tf = path_in(dir, s), e2[512];
            size_t n;
            char *t = read_file(tf, &n, e2, sizeof e2);
            if (!t) {
                rc = errf(err, errlen, "%s: user '%s': tokenFile: %s", where, user, e2);
            } else {
                while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' '))
                    t[--n] = '\0';
                kc->token = t;
            }
            free(tf);
        }
    }
    object_unref(doc);
    if (rc < 0)
        kubeconfig_free(kc);
    return rc;
}

int kubeconfig_load(const char *path, const char *context, kubeconfig *kc, char *err, size_t errlen)
{
    char *p = NULL;
    if (path) {
        p = xstrdup(path);
    } else if (getenv("KUBECONFIG") && *getenv("KUBECONFIG")) {
        /* a list: the first file that exists (kubectl merges them all,
         * skipping those that do not exist; trellis reads one) */
        char *list = xstrdup(getenv("KUBECONFIG")), *save = NULL;
        for (char *t = strtok_r(list, ":", &save); t && !p; t = strtok_r(NULL, ":", &save))
            if (access(t, F_OK) == 0)
                p = xstrdup(t);
        if (!p) { /* none: the first, to say it cannot be read */
            const char *t = strtok_r(strcpy(list, getenv("KUBECONFIG")), ":", &save);
            p = t ? xstrdup(t) : NULL;
        }
        free(list);
        if (!p)
            return errf(err, errlen, "no kubeconfig: KUBECONFIG names no file");
    } else if (getenv("HOME")) {
        p = xasprintf("%s/.kube/config", getenv("HOME"));
    } else {
        return errf(err, errlen, "no kubeconfig: set store.kubeconfig or KUBECONFIG");
    }
    size_t len;
    char e[512];
    char *text = read_file(p, &len, e, sizeof e);
    int rc;
    if (!text) {
        rc = errf(err, errlen, "kubeconfig: %s", e);
    } else {
        char *tmp = xstrdup(p);
        rc = kubeconfig_parse(p, dirname(tmp), text, len, context, kc, err, errlen);
        free(tmp);
    }
    free(text);
    free(p);
    return rc;
}

void kubeconfig_free(kubeconfig *kc)
{
    free(kc->context);
    free(kc->server);
    free(kc->ca_file);
    free(kc->cert_file);
    free(kc->key_file);
    free(kc->ca_pem);
    free(kc->cert_pem);
    free(kc->key_pem);
    free(kc->token);
    memset(kc, 0, sizeof *kc);
}
