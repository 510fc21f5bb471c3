# shellcheck shell=sh
# The keypad scenarios of vm-test (issue 14), run once per busybox guest by /init (ADAPTER=plain:
# the glass is decoded from i2c-plain's record) against the real binary on simulated hardware:
# - a 4x3 key matrix: our gpio-keymatrix module (vm/module/gpio-keymatrix.c), lines KP_R0..KP_R3
#   (rows) and KP_C0..KP_C2 (columns), keys pressed through debugfs; column levels follow the
#   driven rows and the pressed keys inside the chip, so a real scanner sees real wiring;
# - an evdev keypad: uinput-keypad (vm/uinput-keypad.c) through Debian's uinput module, with a
#   /dev/input/by-id link made by this script as udev would (the busybox guest has no udev);
# - the output line ("door strike"): a gpio-sim line "door" on a chip of its own.
# Scenarios (each ends with a RESULT line for keypad-<n>, vm/lib.sh):
#   keypad-hw  the hardware alone, with the libgpiod tools and uinput-keypad (no resend-button)
#   keypad-1   matrix: send, the code typed on the matrix, `#`, accepted; the door pulses; the
#              glass shows the masked field and "Code accepted"; the code's digits not in the log
#   keypad-2   matrix: a wrong code shows "Wrong, 2 left", the door stays shut
#   keypad-3   matrix: three keys on a rectangle (no diodes): the ambiguous scan is rejected
#   keypad-4   matrix: rows only driven low or left open, never two against each other (the
#              module's record)
#   keypad-5   matrix: idle with a keypad: no wake-ups in 3 s (context switches), no scanning
#   keypad-pulldown-rows  matrix on the Pi's reset pulls (rows 3 and 4 on pull-down pins): the
#              rows are held with a pull-up, no phantom key, a code with an 8 accepted
#   keypad-6   evdev: the same flow through uinput, accepted, the door pulses; a reader without
#              the grab gets no key while run holds the device (EVIOCGRAB: no console sees keys)
#   keypad-7   evdev: the keypad unplugged (with * held) and plugged back mid-entry; the held key
#              is released, the code completes
#   keypad-8   evdev: idle, no wake-ups in 3 s
#   keypad-9   evdev: run stalled (SIGSTOP) while the keypad overflows its event buffer
#              (SYN_DROPPED): a lost release of a held * and a lost press come out right
# The exit status is the number of failed scenarios.
# shellcheck disable=SC2317 # predicates are called through wait_until
# shellcheck source=hardware.sh source-path=SCRIPTDIR disable=SC1091 # /vm/hardware.sh in the guest
. /vm/hardware.sh
# shellcheck source=lib.sh source-path=SCRIPTDIR disable=SC1091 # /vm/lib.sh in the guest
. /vm/lib.sh
BIN=/usr/bin/resend-button
BUS=$(lcd_bus)
CODE=2468
DOOR_CONFIG=/sys/kernel/config/gpio-sim/keypad

file_has() { grep -q "$2" "$1" 2>/dev/null; }

# --- the hardware ------------------------------------------------------------------------------

door_value() { cat "/sys/devices/platform/$(cat "$DOOR_CONFIG/dev_name")/$(cat "$DOOR_CONFIG/bank0/chip_name")/sim_gpio0/value"; }
door_is() { [ "$(door_value)" = "$1" ]; }

setup_hardware() {
    [ -f /lib/modules/vm/gpio-keymatrix.ko ] || { echo "no gpio-keymatrix.ko in the guest"; return 1; }
    insmod /lib/modules/vm/gpio-keymatrix.ko || return 1
    [ -n "$(keymatrix_chip)" ] || return 1
    mkdir "$DOOR_CONFIG" "$DOOR_CONFIG/bank0" "$DOOR_CONFIG/bank0/line0" || return 1
    echo 1 > "$DOOR_CONFIG/bank0/num_lines" && echo door > "$DOOR_CONFIG/bank0/line0/name" &&
        echo 1 > "$DOOR_CONFIG/live"
}
HAVE_UINPUT=0
setup_uinput() {
    for module in evdev uinput; do
        [ -f "/lib/modules/vm/$module.ko" ] || { echo "no $module.ko in the guest (kernel cache made before the keypad scenarios)"; return 1; }
        insmod "/lib/modules/vm/$module.ko" || return 1
    done
    wait_until 2 exists /dev/uinput && HAVE_UINPUT=1
}

