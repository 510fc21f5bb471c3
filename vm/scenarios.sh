# shellcheck shell=sh
# Scenarios of vm-test, run by /init inside the guest (busybox sh) against the real binary
# (/usr/bin/resend-button), gpio-sim and an I2C adapter (vm/hardware.sh): once with
# ADAPTER=stub (i2c-stub, SMBus only) and once with ADAPTER=plain (i2c-plain, plain I2C like the
# Pi's i2c-bcm2835; then also the glass scenario of vm/glass.sh and the OLED one of vm/oled.sh). Each scenario prints its
# BEGIN and RESULT lines (vm/lib.sh) with the id <number> on i2c-stub and <number>-plain on
# i2c-plain, both after $ID_PREFIX (set by /init: empty on x86-64, "arm64-" in the arm64 guest).
# The exit status is the number of failed scenarios.
# shellcheck disable=SC2317 # predicates are called through wait_until, which shellcheck cannot see
# shellcheck source=hardware.sh source-path=SCRIPTDIR disable=SC1091 # /vm/hardware.sh in the guest
. /vm/hardware.sh
BIN=/usr/bin/resend-button
BUS=$(lcd_bus)
# The scenario ids' suffix: none on i2c-stub (the ids of the first version), -plain on i2c-plain.
ID_SUFFIX=
[ "$ADAPTER" = plain ] && ID_SUFFIX=-plain
BEGIN_NOTE=" [$ADAPTER, i2c-$BUS]"
# shellcheck source=lib.sh source-path=SCRIPTDIR disable=SC1091 # /vm/lib.sh in the guest
. /vm/lib.sh
# How the program writes expander bytes on this adapter (the `started` line's i2c_writes).
I2C_WRITES=smbus-byte
[ "$ADAPTER" = plain ] && I2C_WRITES=batched
DEBOUNCE_MS=30
# How far apart the event log's countdown start and finish may be from the duration: lib.sh's
# TOLERANCE (50 ms). Across a SIGKILL and a restart (scenario 6) more: the state file holds the
# end on the wall clock in milliseconds, and the first run's log line may come a little after the
# press.
RESUME_TOLERANCE=0.250

# --- helpers -----------------------------------------------------------------------------------

# The gpio-sim attribute files, resolved once: writing them is then a shell builtin (no fork), so
# a bounce burst's edges are well inside the debounce window.
BUTTON_PULL=$(sim_line_dir "$BUTTON_OFFSET")/pull
LED_VALUE=$(sim_line_dir "$LED_OFFSET")/value
press() { echo pull-down > "$BUTTON_PULL"; }
release() { echo pull-up > "$BUTTON_PULL"; }
led_level() { cat "$LED_VALUE"; }

# A press that bounces: 4 short contacts, then held pressed for 200 ms, then a clean release.
bouncy_press() {
    press; release; press; release; press; release; press
    sleep 0.2
    release
}
clean_press() { press; sleep 0.2; release; }

# line_used NAME: gpioinfo (v1 tools) marks a requested line [used] and names its consumer.
line_used() { gpioinfo "$(sim_chip)" | grep "\"$1\"" | grep -q '\[used'; }
line_unused() { gpioinfo "$(sim_chip)" | grep "\"$1\"" | grep -q ' unused '; }
both_lines_used() { line_used button && line_used led; }
both_lines_unused() { line_unused button && line_unused led; }
led_is() { [ "$(led_level)" = "$1" ]; }

# start_run LOG [FLAGS...]: starts `run` on the simulated hardware in the background (PID in
# $RUN_PID, events in LOG) and waits until it holds both lines and lit the LED (ready).
start_run() {
    log=$1
    shift
    "$BIN" run --button button --led led --i2c-bus "$BUS" --address "$LCD_ADDRESS" \
        --debounce "$DEBOUNCE_MS" "$@" 2>"$log" &
    RUN_PID=$!
    wait_until 10 both_lines_used && wait_until 2 led_is 1
}

# --- 1 -----------------------------------------------------------------------------------------
scenario_1() {
    begin 1 "check finds the simulated chip and lines by name, and the LCD at 0x27"
    gpioinfo "$(sim_chip)"
    /usr/sbin/i2cdetect -y -r "$BUS"
    out=/tmp/check-auto.out
    run_check "$out" --button button --led led --i2c-bus "$BUS" --address auto
    status=$CHECK_STATUS
    out_pattern=/tmp/check-pattern.out
    run_check "$out_pattern" --button button --led led --i2c-bus "$BUS" --address "$LCD_ADDRESS" --test-pattern
    status_pattern=$CHECK_STATUS
    if [ "$status" != 0 ]; then
        fail 1 "check --address auto exited with $status, not 0"
    elif grep -q PROBLEM "$out"; then
        fail 1 "check --address auto reported a PROBLEM"
    elif ! grep -q button "$out" || ! grep -q led "$out"; then
        fail 1 "check does not mention the lines button and led"
    elif ! grep -qi '0x27' "$out"; then
        fail 1 "check --address auto does not report the LCD at 0x27"
    elif [ "$status_pattern" != 0 ] || grep -q PROBLEM "$out_pattern"; then
        fail 1 "check --test-pattern (writes to the $ADAPTER adapter) exited with $status_pattern or reported a PROBLEM"
    else
        pass 1 "check: lines button and led on $(sim_chip), LCD at 0x27 on i2c-$BUS (auto and test pattern), exit 0"
    fi
}

