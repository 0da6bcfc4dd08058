/*
 * log.c - see log.h. A mutex keeps lines from worker threads whole.
 */
#include "config.h"

#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

static trellis_log_level cur_level = TRELLIS_LOG_WARN;
static int as_json;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const names[] = {"error", "warn", "info", "debug"};

void log_set_level(trellis_log_level level)
{
    cur_level = level;
}

trellis_log_level log_get_level(void)
{
    return cur_level;
}

void log_set_json(int json)
{
    as_json = json;
}

int log_get_json(void)
{
    return as_json;
}

const char *log_level_name(trellis_log_level level)
{
    return (int)level >= 0 && (int)level < 4 ? names[level] : "error";
}

int log_parse_level(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* The wall clock as RFC 3339 with milliseconds, UTC. */
static void now_text(char *when, size_t len)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(when, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* One JSON line; '/' as it is (paths and URLs stay readable and
 * searchable), which JSON allows. Called with the lock held. */
static void put_json(const char *when, trellis_log_level level, const char *who, const char *msg)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "time", json_object_new_string(when));
    json_object_object_add(o, "level", json_object_new_string(names[level]));
    if (who)
        json_object_object_add(o, "plugin", json_object_new_string(who));
    json_object_object_add(o, "msg", json_object_new_string(msg));
    fprintf(
        stderr, "%s\n",
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

/* The line of level `level`, printed when the log level lets `gate`
 * through (log_progress: an info line shown at the default level). */
static void vmsg_gated(trellis_log_level level, trellis_log_level gate, const char *who,
                       const char *fmt, va_list ap)
{
    if (gate > cur_level)
        return;
    if ((int)level < 0)
        level = TRELLIS_LOG_ERROR; /* a plugin's out-of-range level */
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    char when[40];
    now_text(when, sizeof when);
    pthread_mutex_lock(&lock);
    if (as_json)
        put_json(when, level, who, msg);
    else if (who)
        fprintf(stderr, "%s %s [%s] %s\n", when, names[level], who, msg);
    else
        fprintf(stderr, "%s %s %s\n", when, names[level], msg);
    pthread_mutex_unlock(&lock);
}

void log_fatal(const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char when[40];
    now_text(when, sizeof when);
    pthread_mutex_lock(&lock);
    if (as_json)
        put_json(when, TRELLIS_LOG_ERROR, NULL, msg);
    else
        fprintf(stderr, "trellis: %s\n", msg);
    pthread_mutex_unlock(&lock);
}

void log_vmsg(trellis_log_level level, const char *who, const char *fmt, va_list ap)
{
    vmsg_gated(level, level, who, fmt, ap);
}

void log_progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg_gated(TRELLIS_LOG_INFO, TRELLIS_LOG_WARN, NULL, fmt, ap);
    va_end(ap);
}

void log_msg(trellis_log_level level, const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vmsg(level, who, fmt, ap);
    va_end(ap);
}

void log_skipped(const char *file, int line, const char *message)
{
    if (line > 0)
        log_warn("%s:%d: %s (skipped)", file, line, message);
    else
        log_warn("%s: %s (skipped)", file, message);
}
