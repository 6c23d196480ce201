#!/usr/bin/env bash
# `make test`'s step timer. Every step's wall-clock seconds go to $REPORTS/steps.tsv; the
# closing summary (tools/test_summary.py) reads them with the pytest JUnit reports beside them.
#
#   steps.sh begin                   start the clock (and a fresh $REPORTS)
#   steps.sh run   NAME TITLE CMD... run CMD in the foreground as step NAME
#   steps.sh start NAME TITLE CMD... run CMD in the background (output to $REPORTS/NAME.log)
#   steps.sh wait  NAME              wait for a background step, show its output, pass on its
#                                    exit status
#   steps.sh summary                 each step's seconds and test counts, and the total
#
# A pytest step writes $REPORTS/NAME.xml (--junitxml) for the summary's counts. A step that
# fails stops any background step (its own process group) and prints the summary so far
# before the failure is passed on, so nothing outlives `make test`.
set -euo pipefail
REPORTS=${REPORTS:-.test-reports}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
# steps.tsv: name, title, seconds, exit status, how it ran
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$(secs "$3" "$4")" "$5" "$6" \
               >> "$REPORTS/steps.tsv"; }
summary() { "${SUMMARY_PYTHON:-.venv/bin/python}" tools/test_summary.py "$REPORTS" || true; }
stop_background() {
    for pidfile in "$REPORTS"/*.pid; do
        [ -e "$pidfile" ] || continue
        pid=$(cat "$pidfile"); rm -f "$pidfile"
        kill -- "-$pid" 2>/dev/null || true
    done
}

cmd=$1; shift
case "$cmd" in
begin)
    rm -rf "$REPORTS"; mkdir -p "$REPORTS"
    now > "$REPORTS/t0"
    ;;
run)
    name=$1 title=$2; shift 2
    echo "== $title"
    t0=$(now); rc=0
    "$@" || rc=$?
    t1=$(now)
    record "$name" "$title" "$t0" "$t1" "$rc" foreground
    echo "== $title: $(secs "$t0" "$t1") s$([ "$rc" = 0 ] || echo ", FAILED (exit $rc)")"
    if [ "$rc" != 0 ]; then stop_background; summary; exit "$rc"; fi
    ;;
start)
    name=$1 title=$2; shift 2
    echo "== $title: started in the background (output: $REPORTS/$name.log)"
    now > "$REPORTS/$name.t0"
    echo "$title" > "$REPORTS/$name.title"
    # setsid: its own process group, so that stop_background ends it and its children.
    setsid bash -c '"$@" > "$0.log" 2>&1; echo $? > "$0.rc"; date +%s.%N > "$0.t1"' \
        "$REPORTS/$name" "$@" &
    echo $! > "$REPORTS/$name.pid"
    ;;
wait)
    name=$1
    echo "== $name: waiting for the background step"
    while [ ! -e "$REPORTS/$name.t1" ]; do sleep 1; done
    rm -f "$REPORTS/$name.pid"
    cat "$REPORTS/$name.log"
    rc=$(cat "$REPORTS/$name.rc") title=$(cat "$REPORTS/$name.title")
    t0=$(cat "$REPORTS/$name.t0") t1=$(cat "$REPORTS/$name.t1")
    record "$name" "$title" "$t0" "$t1" "$rc" background
    echo "== $title: $(secs "$t0" "$t1") s (in the background)$([ "$rc" = 0 ] \
         || echo ", FAILED (exit $rc)")"
    if [ "$rc" != 0 ]; then stop_background; summary; exit "$rc"; fi
    ;;
summary)
    summary
    ;;
*)
    echo "steps.sh: unknown command $cmd" >&2; exit 2
    ;;
esac