# --- 2 -----------------------------------------------------------------------------------------
scenario_2() {
    begin 2 "run: a bouncing press gives one 3 s countdown; LED 0 during it, 1 after; presses in it ignored"
    log=/tmp/run2.log
    if ! start_run "$log" --duration 3; then
        gpioinfo "$(sim_chip)"
        run_not_up "$log" "run did not come up (both lines held, LED 1) within 10 s" 2
        return
    fi
    bouncy_press
    sleep 0.8
    led_during=$(led_level)
    clean_press
    sleep 0.5
    clean_press
    wait_until 5 has "$log" "countdown finished"
    wait_until 1 led_is 1
    led_after=$(led_level)
    # One more look: nothing else may start on its own after the countdown.
    sleep 0.5
    stop_run
    show_log "$log"
    started=$(stamp "$log" "countdown started")
    finished=$(stamp "$log" "countdown finished")
    accepted=$(stamp "$log" "press accepted")
    echo "LED during the countdown: $led_during, after: $led_after; run exited with $RUN_STATUS"
    echo "press accepted -> countdown finished: $(difference "$accepted" "$finished") s;" \
        "countdown started -> finished: $(difference "$started" "$finished") s"
    if [ "$(count "$log" "press accepted")" != 1 ] || [ "$(count "$log" "countdown started")" != 1 ]; then
        fail 2 "the bouncing press gave $(count "$log" "press accepted") accepted presses and $(count "$log" "countdown started") countdowns, not 1"
    elif [ "$(field "$log" "countdown started" seconds)" != 3 ]; then
        fail 2 "the countdown started with seconds=$(field "$log" "countdown started" seconds), not 3"
    elif [ "$(count "$log" "press ignored")" -lt 2 ]; then
        fail 2 "$(count "$log" "press ignored") presses ignored during the cooldown, not 2"
    elif [ "$led_during" != 0 ] || [ "$led_after" != 1 ]; then
        fail 2 "the LED read $led_during during the countdown and $led_after after it, not 0 and 1"
    elif ! within "$started" "$finished" 3; then
        fail 2 "the countdown took $(difference "$started" "$finished") s, not 3 s within ${TOLERANCE} s"
    elif ! within "$accepted" "$finished" 3; then
        fail 2 "the press was accepted $(difference "$accepted" "$finished") s before the end, not 3 s within ${TOLERANCE} s"
    elif [ "$(field "$log" started i2c_writes)" != "$I2C_WRITES" ]; then
        fail 2 "the started line says i2c_writes=$(field "$log" started i2c_writes), not $I2C_WRITES on the $ADAPTER adapter"
    elif [ "$RUN_STATUS" != 0 ]; then
        fail 2 "run exited with $RUN_STATUS after SIGTERM"
    else
        pass 2 "i2c_writes=$I2C_WRITES; one countdown of $(difference "$started" "$finished") s from a bouncing press, $(count "$log" "press ignored") presses ignored, LED 0 then 1"
    fi
}

