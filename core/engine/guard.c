/*
 * guard.c - see guard.h.
 *
 * Slots live in a fixed array so that the signal handler and the watchdog
 * can read them without a lock; a thread claims one on its first plugin
 * call and gives it back when it exits (a pthread key's destructor). Every
 * field a reader looks at is atomic; the plugin pointer is stored last
 * (release) and read first (acquire), so a reader that sees it sees the
 * rest of the call.
 */
#include "config.h"

#include "guard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "plugin.h"
#include "util.h"

#define MAX_SLOTS 256
/* the watchdog's signal to cut an ignorable call short */
#define GUARD_CUT_SIGNAL SIGURG
#define ALT_STACK_SIZE (64 * 1024)
#define WATCH_PERIOD_MS 100

typedef struct slot {
    atomic_int used;
    _Atomic(const trellis_plugin *) pl; /* NULL: not in a plugin */
    _Atomic(const char *) hook;
    _Atomic(const char *) what;
    atomic_uint deadline_ms;
    atomic_uint_fast64_t seq;     /* moves at every enter and leave */
    _Atomic(sigjmp_buf *) jump;   /* an armed call's way out, or NULL */
    atomic_int in_host;           /* inside a host function: no jump */
    atomic_uint_fast64_t cut_seq; /* the call the watchdog asked to cut */
    pthread_t thread;
    void *alt_stack;
    /* the watchdog's own */
    uint64_t seen_seq, since_ms;
} slot;

static slot slots[MAX_SLOTS];
static _Thread_local slot *mine;
static pthread_key_t slot_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* the record file: its path as one string the handler can open */
static _Atomic(char *) record_path;

static void slot_release(void *p)
{
    slot *s = p;
    atomic_store_explicit(&s->pl, NULL, memory_order_release);
    stack_t ss = {.ss_flags = SS_DISABLE};
    sigaltstack(&ss, NULL);
    free(s->alt_stack);
    s->alt_stack = NULL;
    atomic_store_explicit(&s->used, 0, memory_order_release);
}

static void make_key(void)
{
    pthread_key_create(&slot_key, slot_release);
}

static slot *claim(void)
{
    pthread_once(&key_once, make_key);
    for (size_t i = 0; i < MAX_SLOTS; i++) {
        int zero = 0;
        if (atomic_compare_exchange_strong(&slots[i].used, &zero, 1)) {
            slot *s = &slots[i];
            /* a stack for the crash handler, so a plugin that overflows
             * its stack is still named */
            s->alt_stack = malloc(ALT_STACK_SIZE);
            if (s->alt_stack) {
                stack_t ss = {.ss_sp = s->alt_stack, .ss_size = ALT_STACK_SIZE, .ss_flags = 0};
                sigaltstack(&ss, NULL);
            }
            s->thread = pthread_self();
            atomic_store(&s->jump, NULL);
            atomic_store(&s->in_host, 0);
            pthread_setspecific(slot_key, s);
            mine = s;
            return s;
        }
    }
    return NULL; /* more threads than slots: their calls go unwatched */
}

/* Only the slot's thread writes seq: a plain store, no locked add (every
 * comparison of the queue sort passes here). */
