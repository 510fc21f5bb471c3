#!/usr/bin/env bats
# vm-test's results reach the host as TAP (vm/results-tap.awk): one test per scenario of every guest.

load helpers/common

@test "vm-test's results become TAP: a pass is ok, a fail and a boot failure are not ok, a skip says why, the plan counts them" {
    printf 'variant\tid\tresult\tseconds\treason\n' > "$BATS_TEST_TMPDIR/results.tsv"
    printf '%s\t%s\t%s\t%s\t%s\n' x86_64-v1 1 pass 3.2 'one countdown of 3.000 s' \
        x86_64-v1 2 fail 4.0 'the LED stayed on; the screen showed Resend (02)' \
        arm64-v1 9 skip 0 'no uinput in this kernel' \
        pi3-v2 boot fail 900 'qemu timed out after 900s' >> "$BATS_TEST_TMPDIR/results.tsv"
    run awk -f vm/results-tap.awk "$BATS_TEST_TMPDIR/results.tsv"
    assert_success
    assert_equal "${lines[0]}" "ok 1 x86_64-v1 1 (3.2 s) one countdown of 3.000 s"
    assert_equal "${lines[1]}" "not ok 2 x86_64-v1 2 (4.0 s) the LED stayed on; the screen showed Resend (02)"
    assert_equal "${lines[2]}" "ok 3 arm64-v1 9 # skip no uinput in this kernel"
    assert_equal "${lines[3]}" "not ok 4 pi3-v2 boot (900 s) qemu timed out after 900s"
    assert_equal "${lines[4]}" "1..4"
    assert_equal "${#lines[@]}" 5
}

@test "vm-test's results of no guest are an empty TAP plan" {
    printf 'variant\tid\tresult\tseconds\treason\n' > "$BATS_TEST_TMPDIR/results.tsv"
    run awk -f vm/results-tap.awk "$BATS_TEST_TMPDIR/results.tsv"
    assert_success
    assert_output "1..0"
}
