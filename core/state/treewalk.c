/*
 * treewalk.c - see treewalk.h.
 */
#include "config.h"

#include "treewalk.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void treewalk_init(walker *wk, const char *root, manifest_set *refused)
{
    memset(wk, 0, sizeof *wk);
    wk->root = root;
    wk->refused = refused;
    hmap_init(&wk->seen);
}

void treewalk_free(walker *wk)
{
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&wk->seen, &i)))
        free((char *)sl->key);
    hmap_free(&wk->seen);
    for (size_t k = 0; k < wk->n_dirs; k++)
        free(wk->dirs[k]);
    free(wk->dirs);
}

/* 1 the first time (dev, ino) is met, 0 after. */
int treewalk_first_visit(walker *wk, const struct stat *st)
{
    char key[64];
    snprintf(key, sizeof key, "%llx:%llx", (unsigned long long)st->st_dev,
             (unsigned long long)st->st_ino);
    if (hmap_get(&wk->seen, key))
        return 0;
    char *k = xstrdup(key);
    hmap_put(&wk->seen, k, k);
    return 1;
}

/* A link at p that leads outside the root: refuse it (reported once). */
int treewalk_leads_outside(walker *wk, const char *p)
{
    char *real = realpath(p, NULL);
    if (!real)
        return 0; /* dangling: stat fails and it is skipped */
    int out = !path_within(wk->root, real);
    if (out && wk->refused)
        manifest_add_error(
            wk->refused, p, 0, 0,
            xasprintf("a symbolic link to %s, outside the state directory %s: not read "
                      "and never written (trellis keeps to its state); copy what it "
                      "holds into the state directory instead",
                      real, wk->root));
    free(real);
    return out;
}

/* Collect manifest files below dir, sorted. */
int treewalk_dir(walker *wk, const char *dir, char ***out, size_t *n, size_t *cap, char *err,
                 size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return errf(err, errlen, "%s: cannot open directory: %s", dir, strerror(errno));
    if (wk->want_dirs) {
        grow(&wk->dirs, &wk->cap_dirs, wk->n_dirs + 1, sizeof *wk->dirs);
        wk->dirs[wk->n_dirs++] = xstrdup(dir);
    }
    char **names = NULL;
    size_t nn = 0, nc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        grow(&names, &nc, nn + 1, sizeof *names);
        names[nn++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (nn)
        qsort(names, nn, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < nn; i++) {
        char *p = xasprintf("%s/%s", dir, names[i]);
        struct stat lst, st;
        int is_link = lstat(p, &lst) == 0 && S_ISLNK(lst.st_mode);
        int ok = stat(p, &st) == 0;
        int is_dir = ok && S_ISDIR(st.st_mode);
        int is_manifest = ok && S_ISREG(st.st_mode) && manifest_is_manifest_name(names[i]);
        if ((is_dir || is_manifest) && is_link && treewalk_leads_outside(wk, p)) {
            free(p);
        } else if (is_dir && treewalk_first_visit(wk, &st)) {
            if (rc == 0 && treewalk_dir(wk, p, out, n, cap, err, errlen) < 0)
                rc = -1;
            free(p);
        } else if (is_manifest && treewalk_first_visit(wk, &st)) {
            grow(out, cap, *n + 1, sizeof **out);
            (*out)[(*n)++] = p;
        } else {
            free(p);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

/* Walk the whole state: the root counts as visited. */
int treewalk_state(walker *wk, const char *dir, char ***out, size_t *n, size_t *cap, char *err,
                   size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) == 0)
        treewalk_first_visit(wk, &st);
    return treewalk_dir(wk, dir, out, n, cap, err, errlen);
}