# --- 3 -----------------------------------------------------------------------------------------
scenario_3() {
    begin 3 "the LCD vanishes mid-countdown and comes back: run goes on, the countdown ends on time, the LCD is re-initialised"
    # rmmod i2c-stub is refused while run holds /dev/i2c-N open (i2c-dev pins the adapter's
    # module), and i2c-stub has no device to unbind: the LCD vanishes through our stub's writable
    # chip_addr instead (transfers to 0x27 fail with ENODEV, as after a pulled cable). On i2c-plain
    # the device stops acknowledging (EREMOTEIO, as on the Pi) through the module's `present`.
    log=/tmp/run3.log
    if ! start_run "$log" --duration 5; then
        run_not_up "$log" "run did not come up within 10 s" 3
        return
    fi
    clean_press
    sleep 0.3
    lcd_vanish
    echo "$(now) LCD gone"
    # The next second's repaint fails: the display goes offline.
    wait_until 3 has "$log" "display offline"
    # While it is away, make a witness of the next byte the program sends (hardware.sh).
    # stub: the stub's memory; the marker has the backlight bit clear, every byte the program
    # sends has it set. plain: the adapter's record, cleared: nothing is acknowledged while away.
    marker=0xf4
    if [ "$ADAPTER" = plain ]; then
        record_clear
        expected_before=none
        witness_before=$(record_last_byte)
        : "${witness_before:=none}"
    else
        expected_before=$marker
        stub_fill_identity "$LCD_AWAY_ADDRESS" && stub_send "$LCD_AWAY_ADDRESS" "$marker"
        witness_before=$(stub_receive "$LCD_AWAY_ADDRESS")
        stub_send "$LCD_AWAY_ADDRESS" "$marker"
    fi
    sleep 0.8
    alive_while_gone=no
    running "$RUN_PID" && alive_while_gone=yes
    lcd_return
    echo "$(now) LCD back"
    wait_until 8 has "$log" "countdown finished"
    wait_until 6 has "$log" "display online"
    if [ "$ADAPTER" = plain ]; then
        # Acknowledged only after the return (the record was cleared while the LCD was away).
        last_byte=$(record_last_byte)
        naks=$(record_dump | grep -c ' nak ')
        echo "while away: $naks transfers not acknowledged (EREMOTEIO)"
    else
        last_byte=$(stub_receive "$LCD_ADDRESS")
    fi
    alive_after=no
    running "$RUN_PID" && alive_after=yes
    stop_run
    show_log "$log"
    started=$(stamp "$log" "countdown started")
    finished=$(stamp "$log" "countdown finished")
    offline=$(stamp "$log" "display offline")
    online=$(stamp "$log" "display online")
    echo "countdown started -> finished: $(difference "$started" "$finished") s; offline at $offline, online at $online"
    echo "witness: $witness_before while away (expected $expected_before), last byte sent after the return: $last_byte"
    if [ "$alive_while_gone" != yes ] || [ "$alive_after" != yes ]; then
        fail 3 "run did not keep running (while gone: $alive_while_gone, after: $alive_after)"
    elif [ -z "$offline" ]; then
        fail 3 "no 'display offline' in the log after the LCD vanished"
    elif [ -z "$online" ]; then
        fail 3 "no 'display online' in the log after the LCD came back"
    elif ! awk -v a="$offline" -v b="$online" 'BEGIN { exit !(a < b) }'; then
        fail 3 "'display online' ($online) is not after 'display offline' ($offline)"
    elif [ "$witness_before" != "$expected_before" ]; then
        fail 3 "the $ADAPTER witness does not work: read $witness_before, not $expected_before"
    elif [ -z "$last_byte" ] || [ "$last_byte" = "$marker" ] || [ $((last_byte & 0x08)) = 0 ]; then
        fail 3 "the LCD got no backpack byte (backlight bit 0x08 set) after it came back: its last byte is '$last_byte'"
    elif [ -z "$finished" ] || ! within "$started" "$finished" 5; then
        fail 3 "the countdown took $(difference "$started" "$finished") s, not 5 s within ${TOLERANCE} s"
    elif [ "$RUN_STATUS" != 0 ]; then
        fail 3 "run exited with $RUN_STATUS after SIGTERM"
    else
        pass 3 "display offline at $offline, online at $online (last byte at the LCD $last_byte); the 5 s countdown took $(difference "$started" "$finished") s"
    fi
}

# --- 4 -----------------------------------------------------------------------------------------
scenario_4() {
    begin 4 "another process holds the LED line: run exits with 69 and names the holder"
    gpioset --mode=signal "$(sim_chip)" "$LED_OFFSET=0" &
    holder=$!
    wait_until 5 line_used led
    gpioinfo "$(sim_chip)"
    out=/tmp/run4.out
    "$BIN" run --button button --led led --i2c-bus "$BUS" --address "$LCD_ADDRESS" --duration 3 >"$out" 2>&1 &
    pid=$!
    if ! wait_until 10 not_running "$pid"; then
        kill -KILL "$pid"
    fi
    wait "$pid"
    status=$?
    kill -TERM "$holder"
    wait "$holder"
    echo "\$ resend-button run ... -> $status"
    cat "$out"
    button_released=yes
    line_unused button || button_released=no
    if [ "$status" != 69 ]; then
        fail 4 "run exited with $status, not 69"
    elif ! grep -q gpioset "$out"; then
        fail 4 "the message does not name the holder (gpioset)"
    elif [ "$button_released" != yes ]; then
        fail 4 "the button line is still held after run exited"
    else
        pass 4 "exit 69, the holder gpioset named"
    fi
}

# --- 5 -----------------------------------------------------------------------------------------
scenario_5() {
    begin 5 "SIGTERM: exit 0 and both lines released"
    log=/tmp/run5.log
    if ! start_run "$log" --duration 3; then
        run_not_up "$log" "run did not come up within 10 s" 5
        return
    fi
    gpioinfo "$(sim_chip)"
    held=$(gpioinfo "$(sim_chip)" | grep -c '\[used')
    stop_run
    gpioinfo "$(sim_chip)"
    show_log "$log"
    if [ "$RUN_STATUS" != 0 ]; then
        fail 5 "run exited with $RUN_STATUS after SIGTERM, not 0"
    elif [ "$held" != 2 ]; then
        fail 5 "$held lines were held while running, not 2"
    elif ! both_lines_unused; then
        fail 5 "the lines are not released after the exit"
    elif ! has "$log" stopped; then
        fail 5 "no 'stopped' in the log"
    else
        pass 5 "exit 0, 'stopped' logged, both lines unused"
    fi
}

