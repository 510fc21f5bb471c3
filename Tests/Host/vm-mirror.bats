#!/usr/bin/env bats
# vm-test's mirror (vm/apt-sources.sh): the packages of vm-test's guests come from the machine's
# apt sources; these fixtures stand for a machine's /etc/apt (APT_SOURCES_LIST, APT_SOURCES_PARTS),
# with hosts that do not resolve.

load helpers/common

setup() {
    etc=$BATS_TEST_TMPDIR/apt-etc
    mkdir -p "$etc/parts"
    printf '%s\n' '# one-line format' 'deb-src http://src.invalid/debian bookworm main' \
        'deb [arch=amd64 signed-by=/k.gpg] http://proxy.invalid:3142/debian/ bookworm main # note' > "$etc/list"
    printf '%s\n' 'Types: deb' 'URIs: http://off.invalid/debian-security' 'Suites: bookworm-security' \
        'Enabled: no' '' '# deb822' 'Types: deb deb-src' 'URIs: https://sec.invalid/debian-security/' \
        'Suites: bookworm-security' '  trixie-security' 'Signed-By:' ' -----BEGIN PGP PUBLIC KEY BLOCK-----' \
        ' .' > "$etc/parts/debian.sources"
    printf 'deb http://other.invalid/debian bookworm main\n' > "$etc/parts/zz.list.disabled"
}

mirror() { APT_SOURCES_LIST=$etc/list APT_SOURCES_PARTS=$etc/parts bash -c '. vm/apt-sources.sh && apt_mirror "$@"' - "$@"; }

@test "vm-test's mirror comes from the machine's apt sources: one-line and deb822 formats, Enabled: no skipped, backports from the release" {
    local pair
    for pair in bookworm=http://proxy.invalid:3142/debian bookworm-security=https://sec.invalid/debian-security \
        trixie-security=https://sec.invalid/debian-security bookworm-backports=http://proxy.invalid:3142/debian; do
        run mirror "${pair%%=*}"
        assert_success
        assert_output "${pair#*=}"
    done
}

@test "vm-test's mirror: a variable overrides the sources" {
    run mirror trixie VM_X
    assert_failure
    VM_X=http://override.invalid/ run mirror trixie VM_X
    assert_success
    assert_output http://override.invalid
}

@test "vm-test's mirror: a suite no source serves is exit 1 with one line naming the suite, the files read and the variable" {
    mirror trixie VM_X > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" || status=$?
    assert_equal "${status:-0}" 1
    assert_file_empty "$BATS_TEST_TMPDIR/out"
    assert_equal "$(wc -l < "$BATS_TEST_TMPDIR/err")" 1
    expect_contains "$BATS_TEST_TMPDIR/err" "serves the suite trixie" "$etc/list, $etc/parts/debian.sources" "set VM_X"
}
