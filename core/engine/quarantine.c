/*
 * quarantine.c - see quarantine.h.
 *
 * The file is small (a record per poison object), so it is read whole and
 * written back whole, atomically, when a record is dropped or learns its
 * digest. A line that does not have the fields is kept as it is: it may
 * come from a newer host.
 */
#include "config.h"

#include "quarantine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "atomicfile.h"

#define FIELDS 7

typedef struct qrec {
    char *f[FIELDS]; /* cause, plugin, file, ident, hook, id, digest ("" until learned) */
    char *raw;       /* a line this host cannot read, kept as it is */
    int dropped, seen;
} qrec;

struct quarantine {
    char *path;
    qrec *v;
    size_t n, cap;
    int changed, read_only;
    char why[1024];
};

static void split(qrec *r, char *line)
{
    size_t k = 0;
    char *p = line;
    while (k < FIELDS) {
        char *tab = strchr(p, '\t');
        if (tab)
            *tab = '\0';
        r->f[k++] = xstrdup(p);
        if (!tab)
            break;
        p = tab + 1;
    }
    for (; k < FIELDS; k++)
        r->f[k] = xstrdup("");
}

quarantine *quarantine_open(const char *path, int read_only)
{
    quarantine *q = xcalloc(1, sizeof *q);
    q->path = xstrdup(path);
    q->read_only = read_only;
    char err[256];
    size_t len;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return q; /* not ours: writing it is refused (quarantine_save) */
    char *text = read_file(path, &len, err, sizeof err);
    if (!text)
        return q;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!*l)
            continue;
        grow(&q->v, &q->cap, q->n + 1, sizeof *q->v);
        qrec *r = &q->v[q->n++];
        memset(r, 0, sizeof *r);
        size_t tabs = 0;
        for (const char *c = l; *c; c++)
            tabs += *c == '\t';
        if (tabs < 5 || tabs > 6)
            r->raw = xstrdup(l);
        else
            split(r, l);
    }
    free(text);
    return q;
}

void quarantine_free(quarantine *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->n; i++) {
        for (size_t k = 0; k < FIELDS; k++)
            free(q->v[i].f[k]);
        free(q->v[i].raw);
    }
    free(q->v);
    free(q->path);
    free(q);
}

/* A digest of the object's content, the same in every process. */
static void digest(const trellis_object *o, char out[17])
{
    json_object *j = object_to_json(o);
    const char *s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    json_object_put(j);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int quarantine_check(quarantine *q, const trellis_object *o, quarantine_ident_fn ident, void *ud,
                     const char **why)
{
    if (!q || !q->n)
        return 0;
    char dg[17] = "";
    int held = 0;
    for (size_t i = 0; i < q->n; i++) {
        qrec *r = &q->v[i];
        if (r->raw || r->dropped || strcmp(r->f[5], o->id) != 0)
            continue;
        r->seen = 1;
        if (!dg[0])
            digest(o, dg);
        const char *now = ident ? ident(ud, r->f[1]) : NULL;
        if (!now || strcmp(now, r->f[3]) != 0 || (r->f[6][0] && strcmp(r->f[6], dg) != 0)) {
            /* the plugin or the object changed: let it be tried again */
            r->dropped = 1;
            q->changed = 1;
            continue;
        }
        if (!r->f[6][0]) {
            free(r->f[6]);
            r->f[6] = xstrdup(dg);
            q->changed = 1;
        }
        if (!held && why) {
            char cause[96];
            if (strcmp(r->f[0], "deadline") == 0)
                snprintf(cause, sizeof cause, "did not return in time");
            else
                snprintf(cause, sizeof cause, "crashed (%.60s)", r->f[0]);
            snprintf(q->why, sizeof q->why,
                     "quarantined: plugin '%s' (%s) %s in its %s hook on this object; it is "
                     "not scheduled again until the object or the plugin changes (record in "
                     "%s)",
                     r->f[1], r->f[2], cause, r->f[4], q->path);
            *why = q->why;
        }
        held = 1;
    }
    return held;
}

void quarantine_forget(quarantine *q, const char *id)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->n; i++) {
        qrec *r = &q->v[i];
        if (!r->raw && !r->dropped && strcmp(r->f[5], id) == 0) {
            r->dropped = 1;
            q->changed = 1;
        }
    }
}

int quarantine_save(quarantine *q, int drop_unseen, char *err, size_t errlen)
{
    if (!q)
        return 0;
    for (size_t i = 0; drop_unseen && i < q->n; i++) {
        qrec *r = &q->v[i];
        if (!r->raw && !r->dropped && !r->seen) {
            r->dropped = 1;
            q->changed = 1;
        }
    }
    if (!q->changed || q->read_only)
        return 0;
    strbuf b;
    sb_init(&b);
    size_t kept = 0;
    for (size_t i = 0; i < q->n; i++) {
        const qrec *r = &q->v[i];
        if (r->dropped)
            continue;
        kept++;
        if (r->raw) {
            sb_printf(&b, "%s\n", r->raw);
            continue;
        }
        for (size_t k = 0; k < FIELDS; k++)
            sb_printf(&b, "%s%s", k ? "\t" : "", r->f[k]);
        sb_puts(&b, "\n");
    }
    int rc;
    struct stat st;
    if (lstat(q->path, &st) == 0 && S_ISLNK(st.st_mode)) {
        /* written through, it would replace a file outside the state */
        rc = errf(err, errlen,
                  "%s: is a symbolic link (trellis keeps its quarantine in the state directory "
                  "itself): remove it",
                  q->path);
    } else if (kept == 0) {
        rc = unlink(q->path) == 0 || errno == ENOENT
                 ? 0
                 : errf(err, errlen, "%s: cannot remove: %s", q->path, strerror(errno));
    } else {
        rc = atomicfile_write(q->path, NULL, b.s, b.len, err, errlen);
    }
    sb_free(&b);
    if (rc == 0)
        q->changed = 0;
    return rc;
}

size_t quarantine_count(const quarantine *q)
{
    size_t n = 0;
    for (size_t i = 0; q && i < q->n; i++)
        n += !q->v[i].dropped;
    return n;
}
