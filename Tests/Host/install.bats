#!/usr/bin/env bats
# scripts/install into a temporary root: every file in place with its mode, a second run changing
# nothing, an edited configuration kept, bad usage refused.
# bats file_tags=release

load helpers/common

board=board/raspberry-pi

setup_file() {
    RESEND_RELEASE_BINARY=$(release_binary)
    export RESEND_RELEASE_BINARY
}

setup() {
    binary=$RESEND_RELEASE_BINARY
    root=$BATS_TEST_TMPDIR/root
    installed_files=(
        usr/bin/resend-button
        usr/share/resend-button/config.json5
        etc/resend-button/config.json5
        lib/systemd/system/resend-button.service
        lib/udev/rules.d/60-resend-button.rules
        usr/lib/sysusers.d/resend-button.conf
        usr/lib/modules-load.d/resend-button.conf
        usr/share/doc/resend-button/wiring.md
        usr/lib/resend-button/adapters/adapter-common.sh
        usr/share/doc/resend-button/config.example.json5
    )
    local adapter
    for adapter in verify-api gsm totp; do
        installed_files+=("usr/lib/resend-button/adapters/$adapter" "usr/share/resend-button/adapters/$adapter.conf"
            "usr/share/resend-button/adapters/systemd/$adapter.conf")
    done
}

snapshot() { (cd "$root" && find . -printf '%p %m %s %T@\n' | sort); }

# install_into LOG: scripts/install --root $root with the release binary; its output in LOG.
install_into() {
    scripts/install --root "$root" --binary "$binary" > "$1" 2>&1 || { cat "$1"; return 1; }
    cat "$1"
}

@test "install --root puts every file in place, byte for byte, with its mode, and nothing else" {
    install_into "$BATS_TEST_TMPDIR/install.log"
    local file
    for file in "${installed_files[@]}"; do
        assert_file_exists "$root/$file"
    done
    assert_equal "$(stat -c %a "$root/usr/bin/resend-button")" 755
    assert_equal "$(stat -c %a "$root/lib/systemd/system/resend-button.service")" 644
    cmp "$binary" "$root/usr/bin/resend-button"
    cmp "$board/config.json5" "$root/etc/resend-button/config.json5"
    cmp "$board/config.json5" "$root/usr/share/resend-button/config.json5"
    cmp "$board/resend-button.service" "$root/lib/systemd/system/resend-button.service"
    # i2c-dev at boot: one module line, nothing else.
    assert_equal "$(grep -v '^#' "$root/usr/lib/modules-load.d/resend-button.conf")" i2c-dev
    expect_contains "$BATS_TEST_TMPDIR/install.log" 'skipped systemd-sysusers, udevadm trigger and systemctl daemon-reload'
    assert_equal "$(find "$root" -type f | wc -l)" "${#installed_files[@]}"
}

@test "a second install changes nothing" {
    install_into "$BATS_TEST_TMPDIR/install1.log"
    local before
    before=$(snapshot)
    install_into "$BATS_TEST_TMPDIR/install2.log"
    expect_contains "$BATS_TEST_TMPDIR/install2.log" "install: 0 file(s) changed"
    [[ $before == "$(snapshot)" ]] || fail "the tree changed"
}

@test "install keeps an edited config and puts the new default in config.json5.new" {
    install_into "$BATS_TEST_TMPDIR/install1.log"
    local config=$root/etc/resend-button/config.json5 before
    sed -i 's/seconds: 60/seconds: 90/' "$config"
    cp "$config" "$BATS_TEST_TMPDIR/edited.json5"
    install_into "$BATS_TEST_TMPDIR/install2.log"
    cmp "$BATS_TEST_TMPDIR/edited.json5" "$config" || fail "the edited config was overwritten"
    cmp "$board/config.json5" "$config.new" || fail "no new default next to it"
    expect_contains "$BATS_TEST_TMPDIR/install2.log" "kept (edited); the new default is in /etc/resend-button/config.json5.new"
    before=$(snapshot)
    install_into "$BATS_TEST_TMPDIR/install3.log"
    expect_contains "$BATS_TEST_TMPDIR/install3.log" "install: 0 file(s) changed"
    [[ $before == "$(snapshot)" ]] || fail "the tree changed on the run after"
}

@test "install rejects an unknown argument (64) and a missing binary (1) and writes nothing" {
    run scripts/install --root "$BATS_TEST_TMPDIR/unused" --frobnicate
    assert_failure 64
    assert_not_exist "$BATS_TEST_TMPDIR/unused"
    run scripts/install --root "$BATS_TEST_TMPDIR/unused" --binary "$BATS_TEST_TMPDIR/no-such-binary"
    assert_failure 1
}

@test "install --root with a relative path is relative to the caller's directory" {
    (cd "$BATS_TEST_TMPDIR" && "$REPO/scripts/install" --root relative-root --binary "$binary")
    assert_file_exists "$BATS_TEST_TMPDIR/relative-root/usr/bin/resend-button"
    assert_not_exist "$REPO/relative-root"
}
