#!/usr/bin/env bats
# The OLED scenario's verdict (vm/oled-verdict.awk, used by vm/oled.sh in the x86-64 guest), on
# oled-decode output made up here: a 10 s countdown of the Chinese example whose labels all show
# within 50 ms of their seconds passes; a late label, a cell no glyph of the font explains ("?"),
# a label out of order, a datasheet violation and a missing stopped title fail.

load helpers/common

# decode SECONDS OFFSETS...: oled-decode's output of a SECONDS countdown, countdown started at t=10 s
# (the press frame 18 ms later), OFFSETS[k] (s) added to the label of k s after the start (k = 1 ..
# SECONDS; missing ones are 0). A tick is a command write (8 B) then the data (14 B), 1 ms apart;
# init, first paint, the ticks, the end, then the stopped title. LABEL_K and GLASS_K (optional)
# replace the label of tick K / add text to line 3.
decode() {
    local seconds=$1
    shift
    local offsets=("$@")
    awk -v seconds="$seconds" -v offsets="${offsets[*]}" -v label_k="${LABEL_K:-0}" -v label="${LABEL:-}" 'BEGIN {
        n = split(offsets, off, " ")
        tx = 0
        printf "1.000000000 tx=%d wire=26 data=0 |||||\n", ++tx
        printf "1.003000000 tx=%d wire=1026 data=1024 |||||\n", ++tx
        printf "1.200000000 tx=%d wire=160 data=158 |短信验证|获取验证码|||\n", ++tx
        printf "10.018000000 tx=%d wire=194 data=186 |短信验证|重新获取(%02d)|||\n", ++tx, seconds
        for (k = 1; k <= seconds; k++) {
            shown = k < seconds ? sprintf("重新获取(%02d)", seconds - k) : "重新获取"
            if (k == label_k) shown = label
            t = 10 + k + (k <= n ? off[k] : 0)
            printf "%.9f tx=%d wire=8 data=0 |短信验证|%s|||\n", t, ++tx, previous == "" ? sprintf("重新获取(%02d)", seconds) : previous
            printf "%.9f tx=%d wire=14 data=12 |短信验证|%s|||\n", t + 0.001, ++tx, shown
            previous = shown
        }
        printf "%.9f tx=%d wire=254 data=252 |%s||||\n", 11 + seconds, ++tx, ENVIRON["STOPPED_SHOWN"] != "" ? ENVIRON["STOPPED_SHOWN"] : "已停止"
        if (ENVIRON["VIOLATION"] != "") print "violation 12.000: " ENVIRON["VIOLATION"]
        printf "transactions=%d wire=1000 violations=%d\n", tx, ENVIRON["VIOLATION"] != ""
    }'
}

# verdict SECONDS OFFSETS...: the verdict on that glass (countdown started at 10.000).
verdict() {
    decode "$@" >"$BATS_TEST_TMPDIR/oled.txt"
    awk -v seconds="$1" -v started=10.000 -v tolerance=0.050 -v countdown='重新获取(%02d)' -v ready='重新获取' \
        -v stopped='已停止' -f vm/oled-verdict.awk "$BATS_TEST_TMPDIR/oled.txt"
}

@test "a countdown whose labels all show within 50 ms of their seconds passes, naming the press frame and the ticks' bytes" {
    run verdict 10 0.010 -0.020 0.049 0 -0.049
    assert_success
    assert_output 'PASS "获取验证码" -> "重新获取(10)" (press frame +0.018 s after countdown started) ... "重新获取": 9 ticks of 22-22 B (18 tx in all), end 22 B in 2 tx; labels within +0.049 s of their seconds; glyphs all the font'"'"'s; "已停止" after SIGTERM'
}

@test "a label 300 ms late fails, naming it" {
    run verdict 10 0 0 0.300
    assert_output "FAIL the label of 7 s left reached the glass +0.300 s from its second"
}

@test "a label 80 ms late followed by another late one fails; one alone is a guest stall, named" {
    run verdict 10 0 0 0.080 0.080
    assert_output "FAIL the label of 6 s left reached the glass +0.080 s from its second, after the one of 7 s left at +0.080 s: late twice in a row"
    run verdict 10 0 0 0.080
    assert_output --partial "PASS "
    assert_output --partial "(but one: the label of 7 s left +0.080 s, the next one on time: a guest stall)"
}

@test "a cell no glyph of the font explains fails" {
    LABEL_K=4 LABEL='重新获取(0?)' run verdict 10
    assert_output --partial 'FAIL transaction 12 shows "|短信验证|重新获取(0?)|||": a cell no glyph of the font explains ("?")'
}

@test "a label out of order fails" {
    LABEL_K=4 LABEL='重新获取(05)' run verdict 10
    assert_output 'FAIL the label shows "重新获取(05)" where "重新获取(06)" was due'
}

@test "a datasheet violation seen by the emulator fails" {
    VIOLATION="command 0x21 is cut by the end of the write (2 of its bytes)" run verdict 10
    assert_output "FAIL 1 datasheet rules broken, as the OLED emulator saw them; the first: violation 12.000: command 0x21 is cut by the end of the write (2 of its bytes)"
}

@test "the glass without the stopped title after SIGTERM fails" {
    STOPPED_SHOWN='短信验证' run verdict 10
    assert_output 'FAIL the glass after SIGTERM shows "短信验证", not "已停止"'
}
