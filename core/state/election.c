/*
 * election.c - see election.h. The file store's election: the state
 * lock. A standby's wait is a thread blocked in flock(2) that writes one
 * byte into a pipe when it holds the lock; a standby told to stop leaves
 * that thread and its descriptor behind (they end with the process).
 */
#include "config.h"

#include "election_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "log.h"
#include "statelock.h"
#include "store.h"
#include "util.h"

typedef struct file_election {
    election base; /* first */
    char *dir;
    char *path; /* the lock file, once opened */
    int fd;     /* its descriptor, -1 when none */
    int leading;
    int pipe_r;  /* a standby's wait, -1 when none */
    int created; /* the last open made the lock file */
    int remove;  /* election_hold made it: it goes when the hold ends */
} file_election;

typedef struct lock_wait {
    int fd, pipe_w;
} lock_wait;

static void *lock_thread(void *arg)
{
    lock_wait *lw = arg;
    int rc;
    do
        rc = flock(lw->fd, LOCK_EX);
    while (rc < 0 && errno == EINTR);
    char c = rc == 0 ? 'y' : 'n';
    ssize_t w = write(lw->pipe_w, &c, 1);
    (void)w;
    close(lw->pipe_w);
    free(lw);
    return NULL;
}

static const char *file_where(const election *ee)
{
    const file_election *e = (const file_election *)ee;
    return e->path ? e->path : e->dir;
}

/* The lock file open, once: 0, or -1 with err. */
static int ensure_open(file_election *e, char *err, size_t errlen)
{
    if (e->fd >= 0)
        return 0;
    free(e->path);
    e->path = NULL;
    e->fd = statelock_open(e->dir, &e->path, &e->created, err, errlen);
    return e->fd < 0 ? -1 : 0;
}

/* The lock is held: lead, unless the file it is on went away meanwhile. */
static int take(file_election *e)
{
    char why[512];
    if (!statelock_is_ours(e->fd, e->path, why, sizeof why)) {
        log_info("%s; locking it again", why);
        close(e->fd);
        e->fd = -1;
        return 0;
    }
    if (statelock_record_pid(e->fd) < 0)
        log_warn("%s: cannot record the pid: %s", e->path, strerror(errno));
    e->leading = 1;
    return 1;
}

static int file_campaign(election *ee, char *holder, size_t holderlen, char *err, size_t errlen)
{
    file_election *e = (file_election *)ee;
    for (int tries = 0; tries < 8; tries++) {
        if (ensure_open(e, err, errlen) < 0)
            return -1;
        int rc = statelock_try(e->fd, e->path, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            char pid[32];
            snprintf(holder, holderlen, "pid %s", statelock_holder(e->fd, pid, sizeof pid));
            return 0;
        }
        if (take(e))
            return 1;
    }
    return errf(err, errlen, "%s: replaced again and again while locking it", e->path);
}

static int file_wait_fd(election *ee, char *err, size_t errlen)
{
    file_election *e = (file_election *)ee;
    if (e->pipe_r >= 0)
        return e->pipe_r;
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return errf(err, errlen, "cannot create a pipe: %s", strerror(errno));
    lock_wait *lw = xmalloc(sizeof *lw);
    lw->fd = e->fd;
    lw->pipe_w = pfd[1];
    pthread_t t;
    if (pthread_create(&t, NULL, lock_thread, lw) != 0) {
        free(lw);
        close(pfd[0]);
        close(pfd[1]);
        return errf(err, errlen, "cannot start the waiting thread");
    }
    pthread_detach(t);
    e->pipe_r = pfd[0];
    return e->pipe_r;
}

static int file_wait_done(election *ee, char *err, size_t errlen)
{
    file_election *e = (file_election *)ee;
    char c = 'n';
    ssize_t r = read(e->pipe_r, &c, 1);
    close(e->pipe_r);
    e->pipe_r = -1;
    if (r != 1 || c != 'y')
        return errf(err, errlen, "%s: cannot lock: %s", e->path, strerror(errno));
    return take(e);
}

static int file_leading(election *ee, char *why, size_t whylen)
{
    file_election *e = (file_election *)ee;
    return statelock_is_ours(e->fd, e->path, why, whylen);
}

