#!/bin/sh
# Format the C sources with the committed .clang-format, or (--check) say
# which files differ from it and fail. The frozen SDK 1.1 header of the
# compatibility tests is left as it was released.
#   scripts/format.sh           rewrite in place
#   scripts/format.sh --check   exit 1 when a file is not formatted
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null 2>&1 || { echo "format: $cf not found (scripts/deps.sh --test)" >&2; exit 2; }
files=$(git ls-files 'core/*.[ch]' 'sdk/*.h' 'plugins/*.[ch]' 'tests/*.[ch]' 'contrib/*.[ch]' |
    grep -v '^tests/sdk-1\.1/')
if [ "${1:-}" = "--check" ]; then
    bad=""
    for f in $files; do
        "$cf" --style=file "$f" | cmp -s - "$f" || bad="$bad $f"
    done
    if [ -n "$bad" ]; then
        echo "not formatted (run scripts/format.sh):$bad" >&2
        exit 1
    fi
    echo "format: $(echo $files | wc -w) files formatted"
    exit 0
fi
# shellcheck disable=SC2086
"$cf" --style=file -i $files