static inline void bump(slot *s)
{
    atomic_store_explicit(&s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

void guard_enter(guard_prev *prev, const trellis_plugin *pl, const char *hook, const char *what,
                 uint32_t deadline_ms)
{
    slot *s = mine ? mine : claim();
    prev->slot = s;
    prev->prev_jump = NULL;
    if (!s)
        return;
    prev->prev_jump = atomic_load_explicit(&s->jump, memory_order_relaxed);
    atomic_store_explicit(&s->jump, NULL, memory_order_relaxed);
    prev->pl = atomic_load_explicit(&s->pl, memory_order_relaxed);
    prev->hook = atomic_load_explicit(&s->hook, memory_order_relaxed);
    prev->what = atomic_load_explicit(&s->what, memory_order_relaxed);
    prev->deadline_ms = atomic_load_explicit(&s->deadline_ms, memory_order_relaxed);
    atomic_store_explicit(&s->hook, hook, memory_order_relaxed);
    atomic_store_explicit(&s->what, what, memory_order_relaxed);
    atomic_store_explicit(&s->deadline_ms, deadline_ms, memory_order_relaxed);
    bump(s);
    atomic_store_explicit(&s->pl, pl, memory_order_release);
}

const char *guard_hook(void)
{
    slot *s = mine;
    if (!s || !atomic_load_explicit(&s->pl, memory_order_relaxed))
        return NULL;
    return atomic_load_explicit(&s->hook, memory_order_relaxed);
}

void guard_leave(const guard_prev *prev)
{
    slot *s = prev->slot;
    if (!s)
        return;
    atomic_store_explicit(&s->jump, NULL, memory_order_release);
    atomic_store_explicit(&s->pl, NULL, memory_order_release);
    atomic_store_explicit(&s->hook, prev->hook, memory_order_relaxed);
    atomic_store_explicit(&s->what, prev->what, memory_order_relaxed);
    atomic_store_explicit(&s->deadline_ms, prev->deadline_ms, memory_order_relaxed);
    bump(s);
    if (prev->pl)
        atomic_store_explicit(&s->pl, prev->pl, memory_order_release);
    atomic_store_explicit(&s->jump, (sigjmp_buf *)prev->prev_jump, memory_order_release);
}

void guard_arm(guard_prev *prev)
{
    slot *s = prev->slot;
    if (s)
        atomic_store_explicit(&s->jump, &prev->jump, memory_order_release);
}

void guard_abandoned(guard_prev *prev)
{
    const trellis_plugin *pl = NULL;
    slot *s = prev->slot;
    if (s)
        pl = atomic_load_explicit(&s->pl, memory_order_relaxed);
    const char *hook = s ? atomic_load_explicit(&s->hook, memory_order_relaxed) : NULL;
    if (pl) {
        log_msg(TRELLIS_LOG_WARN, pl->name,
                "%s cut short at its deadline (%u ms) on %s: ignorable, skipped for the rest "
                "of the cycle",
                hook ? hook : "call", (unsigned)atomic_load(&s->deadline_ms),
                atomic_load_explicit(&s->what, memory_order_relaxed));
        metrics_plugin_abandoned(pl->name, hook);
    }
    guard_leave(prev);
}

void guard_host_enter(void)
{
    if (mine)
        atomic_fetch_add_explicit(&mine->in_host, 1, memory_order_relaxed);
}

void guard_host_leave(void)
{
    if (mine)
        atomic_fetch_sub_explicit(&mine->in_host, 1, memory_order_relaxed);
}

/* The watchdog's signal to a thread whose armed call is past its
 * deadline: jump back to the call site, unless the thread is in the host
 * or already out of that call. */
static void on_cut(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    slot *s = mine;
    if (!s || atomic_load_explicit(&s->in_host, memory_order_relaxed))
        return;
    sigjmp_buf *jb = atomic_load_explicit(&s->jump, memory_order_acquire);
    if (!jb || atomic_load_explicit(&s->seq, memory_order_relaxed) !=
                   atomic_load_explicit(&s->cut_seq, memory_order_relaxed))
        return;
    atomic_store_explicit(&s->jump, NULL, memory_order_relaxed);
    siglongjmp(*jb, 1);
}

/* ---- records ---------------------------------------------------------- */

/* Append text to the record file (never through a link); async-signal-
 * safe. 0, or -1 when it was not written whole. */
static int append_record(const char *text, size_t len)
{
    const char *p = atomic_load(&record_path);
    if (!p)
        return -1;
    int fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, text, len);
    int rc = w == (ssize_t)len && fsync(fd) == 0 ? 0 : -1;
    close(fd);
    return rc;
}

/* A small buffer filled without stdio (stdio is not async-signal-safe). */
typedef struct line {
    char b[4096];
    size_t n;
} line;

static void put(line *l, const char *s)
{
    /* a tab or newline in a name would break the record's fields */
    for (; s && *s && l->n + 1 < sizeof l->b; s++)
        l->b[l->n++] = (*s == '\t' || *s == '\n') ? ' ' : *s;
}

static void put_raw(line *l, const char *s)
{
    for (; s && *s && l->n + 1 < sizeof l->b; s++)
        l->b[l->n++] = *s;
}

static const char *signame(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGILL:
        return "SIGILL";
    case SIGFPE:
        return "SIGFPE";
    case SIGABRT:
        return "SIGABRT";
    default:
        return "signal";
    }
}

