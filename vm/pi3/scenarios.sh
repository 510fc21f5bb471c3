# shellcheck shell=sh
# The pi3 guest's scenarios (run by vm/pi3/init on qemu's raspi3b machine with the Pi's own drivers;
# vm/pi3/host.sh says what the guest is). Ids get the prefix pi3-:
#   hw      the Pi's hardware as the kernel sees it: gpiochip0 from pinctrl-bcm2835 with the
#           device tree's line names (GPIO17, GPIO27), i2c-1 = "bcm2835 (i2c@7e804000)", its
#           device-tree clock-frequency 100000, the "LCD" (qemu's at24c-eeprom) at 0x27, nothing
#           at 0x3f (EREMOTEIO from i2c-bcm2835)
#   1       check finds GPIO17 and GPIO27 by name, i2c-1 with its 100 kHz clock from the device
#           tree, and the LCD at 0x27 (--address auto and --test-pattern)
#   2       a missing address: check --address 0x3f says nothing answers there (exit non-zero);
#           run --address 0x3f starts anyway with display=offline and says `display offline`
#   glass   run with the LCD at 0x27 through i2c-bcm2835, Send pressed on a uinput keypad (the key
#           A, keypad.sendKey), a GLASS_SECONDS countdown; the glass is decoded on the HOST from
#           qemu's I2C trace (vm/pi3/host.sh), so the guest prints what the host needs (the
#           event log, the time marks of i2c-mark) and the host prints the verdict line. The guest
#           checks here what it can see itself: i2c_writes=batched, the countdown's start and
#           finish in the log 60 s apart (50 ms), exit 0 after SIGTERM.
# The exit status is the number of failed scenarios.
# shellcheck disable=SC2317 # predicates are called through wait_until
# shellcheck source=../lib.sh source-path=SCRIPTDIR disable=SC1091 # /vm/lib.sh in the guest
. /vm/lib.sh
BIN=/usr/bin/resend-button
BUS=1
LCD_ADDRESS=0x27
MISSING=0x3f
MARK_BUS=0
MARK_ADDRESS=0x50
GLASS_SECONDS=${GLASS_SECONDS:-60}
line_used() { gpioinfo gpiochip0 | grep "\"$1\"" | grep -q '\[used'; }

# --- hw ----------------------------------------------------------------------------------------
scenario_hw() {
    begin hw "the Pi 3's GPIO chip and I2C adapter from its device tree, the LCD at 0x27, nothing at $MISSING"
    label=$(tr '\0' ' ' </sys/bus/gpio/devices/gpiochip0/of_node/compatible 2>/dev/null)
    gpioinfo gpiochip0 | head -n 30
    adapter=$(cat /sys/class/i2c-adapter/i2c-$BUS/name 2>/dev/null)
    clock=$(od -An -tu1 /sys/class/i2c-adapter/i2c-$BUS/of_node/clock-frequency 2>/dev/null |
        awk '{ for (i = 1; i <= NF; i++) v = v * 256 + $i } END { print v }')
    echo "gpiochip0: $label; i2c-$BUS: '$adapter', device-tree clock-frequency $clock"
    /usr/sbin/i2ctransfer -y "$BUS" w1@$LCD_ADDRESS 0x08 2>&1; present=$?
    missing_out=$(/usr/sbin/i2ctransfer -y "$BUS" w1@$MISSING 0x08 2>&1); missing=$?
    echo "write to $LCD_ADDRESS -> $present; write to $MISSING -> $missing: $missing_out"
    if [ "${label#brcm,bcm2835-gpio}" = "$label" ]; then
        fail hw "gpiochip0 is '$label', not brcm,bcm2835-gpio (pinctrl-bcm2835)"
    elif ! gpioinfo gpiochip0 | grep -q '"GPIO17"' || ! gpioinfo gpiochip0 | grep -q '"GPIO27"'; then
        fail hw "gpiochip0 has no lines named GPIO17 and GPIO27"
    elif [ "$adapter" != "bcm2835 (i2c@7e804000)" ]; then
        fail hw "i2c-$BUS is '$adapter', not 'bcm2835 (i2c@7e804000)'"
    elif [ "$clock" != 100000 ]; then
        fail hw "i2c-$BUS's device-tree clock-frequency is '$clock', not 100000"
    elif [ "$present" != 0 ]; then
        fail hw "a write to $LCD_ADDRESS failed ($present)"
    elif [ "$missing" = 0 ] || ! echo "$missing_out" | grep -q 'Remote I/O error'; then
        fail hw "a write to $MISSING did not fail with EREMOTEIO: $missing_out"
    else
        pass hw "gpiochip0 brcm,bcm2835-gpio with GPIO17/GPIO27; i2c-$BUS '$adapter' at 100000 Hz (device tree); $LCD_ADDRESS acknowledges, $MISSING: Remote I/O error"
    fi
}

