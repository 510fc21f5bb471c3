# shellcheck shell=sh
# The OLED scenario of vm-test (i2c-plain only): sourced by vm/scenarios.sh when ADAPTER=plain,
# after vm/glass.sh, with vm/lib.sh's and scenarios.sh's helpers (begin, pass, fail, skip,
# start_run, stop_run, record_*, ...).
#
# The plain adapter's device moves to 0x3C (its `address` parameter) and the release binary drives
# an SSD1306 there with board/examples/chinese.json5 (copied into the guest as /vm/chinese.json5,
# Debian's unifont.hex as /usr/share/unifont/unifont.hex) and a short countdown; the adapter's
# record is decoded by oled-decode (HALMock's OLED emulator, the glass read cell by cell with the
# font's glyphs) and judged by vm/oled-verdict.awk: every label on the glass in order and within
# TOLERANCE of its second, every cell a glyph of the font, no datasheet rule broken, the stopped
# title after SIGTERM. The device goes back to LCD_ADDRESS afterwards.
# Only where the guest has oled-decode and the font (the x86-64 guest): the arm64 guest runs its
# decoders as x86-64 builds under qemu-user (vm/arm64/host.sh), a second decoder and the 3.8 MB
# font there would test qemu-user, not the program; its binary's OLED bytes come from the same
# sources as the x86-64 one. It skips, naming what it lacks.
# shellcheck disable=SC2154 # TOLERANCE, RUN_STATUS and the helpers come from vm/scenarios.sh

OLED_SECONDS=${OLED_SECONDS:-10}
OLED_ADDRESS=0x3c
OLED_FONT=/usr/share/unifont/unifont.hex
# The example's texts (board/examples/chinese.json5): the countdown label as a printf format.
OLED_COUNTDOWN='重新获取(%02d)'
OLED_READY='重新获取'
OLED_STOPPED='已停止'

scenario_oled() {
    begin oled "an SSD1306 at $OLED_ADDRESS on the plain adapter: the Chinese example, a ${OLED_SECONDS} s countdown decoded from the recorded bytes into pixels; each label on its second, every glyph the font's"
    if ! command -v oled-decode >/dev/null 2>&1 || [ ! -r "$OLED_FONT" ] || [ ! -r /vm/chinese.json5 ]; then
        skip oled "this guest has no oled-decode, $OLED_FONT or /vm/chinese.json5 (vm-test packs them for the x86-64 guest only)"
        return
    fi
    echo "$OLED_ADDRESS" >/sys/module/i2c_plain/parameters/address
    record_clear
    log=/tmp/oled.log
    if ! start_run "$log" --config /vm/chinese.json5 --duration "$OLED_SECONDS"; then
        run_not_up "$log" "run did not come up within 10 s" oled
        echo "$LCD_ADDRESS" >/sys/module/i2c_plain/parameters/address
        return
    fi
    sleep 0.5
    clean_press
    wait_until $((OLED_SECONDS + 5)) has "$log" "countdown finished"
    sleep 0.3
    stop_run
    echo "$LCD_ADDRESS" >/sys/module/i2c_plain/parameters/address
    show_log "$log"
    record_dump >/tmp/oled.record
    oled-decode --chip ssd1306 --address "$OLED_ADDRESS" --font "$OLED_FONT" </tmp/oled.record >/tmp/oled.txt 2>&1
    decode_status=$?
    echo "the record: $(wc -l </tmp/oled.record) messages; oled-decode -> $decode_status:"
    sed 's/^/    /' /tmp/oled.txt
    verdict=$(awk -v seconds="$OLED_SECONDS" -v started="$(stamp "$log" "countdown started")" -v tolerance="$TOLERANCE" \
        -v countdown="$OLED_COUNTDOWN" -v ready="$OLED_READY" -v stopped="$OLED_STOPPED" -f /vm/oled-verdict.awk /tmp/oled.txt)
    echo "started line: $(line_of "$log" started)"
    if [ "$decode_status" != 0 ]; then
        fail oled "oled-decode exited with $decode_status"
    elif [ "$RUN_STATUS" != 0 ]; then
        fail oled "run exited with $RUN_STATUS after SIGTERM"
    elif [ "${verdict%% *}" != PASS ]; then
        fail oled "${verdict#FAIL }"
    else
        pass oled "${verdict#PASS }"
    fi
}