# --- keypad-hw -----------------------------------------------------------------------------------
scenario_hw() {
    begin keypad-hw "the simulated keypads alone: gpio-keymatrix levels, ghost, diodes, shorts, edges; uinput-keypad plug, type, unplug"
    chip=$(keymatrix_chip)
    gpioinfo "$chip"
    problems=""
    note() { problems="$problems; $*"; echo "PROBLEM: $*"; }
    names=$(gpioinfo "$chip" | sed -n 's/.*"\(KP_[RC][0-9]\)".*/\1/p' | tr '\n' ' ')
    [ "$names" = "KP_R0 KP_R1 KP_R2 KP_R3 KP_C0 KP_C1 KP_C2 " ] || note "line names '$names'"
    [ "$(gpiofind KP_C2)" = "$chip 6" ] || note "gpiofind KP_C2 says '$(gpiofind KP_C2)'"
    km_record_clear
    # Row 1 driven low (open drain), the others not requested: the columns follow the keys.
    gpioset --drive=open-drain --mode=signal "$chip" 1=0 &
    setter=$!
    sleep 0.3
    idle=$(gpioget --bias=pull-up "$chip" 4 5 6)
    km_key press 1 2
    key6=$(gpioget --bias=pull-up "$chip" 4 5 6)
    echo "key (1,2) pressed, row 1 low: $KM/lines says"; sed 's/^/    /' "$KM/lines"
    km_key release 1 2
    km_key press 0 2
    other_row=$(gpioget --bias=pull-up "$chip" 4 5 6)
    km_release_all
    echo "row 1 low: no key '$idle', key (1,2) '$key6', key (0,2) '$other_row'"
    [ "$idle" = "1 1 1" ] || note "no key pressed, the columns read '$idle', not '1 1 1'"
    [ "$key6" = "1 1 0" ] || note "key (1,2) with row 1 low: the columns read '$key6', not '1 1 0'"
    [ "$other_row" = "1 1 1" ] || note "key (0,2) with only row 1 low: the columns read '$other_row', not '1 1 1'"
    # Ghost: keys (1,0), (0,0), (0,1) on three corners of a rectangle; without diodes C1 reads low.
    km_key press 1 0; km_key press 0 0; km_key press 0 1
    ghost=$(gpioget --bias=pull-up "$chip" 4 5 6)
    echo 1 > /sys/module/gpio_keymatrix/parameters/diodes
    with_diodes=$(gpioget --bias=pull-up "$chip" 4 5 6)
    echo 0 > /sys/module/gpio_keymatrix/parameters/diodes
    km_release_all
    echo "rectangle (1,0) (0,0) (0,1) with row 1 low: '$ghost' without diodes, '$with_diodes' with"
    [ "$ghost" = "0 0 1" ] || note "the rectangle read '$ghost', not the ghost '0 0 1'"
    [ "$with_diodes" = "0 1 1" ] || note "the rectangle with diodes read '$with_diodes', not '0 1 1'"
    # An edge on a column when a key joins it to the driven row (irq_sim through the chip).
    gpiomon --num-events=1 --falling-edge --bias=pull-up "$chip" 4 >/tmp/km-mon.out 2>&1 &
    monitor=$!
    sleep 0.3
    km_key press 1 0
    wait_until 2 not_running "$monitor" || { note "gpiomon saw no falling edge on KP_C0 within 2 s"; kill "$monitor"; }
    km_release_all
    echo "gpiomon: $(cat /tmp/km-mon.out)"
    grep -q 'FALLING EDGE' /tmp/km-mon.out || note "gpiomon printed no FALLING EDGE"
    kill "$setter"; wait "$setter"
    # The short detector: rows 0 and 1 push-pull high and low, joined through keys (0,0), (1,0).
    shorts_before=$(km_shorts)
    gpioset --mode=signal "$chip" 0=1 1=0 &
    setter=$!
    sleep 0.3
    km_key press 0 0; km_key press 1 0
    shorts_push_pull=$(km_shorts)
    km_release_all
    kill "$setter"; wait "$setter"
    # The same with open drain: row 0 "high" is not driven, no short, column 0 low through row 1.
    gpioset --drive=open-drain --mode=signal "$chip" 0=1 1=0 &
    setter=$!
    sleep 0.3
    km_key press 0 0; km_key press 1 0
    shorts_open_drain=$(km_shorts)
    column_open_drain=$(gpioget --bias=pull-up "$chip" 4)
    km_release_all
    kill "$setter"; wait "$setter"
    echo "shorts: $shorts_before before, $shorts_push_pull after push-pull rows, $shorts_open_drain after open-drain rows (column 0: $column_open_drain)"
    echo "the module's record:"; km_record | sed 's/^/    /'
    [ "$shorts_push_pull" = $((shorts_before + 1)) ] || note "push-pull rows 0 (high) and 1 (low) joined by two keys: $((shorts_push_pull - shorts_before)) shorts counted, not 1"
    km_record | grep -q ' short KP_R0 KP_R1 KP_C0$' || note "the record has no 'short KP_R0 KP_R1 KP_C0'"
    [ "$shorts_open_drain" = "$shorts_push_pull" ] || note "open-drain rows counted a short"
    [ "$column_open_drain" = 0 ] || note "open-drain rows: column 0 read $column_open_drain, not 0"

    # uinput: plug, a reader sees the keys, unplug removes the node, plug brings it back.
    if [ "$HAVE_UINPUT" = 1 ]; then
        kp_start
        if kp_plug; then
            first=$KP_EVENT
            uinput-keypad --listen "/dev/input/$KP_EVENT" 1500 >/tmp/kp-listen.out 2>&1 &
            listener=$!
            sleep 0.3
            kp_do typed type "12#" 50 30
            wait "$listener"
            kp_unplug
            gone=no
            wait_until 2 absent "/dev/input/$first" && gone=yes
            kp_plug || note "the second plug failed"
            echo "uinput-keypad: $(tr '\n' ';' <"$KP_OUT"); the reader: $(cat /tmp/kp-listen.out); /dev/input/$first gone after unplug: $gone"
            [ "$(cat /tmp/kp-listen.out)" = "events=6" ] || note "a reader of /dev/input/$first got '$(cat /tmp/kp-listen.out)' for 3 keys, not events=6"
            [ "$gone" = yes ] || note "/dev/input/$first still there 2 s after unplug"
            [ -e "$KP_DEVICE" ] || note "no $KP_DEVICE after the second plug"
        else
            note "uinput-keypad could not plug: $(cat "$KP_OUT")"
        fi
        kp_stop
    else
        note "no uinput in the guest"
    fi
    if [ -n "$problems" ]; then
        fail keypad-hw "${problems#; }"
    else
        pass keypad-hw "7 named lines; columns follow rows and keys; ghost without diodes, none with; falling edge seen by gpiomon; push-pull rows against each other recorded as a short, open-drain rows not; uinput keypad plugs, types (6 key events to a reader), unplugs and plugs back"
    fi
}

