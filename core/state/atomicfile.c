/*
 * atomicfile.c - see atomicfile.h.
 */
#include "config.h"

#include "atomicfile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* ---- atomic replacement ------------------------------------------------ */

/* This host's part of a temporary file's name: ".NAME.tmp.HOST.PID.XXXXXX",
 * so that a later start can tell its own stale files from another live
 * host's. */
static char host_name_buf[64];

static void host_name_init(void)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) < 0 || !h[0])
        snprintf(h, sizeof h, "localhost");
    h[sizeof h - 1] = '\0';
    /* a dot would make the name ambiguous; a slash impossible */
    for (char *c = h; *c; c++)
        if (*c == '.' || *c == '/')
            *c = '_';
    size_t n = strlen(h);
    if (n >= sizeof host_name_buf)
        n = sizeof host_name_buf - 1;
    memcpy(host_name_buf, h, n);
    host_name_buf[n] = '\0';
}

static const char *host_name(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, host_name_init);
    return host_name_buf;
}

/* One file of a batch: where it goes and its temporary, once staged. */
typedef struct staged {
    char *target; /* the real path written (links resolved) */
    char *dir;    /* its directory */
    char *tmp;    /* the temporary file, written and closed; NULL: failed */
    char *err;    /* why it failed, NULL while it has not */
    /* the file it replaces must still be this one at the rename */
    int expect;
    struct stat was;
} staged;

struct atomicfile_batch {
    char *within;
    staged *v;
    size_t n, cap;
    /* the directory of the last file added, as named and resolved: a
     * batch writes many files into one directory, resolved once */
    char *dir_named, *dir_real;
};

atomicfile_batch *atomicfile_batch_new(const char *within)
{
    atomicfile_batch *b = xcalloc(1, sizeof *b);
    b->within = within ? xstrdup(within) : NULL;
    return b;
}

void atomicfile_batch_free(atomicfile_batch *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        if (b->v[i].tmp) /* staged, never committed */
            unlink(b->v[i].tmp);
        free(b->v[i].target);
        free(b->v[i].dir);
        free(b->v[i].tmp);
        free(b->v[i].err);
    }
    free(b->v);
    free(b->within);
    free(b->dir_named);
    free(b->dir_real);
    free(b);
}

/* The real path path leads to (its directory resolved when it does not
 * exist yet), or NULL with err. */
static char *resolve(const char *path, const char *within, char *err, size_t errlen)
{
    /* write to the file path names, through any link, but only inside
     * within: a link may not carry a write outside the state */
    char *target = realpath(path, NULL);
    if (!target && errno == ENOENT) {
        char *dc = xstrdup(path);
        char *rd = realpath(dirname(dc), NULL);
        const char *b = strrchr(path, '/');
        target = rd ? xasprintf("%s/%s", rd, b ? b + 1 : path) : NULL;
        free(rd);
        free(dc);
    }
    if (!target) {
        errf(err, errlen, "%s: cannot resolve the path: %s", path, strerror(errno));
        return NULL;
    }
    if (within && !path_within(within, target)) {
        errf(err, errlen,
             "%s: leads to %s, outside the state directory %s: not written (trellis never "
             "writes outside its state; replace the link by the file itself)",
             path, target, within);
        free(target);
        return NULL;
    }
    return target;
}

/* The real path of path when it is not a link (a new file, or a regular
 * one), given lstat's answer (*st, or st->st_mode 0 when there is no
 * file): its directory resolved once per batch. NULL when resolve() must
 * walk it (a link, an unusual name). */
static char *resolve_plain(atomicfile_batch *b, const char *path, const struct stat *st)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path || !slash[1])
        return NULL;
    if (st->st_mode && !S_ISREG(st->st_mode))
        return NULL;
    size_t dl = (size_t)(slash - path);
    if (!b->dir_named || strlen(b->dir_named) != dl || memcmp(b->dir_named, path, dl) != 0) {
        char *named = xasprintf("%.*s", (int)dl, path);
        char *real = realpath(named, NULL);
        if (!real) {
            free(named);
            return NULL;
        }
        free(b->dir_named);
        free(b->dir_real);
        b->dir_named = named;
        b->dir_real = real;
    }
    return xasprintf("%s/%s", strcmp(b->dir_real, "/") == 0 ? "" : b->dir_real, slash + 1);
}

/* atomicfile_batch_add; with only_new, -2 (err empty) when path names
 * anything already. */
