# shellcheck shell=sh
# The harness of every vm-test guest script (vm/scenarios.sh, vm/glass.sh, vm/keypad.sh,
# vm/pi3/scenarios.sh, vm/systemd/scenarios.sh), sourced before anything else. POSIX sh: the
# busybox and pi3 guests run it with busybox sh, the systemd guest with dash.
#
# Results. A scenario opens with `begin NAME WHAT` and ends with exactly one of `pass NAME TEXT`,
# `fail NAME TEXT` or `skip NAME TEXT` per id it reports; each prints one line on the console,
#     RESULT <id> <pass|fail|skip> <seconds> <reason>
# where <id> is $ID_PREFIX<NAME>$ID_SUFFIX (e.g. arm64-2-plain, systemd-5, pi3-glass), <seconds>
# the time since the last `begin` (a scenario that reports several ids, such as keypad-1..5,
# gives each the time since its one begin), <reason> one line: what was seen. A skip means only
# that the guest lacks something the scenario needs, and names it; a behaviour of the program is
# never skipped. scripts/vm-test collects the RESULT lines of every guest into
# .cache/vm/results.tsv and counts them. `begin` prints
#     --- SCENARIO <id> BEGIN: <what>[$BEGIN_NOTE]
# before the scenario's own output; vm-test shows the console from there to a failed id's RESULT.
# `failures` counts the fails: a script ends with `exit "$failures"`.
#
# Variables read: ID_PREFIX, ID_SUFFIX, BEGIN_NOTE (default empty), TOLERANCE (the default of
# `within`, 0.050 s), WAIT_POLL (the poll interval of wait_until, 0.05 s), RUN_PID (stop_run).
# shellcheck disable=SC2034 # failures and RUN_STATUS are the sourcing script's

ID_PREFIX=${ID_PREFIX:-}
ID_SUFFIX=${ID_SUFFIX:-}
BEGIN_NOTE=${BEGIN_NOTE:-}
TOLERANCE=${TOLERANCE:-0.050}
WAIT_POLL=${WAIT_POLL:-0.05}
failures=0
SCENARIO_BEGUN=

# --- time ----------------------------------------------------------------------------------------

# now: seconds since boot (CLOCK_BOOTTIME through /proc/uptime; the program's log uses
# CLOCK_MONOTONIC, equal to it while the guest does not suspend).
now() { cut -d' ' -f1 /proc/uptime; }
# difference A B: B - A in seconds, three decimals.
difference() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# within A B EXPECTED [TOLERANCE]: B - A is EXPECTED within TOLERANCE seconds (default $TOLERANCE).
within() {
    [ -n "$1" ] && [ -n "$2" ] &&
        awk -v a="$1" -v b="$2" -v e="$3" -v t="${4:-$TOLERANCE}" 'BEGIN { d = b - a - e; exit !(d <= t && -d <= t) }'
}
# later A B: B is at or after A. below A B LIMIT: B - A < LIMIT.
later() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(b >= a) }'; }
below() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" -v l="$3" 'BEGIN { exit !(b - a < l) }'; }

# wait_until SECONDS COMMAND...: runs COMMAND every WAIT_POLL seconds until it succeeds; false
# when it has not within SECONDS.
wait_until() {
    limit=$(awk -v now="$(now)" -v s="$1" 'BEGIN { print now + s }')
    shift
    while ! "$@"; do
        if awk -v now="$(now)" -v limit="$limit" 'BEGIN { exit !(now > limit) }'; then return 1; fi
        sleep "$WAIT_POLL"
    done
}

# --- results -------------------------------------------------------------------------------------

begin() {
    SCENARIO_BEGUN=$(now)
    echo
    echo "--- SCENARIO $ID_PREFIX$1$ID_SUFFIX BEGIN: $2$BEGIN_NOTE"
}
# elapsed: seconds since the last begin (0.00 before any).
elapsed() { awk -v a="${SCENARIO_BEGUN:-0}" -v b="$(now)" 'BEGIN { printf "%.2f", (a > 0 ? b - a : 0) }'; }
# result NAME pass|fail|skip TEXT: the RESULT line (TEXT joined onto one line).
result() {
    echo "RESULT $ID_PREFIX$1$ID_SUFFIX $2 $(elapsed) $(printf '%s' "$3" | tr '\t\n\r' '   ')"
}
pass() { result "$1" pass "$2"; }
fail() { result "$1" fail "$2"; failures=$((failures + 1)); }
skip() { result "$1" skip "$2"; }

# --- processes -----------------------------------------------------------------------------------

running() { kill -0 "$1" 2>/dev/null; }
not_running() { ! kill -0 "$1" 2>/dev/null; }
exists() { [ -e "$1" ]; }
absent() { [ ! -e "$1" ]; }

