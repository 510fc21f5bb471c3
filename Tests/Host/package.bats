#!/usr/bin/env bats
# scripts/package: the .deb's name, control fields, contents and maintainer scripts, lintian, the
# man page against --help, and upgrades with dpkg on a throwaway root (no prompt, the user's edit
# kept), against the control experiment of a package with the configuration as a conffile.
# bats file_tags=release

load helpers/common

board=board/raspberry-pi

setup_file() {
    RESEND_RELEASE_BINARY=$(release_binary)
    export RESEND_RELEASE_BINARY
    # The package the tests look into (shared with the other files of this bats run); the first
    # test checks how it was built.
    DEB=$(shared_deb) || true
    export DEB
}

setup() {
    binary=$RESEND_RELEASE_BINARY
    version=$(program_version)
    architecture=$(dpkg --print-architecture)
    work=$BATS_TEST_TMPDIR
}

need_deb() { [[ -f $DEB ]] || fail "no package: scripts/package failed (the first test shows its output)"; }

@test "package builds resend-button_VERSION_ARCH.deb and prints its path last" {
    run cat "$BATS_RUN_TMPDIR/deb.log"
    assert_success
    assert_equal "$DEB" "$BATS_RUN_TMPDIR/deb/resend-button_${version}_${architecture}.deb"
    assert_equal "${lines[-1]}" "$DEB"
    assert_file_exists "$DEB"
}

@test "the control fields: Package, Version = programVersion, Architecture, Depends from the linked libraries" {
    need_deb
    dpkg-deb -f "$DEB"
    assert_equal "$(dpkg-deb -f "$DEB" Package)" resend-button
    assert_equal "$(dpkg-deb -f "$DEB" Version)" "$version"
    assert_equal "$(dpkg-deb -f "$DEB" Architecture)" "$architecture"
    local depends library path package needed
    depends=$(dpkg-deb -f "$DEB" Depends)
    # The runtime packages of the libraries the binary links itself (its NEEDED entries; ldd also
    # lists their own dependencies, such as libmosquitto's libssl, which their packages bring),
    # found here with ldd + dpkg -S.
    needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    while read -r library path; do
        grep -qxF "$library" <<< "$needed" || continue
        package=$(dpkg -S "$path" 2> /dev/null || dpkg -S "/usr$path" 2> /dev/null || dpkg -S "$(readlink -f "$path")")
        package=${package%%:*}
        grep -qE "(^|, )${package//+/\\+}( |,|$)" <<< "$depends" || fail "$library ($package) not in Depends: $depends"
    done < <(ldd "$binary" | sed -n 's/^[[:space:]]*\([^[:space:]]*\) => \(\/[^[:space:]]*\) .*/\1 \2/p')
    grep -qE '(^|, )libgpiod[0-9]+ ' <<< "$depends" || fail "no libgpiod runtime package"
    grep -qE '(^|, )libi2c0 ' <<< "$depends" || fail "no libi2c0"
    grep -qE '(^|, )libmosquitto1 ' <<< "$depends" || fail "no libmosquitto1"
    if grep -q '^VERSION_ID="12"' /etc/os-release && ldd "$binary" | grep 'libgpiod.so.2 ' > /dev/null; then
        grep -qE '(^|, )libgpiod2 ' <<< "$depends" || fail "Debian 12 with libgpiod v1: libgpiod2 expected"
    fi
}

