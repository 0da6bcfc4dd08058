/*
 * atomicfile.h - replacing a file so that a reader sees the old or the
 * new content and never a mix, and cleaning up after a writer killed in
 * the middle.
 */
#ifndef TRELLIS_ATOMICFILE_H
#define TRELLIS_ATOMICFILE_H

#include <stddef.h>
#include <sys/stat.h>

/* Replace `path` by data atomically: a temporary file
 * (".NAME.tmp.HOST.PID.XXXXXX") in the directory of the file path leads
 * to (links resolved), fsync, rename, fsync of the directory. When within
 * is not NULL (a real path, as realpath gives it), a path that leads
 * outside it is refused. 0, or -1 with err filled (the original file is
 * untouched then). The file's permission bits are kept. */
int atomicfile_write(const char *path, const char *within, const char *data, size_t len, char *err,
                     size_t errlen);

/* atomicfile_write, but only while the file it replaces is still the one
 * was describes (stat(2) of path: its device, inode, size, modification
 * and change times), checked right before the rename: a file another
 * writer replaced or rewrote meanwhile is left as it is, -1 with err
 * saying so (a rewrite of the same size within one tick of the file
 * system's clock is not seen). was NULL: no check. */
int atomicfile_write_unchanged(const char *path, const char *within, const char *data, size_t len,
                               const struct stat *was, char *err, size_t errlen);

/* Several files replaced as atomicfile_write replaces one, with one
 * sync for all: each file is staged (its temporary written), then commit
 * syncs them at once, renames each into place and syncs each directory
 * once. A reader sees each file old or new, never a mix; a file that
 * fails leaves its original untouched. Files that are not links are
 * resolved through their directory, which the batch resolves once for a
 * run of files in it; a link is resolved on its own each time. */
typedef struct atomicfile_batch atomicfile_batch;
/* within as for atomicfile_write (copied; may be NULL). */
atomicfile_batch *atomicfile_batch_new(const char *within);
/* Stage path with data[0..len) (copied to its temporary file): 0, or -1
 * with err (nothing staged). */
int atomicfile_batch_add(atomicfile_batch *b, const char *path, const char *data, size_t len,
                         char *err, size_t errlen);
/* atomicfile_batch_add of a file that must not exist yet: -2, with
 * nothing staged and err empty, when path names a file already (through a
 * link too; a link that leads nowhere is replaced, as with
 * atomicfile_batch_add). The check is the one lstat the add makes anyway;
 * like any check before a rename it does not stop a file that appears
 * between the two. */
int atomicfile_batch_add_new(atomicfile_batch *b, const char *path, const char *data, size_t len,
                             char *err, size_t errlen);
/* Put every staged file in place; done(ud, i, why) for the i-th staged
 * file (why NULL: written; else borrowed for the call). 0 when every one
 * was written, else -1. */
int atomicfile_batch_commit(atomicfile_batch *b, void (*done)(void *ud, size_t i, const char *err),
                            void *ud);
/* Free b; files staged and not committed are removed. */
void atomicfile_batch_free(atomicfile_batch *b);

/* Remove the temporary files of atomicfile_write in dir that no
 * live writer holds: this host's whose process is gone, and any other's
 * older than ten minutes (a kill -9 during a write leaves one behind).
 * Returns how many were removed. */
size_t atomicfile_clean_temps(const char *dir);

#endif