# --- run with a keypad ---------------------------------------------------------------------------

VERIFY_SCRIPT=/tmp/verify.sh
VERIFY_CALLS=/tmp/verify.calls
write_verify() {
    # Reads the code from standard input, accepts one code; records only the length it got.
    cat >"$VERIFY_SCRIPT" <<EOF
#!/bin/sh
read -r code
echo "\${#code}" >> $VERIFY_CALLS
[ "\$code" = "$CODE" ]
EOF
    rm -f "$VERIFY_CALLS"
}

# write_keypad_config FILE BACKEND STATE
write_keypad_config() {
    if [ "$2" = matrix ]; then
        wiring='backend: "matrix", rows: ["KP_R0", "KP_R1", "KP_R2", "KP_R3"], columns: ["KP_C0", "KP_C1", "KP_C2"],'
    else
        wiring="backend: \"evdev\", device: \"$KP_DEVICE\","
    fi
    cat >"$1" <<EOF
// vm-test: the simulated hardware with a keypad
{
  button: { line: "button", debounceMs: 30 },
  led: { line: "led" },
  lcd: { bus: $BUS, address: $LCD_ADDRESS },
  cooldown: { seconds: 30 },
  send: { command: ["/bin/sh", "-c", "exit 0"], timeoutSeconds: 2 },
  stateFile: "$3",
  keypad: {
    enabled: true,
    // the guest's file systems are all in RAM (initramfs, tmpfs): accepted here
    allowForgetfulState: true,
    $wiring
    entry: { minLength: 4, maxLength: 6, successSeconds: 2, timeoutSeconds: 30 },
    verify: { command: ["/bin/sh", "$VERIFY_SCRIPT"], timeoutSeconds: 5 },
    output: { line: "door", pulseMs: 1000 },
  },
}
EOF
}

line_used() { gpioinfo | grep "\"$1\"" | grep -q '\[used'; }
led_is() { [ "$(cat "$(sim_line_dir "$LED_OFFSET")/value")" = "$1" ]; }
run_ready() { line_used button && line_used led && led_is 1; }
# run_holds_keypad BACKEND: the program requested the matrix lines or opened the input device.
run_holds_keypad() {
    if [ "$1" = matrix ]; then
        line_used KP_R0 && line_used KP_C0
    else
        run_holds_keypad_device
    fi
}

# start_keypad_run LOG CONFIG BACKEND: run in the background ($RUN_PID); 0 when it came up and
# holds the keypad; otherwise 1 and NOT_UP says what it lacked.
start_keypad_run() {
    "$BIN" run --config "$2" >"$1" 2>&1 &
    RUN_PID=$!
    if ! wait_until 10 run_ready; then
        NOT_UP="run --config with the $3 keypad did not come up (button and LED held, LED 1) within 10 s"
        return 1
    fi
    wait_until 2 run_holds_keypad "$3" && return 0
    what="no KP_ line requested"
    [ "$3" = evdev ] && what="$KP_DEVICE not open"
    NOT_UP="run --config came up without the $3 keypad ($what 2 s after it was ready)"
    return 1
}
# prepare_keypad_run NAME BACKEND: config=/tmp/keypad-NAME.json5 for BACKEND with a fresh state
# file /tmp/keypad-NAME.state, log=/tmp/keypad-NAME.log; the verify script written, the LCD's
# record cleared.
prepare_keypad_run() {
    config=/tmp/keypad-$1.json5
    log=/tmp/keypad-$1.log
    rm -f "/tmp/keypad-$1.state"
    write_verify
    write_keypad_config "$config" "$2" "/tmp/keypad-$1.state"
    record_clear
}