@test "the package holds the install layout (the config in /usr/share), copyright, changelog and man page, and nothing else" {
    need_deb
    local listed expected file
    local debian_files=(usr/share/doc/resend-button/copyright usr/share/doc/resend-button/changelog.gz usr/share/man/man1/resend-button.1.gz)
    rm -rf "$work/fresh" && scripts/install --root "$work/fresh" --binary "$binary" > /dev/null
    listed=$(dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { sub(/^\.\//, "/", $6); print $6 }' | sort)
    # The install layout without /etc/resend-button/config.json5 (postinst makes it: not a conffile).
    expected=$( (cd "$work/fresh" && find . -type f ! -path './etc/*' | sed 's|^\.||'; printf '/%s\n' "${debian_files[@]}") | sort)
    assert_equal "$listed" "$expected"
    dpkg-deb -c "$DEB" | grep '^-rwxr-xr-x root/root .* ./usr/bin/resend-button$' > /dev/null || fail "binary not root-owned 0755"
    # Exactly the files scripts/install puts down, the binary stripped (as dh_strip does).
    dpkg-deb -x "$DEB" "$work/extracted"
    rm -r "$work/fresh/etc"
    strip --remove-section=.comment --remove-section=.note -o "$work/fresh/usr/bin/resend-button" "$binary"
    for file in "${debian_files[@]}"; do rm "$work/extracted/$file"; done
    rmdir "$work/extracted/usr/share/man/man1" "$work/extracted/usr/share/man"
    diff -r "$work/fresh" "$work/extracted"
}

@test "no conffiles; postinst makes the config when absent, applies sysusers and udev, enables with deb-systemd-helper; prerm stops; postrm purges" {
    need_deb
    dpkg-deb -e "$DEB" "$work/control"
    # No conffile: the user's configuration is never a file of the package (no upgrade prompt).
    assert_not_exist "$work/control/conffiles"
    expect_contains "$work/control/postinst" 'systemd-sysusers /usr/lib/sysusers.d/resend-button.conf' \
        'udevadm trigger' 'systemctl --system daemon-reload' 'deb-systemd-helper enable resend-button.service' \
        "deb-systemd-invoke \"\$action\" resend-button.service" 'cp /usr/share/resend-button/config.json5'
    expect_contains "$work/control/prerm" 'deb-systemd-invoke stop resend-button.service'
    expect_contains "$work/control/postrm" 'deb-systemd-helper purge resend-button.service' 'rm -f /etc/resend-button/config.json5'
}

@test "the maintainer scripts are executable and shellcheck-clean" {
    need_deb
    command -v shellcheck > /dev/null || skip "shellcheck is missing"
    dpkg-deb -e "$DEB" "$work/control"
    local script
    for script in preinst postinst prerm postrm; do
        assert_file_executable "$work/control/$script"
    done
    run shellcheck "$work/control/preinst" "$work/control/postinst" "$work/control/prerm" "$work/control/postrm"
    assert_success
}

@test "preinst: as armhf it refuses a CPU older than ARMv7 (here: this machine's) in one line; other architectures pass" {
    need_deb
    dpkg-deb -e "$DEB" "$work/control"
    local preinst=$work/control/preinst
    # Not armhf: nothing to check.
    DPKG_MAINTSCRIPT_ARCH=$architecture "$preinst" install
    # armhf on this machine's CPU (not an ARMv7): refused with the reason.
    DPKG_MAINTSCRIPT_ARCH=armhf run "$preinst" install
    assert_failure 1
    assert_output --partial "resend-button: not installed: this armhf package needs an ARMv7 or later CPU"
    assert_output --partial "SIGILL"
    assert_equal "${#lines[@]}" 1
    DPKG_MAINTSCRIPT_ARCH=armhf RESEND_BUTTON_SKIP_CPU_CHECK=1 "$preinst" install
    DPKG_MAINTSCRIPT_ARCH=armhf "$preinst" abort-upgrade 2.0
}

@test "armv7_problem passes the Pi 2/4/5 cpuinfo fixtures and refuses the Pi 1/Zero W (ARMv6), ambiguous and x86 ones with a reason" {
    local file why verdict count=0
    # shellcheck source=../../board/raspberry-pi/armv7-check.sh
    . board/raspberry-pi/armv7-check.sh
    for file in Tests/Fixtures/cpuinfo/ok-*.txt Tests/Fixtures/cpuinfo/refuse-*.txt; do
        count=$((count + 1))
        if why=$(armv7_problem "$file"); then verdict=ok; else verdict=refuse; fi
        echo "$file: $verdict${why:+: $why}"
        [[ ${file##*/} == "$verdict"-* ]] || fail "${file##*/}: $verdict, not as its name says"
        [[ $verdict == ok || -n $why ]] || fail "${file##*/}: refused without a reason"
    done
    ((count >= 6)) || fail "only $count fixtures"
    run armv7_problem "$work/no-such-cpuinfo"
    assert_failure
}

@test "package refuses a binary linking the toolchain's Swift runtime" {
    local debug
    debug=$(debug_binary)
    ldd "$debug" | grep 'libswiftCore.so => /' > /dev/null || skip "$debug does not link the toolchain's runtime (RESEND_BINARY is a static build)"
    run scripts/package --binary "$debug" --output "$work/refused"
    assert_failure
    assert_not_exist "$work/refused/resend-button_${version}_${architecture}.deb"
    assert_output --partial 'does not come from a Debian package'
    assert_output --partial '--static-swift-stdlib'
}

# lintian_clean DEB: lintian reports no error and no warning (the info tags it prints are
# explained in scripts/package).
lintian_clean() {
    command -v lintian > /dev/null || skip "lintian is missing"
    run lintian --fail-on error,warning --info "$1"
    assert_success
    refute_line --regexp '^[EW]: '
}

@test "lintian: no errors, no warnings on the native .deb" {
    need_deb
    lintian_clean "$DEB"
}

@test "lintian: no errors, no warnings on the arm64 .deb (scripts/package --arch arm64 of the cross-built binary)" {
    local cross=.build/cross/arm64/resend-button
    [[ -x $cross ]] || skip "no $cross (scripts/cross-build --arch arm64 makes it; scripts/test runs it before these checks)"
    scripts/package --arch arm64 --binary "$cross" --output "$work/deb-arm64" > "$work/package-arm64.log" 2>&1 \
        || { cat "$work/package-arm64.log"; false; }
    lintian_clean "$(tail -n 1 "$work/package-arm64.log")"
}

# normalized: words separated by single spaces; typographic quotes and hyphens as ASCII.
normalized() {
    sed -e 's/\xe2\x80\x90/-/g' -e 's/\xe2\x88\x92/-/g' -e "s/\\xe2\\x80\\x98/'/g" -e "s/\\xe2\\x80\\x99/'/g" \
        -e 's/\xe2\x80\x9c/"/g' -e 's/\xe2\x80\x9d/"/g' | tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'
}

@test "resend-button(1) holds every line of --help and of each command's --help, every exit code; man reports no warnings" {
    need_deb
    dpkg-deb -x "$DEB" "$work/man"
    local page=$work/man/usr/share/man/man1/resend-button.1.gz
    # man's own warnings (what lintian's manpage check looks at) must be empty.
    LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2> "$work/man.err" | col -b > "$work/man.txt"
    run cat "$work/man.err"
    assert_output ""
    normalized < "$work/man.txt" > "$work/man.flat"
    local args line flat absent=0 commands code
    # The top-level help and that of every command it lists.
    commands=$("$binary" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1 --help/p')
    [[ $(wc -l <<< "$commands") -ge 4 ]] || fail "--help lists too few commands: $commands"
    while read -r args; do
        # shellcheck disable=SC2086 # the words of args are the arguments
        "$binary" $args > "$work/help.txt" || fail "resend-button $args failed"
        while IFS= read -r line; do
            flat=$(normalized <<< "$line")
            [[ -z $flat ]] && continue
            grep -qF -- "$flat" "$work/man.flat" || { echo "resend-button $args: not in the man page: $flat"; absent=1; }
        done < "$work/help.txt"
    done < <(echo "--help"; echo "$commands")
    # Every exit code of the program is in EXIT STATUS.
    while read -r code; do
        grep -qE "(^| )$code " <(sed -n '/^EXIT STATUS/,/^SEE ALSO/p' "$work/man.txt" | normalized) \
            || { echo "exit code $code is not in EXIT STATUS"; absent=1; }
    done < <(sed -n 's/^ *case [a-zA-Z]* = \([0-9]*\)$/\1/p' Sources/ResendDevice/ExitCode.swift)
    ((absent == 0))
}

# A throwaway root for dpkg --root: the shell and the few tools the maintainer scripts run there,
# and stubs (recording their arguments in /calls.log) for the system services they call.
make_dpkg_root() {
    local r=$1 tool real library
    rm -rf "$r"
    mkdir -p "$r/bin" "$r/usr/bin" "$r/etc" "$r/tmp" "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers"
    touch "$r/var/lib/dpkg/status" "$r/var/lib/dpkg/available"
    # /dev/null for the scripts' redirections (a plain file where mknod is not allowed).
    mkdir -p "$r/dev" && { mknod -m 0666 "$r/dev/null" c 1 3 2> /dev/null || install -m 0666 /dev/null "$r/dev/null"; }
    for tool in sh mkdir cp chmod mv rm rmdir; do
        real=$(readlink -f "$(command -v "$tool")")
        cp "$real" "$r/bin/$tool"
        for library in $(ldd "$real" | grep -oE '/[^ ]+'); do
            [[ -e $r$library ]] || install -D "$(readlink -f "$library")" "$r$library"
        done
    done
    for tool in systemd-sysusers deb-systemd-helper deb-systemd-invoke modprobe udevadm systemctl; do
        printf '#!/bin/sh\necho "%s $*" >> /calls.log\n' "$tool" > "$r/usr/bin/$tool"
        chmod 0755 "$r/usr/bin/$tool"
    done
}
# dpkg_root ROOT LOG ARGS...: dpkg on that root, no terminal (a conffile question would fail it).
dpkg_root() {
    local r=$1 log=$2
    shift 2
    dpkg --root="$r" --force-depends "$@" < /dev/null > "$log" 2>&1 || { cat "$log"; return 1; }
    cat "$log"
}
# conffile_debs: the package as it was with the configuration as a conffile, in $work/conffile-old.deb,
# and a later one with a changed default, $work/conffile-new.deb.
conffile_debs() {
    local tree
    for tree in old new; do
        dpkg-deb -R "$DEB" "$work/conffile-$tree"
        install -D -m 0644 "$board/config.json5" "$work/conffile-$tree/etc/resend-button/config.json5"
        echo /etc/resend-button/config.json5 > "$work/conffile-$tree/DEBIAN/conffiles"
    done
    echo "// a changed default" >> "$work/conffile-new/etc/resend-button/config.json5"
    sed -i "s/^Version: .*/Version: $version+2/" "$work/conffile-new/DEBIAN/control"
    dpkg-deb --root-owner-group --build "$work/conffile-old" "$work/conffile-old.deb" > /dev/null
    dpkg-deb --root-owner-group --build "$work/conffile-new" "$work/conffile-new.deb" > /dev/null
}

@test "dpkg: an upgrade after the user edited the configuration asks nothing and keeps the edit; purge removes it" {
    need_deb
    local r=$work/dpkg-root next config
    config=$r/etc/resend-button/config.json5
    make_dpkg_root "$r"
    next=$(shared_deb +1)
    dpkg_root "$r" "$work/dpkg1.log" -i "$DEB"
    cmp "$board/config.json5" "$config" || fail "postinst did not create the configuration"
    expect_contains "$r/calls.log" "systemd-sysusers /usr/lib/sysusers.d/resend-button.conf" "deb-systemd-helper enable resend-button.service"
    sed -i 's/seconds: 60/seconds: 90/' "$config"
    cp "$config" "$work/edited.json5"
    dpkg_root "$r" "$work/dpkg2.log" -i "$next"
    run grep -i 'configuration file' "$work/dpkg2.log"
    assert_failure 1
    cmp "$work/edited.json5" "$config" || fail "the upgrade changed the edited configuration"
    assert_equal "$(dpkg-query --admindir="$r/var/lib/dpkg" -W -f='${Version}' resend-button)" "$version+1"
    # Purge removes what postinst made.
    dpkg_root "$r" "$work/dpkg3.log" --purge resend-button
    assert_not_exist "$config"
    assert_not_exist "$r/etc/resend-button"
}

@test "under systemd: a first install starts the service, an upgrade restarts it once and never stops it first, a remove stops it" {
    need_deb
    local r=$work/dpkg-root-systemd next
    make_dpkg_root "$r"
    mkdir -p "$r/run/systemd/system"
    next=$(shared_deb +1)
    dpkg_root "$r" "$work/install.log" -i "$DEB"
    run grep '^deb-systemd-invoke' "$r/calls.log"
    assert_output "deb-systemd-invoke start resend-button.service"
    : > "$r/calls.log"
    dpkg_root "$r" "$work/upgrade.log" -i "$next"
    run grep -E '^(deb-systemd-invoke|systemctl) .*(start|stop|restart)' "$r/calls.log"
    assert_output "deb-systemd-invoke restart resend-button.service"
    : > "$r/calls.log"
    dpkg_root "$r" "$work/remove.log" --remove resend-button
    run grep '^deb-systemd-invoke' "$r/calls.log"
    assert_output "deb-systemd-invoke stop resend-button.service"
}

@test "control: the same upgrade of a package with the configuration as a conffile stops at dpkg's question" {
    # If this passed silently, the test above would prove nothing.
    need_deb
    local r=$work/dpkg-root-conffile
    make_dpkg_root "$r"
    conffile_debs
    dpkg_root "$r" "$work/dpkg-c1.log" -i "$work/conffile-old.deb"
    sed -i 's/seconds: 60/seconds: 90/' "$r/etc/resend-button/config.json5"
    run dpkg --root="$r" --force-depends -i "$work/conffile-new.deb" < /dev/null
    assert_failure
    assert_output --partial "Configuration file '/etc/resend-button/config.json5'"
}

@test "dpkg: the upgrade from a package that had the configuration as a conffile asks nothing and keeps the edit" {
    need_deb
    local r=$work/dpkg-root-transition next
    make_dpkg_root "$r"
    conffile_debs
    next=$(shared_deb +1)
    dpkg_root "$r" "$work/dpkg-t1.log" -i "$work/conffile-old.deb"
    sed -i 's/seconds: 60/seconds: 90/' "$r/etc/resend-button/config.json5"
    cp "$r/etc/resend-button/config.json5" "$work/edited.json5"
    dpkg_root "$r" "$work/dpkg-t2.log" -i "$next"
    run grep -i 'configuration file' "$work/dpkg-t2.log"
    assert_failure 1
    cmp "$work/edited.json5" "$r/etc/resend-button/config.json5" || fail "the edit was lost"
}
