#!/usr/bin/env bats
# The power-cut scenario's verdict (vm/powercut/verdict.awk, used by vm/powercut/host.sh), on
# consoles made up here: two boots around one cut. The first boot starts fresh, presses (a send,
# a countdown of 10 s), writes two versions of the state and starts one check; the second boot
# finds a file. The verdict must pass the new file with the try counted and the countdown kept,
# and fail a free try, a torn file, a countdown that ended early and a dirty file system.

load helpers/common

# first_boot: the console of a boot that pressed at 1000000 ms and started one check before the
# cut; its last version is aaaa000000000002.
first_boot() {
    cat <<'EOF'
1.0 PC-HOST BOOT mode=run mutant=none cut=verify/1/5
1.1 PC BOOT mode=run mutant=none
1.2 PC MOUNT ok rw,relatime
1.3 PC FILE absent
1.4 PC CORRUPT 0
1.5 4.246 state fresh start
1.6 PC READY
1.7 PC PRESS 1000000
1.8 4.364 countdown started seconds=10
1.9 PC VERSION aaaa000000000001 336
2.0 PC SEND 1000080
2.1 4.916 code submitted length=4 check=1
2.2 PC VERSION aaaa000000000002 341
2.3 PC VERIFY 1000500
2.4 PC-HOST CUT verify n=1 +5ms
EOF
}

# second_boot HASH SIZE FAILURES COUNTDOWN_END PROGRAM_LINE [MORE...]: a boot that found the file
# HASH (or "absent") with those fields; PROGRAM_LINE is the program's state line.
second_boot() {
    local hash=$1 size=$2 failures=$3 end=$4 line=$5
    shift 5
    echo "3.0 PC-HOST BOOT mode=final mutant=none cut=final/0/0"
    echo "3.1 PC MOUNT ok rw,relatime"
    if [[ $hash == absent ]]; then
        echo "3.2 PC FILE absent"
    else
        echo "3.2 PC FILE $hash $size"
        echo "3.3 PC JSON {  \"version\": 1,  \"countdownEndsUnixMs\": $end,  \"entry\": {\"failures\": $failures, \"rounds\": 0}}"
    fi
    echo "3.4 4.700 $line"
    local more
    for more in "$@"; do echo "3.5 $more"; done
}

# verdict FSCK: the verdict on boot-000.log and boot-001.log with fsck result FSCK for cut 0.
# verdict FSCK [FIRST]: the verdict on the first boot's console FIRST (default: first_boot's) and
# boot-001.log, the cut's e2fsck result FSCK.
verdict() {
    local first=${2:-$BATS_TEST_TMPDIR/boot-000.log}
    [[ -n ${2:-} ]] || first_boot >"$first"
    echo "0 $1" >"$BATS_TEST_TMPDIR/fsck.txt"
    run awk -f vm/powercut/verdict.awk -v cooldown=10 -v fsck="$BATS_TEST_TMPDIR/fsck.txt" -v label=powercut \
        "$first" "$BATS_TEST_TMPDIR/boot-001.log"
}

@test "the new file, the check counted and the countdown kept: passes with the figures" {
    second_boot aaaa000000000002 341 1 1010060 "state restored countdown=1" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean
    assert_success
    assert_output "powercut: cuts 1, file versions seen 1 (old 0, new 1, unrecorded 0), tries counted 1/1, torn 0, free tries 0, early reopenings 0 (countdowns kept 1, least margin 60 ms), fsck clean 1/1"
}

@test "the version before the check's write, after the check had started, is a free try" {
    second_boot aaaa000000000001 336 0 1010060 "state restored countdown=1" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean
    assert_failure
    assert_line --partial "cut 0 (verify n=1 +5ms): free try: 1 of 1 checks started not counted"
    assert_line --partial "(old 1, new 0, unrecorded 0), tries counted 0/1, torn 0, free tries 1,"
}

@test "an old version while no check had started passes as old" {
    {
        first_boot | grep -v 'PC VERIFY'
    } >"$BATS_TEST_TMPDIR/first.log"
    second_boot aaaa000000000001 336 1 1010060 "state restored countdown=1" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean "$BATS_TEST_TMPDIR/first.log"
    assert_success
    assert_line --partial "(old 1, new 0, unrecorded 0), tries counted 0/0, torn 0, free tries 0,"
}

@test "a file no boot wrote is counted as unrecorded" {
    second_boot bbbb000000000009 341 1 1010060 "state restored countdown=1" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean
    assert_success
    assert_line --partial "(old 0, new 0, unrecorded 1)"
}

