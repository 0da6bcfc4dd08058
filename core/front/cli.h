/*
 * cli.h - the trellis command line (schedule, run, validate, plugins,
 * explain, taint, drain, uncordon, deschedule), as a function: the trellis
 * binary and a custom scheduler built on libtrellis (trellis/embed.h) run
 * the same commands.
 */
#ifndef TRELLIS_CLI_H
#define TRELLIS_CLI_H

/* argv as the trellis binary takes it; the exit status. */
int cli_main(int argc, char **argv);

#endif
