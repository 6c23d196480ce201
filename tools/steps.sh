#!/usr/bin/env bash
# `make test`'s step timer. Every step's wall-clock and CPU seconds go to $REPORTS/steps.tsv;
# the closing summary (tools/test_summary.py) reads them with the pytest JUnit reports beside
# them.
#
#   steps.sh begin                   start the clock (and a fresh $REPORTS)
#   steps.sh run   NAME TITLE CMD... run CMD in the foreground as step NAME; a background
#                                    lane that has already failed fails the run here
#   steps.sh start LANE TITLE CMD... run CMD in the background (output to $REPORTS/LANE.log);
#                                    CMD may be several steps (`steps.sh step ...`) in a row
#   steps.sh step  NAME TITLE CMD... inside a background lane: run CMD as step NAME, record
#                                    it, and pass on its exit status (nothing else)
#   steps.sh wait  LANE              wait for a background lane, show its output, pass on its
#                                    exit status
#   steps.sh summary                 each step's seconds and test counts, and the total
#
# A pytest step writes $REPORTS/NAME.xml (--junitxml) for the summary's counts. A step that
# fails stops every background lane (each its own process group) and prints the summary so
# far before the failure is passed on, so nothing outlives `make test`.
#
# CPU seconds are the user + system time of the step's command and every process it waited
# for (bash's `times`), so they add up over steps that ran side by side, where wall-clock
# seconds overlap.
set -euo pipefail
REPORTS=${REPORTS:-.test-reports}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
# the CPU seconds (user + system) of the finished children in FILE, which holds bash's `times`
# (run `times` in the shell itself: in a $(...) subshell it would see no children)
child_cpu() {
    awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, t, "m");
         n += t[1] * 60 + t[2] } printf "%.0f", n }' "$1"
}
# steps.tsv: name, title, wall seconds, exit status, how it ran, CPU seconds
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$(secs "$3" "$4")" "$5" "$6" "$7" \
               >> "$REPORTS/steps.tsv"; }
summary() { "${SUMMARY_PYTHON:-.venv/bin/python}" tools/test_summary.py "$REPORTS" || true; }
stop_background() {
    for pidfile in "$REPORTS"/*.pid; do
        [ -e "$pidfile" ] || continue
        pid=$(cat "$pidfile"); rm -f "$pidfile"
        kill -- "-$pid" 2>/dev/null || true
    done
}
# A background lane that has finished and failed: show it, stop the rest, exit with its status.
check_background() {
    for rcfile in "$REPORTS"/*.rc; do
        [ -e "$rcfile" ] || continue
        rc=$(cat "$rcfile")
        [ "$rc" = 0 ] && continue
        lane=$(basename "$rcfile" .rc)
        echo "== $lane (in the background) FAILED (exit $rc); its output:"
        cat "$REPORTS/$lane.log"
        stop_background; summary; exit "$rc"
    done
}

cmd=$1; shift
case "$cmd" in
begin)
    rm -rf "$REPORTS"; mkdir -p "$REPORTS"
    now > "$REPORTS/t0"
    ;;
run | step)
    name=$1 title=$2; shift 2
    echo "== $title"
    t0=$(now); rc=0
    "$@" || rc=$?
    t1=$(now)
    times > "$REPORTS/$name.times"
    how=foreground; [ "$cmd" = step ] && how=background
    record "$name" "$title" "$t0" "$t1" "$rc" "$how" "$(child_cpu "$REPORTS/$name.times")"
    # a lane of several steps records each of them, not itself (see wait)
    if [ -n "${STEPS_LANE:-}" ]; then touch "$REPORTS/$STEPS_LANE.steps"; fi
    echo "== $title: $(secs "$t0" "$t1") s$([ "$rc" = 0 ] || echo ", FAILED (exit $rc)")"
    if [ "$cmd" = step ]; then exit "$rc"; fi
    if [ "$rc" != 0 ]; then stop_background; summary; exit "$rc"; fi
    check_background
    ;;
start)
    name=$1 title=$2; shift 2
    echo "== $title: started in the background (output: $REPORTS/$name.log)"
    now > "$REPORTS/$name.t0"
    echo "$title" > "$REPORTS/$name.title"
    # setsid: its own process group, so that stop_background ends it and its children.
    STEPS_LANE=$name setsid bash -c '"$@" > "$0.log" 2>&1; rc=$?; times > "$0.times"; echo $rc > "$0.rc.tmp"
                    mv "$0.rc.tmp" "$0.rc"; date +%s.%N > "$0.t1"' \
        "$REPORTS/$name" "$@" &
    echo $! > "$REPORTS/$name.pid"
    ;;
wait)
    name=$1
    echo "== $name: waiting for the background lane"
    while [ ! -e "$REPORTS/$name.t1" ]; do sleep 1; done
    rm -f "$REPORTS/$name.pid"
    cat "$REPORTS/$name.log"
    rc=$(cat "$REPORTS/$name.rc") title=$(cat "$REPORTS/$name.title")
    t0=$(cat "$REPORTS/$name.t0") t1=$(cat "$REPORTS/$name.t1")
    rm -f "$REPORTS/$name.rc"  # waited for: check_background no longer reports it
    # a lane of several steps recorded each of them; a lane of one command is one step
    if ! [ -e "$REPORTS/$name.steps" ]; then
        record "$name" "$title" "$t0" "$t1" "$rc" background "$(child_cpu "$REPORTS/$name.times")"
    fi
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