# --- 6 -----------------------------------------------------------------------------------------
scenario_6() {
    begin 6 "SIGKILL mid-countdown, then start again: the countdown resumes with the right seconds"
    state=/tmp/resend.state
    rm -f "$state"
    log1=/tmp/run6a.log
    log2=/tmp/run6b.log
    if ! start_run "$log1" --duration 10 --state-file "$state"; then
        run_not_up "$log1" "run did not come up within 10 s" 6
        return
    fi
    clean_press
    wait_until 3 has "$log1" "countdown started"
    sleep 3.3
    kill -KILL "$RUN_PID"
    wait "$RUN_PID"
    killed_at=$(now)
    echo "$killed_at SIGKILL"
    ls -l "$state"
    sleep 1
    # Started again about 4.5 s into the 10 s countdown: about 5.5 s left, shown as 6.
    "$BIN" run --button button --led led --i2c-bus "$BUS" --address "$LCD_ADDRESS" \
        --debounce "$DEBOUNCE_MS" --duration 10 --state-file "$state" 2>"$log2" &
    RUN_PID=$!
    wait_until 12 has "$log2" "countdown finished"
    stop_run
    show_log "$log1"
    show_log "$log2"
    started=$(stamp "$log1" "countdown started")
    finished=$(stamp "$log2" "countdown finished")
    # The second run's first countdown line (resumed or started) and its seconds (left).
    resumed_line=$(grep -m 1 -E '^[0-9.]+ countdown (resumed|started)( |$)' "$log2")
    restarted=$(echo "$resumed_line" | cut -d' ' -f1)
    resumed_seconds=$(echo "$resumed_line" | tr ' ' '\n' | sed -n 's/^seconds\(_left\)\{0,1\}=//p' | head -n 1)
    # What was left when the second run resumed; the label shows it rounded up (50 ms slack).
    left=$(awk -v s="$started" -v r="$restarted" 'BEGIN { printf "%.3f", s + 10 - r }')
    echo "second run: '$resumed_line'; $left s were left then"
    echo "first run's start -> second run's finish: $(difference "$started" "$finished") s"
    if [ -z "$resumed_line" ] || [ -z "$resumed_seconds" ]; then
        fail 6 "the second run logged no countdown with its seconds (did it resume?)"
    elif has "$log2" "press accepted"; then
        fail 6 "the second run needed a press: it did not resume by itself"
    elif ! awk -v n="$resumed_seconds" -v left="$left" 'BEGIN { exit !(left > n - 1 - 0.05 && left <= n + 0.05) }'; then
        fail 6 "the second run resumed with $resumed_seconds s when $left s were left"
    elif [ -z "$finished" ] || ! within "$started" "$finished" 10 "$RESUME_TOLERANCE"; then
        fail 6 "the countdown across the restart took $(difference "$started" "$finished") s, not 10 s within $RESUME_TOLERANCE s"
    else
        pass 6 "resumed with $resumed_seconds s ($left s left); the 10 s countdown ended $(difference "$started" "$finished") s after it started"
    fi
}

# --- configuration-file runs (scenarios 7 and 8) ---------------------------------------------

# write_config FILE COMMAND STATE_FILE: a JSON5 configuration naming the simulated hardware (the
# gpio-sim lines by name, the adapter's bus with the address probed), a 3 s cooldown and COMMAND
# (a JSON5 list of strings) as the send command, with VMTEST_TOKEN in its environment.
COOLDOWN=3
SEND_TOKEN=token-42
write_config() {
    cat >"$1" <<EOF
// vm-test: the simulated hardware
{
  button: { line: "button", debounceMs: $DEBOUNCE_MS },
  led: { line: "led" },
  lcd: { bus: $BUS, address: $LCD_ADDRESS },
  cooldown: { seconds: $COOLDOWN },
  send: {
    command: $2,
    timeoutSeconds: 2,
    environment: { VMTEST_TOKEN: "$SEND_TOKEN" },
  },
  stateFile: "$3",
}
EOF
}

# start_configured LOG CONFIG [VARIABLE=VALUE...]: `run --config CONFIG` in the background with
# the variables added to its environment (env execs the program: $RUN_PID is its pid), both
# output streams in LOG; waits until it holds both lines and lit the LED.
start_configured() {
    run_log=$1
    run_config=$2
    shift 2
    env "$@" "$BIN" run --config "$run_config" >"$run_log" 2>&1 &
    RUN_PID=$!
    wait_until 10 both_lines_used && wait_until 2 led_is 1
}