@test "an empty file the program refuses and moves aside is torn (and the try is lost)" {
    second_boot aaaa000000000003 0 "" "" "state unreadable reason=empty moved_to=/state/state.json.corrupt-1" \
        "PC MOVED /state/state.json.corrupt-1" "PC LOOP" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean
    assert_failure
    assert_line --partial "the state file is torn: the program could not read it (0 bytes)"
    refute_line --partial "not moved aside"
    assert_line --partial "torn 1, free tries 1,"
}

@test "an unreadable file left in place is named" {
    second_boot aaaa000000000003 20 "" "" "state unreadable reason=junk moved_to=-" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean
    assert_failure
    assert_line --partial "the unreadable file was not moved aside (moved_to=-)"
}

@test "a corrupt copy missing when the guest looked after the move is named; none looked: no verdict" {
    second_boot aaaa000000000003 20 "" "" "state unreadable reason=junk moved_to=/state/state.json.corrupt-2" \
        "PC LOOP" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean
    assert_line --partial "the unreadable file was not moved aside: no /state/state.json.corrupt-2 after the program said so"
    second_boot aaaa000000000003 20 "" "" "state unreadable reason=junk moved_to=/state/state.json.corrupt-2" \
        >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean
    refute_line --partial "not moved aside"
}

@test "no file after a boot that moved an unreadable one aside and wrote nothing is right; after a write it is gone" {
    {
        echo "1.0 PC-HOST BOOT mode=run mutant=inplace cut=countdown/1/3"
        echo "1.2 PC MOUNT ok rw,relatime"
        echo "1.3 PC FILE aaaa000000000003 341"
        echo "1.5 4.066 state unreadable reason=junk moved_to=/state/state.json.corrupt-1"
        echo "1.6 PC-HOST CUT countdown n=1 +3ms"
    } >"$BATS_TEST_TMPDIR/first.log"
    second_boot absent 0 "" "" "state fresh start" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean "$BATS_TEST_TMPDIR/first.log"
    assert_success
    assert_line --partial "(old 1, new 0, unrecorded 0)"
    echo "1.7 PC VERSION aaaa000000000004 336" >>"$BATS_TEST_TMPDIR/first.log"
    verdict clean "$BATS_TEST_TMPDIR/first.log"
    assert_failure
    assert_line --partial "the state file is gone (it was aaaa000000000003, 1 versions written)"
}

@test "an empty file taken as a fresh start fails" {
    second_boot aaaa000000000003 0 "" "" "state fresh start" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean
    assert_failure
    assert_line --partial "an empty state file, not refused by the program (fresh)"
}

@test "a countdown ending before its press plus the cooldown is an early reopening" {
    second_boot aaaa000000000002 341 1 1009999 "state restored countdown=1" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean
    assert_failure
    assert_line --partial "early reopening: a countdown due to end at 1010000 (press + 10 s) is ending at 1009999"
}

@test "a countdown the program had finished before the cut may be gone" {
    {
        first_boot | sed '$d'
        echo "2.5 14.400 countdown finished"
        echo "2.6 PC-HOST CUT verify n=1 +5ms"
    } >"$BATS_TEST_TMPDIR/first.log"
    second_boot aaaa000000000002 341 1 null "state restored countdown=0" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict clean "$BATS_TEST_TMPDIR/first.log"
    assert_success
    assert_line --partial "early reopenings 0 (countdowns kept 0,"
}

@test "a file system e2fsck finds dirty fails the cut" {
    second_boot aaaa000000000002 341 1 1010060 "state restored countdown=1" >"$BATS_TEST_TMPDIR/boot-001.log"
    verdict "dirty(see fsck-0.txt)"
    assert_failure
    assert_line --partial "e2fsck -fn: dirty(see fsck-0.txt)"
    assert_line --partial "fsck clean 0/1"
}

@test "scripts/vm-test refuses a bad --powercut-* value with exit 64, naming it" {
    run scripts/vm-test --powercut-cuts 0
    assert_failure 64
    assert_output "vm-test: --powercut-cuts: '0' is not a number of cuts from 1 to 999"
    run scripts/vm-test --powercut-mutant skipsync
    assert_failure 64
    assert_output "vm-test: --powercut-mutant: 'skipsync' is not none, nodirsync or inplace"
    VM_POWERCUT_SAMPLE_CUTS=many run scripts/vm-test
    assert_failure 64
    assert_output "vm-test: VM_POWERCUT_SAMPLE_CUTS: 'many' is not a number of cuts from 0 to 999"
}
