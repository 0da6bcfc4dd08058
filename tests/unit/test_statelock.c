/*
 * test_statelock.c - the state lock (statelock.c) and the quarantine
 * file (quarantine.c), on real files; the lease keeper thread of the
 * etcd and Kubernetes API elections (keeper.c).
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "election.h"
#include "keeper.h"
#include "quarantine.h"
#include "statelock.h"
#include "testutil.h"

static char dir[64];

START_TEST(one_holder_and_a_removed_file)
{
    char err[512], why[512], holder[32];
    tu_mkdtemp(dir, "lock");
    char *p1 = NULL, *p2 = NULL;
    int created = 0;
    int a = statelock_open(dir, &p1, &created, err, sizeof err);
    ck_assert_msg(a >= 0, "%s", err);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(statelock_try(a, p1, err, sizeof err), 1);
    ck_assert_int_eq(statelock_record_pid(a), 0);
    int b = statelock_open(dir, &p2, NULL, err, sizeof err);
    ck_assert_int_ge(b, 0);
    ck_assert_int_eq(statelock_try(b, p2, err, sizeof err), 0); /* held */
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    ck_assert_str_eq(statelock_holder(b, holder, sizeof holder), pid);
    ck_assert_int_eq(statelock_is_ours(a, p1, why, sizeof why), 1);
    /* the file deleted under the holder: it is not ours any more */
    unlink(p1);
    ck_assert_int_eq(statelock_is_ours(a, p1, why, sizeof why), 0);
    ck_assert_msg(strlen(why) > 0, "no reason given");
    statelock_release(a, p1, 0);
    statelock_release(b, p2, 0);
    free(p1);
    free(p2);
    tu_rmtree(dir);
}
END_TEST

static const char *ident_now;

static const char *ident(void *ud, const char *plugin)
{
    return strcmp(plugin, "fx") == 0 ? ident_now : NULL;
}

START_TEST(election_over_the_lock)
{
    char edir[64], err[512], holder[64], why[512];
    tu_mkdtemp(edir, "elect");
    election *a = election_open(NULL, edir, err, sizeof err);
    cfg_store fsc = {.type = (char *)"file", .path = edir};
    election *b = election_open(&fsc, NULL, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    cfg_store bogus = {.type = (char *)"floppy"};
    ck_assert_ptr_null(election_open(&bogus, NULL, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "floppy"));
    ck_assert_int_eq(election_campaign(a, holder, sizeof holder, err, sizeof err), 1);
    ck_assert_int_eq(election_leading(a, why, sizeof why), 1);
    /* the second host is a standby, told who leads */
    ck_assert_int_eq(election_campaign(b, holder, sizeof holder, err, sizeof err), 0);
    char want[32];
    snprintf(want, sizeof want, "pid %d", (int)getpid());
    ck_assert_str_eq(holder, want);
    int fd = election_wait_fd(b, err, sizeof err);
    ck_assert_int_ge(fd, 0);
    struct pollfd pf = {fd, POLLIN, 0};
    ck_assert_int_eq(poll(&pf, 1, 0), 0); /* nothing yet */
    /* the leader resigns: the standby's wait ends, and it leads */
    election_resign(a);
    ck_assert_int_eq(poll(&pf, 1, 10000), 1);
    ck_assert_int_eq(election_wait_done(b, err, sizeof err), 1);
    ck_assert_int_eq(election_leading(b, why, sizeof why), 1);
    /* the lock file removed under the leader: it no longer leads */
    char p[128];
    snprintf(p, sizeof p, "%s/%s", edir, STATELOCK_FILE);
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(election_leading(b, why, sizeof why), 0);
    ck_assert_msg(strstr(why, "removed or replaced"), "%s", why);
    /* and a campaign locks the new file */
    election_resign(b);
    ck_assert_int_eq(election_campaign(a, holder, sizeof holder, err, sizeof err), 1);
    election_free(a);
    election_free(b);
    tu_rmtree(edir);
}
END_TEST

START_TEST(quarantine_holds_until_something_changes)
{
    char path[128], err[512];
    tu_mkdtemp(dir, "quar");
    snprintf(path, sizeof path, "%s/%s", dir, QUARANTINE_FILE);
    FILE *f = fopen(path, "w");
    fputs("SIGSEGV\tfx\t/lib/fx.so\tid-1\tfilter\tPod/default/web\n", f);
    fclose(f);
    trellis_object *web = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                                 "{\"name\":\"web\",\"namespace\":\"default\"}}");
    trellis_object *other = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                                   "{\"name\":\"db\",\"namespace\":\"default\"}}");
    ident_now = "id-1";
    quarantine *q = quarantine_open(path, 0);
    ck_assert_uint_eq(quarantine_count(q), 1);
    const char *why = NULL;
    ck_assert_int_eq(quarantine_check(q, web, ident, NULL, &why), 1);
    ck_assert_msg(strstr(why, "plugin 'fx'") && strstr(why, "filter"), "%s", why);
    ck_assert_int_eq(quarantine_check(q, other, ident, NULL, &why), 0);
    ck_assert_int_eq(quarantine_save(q, 1, err, sizeof err), 0);
    quarantine_free(q);
    /* the digest was learnt and kept: still held on the next start */
    q = quarantine_open(path, 0);
    ck_assert_int_eq(quarantine_check(q, web, ident, NULL, NULL), 1);
    quarantine_free(q);
    /* a rebuilt plugin (another file identity): tried again */
    ident_now = "id-2";
    q = quarantine_open(path, 0);
    ck_assert_int_eq(quarantine_check(q, web, ident, NULL, NULL), 0);
    ck_assert_int_eq(quarantine_save(q, 1, err, sizeof err), 0);
    ck_assert_uint_eq(quarantine_count(q), 0);
    quarantine_free(q);
    object_unref(web);
    object_unref(other);
    tu_rmtree(dir);
}
END_TEST