# start_evdev_run NAME ID...: prepare_keypad_run NAME evdev, the uinput keypad plugged and run up
# with it (start_keypad_run). 0 when both are up; otherwise everything started is stopped, every
# ID fails with the reason, and 1. Without uinput every ID is skipped, and 1.
start_evdev_run() {
    evdev_name=$1
    shift
    if [ "$HAVE_UINPUT" != 1 ]; then
        for evdev_id; do skip "$evdev_id" "the guest has no uinput (uinput.ko or evdev.ko missing from its kernel modules)"; done
        return 1
    fi
    prepare_keypad_run "$evdev_name" evdev
    kp_start
    if ! kp_plug; then
        kp_stop
        for evdev_id; do fail "$evdev_id" "uinput-keypad could not plug: $(cat "$KP_OUT")"; done
        return 1
    fi
    if ! start_keypad_run "$log" "$config" evdev; then
        stop_run
        kp_stop
        show_log "$log"
        for evdev_id; do fail "$evdev_id" "$NOT_UP (exit $RUN_STATUS)"; done
        return 1
    fi
}
# glass_field NAME: the glass decoded now into /tmp/keypad-NAME.glass1; prints the code field it
# shows last.
glass_field() { decode "/tmp/keypad-$1.glass1"; last_field "/tmp/keypad-$1.glass1"; }

# finish_evdev_run NAME KEYS: KEYS typed on the uinput keypad, the door's pulse awaited, run and
# uinput-keypad stopped; the log, the glass (/tmp/keypad-NAME.glass) and uinput-keypad's answers
# shown.
finish_evdev_run() {
    kp_do typed type "$2" 150 50
    await_door_pulse "$log"
    stop_run
    kp_stop
    show_log "$log"
    show_glass "/tmp/keypad-$1.glass"
    echo "uinput-keypad: $(tr '\n' ';' <"$KP_OUT")"
}

press_button() {
    pull=$(sim_line_dir "$BUTTON_OFFSET")/pull
    echo pull-down > "$pull"; sleep 0.2; echo pull-up > "$pull"
}
# switches PID: voluntary + involuntary context switches of all its threads.
switches() {
    cat /proc/"$1"/task/*/status 2>/dev/null |
        awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}
# idle_switches PID SECONDS: the context switches of PID during SECONDS of nothing happening.
idle_switches() {
    a=$(switches "$1")
    sleep "$2"
    b=$(switches "$1")
    echo $((b - a))
}
# decode LOG: the glass from the plain adapter's record, one line per transaction, into LOG.
decode() { record_dump | hd44780-decode --columns 16 --rows 2 --address "$LCD_ADDRESS" >"$1" 2>&1; }
# show_glass DECODED: decodes into DECODED and prints the rows of the transactions that changed it.
show_glass() {
    decode "$1"
    echo "the glass (transactions that changed it):"
    sed 's/^[^|]*/    /' "$1" | uniq
}
# glass_has DECODED TEXT: a transaction showed TEXT on some row.
glass_has() { grep -qF "|$2" "$1"; }
# last_field DECODED: the last "Code: ..." row the glass showed.
last_field() { grep -o '|Code: [^|]*' "$1" | tail -n 1 | cut -c2- | sed 's/ *$//'; }
# rows_against_each_other: from the module's record, the moments a row was driven high while
# another was driven low (two outputs against each other as soon as two keys share a column).
rows_against_each_other() {
    km_record | awk '
        $2 == "drive" && $3 ~ /^KP_R/ { drive[$3] = $4
            low = 0; high = 0
            for (r in drive) { if (drive[r] == "low") low++; if (drive[r] == "high") high++ }
            if (low && high) n++ }
        $2 == "short" { n++ }
        END { print n + 0 }'
}
entry_open() { has "$1" "entry opened"; }
# The pulse's end: run logs `output inactive` once at start (driven inactive), again after it.
pulse_end() { grep "^[0-9.]* output inactive\( \|\$\)" "$1" | sed -n 2p | cut -d' ' -f1; }
pulse_ended() { [ -n "$(pulse_end "$1")" ]; }
# await_door_pulse LOG: waits for the door to open (5 s) and the pulse to end (3 s); sets
# DOOR_SEEN (1: the line read 1) and DOOR_AFTER (its level after the pulse).
await_door_pulse() {
    DOOR_SEEN=0
    wait_until 5 door_is 1 && DOOR_SEEN=1
    wait_until 3 pulse_ended "$1"
    DOOR_AFTER=$(door_value)
}
door_pulse_check() { # door_pulse_check LOG: sets DOOR_OK and DOOR_TEXT
    active=$(stamp "$1" "output active")
    inactive=$(pulse_end "$1")
    DOOR_TEXT="output active -> inactive: $(difference "$active" "$inactive") s; door level seen 1: $DOOR_SEEN, 0 after: $DOOR_AFTER"
    DOOR_OK=0
    if within "$active" "$inactive" 1.0 "$TOLERANCE" && [ "$DOOR_SEEN" = 1 ] && [ "$DOOR_AFTER" = 0 ]; then DOOR_OK=1; fi
}

