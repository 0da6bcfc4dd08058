/*
 * main.c - the trellis binary: the command line of the core (cli.c, via
 * trellis/embed.h), with the plugins configure linked in.
 */
#include "config.h"

#include <stdio.h>

#include "builtins.h"
#include "trellis/embed.h"

int main(int argc, char **argv)
{
    char err[1024];
    if (builtins_register(err, sizeof err) < 0) {
        fprintf(stderr, "trellis: %s\n", err);
        return 2;
    }
    return trellis_main(argc, argv);
}
