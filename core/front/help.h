/*
 * help.h - what the command line says about itself: the list of commands,
 * each command's own help (usage, the options that apply to it,
 * examples), and the nearest command or option to a word it does not know.
 * The one place that knows the command names: cli.c dispatches on them,
 * tests/manpage.sh checks trellis(1) against `trellis --help`.
 */
#ifndef TRELLIS_HELP_H
#define TRELLIS_HELP_H

#include <stddef.h>
#include <stdio.h>

/* The general usage: every command and option. default_config and
 * plugin_dir are the configured paths it names; ownership of both is
 * retained by the caller. */
void help_usage(FILE *f, const char *default_config, const char *plugin_dir);

/* 1 when name is a command `trellis --help` lists. */
int help_is_command(const char *name);

/* The help of one command (usage, options that apply, examples); -1 when
 * there is no such command. */
int help_command(FILE *f, const char *name, const char *default_config);

/* Of the NULL-terminated candidates, the one nearest to word by edit
 * distance when it is near enough to be a typing slip, else NULL. The
 * result is one of the candidates (borrowed). */
const char *help_nearest(const char *word, const char *const *candidates);

/* The command nearest to word (help_nearest over the commands), or NULL. */
const char *help_nearest_command(const char *word);

#endif
