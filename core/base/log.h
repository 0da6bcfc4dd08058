/*
 * log.h - leveled logging to stderr, one line per event, as text or JSON.
 *
 * The host logs through log_msg; plugins log through the host table, which
 * passes the plugin's name as `who` so every plugin line carries it.
 */
#ifndef TRELLIS_LOG_H
#define TRELLIS_LOG_H

#include <stdarg.h>

#include "trellis/plugin.h"
#include "util.h"

void log_set_level(trellis_log_level level);
trellis_log_level log_get_level(void);
void log_set_json(int json);
int log_get_json(void);
/* "error", "warn", "info" or "debug". */
const char *log_level_name(trellis_log_level level);
/* Parse "error", "warn", "info", "debug"; -1 when unknown. */
int log_parse_level(const char *s);
void log_msg(trellis_log_level level, const char *who, const char *fmt, ...) UTIL_PRINTF(3, 4);
void log_vmsg(trellis_log_level level, const char *who, const char *fmt, va_list ap);

/* An error that ends the command (a config that does not load, a port in
 * use): "trellis: MESSAGE" on standard error, or under --log-format json
 * a JSON line of level error, so that a service's journal reads as one
 * format. Printed whatever the log level. */
void log_fatal(const char *fmt, ...) UTIL_PRINTF(1, 2);

/* A line of level info that the default level (warn) shows too: the
 * progress of a long run (its summary), which an operator reads in a
 * journal without turning on every info line; --log-level error hides it. */
void log_progress(const char *fmt, ...) UTIL_PRINTF(1, 2);

/* "FILE:LINE: MESSAGE (skipped)", or "FILE: MESSAGE (skipped)" when line
 * is 0 (a file that could not be read or was refused as a whole). */
void log_skipped(const char *file, int line, const char *message);

#define log_error(...) log_msg(TRELLIS_LOG_ERROR, NULL, __VA_ARGS__)
#define log_warn(...) log_msg(TRELLIS_LOG_WARN, NULL, __VA_ARGS__)
#define log_info(...) log_msg(TRELLIS_LOG_INFO, NULL, __VA_ARGS__)
#define log_debug(...) log_msg(TRELLIS_LOG_DEBUG, NULL, __VA_ARGS__)

#endif