/* The record of a call that went wrong: cause, plugin, its file, the
 * file's identity, hook, object (see quarantine.h). */
static void record_line(line *l, const char *cause, const trellis_plugin *pl, const char *hook,
                        const char *what)
{
    l->n = 0;
    put(l, cause);
    put_raw(l, "\t");
    put(l, pl->name);
    put_raw(l, "\t");
    put(l, pl->mod ? pl->mod->path : "");
    put_raw(l, "\t");
    put(l, pl->mod ? pl->mod->ident : "");
    put_raw(l, "\t");
    put(l, hook ? hook : "");
    put_raw(l, "\t");
    put(l, what ? what : "");
    put_raw(l, "\n");
}

/* ---- the crash handler ------------------------------------------------- */

/* n as decimal digits, at least `width` of them. */
static void put_num(line *l, long n, int width)
{
    char d[24];
    int k = 0;
    do {
        d[k++] = (char)('0' + n % 10);
        n /= 10;
    } while ((n > 0 || k < width) && k < (int)sizeof d);
    while (k > 0 && l->n + 1 < sizeof l->b)
        l->b[l->n++] = d[--k];
}

/* s as the inside of a JSON string ('/' as it is, as log.c writes it),
 * at most cap bytes of it: the fields' caps add up to less than the line,
 * so a long one is cut and the line stays JSON. */
static void put_json_text(line *l, const char *s, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t stop = l->n + cap < sizeof l->b - 1 ? l->n + cap : sizeof l->b - 1;
    for (; s && *s && l->n + 6 <= stop; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            l->b[l->n++] = '\\';
            l->b[l->n++] = (char)c;
        } else if (c < 0x20) {
            put_raw(l, "\\u00");
            l->b[l->n++] = hex[c >> 4];
            l->b[l->n++] = hex[c & 15];
        } else {
            l->b[l->n++] = (char)c;
        }
    }
}

/* The wall clock as log.c writes it (RFC 3339, milliseconds, UTC), from
 * clock_gettime and arithmetic alone: gmtime and strftime are not
 * async-signal-safe. The civil date from days since 1970 after Howard
 * Hinnant's civil_from_days. */
static void put_now(line *l)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long secs = (long)ts.tv_sec, days = secs / 86400, rem = secs % 86400;
    long z = days + 719468, era = z / 146097, doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    long d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    long y = yoe + era * 400 + (m <= 2);
    put_num(l, y, 4);
    put_raw(l, "-");
    put_num(l, m, 2);
    put_raw(l, "-");
    put_num(l, d, 2);
    put_raw(l, "T");
    put_num(l, rem / 3600, 2);
    put_raw(l, ":");
    put_num(l, rem / 60 % 60, 2);
    put_raw(l, ":");
    put_num(l, rem % 60, 2);
    put_raw(l, ".");
    put_num(l, ts.tv_nsec / 1000000, 3);
    put_raw(l, "Z");
}

/* The crash report msg (no "trellis: ", no newline) on standard error:
 * "trellis: fatal: ..." as text, or under --log-format json one line as
 * log.c writes them, with the signal, the plugin, its hook and object as
 * fields of their own. Async-signal-safe: one write() of a stack buffer. */
