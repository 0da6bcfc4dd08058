/*
 * gardener.c - shared readings of the Gardener plugins.
 *
 * Everything here runs in prepare (main thread) except
 * gardener_strings_has, which filters call; see gardener.h.
 */
#include "gardener.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

const char *gardener_cloud_profile_name(const trellis_host *h, const trellis_object *shoot)
{
    const trellis_value *ref = h->object_get(shoot, "spec.cloudProfile");
    const char *name;

    if (ref && h->value_type(ref) == TRELLIS_VALUE_MAP) {
        const char *kind = values_scalar_text(h, h->value_get(ref, "kind"));

        name = values_scalar_text(h, h->value_get(ref, "name"));
        if ((!kind || kind[0] == '\0' || strcmp(kind, "CloudProfile") == 0) && name &&
            name[0] != '\0')
            return name;
    }
    name = values_scalar_text(h, h->object_get(shoot, "spec.cloudProfileName"));
    return name && name[0] != '\0' ? name : NULL;
}

void gardener_project(const char *namespace_, char *buf, size_t len)
{
    static const char prefix[] = "garden-";

    if (strncmp(namespace_, prefix, sizeof(prefix) - 1) == 0 &&
        namespace_[sizeof(prefix) - 1] != '\0')
        snprintf(buf, len, "%s", namespace_ + sizeof(prefix) - 1);
    else
        snprintf(buf, len, "%s", namespace_);
}

typedef struct project_walk {
    const trellis_host *h;
    const char *namespace_;
    const char *found; /* the smallest name so far */
} project_walk;

static int project_of(const trellis_object *project, void *ud)
{
    project_walk *w = ud;
    const char *ns = values_scalar_text(w->h, w->h->object_get(project, "spec.namespace"));
    const char *name = w->h->object_name(project);

    if (ns && strcmp(ns, w->namespace_) == 0 && (!w->found || strcmp(name, w->found) < 0))
        w->found = name;
    return 0;
}

int gardener_project_object(const trellis_host *h, const trellis_plugin *self,
                            const char *namespace_, char *buf, size_t len, char *err, size_t errlen)
{
    project_walk w = {h, namespace_, NULL};

    h->foreach_object(self, "Project", NULL, project_of, &w);
    if (!w.found) {
        snprintf(err, errlen,
                 "no Project has spec.namespace '%s': the shoot's project, and with it its "
                 "default domain, is unknown",
                 namespace_);
        return -1;
    }
    snprintf(buf, len, "%s", w.found);
    return 0;
}

int gardener_strings_add(gardener_strings *l, const char *s)
{
    char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

    if (!v)
        return -1;
    l->v = v;
    v[l->n] = values_strdup(s);
    if (!v[l->n])
        return -1;
    l->n++;
    return 0;
}

int gardener_strings_has(const gardener_strings *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i], s) == 0)
            return 1;
    }
    return 0;
}

void gardener_strings_join(const gardener_strings *l, const char *sep, char *buf, size_t len)
{
    size_t used = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < l->n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? sep : "", l->v[i]);

        if (w < 0)
            return;
        used += (size_t)w;
    }
}

void gardener_strings_clear(gardener_strings *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

int gardener_strings_read(const trellis_host *h, const trellis_value *v, const char *field,
                          gardener_strings *l, char *err, size_t errlen)
{
    int rc = values_expect(h, v, TRELLIS_VALUE_LIST, "a list", field, err, errlen);

    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < h->value_len(v); i++) {
        const trellis_value *item = h->value_at(v, i);
        const char *text = values_scalar_text(h, item);

        if (!text) {
            snprintf(err, errlen, "%s[%zu]: expected a string, got %s", field, i,
                     values_type_name(h->value_type(item)));
            return -1;
        }
        if (gardener_strings_add(l, text) < 0) {
            snprintf(err, errlen, "%s: out of memory", field);
            return -1;
        }
    }
    return 0;
}
