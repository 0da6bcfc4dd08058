/*
 * treewalk.h - walking the state directory for manifest files.
 *
 * Symbolic links are followed, but each directory and each file is taken
 * once, by device and inode: "ln -s . a" made a walk go 40 levels deep
 * (every file loaded 40 times) and two such links made it exponential. A
 * link whose target lies outside the state directory is refused, and
 * reported: the store neither reads nor writes outside its state.
 */
#ifndef TRELLIS_TREEWALK_H
#define TRELLIS_TREEWALK_H

#include <stddef.h>
#include <sys/stat.h>

#include "hmap.h"
#include "manifest.h"

typedef struct walker {
    const char *root;      /* the state directory's real path */
    hmap seen;             /* "dev:ino" of every directory and file taken */
    manifest_set *refused; /* where refused links are reported; may be NULL */
    char **dirs;           /* the directories walked, when wanted */
    size_t n_dirs, cap_dirs;
    int want_dirs;
} walker;

void treewalk_init(walker *wk, const char *root, manifest_set *refused);
void treewalk_free(walker *wk);
/* 1 the first time (st_dev, st_ino) is met, 0 after. */
int treewalk_first_visit(walker *wk, const struct stat *st);
/* 1 when p is a link that leads outside the root (reported once to the
 * refused set), else 0. */
int treewalk_leads_outside(walker *wk, const char *p);
/* Append the manifest files below dir to *out (sorted per directory;
 * ownership of each path transfers); -1 with err when dir cannot be
 * opened. */
int treewalk_dir(walker *wk, const char *dir, char ***out, size_t *n, size_t *cap, char *err,
                 size_t errlen);
/* treewalk_dir of the whole state: the root counts as visited. */
int treewalk_state(walker *wk, const char *dir, char ***out, size_t *n, size_t *cap, char *err,
                   size_t errlen);

#endif