# --- 1 -----------------------------------------------------------------------------------------
scenario_1() {
    begin 1 "check finds GPIO17 and GPIO27 by name, i2c-1 with the device tree's 100 kHz, the LCD at 0x27"
    out=/tmp/check-auto.out
    run_check "$out" --button GPIO17 --led GPIO27 --address auto
    status=$CHECK_STATUS
    out_pattern=/tmp/check-pattern.out
    run_check "$out_pattern" --button GPIO17 --led GPIO27 --i2c-bus $BUS --address $LCD_ADDRESS --test-pattern
    status_pattern=$CHECK_STATUS
    if [ "$status" != 0 ]; then
        fail 1 "check --address auto exited with $status, not 0"
    elif grep -q PROBLEM "$out"; then
        fail 1 "check --address auto reported a PROBLEM"
    elif ! grep -q 'GPIO17' "$out" || ! grep -q 'GPIO27' "$out" || ! grep -q 'gpiochip0' "$out"; then
        fail 1 "check does not report GPIO17 and GPIO27 on gpiochip0"
    elif ! grep -q "I2C bus $BUS: .*bcm2835 (i2c@7e804000).*, clock 100 kHz" "$out"; then
        fail 1 "check does not report i2c-$BUS (bcm2835 (i2c@7e804000)) with the clock 100 kHz"
    elif ! grep -qi '0x27' "$out"; then
        fail 1 "check --address auto does not report the LCD at 0x27"
    elif [ "$status_pattern" != 0 ] || grep -q PROBLEM "$out_pattern"; then
        fail 1 "check --test-pattern exited with $status_pattern or reported a PROBLEM"
    else
        pass 1 "check: GPIO17 and GPIO27 on gpiochip0, i2c-$BUS bcm2835 (i2c@7e804000) clock 100 kHz, LCD at 0x27 (auto and test pattern), exit 0"
    fi
}

# --- 2 -----------------------------------------------------------------------------------------
scenario_2() {
    begin 2 "nothing at $MISSING: check says so; run starts offline"
    out=/tmp/check-missing.out
    run_check "$out" --button GPIO17 --led GPIO27 --i2c-bus $BUS --address $MISSING
    status=$CHECK_STATUS
    log=/tmp/run-missing.log
    "$BIN" run --button GPIO17 --led GPIO27 --i2c-bus $BUS --address $MISSING 2>"$log" &
    RUN_PID=$!
    wait_until 10 has "$log" "display offline"
    sleep 0.5
    stop_run
    show_log "$log"
    if [ "$status" = 0 ]; then
        fail 2 "check --address $MISSING exited with 0"
    elif ! grep -q PROBLEM "$out" || ! grep -q "$MISSING" "$out"; then
        fail 2 "check --address $MISSING does not report a PROBLEM naming $MISSING"
    elif [ "$(field "$log" started display)" != offline ]; then
        fail 2 "the started line says display=$(field "$log" started display), not offline"
    elif ! has "$log" "display offline"; then
        fail 2 "no 'display offline' in the log"
    elif [ "$RUN_STATUS" != 0 ]; then
        fail 2 "run exited with $RUN_STATUS after SIGTERM"
    else
        pass 2 "check --address $MISSING -> $status naming it; run: started display=offline, display offline, exit 0 after SIGTERM"
    fi
}

# --- glass -------------------------------------------------------------------------------------
run_ready() { line_used GPIO17 && line_used GPIO27 && run_holds_keypad_device; }