# stop_run: SIGTERM to $RUN_PID, SIGKILL after 5 s; its exit status in $RUN_STATUS.
stop_run() {
    kill -TERM "$RUN_PID" 2>/dev/null
    if ! wait_until 5 not_running "$RUN_PID"; then
        echo "run did not stop within 5 s of SIGTERM: SIGKILL"
        kill -KILL "$RUN_PID" 2>/dev/null
    fi
    wait "$RUN_PID"
    RUN_STATUS=$?
}
# run_check OUT ARGS...: `$BIN check ARGS` with its output in OUT; the command line with its exit
# status, then the output, shown; the exit status in CHECK_STATUS.
run_check() {
    check_out=$1
    shift
    "$BIN" check "$@" >"$check_out" 2>&1
    CHECK_STATUS=$?
    echo "\$ resend-button check $* -> $CHECK_STATUS"
    cat "$check_out"
}
# run_not_up LOG REASON ID...: for a run that did not come up: it stopped (stop_run), its LOG
# shown, and every ID failed with REASON.
run_not_up() {
    not_up_log=$1
    not_up_reason=$2
    shift 2
    stop_run
    show_log "$not_up_log"
    for not_up_id; do fail "$not_up_id" "$not_up_reason"; done
}

# --- the program's event log ---------------------------------------------------------------------
# One line per event: `<CLOCK_MONOTONIC seconds> <event words> [key=value ...]`, e.g.
# `12.345 press accepted`, `12.345 countdown started seconds=3`.

# count LOG WORDS: how many lines of LOG have the event WORDS.
count() { grep -c "^[0-9.]* $2\( \|\$\)" "$1"; }
# has LOG WORDS: LOG has a line with the event WORDS.
has() { [ "$(count "$1" "$2")" -gt 0 ]; }
# line_of LOG WORDS: LOG's first line with the event WORDS (empty when none).
line_of() { grep -m 1 "^[0-9.]* $2\( \|\$\)" "$1"; }
# stamp LOG WORDS: the time of that line (empty when none).
stamp() { line_of "$1" "$2" | cut -d' ' -f1; }
# field LOG WORDS KEY: the value of KEY on that line.
field() { line_of "$1" "$2" | tr ' ' '\n' | sed -n "s/^$3=//p"; }
show_log() { echo "event log:"; sed 's/^/    /' "$1"; }

# --- the uinput keypad (vm/uinput-keypad.c) ------------------------------------------------------
# uinput-keypad reads commands from a fifo this shell keeps open on fd 3 and answers each with a
# line in KP_OUT; kp_plug links KP_DEVICE to its /dev/input/eventN as udev's by-id rule would (the
# busybox guests have no udev).

KP_OUT=/tmp/uinput-keypad.out
KP_DEVICE=/dev/input/by-id/usb-vmtest_keypad-event-kbd
kp_start() {
    rm -f /tmp/kp.fifo "$KP_OUT"
    mkfifo /tmp/kp.fifo
    uinput-keypad </tmp/kp.fifo >"$KP_OUT" 2>&1 &
    KP_PID=$!
    exec 3>/tmp/kp.fifo
}
kp() { echo "$*" >&3; }
kp_stop() { kp quit; exec 3>&-; wait "$KP_PID" 2>/dev/null; rm -f "$KP_DEVICE"; }
# kp_answers PATTERN: answer lines so far (0 before uinput-keypad has made its output file).
kp_answers() { n=$(grep -c "$1" "$KP_OUT" 2>/dev/null); echo "${n:-0}"; }
kp_answered() { [ "$(kp_answers "$1")" -gt "$2" ]; }
# kp_do ANSWER COMMAND...: sends the command and waits (10 s) for one more answer line ANSWER.
kp_do() {
    answer=$1
    shift
    before=$(kp_answers "$answer")
    kp "$@"
    wait_until 10 kp_answered "$answer" "$before"
}
# kp_plug: plugs the keypad ($KP_EVENT: its eventN) and makes the by-id link.
kp_plug() {
    kp_do plugged plug || return 1
    KP_EVENT=$(grep plugged "$KP_OUT" | tail -n 1 | cut -d' ' -f4)
    wait_until 2 exists "/dev/input/$KP_EVENT" || return 1
    mkdir -p /dev/input/by-id
    ln -sf "../$KP_EVENT" "$KP_DEVICE"
}
kp_unplug() { rm -f "$KP_DEVICE"; kp_do unplugged unplug; }
# run_holds_keypad_device: $RUN_PID has /dev/input/$KP_EVENT open.
run_holds_keypad_device() {
    for fd in /proc/"$RUN_PID"/fd/*; do
        [ "$(readlink "$fd" 2>/dev/null)" = "/dev/input/$KP_EVENT" ] && return 0
    done
    return 1
}