# --- keypad-1..5: the matrix ---------------------------------------------------------------------
scenario_matrix() {
    begin keypad-1 "matrix: send, code on the matrix, #, accepted; door pulse; glass; (keypad-2 wrong code, keypad-3 ghost, keypad-4 rows, keypad-5 idle)"
    prepare_keypad_run matrix matrix
    sed 's/^/    /' "$config"
    km_record_clear
    shorts_before=$(km_shorts)
    if ! start_keypad_run "$log" "$config" matrix; then
        stop_run
        show_log "$log"
        for n in 1 2 3 4 5; do fail "keypad-$n" "$NOT_UP (exit $RUN_STATUS)"; done
        return
    fi
    # keypad-5: idle, before anything happens.
    sleep 1
    km_record_clear
    idle=$(idle_switches "$RUN_PID" 3)
    idle_drives=$(km_record | grep -c ' drive ')
    echo "idle 3 s: $idle context switches, $idle_drives row/column drive changes"

    press_button
    wait_until 5 entry_open "$log"
    # keypad-3: 1 and 2 held, then 4: three corners of a rectangle (the 5 would be a ghost).
    km_key press 0 0; sleep 0.15; km_key press 0 1; sleep 0.15; km_key press 1 0; sleep 0.3
    km_release_all
    sleep 0.3
    ghost_field=$(glass_field matrix)
    echo "after 1, 2 and 4 held together: the field shows '$ghost_field'"
    matrix_type "**"
    # keypad-2: a wrong code.
    matrix_type "1357#"
    wait_until 5 has "$log" "code rejected"
    sleep 0.3
    door_after_wrong=$(door_value)
    # keypad-1: the code.
    matrix_type "$CODE#"
    await_door_pulse "$log"
    sleep 2.2
    stop_run
    show_log "$log"
    show_glass /tmp/keypad-matrix.glass
    echo "the verify command got codes of length: $(tr '\n' ' ' <"$VERIFY_CALLS" 2>/dev/null)"
    against=$(rows_against_each_other)
    shorts_after=$(km_shorts)
    scans=$(km_record | grep -c ' drive KP_R')
    rows_high=$(km_record | grep -c ' drive KP_R[0-9]* high$')
    echo "module record: $scans row drive changes, $against moments with rows against each other, shorts $shorts_before -> $shorts_after"
    door_pulse_check "$log"
    echo "$DOOR_TEXT"

    # keypad-1
    if ! grep -q ' verify finished result=accepted exit=0' "$log"; then
        fail keypad-1 "no 'verify finished result=accepted exit=0': $(grep 'verify finished' "$log" | tr '\n' ';')"
    elif ! grep -q ' code submitted length=4' "$log"; then
        fail keypad-1 "no 'code submitted length=4'"
    elif grep -q "$CODE" "$log"; then
        fail keypad-1 "the code's digits are in the log"
    elif [ "$DOOR_OK" != 1 ]; then
        fail keypad-1 "the door did not pulse 1.0 s: $DOOR_TEXT"
    elif ! glass_has /tmp/keypad-matrix.glass "Code: ****__"; then
        fail keypad-1 "the glass never showed the masked field 'Code: ****__'"
    elif ! glass_has /tmp/keypad-matrix.glass "Code accepted"; then
        fail keypad-1 "the glass never showed 'Code accepted'"
    elif [ "$RUN_STATUS" != 0 ]; then
        fail keypad-1 "run exited with $RUN_STATUS after SIGTERM"
    else
        pass keypad-1 "typed on the matrix: code submitted length=4, verify accepted, door 1 for $(difference "$(stamp "$log" "output active")" "$(pulse_end "$log")") s; glass 'Code: ****__' then 'Code accepted'; no digit in the log"
    fi
    # keypad-2
    if ! grep -q ' code rejected attempts_left=2' "$log"; then
        fail keypad-2 "no 'code rejected attempts_left=2' after a wrong code"
    elif ! glass_has /tmp/keypad-matrix.glass "Wrong, 2 left"; then
        fail keypad-2 "the glass never showed 'Wrong, 2 left'"
    elif [ "$door_after_wrong" != 0 ]; then
        fail keypad-2 "the door read $door_after_wrong after a wrong code"
    else
        pass keypad-2 "a wrong code: 'code rejected attempts_left=2', 'Wrong, 2 left' on the glass, the door stayed 0"
    fi
    # keypad-3
    if [ "$ghost_field" != "Code: **____" ]; then
        fail keypad-3 "after 1, 2, then 4 held (a rectangle without diodes) the field shows '$ghost_field', not 'Code: **____' (1 and 2 only)"
    else
        pass keypad-3 "1 and 2 then 4 held together: the ambiguous scans rejected, only 1 and 2 entered"
    fi
    # keypad-4
    if [ "$scans" -lt 4 ]; then
        fail keypad-4 "only $scans row drive changes recorded: the matrix was not scanned"
    elif [ "$against" != 0 ] || [ "$shorts_after" != "$shorts_before" ]; then
        fail keypad-4 "rows driven against each other $against times, $((shorts_after - shorts_before)) shorts"
    elif [ "$rows_high" != 0 ]; then
        fail keypad-4 "a row was driven high $rows_high times (push-pull): released rows must be open (open drain or input)"
    else
        pass keypad-4 "$scans row drive changes, each row only driven low or left open (never high), so never against another; no short"
    fi
    # keypad-5
    if [ "$idle" != 0 ] || [ "$idle_drives" != 0 ]; then
        fail keypad-5 "idle 3 s: $idle context switches, $idle_drives drive changes (scanning while idle?)"
    else
        pass keypad-5 "idle 3 s with the matrix keypad: 0 context switches, no row or column changed"
    fi
}

