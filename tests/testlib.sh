# testlib.sh - what the shell tests (cli.sh, admin.sh, install.sh) share:
# TAP-like "ok - ..." / "not ok - ..." lines with the details indented
# under a failure, and the closing "N passed, M failed" line. Sourced, not
# run.
passed=0
failed=0

ok() {
    passed=$((passed + 1))
    echo "ok - $1"
}

not_ok() {
    failed=$((failed + 1))
    echo "not ok - $1"
    shift
    for line in "$@"; do
        printf '%s\n' "$line" | sed 's/^/#   /'
    done
}

# Print the summary; the status is 0 only when nothing failed.
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