static void file_resign(election *ee)
{
    file_election *e = (file_election *)ee;
    if (e->fd >= 0 && e->pipe_r < 0) /* the lock goes with the descriptor */
        statelock_release(e->fd, e->path, e->leading && e->remove);
    e->fd = -1;
    e->leading = 0;
}

static void file_held(election *ee)
{
    file_election *e = (file_election *)ee;
    e->remove = e->created;
}

static void file_destroy(election *ee)
{
    file_election *e = (file_election *)ee;
    if (e->pipe_r < 0)
        file_resign(ee);
    /* a standby's waiting thread keeps its descriptor: it ends with us */
    else
        close(e->pipe_r);
    free(e->path);
    free(e->dir);
    free(e);
}

static const election_ops file_ops = {
    .where = file_where,
    .campaign = file_campaign,
    .wait_fd = file_wait_fd,
    .wait_done = file_wait_done,
    .leading = file_leading,
    .resign = file_resign,
    .destroy = file_destroy,
    .held = file_held,
};

election *election_open(const cfg_store *sc, const char *state_dir, char *err, size_t errlen)
{
    const char *type = state_dir || !sc ? "file" : sc->type;
    if (type && strcmp(type, "etcd") == 0) {
#ifdef HAVE_ETCD
        return election_etcd_open(sc, err, errlen);
#else
        errf(err, errlen,
             "store.type 'etcd': this trellis was built without the etcd store (configure "
             "--with-etcd, which needs libcurl)");
        return NULL;
#endif
    }
    if (type && strcmp(type, "kubernetes") == 0) {
#ifdef HAVE_ETCD
        return election_kube_open(sc, err, errlen);
#else
        errf(err, errlen,
             "store.type 'kubernetes': this trellis was built without the Kubernetes API store "
             "(configure --with-etcd, which needs libcurl)");
        return NULL;
#endif
    }
    if (type && strcmp(type, "file") != 0) {
        errf(err, errlen, "store.type '%s': no election (expected file, etcd or kubernetes)", type);
        return NULL;
    }
    const char *location = state_dir ? state_dir : sc ? sc->path : NULL;
    if (!location) {
        errf(err, errlen, "the file store needs a state directory: give --state DIR or store.path");
        return NULL;
    }
    file_election *e = xcalloc(1, sizeof *e);
    e->base.ops = &file_ops;
    e->dir = xstrdup(location);
    e->fd = e->pipe_r = -1;
    return &e->base;
}

const char *election_where(const election *e)
{
    return e->ops->where(e);
}

int election_campaign(election *e, char *holder, size_t holderlen, char *err, size_t errlen)
{
    return e->ops->campaign(e, holder, holderlen, err, errlen);
}

int election_wait_fd(election *e, char *err, size_t errlen)
{
    return e->ops->wait_fd(e, err, errlen);
}

int election_wait_done(election *e, char *err, size_t errlen)
{
    return e->ops->wait_done(e, err, errlen);
}

int election_leading(election *e, char *why, size_t whylen)
{
    return e->ops->leading(e, why, whylen);
}

void election_resign(election *e)
{
    e->ops->resign(e);
}

static int fence_leading(void *ud, char *why, size_t whylen)
{
    return election_leading(ud, why, whylen);
}

static int fence_key(void *ud, char *key, size_t keylen, int64_t *version)
{
    election *e = ud;
    return e->ops->fence_key(e, key, keylen, version);
}

void election_fence(election *e, store *st)
{
    st->fence = fence_leading;
    st->fence_ud = e;
    st->fence_key = e->ops->fence_key ? fence_key : NULL;
}

election *election_hold(const cfg_store *sc, const char *state_dir, int dry_run, store *st,
                        char *err, size_t errlen)
{
    election *e = election_open(sc, state_dir, err, errlen);
    if (!e || dry_run)
        return e;
    char holder[256];
    int rc = election_campaign(e, holder, sizeof holder, err, errlen);
    if (rc == 0)
        errf(err, errlen,
             "%s is held by another trellis (%s), which schedules this state: stop it first, "
             "or look with --dry-run",
             election_where(e), holder);
    if (rc != 1) {
        election_free(e);
        return NULL;
    }
    if (e->ops->held)
        e->ops->held(e);
    election_fence(e, st);
    return e;
}

void election_free(election *e)
{
    if (e)
        e->ops->destroy(e);
}
