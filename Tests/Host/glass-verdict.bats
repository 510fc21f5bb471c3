#!/usr/bin/env bats
# The glass scenario's timing verdict (vm/glass-verdict.awk, used by vm/glass.sh in the guests and
# vm/pi3/host.sh on the host), on decoded glass made up here: every label within 50 ms of its
# second; one guest stall (a single label late, the next one on time) named but not failed; a late
# label followed by another late one, two stalls, a stall over 250 s or a drift fail.

load helpers/common

# decode SECONDS OFFSETS...: hd44780-decode's output of a SECONDS countdown pressed at t=10 s,
# OFFSETS[k] (s) added to the label of k s after the press (k = 1 .. SECONDS; missing ones are 0).
# Every transaction is 10 B; init 2 tx, first paint, press, ticks, end, then "Stopped".
decode() {
    local seconds=$1
    shift
    local offsets=("$@")
    awk -v seconds="$seconds" -v offsets="${offsets[*]}" 'BEGIN {
        n = split(offsets, off, " ")
        tx = 0
        printf "1.000000000 tx=%d wire=10 bl=on |                |                |\n", ++tx
        printf "1.100000000 tx=%d wire=10 bl=on |                |                |\n", ++tx
        printf "1.200000000 tx=%d wire=10 bl=on |Verification    |Send code       |\n", ++tx
        printf "10.000000000 tx=%d wire=10 bl=on |Verification    |Resend (%02d)     |\n", ++tx, seconds
        for (k = 1; k <= seconds; k++) {
            label = k < seconds ? sprintf("Resend (%02d)", seconds - k) : "Resend"
            printf "%.9f tx=%d wire=10 bl=on |Verification    |%-16s|\n", 10 + k + (k <= n ? off[k] : 0), ++tx, label
        }
        printf "%.9f tx=%d wire=10 bl=on |Stopped         |                |\n", 11 + seconds, ++tx
    }'
}

# verdict SECONDS OFFSETS...: the verdict on that glass (press frame at the log's "countdown started").
verdict() {
    decode "$@" > "$BATS_TEST_TMPDIR/glass.txt"
    awk -v seconds="$1" -v started=10.000 -v tolerance=0.050 \
        -v init_b=20 -v init_tx=2 -v paint_b=10 -v paint_tx=1 -v press_b=10 -v press_tx=1 \
        -v one_b=10 -v one_tx=1 -v two_b=10 -v two_tx=1 -v end_b=10 -v end_tx=1 \
        -v whole_b=610 -v whole_tx=61 -f vm/glass-verdict.awk "$BATS_TEST_TMPDIR/glass.txt"
}

@test "a countdown whose labels all reach the bus within 50 ms of their seconds passes" {
    run verdict 30 0.010 -0.020 0.049 0 -0.049
    assert_success
    assert_output --partial "PASS "
    assert_output --partial "labels within +0.049 s of their seconds; Stopped"
    refute_output --partial "stall"
}

@test "one label 59 ms late with the next one on time passes and is named as a guest stall" {
    run verdict 30 0 0 0 0 0 0 0 0 0 0 0 0.059 0.004
    assert_success
    assert_output --partial "PASS "
    assert_output --partial "(but one: the label of 18 s left +0.059 s, the next one on time: a guest stall)"
}

@test "a late label followed by another late one fails" {
    run verdict 30 0 0 0 0 0 0 0 0 0 0 0 0.059 0.060
    assert_output "FAIL the label of 17 s left reached the bus +0.060 s from its second, after the one of 18 s left at +0.059 s: late twice in a row"
}

@test "two stalls in one countdown fail" {
    run verdict 30 0 0 0.080 0 0 0 0 0 0 0 0 0.059 0
    assert_output "FAIL the label of 18 s left reached the bus +0.059 s from its second"
}

@test "a label 300 ms late fails" {
    run verdict 30 0 0 0 0.300
    assert_output "FAIL the label of 26 s left reached the bus +0.300 s from its second"
}

@test "a label early by more than 50 ms fails (a stall only ever makes a label late)" {
    run verdict 30 0 0 0 -0.060
    assert_output "FAIL the label of 26 s left reached the bus -0.060 s from its second"
}

@test "a countdown that drifts 3 ms a second fails where the drift passes 50 ms" {
    local drift=() k
    for ((k = 1; k <= 30; k++)); do drift+=("$(awk -v k="$k" 'BEGIN { printf "%.3f", 0.003 * k }')"); done
    run verdict 30 "${drift[@]}"
    assert_output "FAIL the label of 12 s left reached the bus +0.054 s from its second, after the one of 13 s left at +0.051 s: late twice in a row"
}
