/*
 * fx_no_entry.c - fixture: a shared object that is not a trellis plugin.
 *
 * It exports one ordinary function and no trellis_plugin_entry symbol, as a
 * library dropped into a plugin directory by mistake would. The host must
 * say that the symbol is missing instead of crashing or ignoring the file.
 */
#include "trellis/plugin.h"

TRELLIS_EXPORT int fx_no_entry_answer(void);

TRELLIS_EXPORT int fx_no_entry_answer(void)
{
    return 42;
}