# --- keypad-pulldown-rows: the rows on pull-down pins ---------------------------------------------
# The README's wiring on a Pi: rows GPIO5 and GPIO6 reset to pull-up, rows GPIO13 and GPIO19 and
# the columns GPIO12, GPIO16, GPIO20 to pull-down (BCM2835 ARM Peripherals, the GPIO pull table).
# The Pi has no open-drain pads: a released row is an input that keeps its pad's pull unless the
# request sets a bias. gpio-keymatrix gets those reset pulls through its `pulls` file; a key that
# joins a pulled-up column to a pulled-down released row reads 0 there (undefined on a Pi), so a
# scan sees the key in every row: a phantom key. First the model alone (libgpiod's tools), then
# run with the matrix: the code typed with a key in a pulled-down row (the 8) must be accepted,
# the rows held with a pull-up, and no undefined level recorded while run scans.
PI_PULLS="uudd ddd"
# row_drive_times: from the module's record, how long each row was driven low within a scan (the
# settle wait plus reading the columns), in microseconds: "count min median max".
row_drive_times() {
    km_record | awk '$2 == "drive" && $3 ~ /^KP_R/ {
            if ($4 == "low") { start[$3] = $1 }
            else if ($4 == "none" && start[$3] != "") { d = ($1 - start[$3]) * 1e6; if (d < 2000) printf "%.1f\n", d; start[$3] = "" } }' |
        sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%d %s %s %s", NR, v[1], v[int((NR + 1) / 2)], v[NR]; else print "0 - - -" }'
}
rows_bias() { awk '$1 ~ /^KP_R/ { printf "%s%s", sep, $4; sep = " " }' "$KM/lines"; }
undefined_count() { km_record | grep -c ' undefined '; }
scenario_pulldown_rows() {
    id=keypad-pulldown-rows
    begin "$id" "matrix on the Pi's reset pulls (rows 3 and 4 pull down): no phantom keys; the code with an 8 accepted"
    if ! echo "$PI_PULLS" > "$KM/pulls"; then
        fail "$id" "gpio-keymatrix refused the reset pulls '$PI_PULLS' (a line still requested?)"
        return
    fi
    chip=$(keymatrix_chip)
    # The model: key 8 (row 2, column 1) held, row 0 driven low; row 2 not requested (its reset
    # pull-down), then requested released with a pull-up.
    km_key press 2 1
    gpioset --drive=open-drain --mode=signal "$chip" 0=0 &
    setter=$!
    sleep 0.3
    as_is=$(gpioget --bias=pull-up "$chip" 4 5 6)
    kill "$setter"; wait "$setter"
    gpioset --drive=open-drain --bias=pull-up --mode=signal "$chip" 0=0 2=1 &
    setter=$!
    sleep 0.3
    pulled_up=$(gpioget --bias=pull-up "$chip" 4 5 6)
    kill "$setter"; wait "$setter"
    km_release_all
    echo "key 8 held, row 0 low: columns '$as_is' with row 2 on its reset pull-down, '$pulled_up' with row 2 pulled up"
    # A power cycle: every line back to its reset pull (gpioset's pull-up stayed, as on a Pi).
    echo "$PI_PULLS" > "$KM/pulls"
    echo "reset pulls: $(cat "$KM/pulls")"

    prepare_keypad_run pulls matrix
    km_record_clear
    if ! start_keypad_run "$log" "$config" matrix; then
        stop_run
        show_log "$log"
        fail "$id" "$NOT_UP (exit $RUN_STATUS)"
        echo > "$KM/pulls"
        return
    fi
    held_bias=$(rows_bias)
    echo "run holds the rows: bias $held_bias; $KM/lines:"; sed 's/^/    /' "$KM/lines"
    press_button
    wait_until 5 entry_open "$log"
    matrix_type "$CODE#"
    await_door_pulse "$log"
    undefined=$(undefined_count)
    stop_run
    # shellcheck disable=SC2046 # four numbers
    set -- $(row_drive_times)
    echo "rows driven low within a scan: $1 times, for min $2 us, median $3 us, max $4 us (the settle wait plus reading 3 columns; qemu TCG)"
    show_log "$log"
    show_glass /tmp/keypad-pulls.glass
    echo "the verify command got codes of length: $(tr '\n' ' ' <"$VERIFY_CALLS" 2>/dev/null)"
    echo "undefined levels recorded while run scanned: $undefined"
    km_record | grep ' undefined ' | head -n 5 | sed 's/^/    /'
    door_pulse_check "$log"
    echo "$DOOR_TEXT"
    # The next scenarios: no pulls, as before this one.
    echo > "$KM/pulls"

    if [ "$as_is" != "1 0 1" ] || [ "$pulled_up" != "1 1 1" ]; then
        fail "$id" "the model: key 8 held with row 0 low read '$as_is' (row 2 pulled down; want the phantom '1 0 1') and '$pulled_up' (row 2 pulled up; want '1 1 1')"
    elif ! grep -q ' verify finished result=accepted exit=0' "$log"; then
        fail "$id" "the code was not accepted ($(grep -o 'code submitted length=[0-9]*' "$log" | tr '\n' ' ' | sed 's/ $//'), $(grep -o 'code rejected[^|]*' "$log" | head -n 1)); the field last showed '$(last_field /tmp/keypad-pulls.glass)'; $undefined undefined levels recorded (a key joining a pulled-up column to a pulled-down released row); rows held with bias '$held_bias'"
    elif ! grep -q ' code submitted length=4' "$log"; then
        fail "$id" "no 'code submitted length=4' (phantom keys typed?)"
    elif [ "$held_bias" != "up up up up" ]; then
        fail "$id" "run held the rows with bias '$held_bias', not 'up up up up'"
    elif [ "$undefined" != 0 ]; then
        fail "$id" "$undefined undefined levels recorded while run scanned"
    elif [ "$DOOR_OK" != 1 ]; then
        fail "$id" "the door did not pulse 1.0 s: $DOOR_TEXT"
    elif ! glass_has /tmp/keypad-pulls.glass "Code accepted"; then
        fail "$id" "the glass never showed 'Code accepted'"
    else
        pass "$id" "reset pulls $PI_PULLS (the model reads a phantom '$as_is' on a pulled-down row, '$pulled_up' pulled up); run held the rows with bias '$held_bias', the code with an 8 (row 3, pull-down pin) accepted: code submitted length=4, door pulse, 'Code accepted' on the glass; no undefined level while scanning"
    fi
}
# --- end of keypad-pulldown-rows -------------------------------------------------------------------

