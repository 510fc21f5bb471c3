#!/usr/bin/env bats
# An apt index that fails to download must not stop an install the other indexes satisfy. Seen in
# CI: the mirror, mid-sync, served bookworm-security's armhf Packages.xz with the wrong size;
# `apt-get update` exited 100 and took vm-test down with it although every package it wanted was
# in the indexes that did download. Fake apt-get and dpkg-query stand for the machine's.

load helpers/common

setup() {
    fake=$BATS_TEST_TMPDIR/bin
    mkdir -p "$fake"
    log=$BATS_TEST_TMPDIR/apt.log
    # apt-get: update fails as on that mirror; install succeeds unless APT_INSTALL_FAILS is set.
    cat > "$fake/apt-get" <<FAKE
#!/usr/bin/env bash
echo "apt-get \$*" >> "$log"
for argument in "\$@"; do
    case \$argument in
        update) echo "E: Failed to fetch http://mirror.invalid/debian-security/dists/bookworm-security/main/binary-armhf/Packages.xz  File has unexpected size (356624 != 356976). Mirror sync in progress?" >&2
                exit 100 ;;
        install) [[ -n \${APT_INSTALL_FAILS:-} ]] && exit 100; exit 0 ;;
    esac
done
FAKE
    printf '#!/bin/sh\nexit 1\n' > "$fake/dpkg-query" # every package missing
    printf '#!/bin/sh\necho 0\n' > "$fake/id"          # as root: no sudo
    chmod +x "$fake"/*
}

@test "build-deps installs when one apt index fails to download, and says the update had errors" {
    PATH=$fake:$PATH run bash scripts/build-deps --test
    assert_success
    assert_output --partial "apt-get update reported errors; trying the install anyway"
    run grep -c '^apt-get .*install' "$log"
    assert_output 1
}

@test "build-deps still fails when the install itself fails" {
    APT_INSTALL_FAILS=1 PATH=$fake:$PATH run bash scripts/build-deps --test
    assert_failure 100
}
