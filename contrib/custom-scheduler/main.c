/*
 * main.c - a custom scheduler built on libtrellis: the trellis command
 * line with one plugin of its own linked in.
 *
 *   ./one-per-target schedule -c one-per-target.cfg -s STATE
 *   ./one-per-target plugins          (max-per-target is "(built-in)")
 *   ./one-per-target run -c one-per-target.cfg -s STATE
 */
#include <stdio.h>

#include <trellis/embed.h>

const trellis_plugin_desc *trellis_builtin_max_per_target(void);

int main(int argc, char **argv)
{
    char err[512];
    if (trellis_register_builtin(trellis_builtin_max_per_target, err, sizeof err) < 0) {
        fprintf(stderr, "one-per-target: %s\n", err);
        return 2;
    }
    return trellis_main(argc, argv);
}