# --- keypad-6..8: evdev through uinput -----------------------------------------------------------
scenario_evdev() {
    begin keypad-6 "evdev: the flow through a uinput keypad, grabbed; (keypad-7 unplug and replug mid-entry, keypad-8 idle)"
    start_evdev_run evdev keypad-6 keypad-7 keypad-8 || return
    sleep 1
    idle=$(idle_switches "$RUN_PID" 3)
    echo "idle 3 s: $idle context switches"
    press_button
    wait_until 5 entry_open "$log"
    # A reader without the grab while run holds the device.
    uinput-keypad --listen "/dev/input/$KP_EVENT" 1500 >/tmp/kp-listen.out 2>&1 &
    listener=$!
    sleep 0.2
    kp_do typed type 24 150 50
    wait "$listener"
    grabbed=$(cat /tmp/kp-listen.out)
    # keypad-7: `*` pressed (deleting the 4) and still held when the keypad is unplugged, plugged
    # back 1.5 s later: the unplug must release it, or its hold (holdToClearMs, 1 s) clears the
    # field; then the rest typed.
    kp_do "down" down '*'
    sleep 0.2
    kp_unplug
    sleep 1.5
    kp_plug
    replugged_at=$(grep plugged "$KP_OUT" | tail -n 1 | cut -d' ' -f1)
    wait_until 5 run_holds_keypad evdev
    reopened=$?
    sleep 0.3
    field_after_replug=$(glass_field evdev)
    finish_evdev_run evdev "468#"
    echo "a reader without the grab got: $grabbed; run reopened the device after the replug: $([ "$reopened" = 0 ] && echo yes || echo no) (replugged at $replugged_at); field then: '$field_after_replug'"
    door_pulse_check "$log"
    echo "$DOOR_TEXT"
    if ! grep -q ' verify finished result=accepted exit=0' "$log"; then
        fail keypad-6 "no 'verify finished result=accepted exit=0': $(grep 'verify finished' "$log" | tr '\n' ';')"
    elif grep -q "$CODE" "$log"; then
        fail keypad-6 "the code's digits are in the log"
    elif [ "$DOOR_OK" != 1 ]; then
        fail keypad-6 "the door did not pulse 1.0 s: $DOOR_TEXT"
    elif ! glass_has /tmp/keypad-evdev.glass "Code accepted"; then
        fail keypad-6 "the glass never showed 'Code accepted'"
    elif [ "$grabbed" != "events=0" ]; then
        fail keypad-6 "another reader of the device got '$grabbed' while run held it (no EVIOCGRAB?)"
    elif [ "$RUN_STATUS" != 0 ]; then
        fail keypad-6 "run exited with $RUN_STATUS after SIGTERM"
    else
        pass keypad-6 "typed through uinput: verify accepted, door 1 for $(difference "$(stamp "$log" "output active")" "$(pulse_end "$log")") s, 'Code accepted' on the glass; another reader got no key (grabbed)"
    fi
    if [ "$reopened" != 0 ]; then
        fail keypad-7 "run did not open the keypad again within 5 s of the replug"
    elif ! has "$log" "keypad offline" || ! has "$log" "keypad online"; then
        fail keypad-7 "no 'keypad offline' and 'keypad online' in the log around the unplug"
    elif [ "$field_after_replug" != "Code: *_____" ]; then
        fail keypad-7 "after the replug the field shows '$field_after_replug', not 'Code: *_____' (2 and 4 typed, * pressed and held at the unplug: released by it, so no hold-to-clear)"
    elif ! grep -q ' code submitted length=4' "$log"; then
        fail keypad-7 "no 'code submitted length=4' (2 digits before the unplug, 2 after)"
    else
        pass keypad-7 "unplugged after 2 digits: 'keypad offline', plugged back: 'keypad online' and the device open again $(difference "$replugged_at" "$(stamp "$log" "keypad online")") s after the plug, a * held at the unplug released (the field kept at 'Code: *_____', no hold-to-clear), the code completed and accepted"
    fi
    if [ "$idle" != 0 ]; then
        fail keypad-8 "idle 3 s with the evdev keypad: $idle context switches, not 0"
    else
        pass keypad-8 "idle 3 s with the evdev keypad: 0 context switches"
    fi
}