static void report_crash(const char *msg, int sig, const trellis_plugin *pl, const char *hook,
                         const char *what, int is_init)
{
    line l;
    l.n = 0;
    if (!log_get_json()) {
        put_raw(&l, "trellis: ");
        put_raw(&l, msg);
    } else {
        put_raw(&l, "{\"time\":\"");
        put_now(&l);
        put_raw(&l, "\",\"level\":\"error\",");
        if (pl) {
            put_raw(&l, "\"plugin\":\"");
            put_json_text(&l, pl->name, 256);
            put_raw(&l, "\",");
        }
        put_raw(&l, "\"msg\":\"");
        put_json_text(&l, msg, 2048);
        put_raw(&l, "\",\"signal\":\"");
        put_raw(&l, signame(sig));
        if (pl) {
            put_raw(&l, "\",\"hook\":\"");
            put_json_text(&l, hook ? hook : "", 128);
        }
        if (pl && what && *what) {
            put_raw(&l, is_init ? "\",\"config\":\"" : "\",\"object\":\"");
            put_json_text(&l, what, 1024);
        }
        put_raw(&l, "\"}");
    }
    /* the line ends whatever was cut to fit */
    if (l.n + 1 >= sizeof l.b)
        l.n = sizeof l.b - 2;
    l.b[l.n++] = '\n';
    ssize_t w = write(STDERR_FILENO, l.b, l.n);
    (void)w;
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    slot *s = mine;
    const trellis_plugin *pl = s ? atomic_load_explicit(&s->pl, memory_order_acquire) : NULL;
    line l;
    if (pl) {
        const char *hook = atomic_load_explicit(&s->hook, memory_order_relaxed);
        const char *what = atomic_load_explicit(&s->what, memory_order_relaxed);
        int is_init = hook && strcmp(hook, "init") == 0;
        int record = !is_init && what && *what && atomic_load(&record_path), recorded = 0;
        if (record) { /* first: the report says whether it was */
            record_line(&l, signame(sig), pl, hook, what);
            recorded = append_record(l.b, l.n) == 0;
        }
        l.n = 0;
        put_raw(&l, "fatal: ");
        put_raw(&l, signame(sig));
        put_raw(&l, " in plugin '");
        put_raw(&l, pl->name);
        put_raw(&l, "' (");
        put_raw(&l, pl->mod ? pl->mod->path : "?");
        put_raw(&l, "), hook ");
        put_raw(&l, hook ? hook : "?");
        if (what && *what) {
            put_raw(&l, is_init ? ", config " : ", object ");
            put_raw(&l, what);
        }
        if (recorded)
            put_raw(&l, "; recorded: the next start quarantines the object");
        else if (record) {
            put_raw(&l, "; not recorded: ");
            put_raw(&l, atomic_load(&record_path));
            put_raw(&l, " could not be written (a link, or no room): remove what is in its way");
        }
        l.b[l.n] = '\0';
        report_crash(l.b, sig, pl, hook, what, is_init);
    } else {
        l.n = 0;
        put_raw(&l, "fatal: ");
        put_raw(&l, signame(sig));
        put_raw(&l, " outside any plugin call");
        l.b[l.n] = '\0';
        report_crash(l.b, sig, NULL, NULL, NULL, 0);
    }
    /* die of the signal as if there were no handler (a core, the status) */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

/* a handler may be reading an old record path right now: keep it */
static char *kept_paths[16];
static atomic_int n_kept;

void guard_set_record(const char *path)
{
    const char *cur = atomic_load(&record_path);
    if ((!cur && !path) || (cur && path && strcmp(cur, path) == 0))
        return;
    char *old = atomic_exchange(&record_path, path ? xstrdup(path) : NULL);
    int k = atomic_fetch_add(&n_kept, 1);
    if (old && k < 16)
        kept_paths[k] = old;
}

void guard_install(const char *path)
{
    static atomic_int installed;
    guard_set_record(path);
    if (atomic_exchange(&installed, 1))
        return;
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_crash;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    struct sigaction cut;
    memset(&cut, 0, sizeof cut);
    cut.sa_sigaction = on_cut;
    /* not blocked in its own handler (the jump point restores the mask
     * too) */
    cut.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&cut.sa_mask);
    sigaction(GUARD_CUT_SIGNAL, &cut, NULL);
    /* the main thread's alternate stack */
    if (!mine)
        claim();
}

