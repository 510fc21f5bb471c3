#!/usr/bin/env bats
# The board's deployment files (board/raspberry-pi): the systemd unit (`systemd-analyze verify`
# and `security`, alone and with each adapter's drop-in), the sysusers entry, the udev rules, the
# default configuration, and the wiring guide.

load helpers/common

board=board/raspberry-pi
unit=board/raspberry-pi/resend-button.service

setup_file() {
    RESEND_BINARY=$(debug_binary)
    export RESEND_BINARY
}

# verify_unit UNIT: `systemd-analyze verify` of a copy that runs a stub (verify needs ExecStart's
# binary to exist) says nothing at all (it exits 0 on mere warnings).
verify_unit() {
    local dir=$BATS_TEST_TMPDIR/verify copy output status=0
    copy=$dir/resend-button.service
    mkdir -p "$dir"
    printf '#!/bin/sh\nexit 0\n' > "$dir/resend-button"
    chmod 0755 "$dir/resend-button"
    sed -e "s#^ExecStart=/usr/bin/resend-button #ExecStart=$dir/resend-button #" \
        -e "s#^ExecStopPost=/usr/bin/resend-button #ExecStopPost=$dir/resend-button #" "$1" > "$copy"
    grep -q "^ExecStart=$dir/resend-button run --config /etc/resend-button/config.json5$" "$copy" \
        || { echo "ExecStart not as expected"; return 1; }
    grep -q "^ExecStopPost=$dir/resend-button output off --config /etc/resend-button/config.json5$" "$copy" \
        || { echo "ExecStopPost not as expected"; return 1; }
    output=$(systemd-analyze verify "$copy" 2>&1) || status=$?
    echo "$output"
    [[ $status == 0 && -z $output ]]
}

# security_at_most_2 UNIT: `systemd-analyze security --offline=yes` rates it 2.0 or lower.
security_at_most_2() {
    local score
    score=$(cd "$BATS_TEST_TMPDIR" && systemd-analyze security --offline=yes "$1" 2>&1 \
        | sed -n 's/.*Overall exposure level for resend-button.service: \([0-9.]*\).*/\1/p')
    echo "exposure: ${score:-none}"
    [[ -n $score ]] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'
}

@test "systemd-analyze verify has nothing to say about the unit" {
    verify_unit "$unit"
}

@test "the verify check catches a misspelled key (UMsk=)" {
    sed 's/^UMask=/UMsk=/' "$unit" > "$BATS_TEST_TMPDIR/broken.service"
    run verify_unit "$BATS_TEST_TMPDIR/broken.service"
    assert_failure
    assert_output --partial "UMsk"
}

@test "systemd-analyze security --offline=yes rates the unit 2.0 or lower" {
    security_at_most_2 "$PWD/$unit"
}

@test "the unit with each adapter's drop-in (verify-api, gsm, totp) still verifies and rates 2.0 or lower" {
    local adapter merged=$BATS_TEST_TMPDIR/dropin/resend-button.service
    mkdir -p "$BATS_TEST_TMPDIR/dropin"
    for adapter in verify-api gsm totp; do
        cat "$unit" "adapters/systemd/$adapter.conf" > "$merged"
        verify_unit "$merged" || fail "$adapter: verify"
        security_at_most_2 "$merged" || fail "$adapter: security"
    done
}

@test "the unit has the promised service settings, two device classes and nothing that cuts the network" {
    local line
    for line in \
        'Type=notify' 'NotifyAccess=main' 'WatchdogSec=30s' 'Restart=on-failure' \
        'RestartPreventExitStatus=64 78' 'StateDirectory=resend-button' 'User=resend-button' \
        'SupplementaryGroups=gpio i2c' 'DevicePolicy=closed' 'DeviceAllow=char-gpiochip rw' \
        'DeviceAllow=char-i2c rw' 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' \
        'After=systemd-modules-load.service' \
        'ExecStart=/usr/bin/resend-button run --config /etc/resend-button/config.json5' \
        'ExecStopPost=/usr/bin/resend-button output off --config /etc/resend-button/config.json5'; do
        grep -qxF "$line" "$unit" || fail "missing line: $line"
    done
    [[ $(grep -c '^DeviceAllow=' "$unit") == 2 ]] || fail "other DeviceAllow lines"
    run grep -E '^(PrivateNetwork=yes|IPAddressDeny=|PrivateDevices=yes|DynamicUser=yes)' "$unit"
    assert_failure 1
}

@test "sysusers creates resend-button in groups gpio and i2c, and a second run changes nothing" {
    local root=$BATS_TEST_TMPDIR/sysusers before
    mkdir -p "$root/etc"
    install -D -m 0644 "$board/resend-button.sysusers.conf" "$root/usr/lib/sysusers.d/resend-button.conf"
    systemd-sysusers --root="$root"
    run cat "$root/etc/passwd"
    assert_line --regexp '^resend-button:x:[0-9]*:[0-9]*:[^:]*:/:/usr/sbin/nologin$'
    run cat "$root/etc/group"
    assert_line --regexp '^gpio:x:[0-9]+:(.*,)?resend-button(,.*)?$'
    assert_line --regexp '^i2c:x:[0-9]+:(.*,)?resend-button(,.*)?$'
    before=$(cat "$root/etc/passwd" "$root/etc/group")
    systemd-sysusers --root="$root"
    [[ $before == "$(cat "$root/etc/passwd" "$root/etc/group")" ]] || fail "the second run changed the user database"
}

@test "the udev rules give gpiochip* and i2c-* to the groups gpio and i2c, mode 0660, and nothing else" {
    local rules=$board/60-resend-button.rules
    expect_contains "$rules" \
        'SUBSYSTEM=="gpio", KERNEL=="gpiochip[0-9]*", GROUP="gpio", MODE="0660"' \
        'SUBSYSTEM=="i2c-dev", KERNEL=="i2c-[0-9]*", GROUP="i2c", MODE="0660"'
    [[ $(grep -cv '^\(#\|$\)' "$rules") == 2 ]] || fail "not exactly two rules"
}

@test "config.json5 uses only the documented keys, wired as in the guide" {
    local config=$board/config.json5 keys
    # Keys of the JSON5 object (unquoted identifiers before a colon, outside comments).
    keys=$(sed 's://.*$::' "$config" | grep -oE '[A-Za-z]+[[:space:]]*:' | tr -d ' :' | sort -u | tr '\n' ' ')
    assert_equal "$keys" "activeLow address bias bus button cooldown geometry lcd led line seconds stateFile "
    expect_contains "$config" 'line: "GPIO17"' 'bias: "pull-up"' 'line: "GPIO27"' 'bus: 1' \
        'address: 0x27' 'geometry: "16x2"' 'stateFile: "/var/lib/resend-button/state.json"'
}

@test "resend-button config check accepts config.json5" {
    run "$RESEND_BINARY" config check "$board/config.json5"
    assert_success
}

@test "the wiring guide names the header pins and the 5 V pull-up trap" {
    expect_contains docs/wiring.md 'GPIO17' '| 11 |' '| 9 |' 'GPIO27' '| 13 |' '330 Ω' \
        '| 2 | 5 V' '| 6 | GND' '| 3 | GPIO2' '| 5 | GPIO3' 'dtparam=i2c_arm=on' 'level shifter' 'pull-up'
    expect_contains "$board/config.txt" 'dtparam=i2c_arm=on'
}