/* ---- the keeper (keeper.c) ---- */

typedef struct ticks {
    keeper *k;
    atomic_int n;
} ticks;

/* a long pause: only a poke brings the next round */
static uint32_t count_tick(void *ud)
{
    ticks *t = ud;
    if (atomic_fetch_add(&t->n, 1) + 1 == 2)
        keeper_wake(t->k, 'y');
    return 60000;
}

static int reached(ticks *t, int n)
{
    for (int i = 0; i < 5000 && atomic_load(&t->n) < n; i++) {
        struct pollfd none;
        poll(&none, 0, 1);
    }
    return atomic_load(&t->n) >= n;
}

START_TEST(keeper_rounds_pokes_and_wakes)
{
    char err[256];
    ticks t = {NULL, 0};
    t.k = keeper_new(count_tick, &t, err, sizeof err);
    ck_assert_msg(t.k != NULL, "%s", err);
    /* nothing runs before the start; nothing is waiting to be read */
    ck_assert_int_eq(atomic_load(&t.n), 0);
    ck_assert_int_eq(keeper_drain(t.k), 'n');
    ck_assert_int_eq(keeper_start(t.k), 0);
    ck_assert_int_eq(keeper_start(t.k), 0); /* once only */
    ck_assert(reached(&t, 1));
    /* the pause is a minute: a poke ends it, and the second round wakes
     * the run loop through the pipe */
    keeper_lock(t.k);
    keeper_poke(t.k);
    keeper_unlock(t.k);
    ck_assert(reached(&t, 2));
    struct pollfd p = {keeper_fd(t.k), POLLIN, 0};
    ck_assert_int_eq(poll(&p, 1, 5000), 1);
    keeper_wake(t.k, 'n');
    keeper_wake(t.k, 'y');
    ck_assert_int_eq(keeper_drain(t.k), 'y'); /* the last one counts */
    ck_assert_int_eq(keeper_drain(t.k), 'n');
    /* stopped: joined at once (no waiting out the pause), not restarted */
    keeper_stop(t.k);
    int n = atomic_load(&t.n);
    ck_assert_int_eq(keeper_start(t.k), -1);
    ck_assert_int_eq(atomic_load(&t.n), n);
    keeper_free(t.k);
    keeper_free(NULL);
    /* freed without ever starting */
    keeper *idle = keeper_new(count_tick, &t, err, sizeof err);
    ck_assert_ptr_nonnull(idle);
    keeper_free(idle);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("statelock");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, one_holder_and_a_removed_file);
    tcase_add_test(tc, quarantine_holds_until_something_changes);
    tcase_add_test(tc, election_over_the_lock);
    tcase_add_test(tc, keeper_rounds_pokes_and_wakes);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