# --- 7 -----------------------------------------------------------------------------------------
scenario_7() {
    begin 7 "run --config: the send command runs on a press (environment; its output not logged, only its length); ok -> 3 s countdown; failure -> countdown cancelled, LED back at once"
    config=/tmp/vm7.json5
    env_file=/tmp/send7.env
    rm -f "$env_file" /tmp/state7a.json /tmp/state7b.json
    # The command records its environment, writes to both streams and succeeds.
    # shellcheck disable=SC2016 # the $VARIABLES are the command's, expanded by its own sh
    write_config "$config" \
        '["/bin/sh", "-c", "echo \"$RESEND_ATTEMPT $RESEND_COOLDOWN_SECONDS $VMTEST_TOKEN\" >'"$env_file"'; echo sent; echo note >&2; exit 0"]' \
        /tmp/state7a.json
    sed 's/^/    /' "$config"
    log=/tmp/run7a.log
    if ! start_configured "$log" "$config"; then
        run_not_up "$log" "run --config did not come up (both lines held, LED 1) within 10 s" 7
        return
    fi
    clean_press
    sleep 0.8
    led_during=$(led_level)
    wait_until 5 has "$log" "countdown finished"
    wait_until 1 led_is 1
    led_after=$(led_level)
    stop_run
    status_ok=$RUN_STATUS
    show_log "$log"
    accepted=$(stamp "$log" "press accepted")
    send_started=$(stamp "$log" "send started")
    finished=$(stamp "$log" "countdown finished")
    outcome=$(line_of "$log" "send finished")
    environment=$(cat "$env_file" 2>/dev/null)
    echo "LED during the countdown: $led_during, after: $led_after; run exited with $status_ok"
    echo "the command's environment file: '$environment'"
    echo "press accepted -> countdown finished: $(difference "$accepted" "$finished") s"

    # Second run: a command that fails after 0.5 s (the LED must be off while it runs).
    write_config "$config" '["/bin/sh", "-c", "sleep 0.5; echo broken >&2; exit 3"]' /tmp/state7b.json
    log_failed=/tmp/run7b.log
    if ! start_configured "$log_failed" "$config"; then
        run_not_up "$log_failed" "the second run --config did not come up within 10 s" 7
        return
    fi
    clean_press
    led_sending=$(led_level)
    wait_until 4 has "$log_failed" "send finished"
    wait_until 2 led_is 1
    led_on_at=$(now)
    # Past the cooldown's end: no countdown may finish, the LED stays on.
    sleep 3
    led_later=$(led_level)
    stop_run
    status_failed=$RUN_STATUS
    show_log "$log_failed"
    accepted_failed=$(stamp "$log_failed" "press accepted")
    failed_at=$(stamp "$log_failed" "send finished")
    failed_line=$(line_of "$log_failed" "send finished")
    echo "LED while sending: $led_sending, back on at $led_on_at ($(difference "$failed_at" "$led_on_at") s after the outcome," \
        "$(difference "$accepted_failed" "$led_on_at") s after the press), 3 s later: $led_later; run exited with $status_failed"

    if [ "$(count "$log" "press accepted")" != 1 ] || [ "$(count "$log" "send started")" != 1 ]; then
        fail 7 "$(count "$log" "press accepted") presses accepted and $(count "$log" "send started") sends started, not 1 and 1"
    elif [ "$(field "$log" "send started" attempt)" != 1 ]; then
        fail 7 "the send started with attempt=$(field "$log" "send started" attempt), not 1"
    elif ! echo "$outcome" | grep -q ' result=ok exit=0 '; then
        fail 7 "the send did not finish with result=ok exit=0: '$outcome'"
    elif ! echo "$outcome" | grep -q ' output_bytes=10$' || echo "$outcome" | grep -q 'sent\|note'; then
        # "sent\n" on stdout and "note\n" on stderr: 10 bytes, and neither text in the log (an SMS
        # API's reply can echo the code, so the output is not logged unless send.logOutput says so).
        fail 7 "the log line should give the output's length (output_bytes=10) and not its text: '$outcome'"
    elif [ "$environment" != "1 $COOLDOWN $SEND_TOKEN" ]; then
        fail 7 "the command saw RESEND_ATTEMPT, RESEND_COOLDOWN_SECONDS and VMTEST_TOKEN as '$environment', not '1 $COOLDOWN $SEND_TOKEN'"
    elif ! later "$accepted" "$send_started"; then
        fail 7 "the send started at $send_started, before the press was accepted at $accepted"
    elif ! within "$accepted" "$finished" "$COOLDOWN"; then
        fail 7 "the countdown finished $(difference "$accepted" "$finished") s after the press, not $COOLDOWN s within ${TOLERANCE} s"
    elif [ "$led_during" != 0 ] || [ "$led_after" != 1 ]; then
        fail 7 "the LED read $led_during during the countdown and $led_after after it, not 0 and 1"
    elif [ "$status_ok" != 0 ] || [ "$status_failed" != 0 ]; then
        fail 7 "run exited with $status_ok and $status_failed after SIGTERM, not 0"
    elif ! echo "$failed_line" | grep -q ' result=failed exit=3 '; then
        fail 7 "the failing command did not finish with result=failed exit=3: '$failed_line'"
    elif ! has "$log_failed" "countdown cancelled"; then
        fail 7 "no 'countdown cancelled' after the failed send"
    elif has "$log_failed" "countdown finished"; then
        fail 7 "a countdown finished after the failed send"
    elif [ "$led_sending" != 0 ]; then
        fail 7 "the LED read $led_sending while the failing command ran, not 0"
    elif ! below "$failed_at" "$led_on_at" 0.5; then
        fail 7 "the LED came back on $(difference "$failed_at" "$led_on_at") s after the failed send, not within 0.5 s"
    elif [ "$led_later" != 1 ]; then
        fail 7 "the LED read $led_later 3 s after the failed send, not 1"
    else
        pass 7 "ok: send attempt 1, exit 0, output not logged (output_bytes=10), environment '$environment', countdown $(difference "$accepted" "$finished") s after the press, LED 0 then 1; exit 3: countdown cancelled, LED on $(difference "$failed_at" "$led_on_at") s after the outcome ($(difference "$accepted_failed" "$led_on_at") s after the press)"
    fi
}