static int batch_add(atomicfile_batch *b, const char *path, const char *data, size_t len,
                     int only_new, char *err, size_t errlen)
{
    struct stat st;
    mode_t mode = 0644;
    char *target = NULL;
    struct stat tst;
    if (lstat(path, &st) == 0) {
        /* a link that leads nowhere is not a file (as access() has it) */
        if (only_new && (!S_ISLNK(st.st_mode) || stat(path, &tst) == 0)) {
            if (errlen)
                err[0] = '\0';
            return -2;
        }
        target = resolve_plain(b, path, &st);
    } else if (errno == ENOENT) {
        st.st_mode = 0;
        target = resolve_plain(b, path, &st);
    }
    if (target && b->within && !path_within(b->within, target)) {
        free(target);
        target = NULL; /* resolve() words the refusal */
    }
    if (target) {
        if (st.st_mode)
            mode = st.st_mode & 07777;
    } else {
        target = resolve(path, b->within, err, errlen);
        if (!target)
            return -1;
        if (stat(target, &st) == 0)
            mode = st.st_mode & 07777;
    }
    char *dcopy = xstrdup(target), *bcopy = xstrdup(target);
    char *dir = xstrdup(dirname(dcopy));
    char *tmp =
        xasprintf("%s/.%s.tmp.%s.%ld.XXXXXX", dir, basename(bcopy), host_name(), (long)getpid());
    free(dcopy);
    free(bcopy);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        errf(err, errlen, "%s: cannot create a temporary file: %s", path, strerror(errno));
        goto fail;
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            errf(err, errlen, "%s: write: %s", tmp, strerror(errno));
            goto fail;
        }
        off += (size_t)w;
    }
    if (fchmod(fd, mode) < 0) {
        errf(err, errlen, "%s: chmod: %s", tmp, strerror(errno));
        goto fail;
    }
    int rc = close(fd);
    fd = -1;
    if (rc < 0) {
        errf(err, errlen, "%s: close: %s", tmp, strerror(errno));
        goto fail;
    }
    grow(&b->v, &b->cap, b->n + 1, sizeof *b->v);
    memset(&b->v[b->n], 0, sizeof b->v[b->n]);
    b->v[b->n].target = target;
    b->v[b->n].dir = dir;
    b->v[b->n].tmp = tmp;
    b->n++;
    return 0;
fail:
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    free(target);
    free(dir);
    free(tmp);
    return -1;
}

int atomicfile_batch_add(atomicfile_batch *b, const char *path, const char *data, size_t len,
                         char *err, size_t errlen)
{
    return batch_add(b, path, data, len, 0, err, errlen);
}

int atomicfile_batch_add_new(atomicfile_batch *b, const char *path, const char *data, size_t len,
                             char *err, size_t errlen)
{
    return batch_add(b, path, data, len, 1, err, errlen);
}

/* Make every staged temporary durable: one syncfs of the file system
 * they are on (Linux), else an fsync each. A file that fails is marked. */
