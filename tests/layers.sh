#!/bin/sh
# layers.sh - the core's folders are layers: base, state, engine, front.
# A file includes headers of its own layer and the layers before it,
# never after; a front-end never includes an engine's *_impl.h (it reads
# the scheduler and profiles through their accessors); the SDK headers
# include only libc and each other.
set -u
. "$SRCDIR/testlib.sh"
core="$TOP_SRCDIR/core"
rank() {
    case $1 in base) echo 0 ;; state) echo 1 ;; engine) echo 2 ;; front) echo 3 ;; *) echo 9 ;; esac
}
bad=""
impl=""
for dir in base state engine front; do
    for f in "$core/$dir"/*.[ch]; do
        for inc in $(sed -n 's/^#include "\([^"/]*\)".*/\1/p' "$f"); do
            where=$(cd "$core" && ls */"$inc" 2>/dev/null | head -1 | cut -d/ -f1)
            [ -n "$where" ] || continue
            if [ "$(rank "$where")" -gt "$(rank "$dir")" ]; then
                bad="$bad $dir/$(basename "$f")->$where/$inc"
            fi
            case "$dir:$inc" in front:*_impl.h) impl="$impl $(basename "$f")->$inc" ;; esac
        done
    done
done
if [ -z "$bad" ]; then ok "no include reaches a later layer"; else
    not_ok "no include reaches a later layer" "$bad"; fi
if [ -z "$impl" ]; then ok "front-ends include no *_impl.h"; else
    not_ok "front-ends include no *_impl.h" "$impl"; fi
sdk=$(sed -n 's/^#include [<"]\([^>"]*\)[>"].*/\1/p' "$TOP_SRCDIR"/sdk/trellis/*.h |
    grep -v -E '^(stdarg|stddef|stdint|stdio|string)\.h$|^trellis/' | sort -u)
if [ -z "$sdk" ]; then ok "the SDK headers include only libc"; else
    not_ok "the SDK headers include only libc" "$sdk"; fi
finish
