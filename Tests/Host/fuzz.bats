#!/usr/bin/env bats
# Every parser of outside input under libFuzzer + AddressSanitizer (docs/testing.md, Fuzzing):
# each target's kept crashers replayed (each must pass now), then RESEND_FUZZ_SECONDS (default
# 15) of fuzzing from its seed corpus, through scripts/fuzz. A crash, trap, ASan report,
# time-out or out-of-memory fails the target's test; scripts/fuzz's output says where the input is.
# bats file_tags=fuzz

load helpers/common

setup_file() {
    # The sanitizer build (.build/fuzz) once, before the targets.
    scripts/fuzz --build-only > "$BATS_FILE_TMPDIR/build.log" 2>&1 || { cat "$BATS_FILE_TMPDIR/build.log" >&2; return 1; }
}

fuzz() {
    run scripts/fuzz --seconds "${RESEND_FUZZ_SECONDS:-15}" "$1"
    assert_success
    assert_line "fuzz: 1 passed, 0 failed"
}

@test "fuzz: the configuration file parser (config check's entry point) never traps; a bad file is exit 78 with a message" {
    fuzz config
}

@test "fuzz: the headless script parser never traps, and a valid script runs on virtual time without an LCD protocol violation" {
    fuzz script
}

@test "fuzz: the state file decoder never traps, re-encodes what it decodes, and no resume gives a countdown longer than allowed" {
    fuzz state
}

@test "fuzz: the command-line parser never traps and prints no raw control character in an error line" {
    fuzz cli
}

@test "fuzz: the LCD driver shows every random frame exactly on the emulator, without a protocol violation" {
    fuzz lcd
}

@test "fuzz: the Unifont .hex reader gives glyphs of 8 or 16 by 16 or an error naming a line, never a crash" {
    fuzz unifont
}

@test "fuzz: the OLED drivers (SSD1306, SH1106) leave the emulated glass exactly the frame after each call, without a datasheet violation" {
    fuzz oled
}

@test "fuzz: every target of scripts/fuzz has its @test here" {
    local target
    for target in $(sed -n 's/^all_targets=(\(.*\))$/\1/p' scripts/fuzz); do
        grep -qx "    fuzz $target" "$BATS_TEST_FILENAME" || fail "no @test for the fuzz target $target"
    done
}