# --- 8 -----------------------------------------------------------------------------------------
# listen SOCKET OUTPUT: notify-listen in the background ($LISTEN_PID), ready once it is bound.
listen() {
    notify-listen "$1" >"$2" 2>&1 &
    LISTEN_PID=$!
    wait_until 3 grep -q ' listening ' "$2"
}
stop_listening() { kill -TERM "$LISTEN_PID" 2>/dev/null; wait "$LISTEN_PID" 2>/dev/null; }
# datagram OUTPUT KEY=VALUE: the time of OUTPUT's first datagram with the assignment (empty: none).
datagram() { grep -m 1 "^[0-9.]* pid=[0-9]* \(.* \)\{0,1\}$2\( \|\$\)" "$1" | cut -d' ' -f1; }
datagrams() { grep -c "^[0-9.]* pid=[0-9]* \(.* \)\{0,1\}$2\( \|\$\)" "$1"; }

scenario_8() {
    begin 8 "systemd notify: READY=1 after start-up, WATCHDOG=1 every WATCHDOG_USEC/2 (also while a send runs), STOPPING=1 on SIGTERM; abstract socket; WATCHDOG_PID of another process"
    config=/tmp/vm8.json5
    env_file=/tmp/send8.env
    rm -f "$env_file" /tmp/state8a.json /tmp/state8b.json
    # The send command (1.5 s long, so the loop pings while it runs) records whether the protocol's
    # variables leaked to it.
    # shellcheck disable=SC2016 # the $VARIABLES are the command's, expanded by its own sh
    write_config "$config" \
        '["/bin/sh", "-c", "echo \"${NOTIFY_SOCKET-unset} ${WATCHDOG_USEC-unset}\" >'"$env_file"'; sleep 1.5"]' \
        /tmp/state8a.json
    notifications=/tmp/notify8a.out
    socket=/run/n.sock
    if ! listen "$socket" "$notifications"; then
        cat "$notifications"
        stop_listening
        fail 8 "notify-listen did not bind $socket"
        return
    fi
    log=/tmp/run8a.log
    if ! start_configured "$log" "$config" NOTIFY_SOCKET="$socket" WATCHDOG_USEC=2000000; then
        show_log "$log"
        stop_run
        stop_listening
        fail 8 "run with NOTIFY_SOCKET did not come up within 10 s"
        return
    fi
    pid=$RUN_PID
    wait_until 3 grep -q "pid=$pid READY=1" "$notifications"
    sleep 0.5
    clean_press
    # About 4.5 s of pings, the send command running in the first 1.5 s of them.
    sleep 4
    term_at=$(now)
    stop_run
    sleep 0.3
    stop_listening
    show_log "$log"
    echo "notifications:"
    sed 's/^/    /' "$notifications"
    started=$(stamp "$log" started)
    ready=$(datagram "$notifications" READY=1)
    stopping=$(datagram "$notifications" STOPPING=1)
    pings=$(datagrams "$notifications" WATCHDOG=1)
    # The intervals between consecutive WATCHDOG=1 datagrams: "count shortest longest".
    intervals=$(grep "^[0-9.]* pid=[0-9]* WATCHDOG=1\$" "$notifications" | cut -d' ' -f1 |
        awk 'NR > 1 { d = $1 - last; if (n == 0 || d < min) min = d; if (n == 0 || d > max) max = d; n++ }
             { last = $1 }
             END { printf "%d %.3f %.3f", n, min, max }')
    gaps=${intervals%% *}
    shortest=$(echo "$intervals" | cut -d' ' -f2)
    longest=$(echo "$intervals" | cut -d' ' -f3)
    # The pings while the send command ran (the loop waits for it in the same poll set).
    send_from=$(stamp "$log" "send started")
    send_to=$(stamp "$log" "send finished")
    pings_sending=$(grep "^[0-9.]* pid=[0-9]* WATCHDOG=1\$" "$notifications" |
        awk -v a="$send_from" -v b="$send_to" '$1 > a && $1 < b' | wc -l)
    others=$(grep -vc "^[0-9.]* listening \|^[0-9.]* pid=$pid " "$notifications")
    after_stopping=$(awk -v s="$stopping" '$1 > s' "$notifications" | wc -l)
    leaked=$(cat "$env_file" 2>/dev/null)
    echo "started at $started, READY=1 at $ready, $pings x WATCHDOG=1 ($gaps intervals, $shortest to $longest s;" \
        "$pings_sending while the send ran)," \
        "SIGTERM at $term_at, STOPPING=1 at $stopping; exit $RUN_STATUS; the send command saw '$leaked'"
    status_path=$RUN_STATUS

    # The abstract socket, with WATCHDOG_PID naming another process: READY and STOPPING, no pings.
    write_config "$config" '["/bin/true"]' /tmp/state8b.json
    notifications_abstract=/tmp/notify8b.out
    abstract=@resend-test
    listen "$abstract" "$notifications_abstract"
    log_abstract=/tmp/run8b.log
    abstract_up=yes
    start_configured "$log_abstract" "$config" NOTIFY_SOCKET="$abstract" WATCHDOG_USEC=1000000 WATCHDOG_PID=1 || abstract_up=no
    wait_until 3 grep -q "pid=$RUN_PID READY=1" "$notifications_abstract"
    sleep 1.5
    stop_run
    status_abstract=$RUN_STATUS
    sleep 0.3
    stop_listening
    show_log "$log_abstract"
    echo "notifications on $abstract:"
    sed 's/^/    /' "$notifications_abstract"
    ready_abstract=$(datagram "$notifications_abstract" READY=1)
    stopping_abstract=$(datagram "$notifications_abstract" STOPPING=1)
    pings_abstract=$(datagrams "$notifications_abstract" WATCHDOG=1)

    if [ -z "$ready" ]; then
        fail 8 "no READY=1 from pid $pid on $socket"
    elif ! later "$started" "$ready"; then
        fail 8 "READY=1 ($ready) came before the 'started' log line ($started)"
    elif ! grep "^[0-9.]* pid=$pid READY=1 " "$notifications" | grep -q ' STATUS=.'; then
        fail 8 "the READY=1 datagram has no STATUS="
    elif [ "$pings" -lt 3 ]; then
        fail 8 "$pings WATCHDOG=1 in about 4.5 s, not 3 or more"
    elif ! awk -v a="$shortest" -v b="$longest" 'BEGIN { exit !(a >= 0.8 && b <= 1.2) }'; then
        fail 8 "WATCHDOG=1 intervals from $shortest to $longest s, not 1.0 s within 0.2 s"
    elif [ "$others" != 0 ]; then
        fail 8 "$others datagrams came from another process than run (pid $pid)"
    elif [ -z "$stopping" ] || ! later "$term_at" "$stopping"; then
        fail 8 "no STOPPING=1 after SIGTERM at $term_at (STOPPING=1 at '$stopping')"
    elif [ "$after_stopping" != 0 ]; then
        fail 8 "$after_stopping datagrams after STOPPING=1"
    elif [ "$status_path" != 0 ]; then
        fail 8 "run exited with $status_path after SIGTERM, not 0"
    elif [ "$(field "$log" "send finished" result)" != ok ]; then
        fail 8 "the send command (sleep 1.5) did not finish ok: '$(line_of "$log" "send finished")'"
    elif [ "$pings_sending" -lt 1 ]; then
        fail 8 "no WATCHDOG=1 while the send command ran ($send_from to $send_to)"
    elif [ "$leaked" != "unset unset" ]; then
        fail 8 "the send command inherited NOTIFY_SOCKET and WATCHDOG_USEC: '$leaked', not 'unset unset'"
    elif [ "$abstract_up" != yes ] || [ -z "$ready_abstract" ] || [ -z "$stopping_abstract" ]; then
        fail 8 "on the abstract socket $abstract: run up: $abstract_up, READY=1 at '$ready_abstract', STOPPING=1 at '$stopping_abstract'"
    elif [ "$pings_abstract" != 0 ]; then
        fail 8 "$pings_abstract WATCHDOG=1 with WATCHDOG_PID=1 (another process), not 0"
    elif [ "$status_abstract" != 0 ]; then
        fail 8 "run on the abstract socket exited with $status_abstract after SIGTERM, not 0"
    else
        pass 8 "READY=1 $(difference "$started" "$ready") s after 'started'; $pings x WATCHDOG=1 at $shortest-$longest s intervals ($pings_sending while a send ran); STOPPING=1 $(difference "$term_at" "$stopping") s after SIGTERM, exit 0; $abstract: READY and STOPPING, no pings for WATCHDOG_PID=1"
    fi
}

# --- 11 (issue 11, item 4) ----------------------------------------------------------------------
# No LCD at start with a fixed address: run starts with the display offline (button, LED and
# countdown work), and the display comes up when the device appears.
scenario_11() {
    begin 11 "run starts without its LCD at the fixed address: offline at start, the press works, the screen appears when the device is added"
    log=/tmp/run11.log
    lcd_vanish
    # i2c-plain: from here on the record holds only what the LCD acknowledged after it appeared.
    [ "$ADAPTER" = plain ] && record_clear
    if ! start_run "$log" --duration 3; then
        lcd_return
        run_not_up "$log" "run did not come up (both lines held, LED 1) within 10 s without its LCD" 11
        return
    fi
    clean_press
    wait_until 2 has "$log" "countdown started"
    sleep 0.3
    led_during=$(led_level)
    lcd_return
    echo "$(now) LCD added"
    wait_until 8 has "$log" "display online"
    wait_until 5 has "$log" "countdown finished"
    last_byte=$(lcd_last_byte)
    stop_run
    show_log "$log"
    display=$(field "$log" started display)
    online=$(stamp "$log" "display online")
    echo "started display=$display; LED during the countdown: $led_during; online at $online; last byte at the LCD: $last_byte"
    if [ "$display" != offline ]; then
        fail 11 "the started line says display=$display, not offline"
    elif ! has "$log" "display offline"; then
        fail 11 "no 'display offline' line at start"
    elif ! has "$log" "press accepted" || [ "$led_during" != 0 ]; then
        fail 11 "the press did not work while the display was offline (accepted: $(count "$log" "press accepted"), LED $led_during)"
    elif [ -z "$online" ]; then
        fail 11 "no 'display online' after the device was added"
    elif [ -z "$last_byte" ] || [ $((last_byte & 0x08)) = 0 ]; then
        fail 11 "the LCD got no backpack byte (backlight bit 0x08 set) after it appeared: its last byte is '$last_byte'"
    elif [ "$RUN_STATUS" != 0 ]; then
        fail 11 "run exited with $RUN_STATUS after SIGTERM"
    else
        pass 11 "started offline, press accepted and LED 0 meanwhile, display online at $online after the device was added"
    fi
}

# --- 12 (issue 11, item 2) ----------------------------------------------------------------------
# The adapter exists but i2c-dev is not loaded (as after dtparam=i2c_arm=on alone on a Pi): check
# and run say so instead of asking for the dtparam line.
scenario_12() {
    begin 12 "i2c-dev not loaded: check and run say 'I2C is on but i2c-dev is not loaded'"
    if ! rmmod i2c_dev; then
        fail 12 "rmmod i2c_dev failed: a /dev/i2c-N node is still open (a process left over from an earlier scenario?)"
        return
    fi
    out=/tmp/check12.out
    "$BIN" check --button button --led led --i2c-bus "$BUS" --address "$LCD_ADDRESS" >"$out" 2>&1
    check_status=$?
    run_out=/tmp/run12.out
    "$BIN" run --button button --led led --i2c-bus "$BUS" --address "$LCD_ADDRESS" >"$run_out" 2>&1
    run_status=$?
    insmod /lib/modules/vm/i2c-dev.ko
    wait_until 5 test -e "/dev/i2c-$BUS"
    echo "\$ resend-button check ... -> $check_status"; cat "$out"
    echo "\$ resend-button run ... -> $run_status"; cat "$run_out"
    if [ "$check_status" != 69 ] || ! grep -q "PROBLEM I2C bus $BUS .*I2C is on but i2c-dev is not loaded: sudo modprobe i2c-dev" "$out"; then
        fail 12 "check exited with $check_status without 'I2C is on but i2c-dev is not loaded'"
    elif [ "$run_status" != 69 ] || ! grep -q "I2C is on but i2c-dev is not loaded" "$run_out"; then
        fail 12 "run exited with $run_status without 'I2C is on but i2c-dev is not loaded'"
    elif [ ! -e "/dev/i2c-$BUS" ]; then
        fail 12 "/dev/i2c-$BUS did not come back after insmod i2c-dev"
    else
        pass 12 "check and run (exit 69) name i2c-dev as the missing piece"
    fi
}

release
scenario_1
scenario_2
scenario_3
scenario_4
scenario_5
scenario_6
scenario_7
scenario_8
scenario_11
scenario_12
if [ "$ADAPTER" = plain ]; then
    # shellcheck source=glass.sh source-path=SCRIPTDIR disable=SC1091 # /vm/glass.sh in the guest
    . /vm/glass.sh
    scenario_glass
    # shellcheck source=oled.sh source-path=SCRIPTDIR disable=SC1091 # /vm/oled.sh in the guest
    . /vm/oled.sh
    scenario_oled
fi
exit "$failures"
