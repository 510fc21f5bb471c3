#!/usr/bin/env bats
# scripts/deploy through --dry-run and a fake ssh, and the deployment page.

load helpers/common

# A fake ssh records its arguments; it answers `swift --version` with $FAKE_SWIFT (exit 69 when
# empty, as the real remote command does when there is no swift), and the architecture question
# with $FAKE_ARCH, $FAKE_CODENAME and the file $FAKE_CPUINFO (/proc/cpuinfo).
setup() {
    work=$BATS_TEST_TMPDIR
    architecture=$(dpkg --print-architecture)
    mkdir -p "$work/bin"
    cat > "$work/bin/ssh" << 'EOF'
#!/usr/bin/env bash
printf '%s\n' "$*" >> "$FAKE_SSH_LOG"
cat > /dev/null
case "$*" in
    *'swift --version'*) [[ -n $FAKE_SWIFT ]] || exit 69; echo "Swift version $FAKE_SWIFT (swift-$FAKE_SWIFT-RELEASE)" ;;
    *'dpkg --print-architecture'*) echo "${FAKE_ARCH:-arm64}"; echo "${FAKE_CODENAME:-bookworm}"; cat "${FAKE_CPUINFO:-/dev/null}" ;;
esac
exit 0
EOF
    chmod 0755 "$work/bin/ssh"
    : > "$work/ssh.log"
}

fake_deploy() { # fake_deploy SWIFT_VERSION ARGS...: scripts/deploy with the fake ssh first on PATH
    local swift=$1
    shift
    : > "$work/ssh.log"
    PATH="$work/bin:$PATH" FAKE_SSH_LOG=$work/ssh.log FAKE_SWIFT=$swift scripts/deploy "$@" < /dev/null
}
ssh_calls() { wc -l < "$work/ssh.log"; }
# file_deb: the package of the release binary (built once per bats run); prints its path.
file_deb() {
    RESEND_RELEASE_BINARY=$(release_binary)
    export RESEND_RELEASE_BINARY
    shared_deb
}

@test "deploy --build-on-pi --dry-run prints the 8 steps with their exact commands, in order, and runs nothing" {
    run fake_deploy 6.3.1 pi@raspberrypi.local --build-on-pi --dry-run
    assert_success
    assert_equal "$(ssh_calls)" 0
    assert_equal "$(grep -c '^deploy: step [0-9]/8: ' <<< "$output")" 8
    local expected
    for expected in \
        "ssh pi@raspberrypi.local 'export PATH=\"\$HOME/.local/share/swiftly/bin:\$HOME/.local/bin:\$PATH\"; [ \"\$(dpkg --print-architecture)\" = arm64 ] || exit 68; command -v swift > /dev/null || exit 69; swift --version'" \
        "git archive --format=tar \"\${snapshot:-HEAD}\"; } | ssh pi@raspberrypi.local 'mkdir -p resend-button && find resend-button -mindepth 1 -maxdepth 1 ! -name .build -exec rm -rf {} + && tar -x -C resend-button'" \
        "sudo apt-get install -y libgpiod-dev libi2c-dev libmosquitto-dev gpiod i2c-tools" \
        "cd resend-button && swift build -c release --static-swift-stdlib --product resend-button'" \
        "cd resend-button && sudo scripts/install --binary .build/release/resend-button --enable'" \
        "sudo raspi-config nonint do_i2c 0" \
        "echo dtparam=i2c_arm=on | sudo tee -a" \
        "sudo systemctl restart resend-button;" \
        "sudo -u resend-button resend-button check'" \
        "deploy: dry run: nothing was run"; do
        assert_output --partial "$expected"
    done
    assert_equal "$(grep -oE 'swift --version|git archive|apt-get install|swift build|scripts/install|do_i2c|systemctl restart|resend-button check' <<< "$output" | uniq | tr '\n' ' ')" \
        "swift --version git archive apt-get install swift build scripts/install do_i2c systemctl restart resend-button check "
}

@test "deploy --build-on-pi runs exactly the printed commands (fake ssh)" {
    fake_deploy 6.3.1 pi --build-on-pi --dry-run > "$work/dry.log" 2>&1
    fake_deploy 6.3.1 pi --build-on-pi > "$work/run.log" 2>&1 || { cat "$work/run.log"; false; }
    cat "$work/ssh.log"
    assert_equal "$(ssh_calls)" 8
    # Each printed command's remote part is what ssh received.
    local remote
    while read -r remote; do
        grep -qxF -- "pi $remote" "$work/ssh.log" || fail "not run: $remote"
    done < <(sed -n "s/^  .*ssh pi '\(.*\)'\$/\1/p" "$work/dry.log")
    assert_equal "$(sed -n "s/^  .*ssh pi '\(.*\)'\$/\1/p" "$work/dry.log" | wc -l)" 8
    expect_contains "$work/run.log" "Swift version 6.3.1" "deploy: done"
}