# --- keypad-9: evdev, events dropped while run stalls (SYN_DROPPED) ------------------------------
# Its own run. `24` typed, `*` pressed (deleting the 4), then run stopped (SIGSTOP) 0.2 s later.
# While it is stopped, queued at once through the fifo: `*` released, 4 pressed, a flood of 400
# events of an ignored key (KEY_X; the reader's buffer holds 64), 4 released 0.2 s later, 6
# typed. The kernel drops the oldest: the release of `*` and the press of 4. Then SIGCONT, 1.5 s
# after `*` went down (its hold-to-clear is 1 s). Right: `keypad events lost`, the field shows
# `Code: ***___` (2, 4, 6: the `*` released at the drop, not held on until it cleared the field;
# the 4 pressed at the drop and released after it), and `8#` completes the code: accepted, the
# door pulses. Without the repair the held `*` clears the field and the 4 is lost: no code.
scenario_evdev_drop() {
    begin keypad-9 "evdev: run stalled while the keypad overflows its buffer (SYN_DROPPED): a lost release and a lost press made up"
    start_evdev_run drop keypad-9 || return
    press_button
    wait_until 5 entry_open "$log"
    kp_do typed type 24 150 50
    sleep 0.3
    kp_do "down" down '*'
    sleep 0.2
    kill -STOP "$RUN_PID"
    stopped_at=$(now)
    flooded_before=$(kp_answers flooded)
    typed_before=$(kp_answers typed)
    kp up '*'
    kp down 4
    kp flood 100
    kp sleep 200
    kp up 4
    kp sleep 150
    kp type 6
    wait_until 10 kp_answered typed "$typed_before"
    sleep 1
    kill -CONT "$RUN_PID"
    continued_at=$(now)
    sleep 0.6
    field_after_stall=$(glass_field drop)
    finish_evdev_run drop "8#"
    flooded=$(kp_answers flooded)
    echo "run stopped for $(difference "$stopped_at" "$continued_at") s; flood answered: $((flooded - flooded_before)); field after SIGCONT: '$field_after_stall'"
    door_pulse_check "$log"
    echo "$DOOR_TEXT"
    if [ "$flooded" -le "$flooded_before" ]; then
        fail keypad-9 "uinput-keypad did not flood"
    elif [ "$field_after_stall" != "Code: ***___" ]; then
        fail keypad-9 "after SIGCONT the field shows '$field_after_stall', not 'Code: ***___' (2, then 4 whose press was dropped, then 6; the * released at the drop, so no hold-to-clear)"
    elif ! has "$log" "keypad events lost"; then
        fail keypad-9 "no 'keypad events lost' in the log: the kernel dropped nothing, or run did not see SYN_DROPPED"
    elif ! grep -q ' code submitted length=4' "$log" || ! grep -q ' verify finished result=accepted exit=0' "$log"; then
        fail keypad-9 "the code did not complete: $(grep -E 'code submitted|verify finished' "$log" | tr '\n' ';')"
    elif grep -q "$CODE" "$log"; then
        fail keypad-9 "the code's digits are in the log"
    elif [ "$DOOR_OK" != 1 ]; then
        fail keypad-9 "the door did not pulse 1.0 s: $DOOR_TEXT"
    else
        pass keypad-9 "run stopped $(difference "$stopped_at" "$continued_at") s while 400+ events overflowed its buffer: '$(line_of "$log" "keypad events lost" | cut -d' ' -f2-)', the held * released (no hold-to-clear), the dropped press of 4 made up: field 'Code: ***___'; 8# completed the code, accepted, door 1 for $(difference "$(stamp "$log" "output active")" "$(pulse_end "$log")") s"
    fi
}
# --- end of keypad-9 -------------------------------------------------------------------------------

# KEYPAD_LIBRARY=1: only the definitions above (for exploring with vm-test --scenarios).
[ -n "${KEYPAD_LIBRARY:-}" ] && return 0

started_at=$(now)
if ! setup_hardware; then
    fail keypad-hw "the keypad hardware could not be set up (gpio-keymatrix, the door line)"
    exit "$failures"
fi
setup_uinput || echo "uinput: not available"
scenario_hw
scenario_matrix
scenario_pulldown_rows
scenario_evdev
scenario_evdev_drop
echo "keypad scenarios: $(difference "$started_at" "$(now)") s"
exit "$failures"