static void sync_staged(atomicfile_batch *b)
{
    int fd = -1;
#ifdef __linux__
    for (size_t i = 0; i < b->n && fd < 0; i++)
        fd = open(b->v[i].dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0 && syncfs(fd) == 0) {
        close(fd);
        return;
    }
    if (fd >= 0)
        close(fd);
#endif
    for (size_t i = 0; i < b->n; i++) {
        fd = open(b->v[i].tmp, O_RDONLY);
        if (fd < 0 || fsync(fd) < 0)
            b->v[i].err = xasprintf("%s: fsync: %s", b->v[i].tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
}

int atomicfile_batch_commit(atomicfile_batch *b, void (*done)(void *ud, size_t i, const char *err),
                            void *ud)
{
    int failed = 0;
    sync_staged(b);
    for (size_t i = 0; i < b->n; i++) {
        staged *x = &b->v[i];
        struct stat now;
        if (!x->err && x->expect &&
            (stat(x->target, &now) != 0 || now.st_dev != x->was.st_dev ||
             now.st_ino != x->was.st_ino || now.st_size != x->was.st_size ||
             now.st_mtim.tv_sec != x->was.st_mtim.tv_sec ||
             now.st_mtim.tv_nsec != x->was.st_mtim.tv_nsec ||
             now.st_ctim.tv_sec != x->was.st_ctim.tv_sec ||
             now.st_ctim.tv_nsec != x->was.st_ctim.tv_nsec))
            x->err = xasprintf("%s: changed on disk while it was being written (replaced or "
                               "rewritten by someone else); not written",
                               x->target);
        if (!x->err && rename(x->tmp, x->target) < 0)
            x->err = xasprintf("%s: rename: %s", x->target, strerror(errno));
        if (x->err)
            unlink(x->tmp);
        free(x->tmp);
        x->tmp = NULL;
    }
    /* the renames are durable once their directories are: each once */
    for (size_t i = 0; i < b->n; i++) {
        staged *x = &b->v[i];
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(b->v[k].dir, x->dir) == 0;
        if (seen || x->err)
            continue;
        int dfd = open(x->dir, O_RDONLY | O_DIRECTORY);
        if (dfd < 0 || fsync(dfd) < 0) {
            char *why =
                xasprintf("written, but syncing directory %s failed: %s", x->dir, strerror(errno));
            for (size_t k = i; k < b->n; k++)
                if (!b->v[k].err && strcmp(b->v[k].dir, x->dir) == 0)
                    b->v[k].err = xasprintf("%s: %s", b->v[k].target, why);
            free(why);
        }
        if (dfd >= 0)
            close(dfd);
    }
    for (size_t i = 0; i < b->n; i++) {
        failed |= b->v[i].err != NULL;
        if (done)
            done(ud, i, b->v[i].err);
    }
    return failed ? -1 : 0;
}

/* atomicfile_write's one file: its error into err. */
static void one_done(void *ud, size_t i, const char *e)
{
    (void)i;
    char **out = ud;
    if (e)
        *out = xstrdup(e);
}

int atomicfile_write(const char *path, const char *within, const char *data, size_t len, char *err,
                     size_t errlen)
{
    return atomicfile_write_unchanged(path, within, data, len, NULL, err, errlen);
}

int atomicfile_write_unchanged(const char *path, const char *within, const char *data, size_t len,
                               const struct stat *was, char *err, size_t errlen)
{
    atomicfile_batch *b = atomicfile_batch_new(within);
    int rc = atomicfile_batch_add(b, path, data, len, err, errlen);
    if (rc == 0 && was) {
        b->v[b->n - 1].expect = 1;
        b->v[b->n - 1].was = *was;
    }
    char *e = NULL;
    if (rc == 0 && atomicfile_batch_commit(b, one_done, &e) < 0) {
        errf(err, errlen, "%s", e ? e : "not written");
        rc = -1;
    }
    free(e);
    atomicfile_batch_free(b);
    return rc;
}

/* A temporary file of another host (or of an older trellis that did not
 * name its host) may be one being written right now: it is stale only
 * when no write could take this long. */
#define FOREIGN_TEMP_STALE_S 600

/* Is name (in dir) a temporary file of atomicfile_write that no
 * live writer holds? */
static int stale_temp(const char *dir, const char *name)
{
    if (name[0] != '.')
        return 0;
    const char *t = NULL;
    for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp."))
        t = p; /* the last one: NAME itself may hold ".tmp." */
    if (!t || t == name)
        return 0;
    const char *rest = t + 5; /* HOST.PID.XXXXXX, or XXXXXX */
    size_t rl = strlen(rest);
    if (rl < 6)
        return 0;
    const char *rnd = rest + rl - 6;
    for (const char *c = rnd; *c; c++)
        if (!isalnum((unsigned char)*c))
            return 0;
    int ours = 0;
    long pid = 0;
    if (rnd > rest) {
        /* HOST.PID. before the random part */
        if (rnd[-1] != '.')
            return 0;
        const char *pe = rnd - 1, *pb = pe;
        while (pb > rest && isdigit((unsigned char)pb[-1]))
            pb--;
        if (pb == pe || pb == rest || pb[-1] != '.')
            return 0;
        pid = strtol(pb, NULL, 10);
        const char *me = host_name();
        size_t hl = (size_t)(pb - 1 - rest);
        ours = hl == strlen(me) && memcmp(rest, me, hl) == 0;
    }
    if (ours)
        return pid == (long)getpid() || (kill((pid_t)pid, 0) < 0 && errno == ESRCH);
    char *p = xasprintf("%s/%s", dir, name);
    struct stat st;
    int old = lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
              time(NULL) - st.st_mtime > FOREIGN_TEMP_STALE_S;
    free(p);
    return old;
}

size_t atomicfile_clean_temps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!stale_temp(dir, e->d_name))
            continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        if (unlink(p) == 0)
            removed++;
        free(p);
    }
    closedir(d);
    return removed;
}