@test "deploy --build-on-pi stops with 69 and says how to get Swift when the Pi has none, or one too old" {
    run fake_deploy "" pi --build-on-pi
    assert_failure 69
    assert_equal "$(ssh_calls)" 1
    assert_output --partial "no Swift 6.2 (or later) toolchain on pi"
    assert_output --partial "swiftly"
    assert_output --partial "https://www.swift.org/install/linux/"
    assert_output --partial "aarch64"
    run fake_deploy 6.0.3 pi --build-on-pi
    assert_failure 69
    assert_output --partial "the Swift on pi is 6.0; this package needs 6.2 or later"
}

@test "deploy --dry-run (no Swift on the Pi) prints the 7 package steps and runs nothing" {
    run fake_deploy "" pi@raspberrypi.local --dry-run
    assert_success
    assert_equal "$(ssh_calls)" 0
    assert_equal "$(grep -c '^deploy: step [0-9]/7: ' <<< "$output")" 7
    local expected
    for expected in "dpkg --print-architecture" "scripts/package --arch ARCH" \
        "ssh pi@raspberrypi.local 'cat > /tmp/resend-button.deb' <" "sudo apt-get install -y --reinstall /tmp/resend-button.deb" \
        "sudo systemctl restart resend-button;" "deploy: dry run: nothing was run"; do
        assert_output --partial "$expected"
    done
    refute_output --partial swift
}

# bats test_tags=release
@test "deploy installs a package matching the Pi's architecture, and refuses another or armel (fake ssh)" {
    local deb
    deb=$(file_deb)
    FAKE_ARCH=$architecture fake_deploy "" pi --package "$deb" > "$work/prun.log" 2>&1 || { cat "$work/prun.log"; false; }
    assert_equal "$(ssh_calls)" 6
    expect_contains "$work/ssh.log" "pi cat > /tmp/resend-button.deb" "pi sudo apt-get install -y --reinstall /tmp/resend-button.deb;"
    expect_contains "$work/prun.log" "-> $architecture, bookworm: libgpiod v1" "deploy: done"
    FAKE_ARCH=arm64 FAKE_CODENAME=trixie run fake_deploy "" pi --package "$deb"
    assert_failure 1
    assert_output --partial "-> arm64, trixie: libgpiod v2"
    assert_output --partial "is for $architecture, pi is arm64"
    FAKE_ARCH=armel run fake_deploy "" pi
    assert_failure 69
    assert_output --partial "pi is armel; packages are built for arm64 and armhf (ARMv7): use --build-on-pi"
}

# bats test_tags=release
@test "deploy refuses an ARMv6 armhf Pi and bullseye before building anything, and lets an ARMv7 one pass the CPU check (fake ssh)" {
    FAKE_ARCH=armhf FAKE_CPUINFO=Tests/Fixtures/cpuinfo/refuse-pi-zero-w-32bit.txt run fake_deploy "" pi
    assert_failure 69
    assert_equal "$(ssh_calls)" 1
    assert_output --partial "deploy: pi runs armhf, but the CPU is ARMv6 (model name: ARMv6-compatible processor rev 7 (v6l))"
    assert_output --partial "use a Pi 2, 3, 4, 5 or Zero 2 W"
    refute_output --partial 'step 2/'
    FAKE_CODENAME=bullseye run fake_deploy "" pi
    assert_failure 69
    assert_equal "$(ssh_calls)" 1
    assert_output --partial "deploy: pi runs bullseye, whose glibc is older than 2.36 (bullseye has 2.31)"
    assert_output --partial "upgrade to Raspberry Pi OS bookworm"
    # An ARMv7 armhf Pi passes the CPU check (and then the native package is refused as not its own).
    FAKE_ARCH=armhf FAKE_CPUINFO=Tests/Fixtures/cpuinfo/ok-pi2-32bit.txt run fake_deploy "" pi --package "$(file_deb)"
    assert_failure 1
    assert_output --partial "-> armhf, bookworm: libgpiod v1"
    assert_output --partial "is for $architecture, pi is armhf"
}

@test "deploy rejects bad usage with 64 before any ssh" {
    local args
    for args in "" "--dry-run" "pi pi2 --dry-run" "pi --frobnicate" "-oProxyCommand=x --dry-run" "pi --dir /etc --dry-run" \
        "pi --package /nonexistent.deb --dry-run" "pi --package $BATS_TEST_FILENAME --build-on-pi --dry-run"; do
        # shellcheck disable=SC2086 # word splitting of the argument list is the point
        run fake_deploy 6.3.1 $args
        [[ $status == 64 ]] || fail "'$args': exit $status, not 64: $output"
        assert_equal "$(ssh_calls)" 0
    done
}

@test "docs/deploy.md has the deployment steps and the README links it" {
    expect_contains docs/deploy.md '# Deploy and upgrade' 'scripts/deploy' 'scripts/install' \
        'scripts/package' 'journalctl -u resend-button' 'resend-button check' 'dtparam=i2c_arm=on' \
        '(wiring.md)' 'board/raspberry-pi/README.md' '## Upgrade'
    expect_contains README.md '(docs/deploy.md)' 'scripts/deploy'
}