scenario_glass() {
    begin glass "run with the LCD at $LCD_ADDRESS on i2c-bcm2835, Send on a uinput keypad (A), a $GLASS_SECONDS s countdown; the glass decoded on the host from qemu's I2C trace"
    cat >/tmp/verify.sh <<EOF
#!/bin/sh
read -r code
[ "\$code" = 2468 ]
EOF
    cat >/tmp/glass.json5 <<EOF
// vm-test pi3: the Pi's GPIO17/GPIO27, the LCD at 0x27 on i2c-1, Send on the keypad's A
{
  button: { line: "GPIO17", debounceMs: 30 },
  led: { line: "GPIO27" },
  lcd: { bus: $BUS, address: $LCD_ADDRESS },
  cooldown: { seconds: $GLASS_SECONDS },
  stateFile: "/tmp/glass.state",
  keypad: {
    enabled: true,
    // the guest's file systems are all in RAM (initramfs, tmpfs): accepted here
    allowForgetfulState: true,
    backend: "evdev", device: "$KP_DEVICE",
    sendKey: "A",
    entry: { minLength: 4, maxLength: 6, timeoutSeconds: null },
    verify: { command: ["/bin/sh", "/tmp/verify.sh"], timeoutSeconds: 5 },
  },
}
EOF
    rm -f /tmp/glass.state
    kp_start
    if ! kp_plug; then
        fail glass "uinput-keypad could not plug: $(cat "$KP_OUT")"
        return
    fi
    # A warm-up run through the same path (start, A, the press frame, SIGTERM), before the marks:
    # TCG translates guest code the first time it runs, and on the loaded host the first press
    # frame came 13-118 ms after `countdown started` (on four emulated A53s sharing one host
    # thread); the translations stay cached for the measured run (same binary, same pages).
    sed 's|/tmp/glass.state|/tmp/warm.state|' /tmp/glass.json5 >/tmp/warm.json5
    "$BIN" run --config /tmp/warm.json5 2>/tmp/warm.log &
    RUN_PID=$!
    if wait_until 15 run_ready; then
        sleep 1
        kp_do typed type A 0 50
        wait_until 5 has /tmp/warm.log "countdown started"
        sleep 2
    fi
    stop_run
    echo "warm-up run: $(grep -c . /tmp/warm.log) log lines, $(grep -c 'countdown started' /tmp/warm.log) countdown started, exit $RUN_STATUS"
    # Time marks before the run (the host maps its trace's clock onto this one with them).
    i2c-mark $MARK_BUS $MARK_ADDRESS 8 0x10 | sed 's/^/PI3-MARK /'
    echo "PI3-GLASS BEGIN"
    log=/tmp/glass.log
    "$BIN" run --config /tmp/glass.json5 2>"$log" &
    RUN_PID=$!
    if ! wait_until 15 run_ready; then
        stop_run
        show_log "$log"
        fail glass "run --config did not come up (lines used and the keypad open) within 15 s"
        return
    fi
    sleep 1
    # A then a plain sleep through the countdown: no polling (a grep and an awk every 50 ms) in
    # the emulated CPUs while the frames are timed.
    kp type A 0 50
    sleep $((GLASS_SECONDS + 1))
    wait_until 5 has "$log" "countdown finished"
    sleep 0.3
    stop_run
    echo "PI3-GLASS END"
    i2c-mark $MARK_BUS $MARK_ADDRESS 8 0x20 | sed 's/^/PI3-MARK /'
    kp_stop
    show_log "$log"
    echo "uinput-keypad: $(tr '\n' ';' <"$KP_OUT")"
    sed 's/^/PI3-LOG /' "$log"
    echo "PI3-RUN-STATUS $RUN_STATUS"
    started=$(stamp "$log" "countdown started")
    finished=$(stamp "$log" "countdown finished")
    if [ "$(field "$log" started i2c_writes)" != batched ]; then
        fail glass "the started line says i2c_writes=$(field "$log" started i2c_writes), not batched"
    elif [ "$(field "$log" started display)" != online ]; then
        fail glass "the started line says display=$(field "$log" started display), not online"
    elif [ -z "$started" ] || [ -z "$finished" ]; then
        fail glass "no countdown started/finished in the log (the key A did not press Send?)"
    elif ! within "$started" "$finished" "$GLASS_SECONDS"; then
        fail glass "the countdown took $(difference "$started" "$finished") s, not $GLASS_SECONDS s (50 ms)"
    elif [ "$RUN_STATUS" != 0 ]; then
        fail glass "run exited with $RUN_STATUS after SIGTERM"
    else
        # The host decodes the glass and prints this scenario's RESULT line with these seconds.
        echo "PI3-GLASS GUEST-OK seconds=$(elapsed) countdown $(difference "$started" "$finished") s"
    fi
}

scenario_hw
scenario_1
scenario_2
scenario_glass
exit "$failures"
