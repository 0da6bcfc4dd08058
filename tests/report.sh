#!/bin/sh
# report.sh - `trellis report --html FILE` on the bundled kube example, run
# by `make check`: the page is written after a dry run (the state is not
# changed), is self-contained (no script, nothing fetched), and, rendered
# by headless Chromium and read back from the screenshot with tesseract,
# shows the summary counts, each target with the number of workloads on
# it (the evicted one taken off, this run's placements added) and what it
# holds of its allocatable cpu, memory and pods, where the
# workloads went, and the unschedulable ones by reason code. Without
# chromium or tesseract (scripts/deps.sh --test installs both) the
# rendering checks are skipped.
set -u
: "${TRELLIS:?}" "${TOP_SRCDIR:?}"
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
hosts_setup

case $TRELLIS in
/*) ;;
*) TRELLIS=$(pwd)/$TRELLIS ;;
esac
st=$tmp/state
cp -r "$TOP_SRCDIR/examples/kube" "$st"
cp -r "$st" "$tmp/state.orig"
cp "$TOP_SRCDIR/conf/kube.cfg" "$tmp/kube.cfg"
page=$tmp/fleet.html

# relative paths: the page (its title too) is the same in every run, and
# so is what OCR reads from it
(cd "$tmp" && "$TRELLIS" report --html fleet.html -c kube.cfg -s state) >"$tmp/out" 2>"$tmp/err"
check "report --html writes the page and says so" \
    sh -c "[ $? = 0 ] && [ -s '$page' ] && grep -q 'fleet.html: the state after a dry run' '$tmp/out'"
check "report writes nothing into the state" diff -r "$tmp/state.orig" "$st"
check "the page is self-contained: no script, nothing fetched" \
    sh -c "! grep -E -q '<script|<link|src=|href=|url\\(' '$page'"
check "the page has a full bar for the fullest target and the reason codes" \
    sh -c "grep -q 'width:100%' '$page' && grep -q 'TaintNotTolerated' '$page'"
# after the run: worker-a holds payments-0 (7 cpu, 4Gi) instead of the
# evicted batch-report (8 cpu): 7/8 = 87.5% -> 87%; gpu-c train-resnet-0
# (48Gi of 64Gi = 75%); worker-b 4 pods of 110 = 3.6% -> 3%
check "the page has each node's allocated amounts and a bar of each" \
    sh -c "grep -q 'cpu 7/8 (87%)</span><div class=\"bar\"><div class=\"fill\" style=\"width:87%\">' '$page' &&
           grep -q 'memory 48Gi/64Gi (75%)' '$page' && grep -q 'pods 4/110 (3%)' '$page'"
"$TRELLIS" report -c "$tmp/kube.cfg" -s "$st" >/dev/null 2>"$tmp/err2"
check "report without --html is a usage error" \
    sh -c "[ $? = 1 ] && grep -q 'expected --html FILE' '$tmp/err2'"

# rendered: what an operator sees
if command -v chromium >/dev/null 2>&1 && command -v tesseract >/dev/null 2>&1; then
    # the screenshot once layout and paint are done
    HOME=$tmp chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --run-all-compositor-stages-before-draw --virtual-time-budget=5000 \
        --user-data-dir="$tmp/chromium" --window-size=1400,1400 \
        --screenshot="$tmp/shot.png" "file://$page" >"$tmp/chromium.log" 2>&1
    check "headless Chromium renders the page to a screenshot" test -s "$tmp/shot.png"
    # one text line per row of the page (one thread: the same text each time)
    OMP_THREAD_LIMIT=1 tesseract "$tmp/shot.png" "$tmp/shot" --psm 6 >/dev/null 2>&1
    # the words in order on one line; OCR may read a gap as no space
    seen() { grep -E -q -e "$(echo "$1" | sed 's/ / */g')" "$tmp/shot.txt"; }
    for text in "kube.cfg on state" "5 scheduled, 2 unschedulable, 0 error" \
        "Profile default-scheduler: Pod on Node" \
        "worker-b 4" "worker-a 1" "shop/payments-0 scheduled worker-a" \
        "search-indexer-0 unschedulable" "TaintNotTolerated 2" "InsufficientResources 2" \
        "memory 48Gi/64Gi" "memory 6Gi/32Gi" "pods 4/110"; do
        check "the screenshot shows '$text'" seen "$text"
    done
else
    ok "headless Chromium and tesseract # SKIP chromium or tesseract missing"
fi

finish