/* ---- the watchdog ------------------------------------------------------ */

static pthread_t watch_thread;
static atomic_int watching, stop_watch;
static guard_fatal_fn fatal_fn;
static void *fatal_ud;
static uint32_t grace;
static atomic_uint_fast64_t overruns;

static void overrun(slot *s, const trellis_plugin *pl, uint64_t ran_ms)
{
    const char *hook = atomic_load_explicit(&s->hook, memory_order_relaxed);
    const char *what = atomic_load_explicit(&s->what, memory_order_relaxed);
    unsigned dl = atomic_load_explicit(&s->deadline_ms, memory_order_relaxed);
    atomic_fetch_add(&overruns, 1);
    char msg[1024];
    snprintf(msg, sizeof msg,
             "plugin '%s' (%s): hook %s has not returned after %.1f s (deadline %u ms)%s%s; "
             "ending the run: a thread stuck in a plugin cannot be taken back",
             pl->name, pl->mod ? pl->mod->path : "?", hook ? hook : "?", (double)ran_ms / 1000.0,
             dl, what && *what ? " on " : "", what ? what : "");
    log_error("%s", msg);
    if (what && *what && hook && strcmp(hook, "init") != 0) {
        line l;
        record_line(&l, "deadline", pl, hook, what);
        append_record(l.b, l.n);
    }
    if (fatal_fn)
        fatal_fn(fatal_ud, msg);
    /* give a supervisor's probe a moment to read the reason */
    struct timespec ts = {grace / 1000, (long)(grace % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    fflush(stderr);
    _exit(GUARD_EXIT_STUCK);
}

static void *watch(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_watch)) {
        uint64_t now = clock_mono_ms();
        for (size_t i = 0; i < MAX_SLOTS; i++) {
            slot *s = &slots[i];
            if (!atomic_load_explicit(&s->used, memory_order_acquire))
                continue;
            uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
            const trellis_plugin *pl = atomic_load_explicit(&s->pl, memory_order_acquire);
            if (!pl || seq != s->seen_seq) {
                s->seen_seq = seq;
                s->since_ms = now;
                continue;
            }
            unsigned dl = atomic_load_explicit(&s->deadline_ms, memory_order_relaxed);
            if (!dl || now - s->since_ms <= dl ||
                atomic_load_explicit(&s->seq, memory_order_acquire) != seq)
                continue;
            /* an armed call is cut short; one that stays past twice its
             * deadline could not be (in the host, or not armed) */
            if (atomic_load_explicit(&s->jump, memory_order_acquire) &&
                now - s->since_ms <= 2 * (uint64_t)dl) {
                atomic_store_explicit(&s->cut_seq, seq, memory_order_relaxed);
                pthread_kill(s->thread, GUARD_CUT_SIGNAL);
                continue;
            }
            overrun(s, pl, now - s->since_ms);
        }
        struct timespec ts = {0, WATCH_PERIOD_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

void guard_watch(guard_fatal_fn fatal, void *ud, uint32_t grace_ms)
{
    if (atomic_exchange(&watching, 1))
        return;
    fatal_fn = fatal;
    fatal_ud = ud;
    grace = grace_ms;
    atomic_store(&stop_watch, 0);
    if (pthread_create(&watch_thread, NULL, watch, NULL) != 0) {
        log_warn("cannot start the plugin watchdog: %s; plugin deadlines are not enforced",
                 strerror(errno));
        atomic_store(&watching, 0);
    }
}

void guard_unwatch(void)
{
    if (!atomic_load(&watching))
        return;
    atomic_store(&stop_watch, 1);
    pthread_join(watch_thread, NULL);
    atomic_store(&watching, 0);
}

uint64_t guard_overruns(void)
{
    return atomic_load(&overruns);
}
