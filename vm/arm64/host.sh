# shellcheck shell=bash
# shellcheck disable=SC2154 # cache, abi, kversion, source_dir, root, arm64_timeout, debian_*: scripts/vm-test's
# The host side of the arm64 guest (sourced by scripts/vm-test; uses its variables and functions:
# cache, abi, kversion, source_dir, root, step, die, stage_common, copy_with_libraries,
# arm64_timeout, debian_mirror and debian_security_mirror, the machine's apt mirrors).
#
# The guest: the busybox guest of the x86-64 run (vm/init, vm/hardware.sh, vm/scenarios.sh,
# vm/glass.sh, unchanged; scenario ids get the prefix "arm64-"), on qemu-system-aarch64's `virt`
# machine (TCG, one Cortex-A72), booted on Debian 12's arm64 kernel of the same ABI and version as
# the x86-64 guest's (linux-image-<abi>-arm64, where <abi> comes from linux-image-amd64), with:
# - the modules of vm/module (gpio-sim, irq_sim, i2c-stub, i2c-plain) cross-built against
#   linux-headers-<abi>-arm64 with ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-. The headers
#   package is only extracted (dpkg-deb -x), not installed: its Makefile includes
#   /usr/src/linux-headers-<abi>-common (the host has it: the x86-64 guest's headers depend on it)
#   and its scripts/ is a relative link to ../../lib/linux-kbuild-6.1/scripts, which here points
#   to the host's (amd64) linux-kbuild-6.1 of the same version: its fixdep and modpost handle
#   arm64 objects (modpost reads any little-endian 64-bit ELF), so no qemu-user is needed;
#   configfs.ko and i2c-dev.ko come from the arm64 kernel package (modules there, as on x86-64);
# - the device binary of `scripts/cross-build --arch arm64 [--gpiod v2]` (Embedded Swift),
#   dynamically linked against arm64 glibc, libgpiod and libi2c: the guest gets the loader and
#   those libraries from Debian's arm64 packages (libc6, libgpiod2, libi2c0, libmosquitto1, libssl3),
#   plus busybox-static,
#   gpiod and i2c-tools of arm64 for the scenarios;
# - notify-listen (vm/notify-listen.c) built with aarch64-linux-gnu-gcc -static;
# - hd44780-decode (the glass scenario's decoder, a test tool, not the product): the x86-64 build
#   of the x86-64 guest, run in the guest by Debian's qemu-x86_64-static for arm64
#   (qemu-user-static:arm64) with the x86-64 glibc it names under /x86_64 (-L). That keeps
#   vm/glass.sh one script for both architectures; decoding is not what this guest tests.
#
# The arm64 packages come from a private apt state under .cache/vm/arm64/apt (APT::Architecture
# arm64, bookworm and bookworm-security from the mirrors of the machine's apt configuration,
# Debian's archive key): it needs neither
# `dpkg --add-architecture` nor the host's package lists, and no root.
#
# Cache (.cache/vm/arm64/): kernel-<version> (the Image, configfs.ko, i2c-dev.ko),
# headers-<version> (the extracted headers), modules-<version>, userland-<key> (busybox, the
# libraries and tools; key = a hash of the package list, the mirrors and the recipe version),
# notify-listen. A warm cache needs no apt at all.

arm64_abi=${abi%-amd64}-arm64
arm64_cache=$cache/arm64
arm64_mirror=$debian_mirror
arm64_security_mirror=$debian_security_mirror
arm64_userland_packages=(busybox-static libc6 libgpiod2 libi2c0 libmosquitto1 libssl3 gpiod i2c-tools qemu-user-static)
# Bump when the userland's extraction or pruning changes.
arm64_recipe=1
arm64_kernel_dir=$arm64_cache/kernel-$kversion
arm64_headers_dir=$arm64_cache/headers-$kversion
arm64_module_dir=$arm64_cache/modules-$kversion
arm64_notify_listen=$arm64_cache/notify-listen

arm64_apt_dir=$arm64_cache/apt
arm64_apt() { # apt-get or apt-cache (the first argument) on the private arm64 state
    local tool=$1
    shift
    "$tool" -o Dir::State="$arm64_apt_dir/state" -o Dir::State::Lists="$arm64_apt_dir/lists" \
        -o Dir::State::status="$arm64_apt_dir/status" -o Dir::Cache="$arm64_apt_dir/cache" \
        -o Dir::Etc::SourceList="$arm64_apt_dir/sources.list" -o Dir::Etc::SourceParts="$arm64_apt_dir/sources.list.d" \
        -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Debug::NoLocking=1 "$@"
}

arm64_apt_ready=0
arm64_apt_update() { # once per run, and only when something must be downloaded
    ((arm64_apt_ready)) && return 0
    step "apt-get update (private arm64 state: $arm64_mirror bookworm, $arm64_security_mirror bookworm-security)"
    mkdir -p "$arm64_apt_dir"/{state,lists/partial,cache/archives/partial,sources.list.d}
    : >"$arm64_apt_dir/status"
    local key=/usr/share/keyrings/debian-archive-keyring.gpg
    [[ -f $key ]] || die "$key is missing (package debian-archive-keyring)"
    printf 'deb [signed-by=%s] %s bookworm main\ndeb [signed-by=%s] %s bookworm-security main\n' \
        "$key" "$arm64_mirror" "$key" "$arm64_security_mirror" >"$arm64_apt_dir/sources.list"
    arm64_apt apt-get -qq update || die "apt-get update of the arm64 package lists failed"
    arm64_apt_ready=1
}

arm64_fetch() { # arm64_fetch FOLDER PACKAGE[=VERSION]...: downloads the .debs into FOLDER
    local folder=$1
    shift
    arm64_apt_update
    mkdir -p "$folder"
    # apt's sandbox user cannot write to the cache folder: download as is (apt warns).
    (cd "$folder" && arm64_apt apt-get download -q "$@" 2>&1 |
        grep -v -e '^W: Download is performed unsandboxed' -e '^Get:' -e '^Fetched' >&2) || true
}

# arm64_prepare: kernel, headers, modules, userland, notify-listen (cached); sets arm64_userland.
arm64_prepare() {
    local debs=$arm64_cache/debs deb
    # The pi3 guest (vm/pi3/host.sh) needs the Pi 3's device tree and more modules: a cache made
    # before it is extracted again once.
    [[ -f $arm64_kernel_dir/bcm2837-rpi-3-b.dtb ]] || rm -f "$arm64_kernel_dir/ready"
    if [[ ! -f $arm64_kernel_dir/ready || ! -f $arm64_headers_dir/ready ]]; then
        step "Debian arm64 kernel and headers linux-image-$arm64_abi, linux-headers-$arm64_abi $kversion (extracted, not installed)"
        rm -rf "$debs"
        arm64_fetch "$debs" "linux-image-$arm64_abi=$kversion" "linux-headers-$arm64_abi=$kversion"
        rm -rf "$arm64_kernel_dir" "$arm64_headers_dir"
        mkdir -p "$arm64_kernel_dir/modules" "$arm64_headers_dir/usr/lib"
        deb=$(find "$debs" -name "linux-image-${arm64_abi}_*.deb" | head -n 1)
        [[ -n $deb ]] || die "apt-get download linux-image-$arm64_abi=$kversion (arm64) failed"
        dpkg-deb -x "$deb" "$arm64_kernel_dir/root"
        # Debian's arm64 vmlinuz is the kernel's Image (qemu -kernel takes it as it is).
        cp "$arm64_kernel_dir/root/boot/vmlinuz-$arm64_abi" "$arm64_kernel_dir/vmlinuz"
        local modules=$arm64_kernel_dir/root/lib/modules/$arm64_abi/kernel ko
        # configfs and i2c-dev for every arm64 guest; the Pi's I2C controller (i2c-bcm2835), its
        # watchdog (bcm2835_wdt: `reboot -f` ends qemu) and uinput/evdev for the pi3 guest.
        for ko in fs/configfs/configfs.ko drivers/i2c/i2c-dev.ko drivers/i2c/busses/i2c-bcm2835.ko \
            drivers/watchdog/bcm2835_wdt.ko drivers/input/misc/uinput.ko drivers/input/evdev.ko; do
            [[ -f $modules/$ko ]] || die "the arm64 kernel package has no $ko (compressed modules?)"
            cp "$modules/$ko" "$arm64_kernel_dir/modules/"
        done
        local dtb=$arm64_kernel_dir/root/usr/lib/linux-image-$arm64_abi/broadcom/bcm2837-rpi-3-b.dtb
        [[ -f $dtb ]] || die "the arm64 kernel package has no broadcom/bcm2837-rpi-3-b.dtb"
        cp "$dtb" "$arm64_kernel_dir/"
        rm -rf "$arm64_kernel_dir/root"
        deb=$(find "$debs" -name "linux-headers-${arm64_abi}_*.deb" | head -n 1)
        [[ -n $deb ]] || die "apt-get download linux-headers-$arm64_abi=$kversion (arm64) failed"
        dpkg-deb -x "$deb" "$arm64_headers_dir"
        # scripts -> ../../lib/linux-kbuild-6.1/scripts: the host's kbuild tools (see above).
        ln -s "/usr/lib/linux-kbuild-$(echo "$abi" | cut -d. -f1,2)" \
            "$arm64_headers_dir/usr/lib/linux-kbuild-$(echo "$abi" | cut -d. -f1,2)"
        rm -rf "$debs"
        touch "$arm64_kernel_dir/ready" "$arm64_headers_dir/ready"
    fi
    local kdir=$arm64_headers_dir/usr/src/linux-headers-$arm64_abi
    local common=/usr/src/linux-headers-${abi%-amd64}-common
    [[ -f $common/Makefile ]] || die "$common is missing (package linux-headers-${abi%-amd64}-common=$kversion)"

    step "gpio-sim, irq_sim, i2c-stub and i2c-plain modules for $arm64_abi (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)"
    mkdir -p "$arm64_module_dir"
    if ! make -s -C vm/module SRC="$source_dir" KDIR="$kdir" OUT="$arm64_module_dir" \
        ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- >"$arm64_module_dir/build.log" 2>&1; then
        cat "$arm64_module_dir/build.log" >&2
        die "the arm64 module build (vm/module) failed"
    fi
    grep -v '^Skipping BTF' "$arm64_module_dir/build.log" >&2 || true

    local key
    key=$(printf '%s ' "$arm64_recipe" "${arm64_userland_packages[@]}" "$arm64_mirror" "$arm64_security_mirror" | sha256sum | cut -c1-12)
    arm64_userland=$arm64_cache/userland-$key
    if [[ ! -f $arm64_userland/ready ]]; then
        step "arm64 userland from Debian: ${arm64_userland_packages[*]} (extracted)"
        rm -rf "$debs" "$arm64_userland" "$arm64_userland.tmp"
        arm64_fetch "$debs" "${arm64_userland_packages[@]}"
        local package tree=$arm64_userland.tmp
        for package in "${arm64_userland_packages[@]}"; do
            deb=$(find "$debs" -name "${package}_*_arm64.deb" | head -n 1)
            [[ -n $deb ]] || die "apt-get download $package (arm64) failed"
            if [[ $package == qemu-user-static ]]; then
                # Only the x86-64 emulator (for hd44780-decode), not the other 30 targets.
                mkdir -p "$tree"
                dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tree" ./usr/bin/qemu-x86_64-static ||
                    die "qemu-user-static (arm64) has no usr/bin/qemu-x86_64-static"
            else
                dpkg-deb -x "$deb" "$tree"
            fi
        done
        # What the guest never reads.
        rm -rf "${tree:?}"/usr/share "${tree:?}"/etc "${tree:?}"/lib/udev "${tree:?}"/usr/lib/aarch64-linux-gnu/gconv \
            "${tree:?}"/usr/libexec "${tree:?}"/usr/lib/aarch64-linux-gnu/libgpiodcxx.so* "${tree:?}"/sbin
        [[ -x $tree/bin/busybox && -e $tree/lib/ld-linux-aarch64.so.1 ]] || die "the arm64 userland lacks busybox or the loader"
        mv "$tree" "$arm64_userland"
        rm -rf "$debs"
        touch "$arm64_userland/ready"
    fi

    if [[ ! -x $arm64_notify_listen || vm/notify-listen.c -nt $arm64_notify_listen ]]; then
        step "notify-listen (aarch64-linux-gnu-gcc -static)"
        aarch64-linux-gnu-gcc -static -O2 -Wall -Wextra -Werror -o "$arm64_notify_listen.tmp" vm/notify-listen.c
        mv "$arm64_notify_listen.tmp" "$arm64_notify_listen"
    fi
}

# arm64_build_binary v1|v2: the cross-built device binary's path. scripts/cross-build always
# builds from scratch (about 3.5 min here), so its output is reused while no file it builds from
# is newer (Sources/, Package.swift, the cross-build and libgpiod-v2 scripts, scripts/embedded/).
arm64_build_binary() {
    local flags=(--arch arm64) out binary=$root/.build/cross/arm64/resend-button
    if [[ $1 == v2 ]]; then
        flags+=(--gpiod v2)
        binary=$root/.build/cross/arm64-gpiod2/resend-button
    fi
    if [[ -x $binary ]] && [[ -z $(find Sources Package.swift scripts/cross-build scripts/libgpiod-v2 scripts/embedded \
        -newer "$binary" -print -quit) ]]; then
        step "(${binary#"$root"/} is newer than its sources: reused)"
        echo "$binary"
        return 0
    fi
    out=$(scripts/cross-build "${flags[@]}") || return 1
    tail -n 1 <<<"$out"
}

# arm64_pack VARIANT BINARY DECODER: prints the initramfs path (VARIANT: arm64-v1, arm64-v2).
arm64_pack() {
    local variant=$1 binary=$2 decoder=$3 staging=$cache/initramfs-$1
    rm -rf "$staging"
    mkdir -p "$staging"
    cp -a "$arm64_userland"/. "$staging/"
    rm -f "$staging/ready"
    stage_common "$staging" "$variant" "$arm64_kernel_dir/modules" "$arm64_module_dir"
    echo arm64- >"$staging/vm/id-prefix"
    install -m 0755 "$binary" "$staging/usr/bin/resend-button"
    install -m 0755 "$arm64_notify_listen" "$staging/usr/bin/notify-listen"
    # hd44780-decode: the x86-64 build and its glibc under /x86_64, run by qemu-x86_64-static.
    copy_with_libraries "$staging/x86_64" "$decoder" /usr/bin/hd44780-decode
    printf '%s\n' '#!/bin/sh' \
        '# The x86-64 build of the test tool hd44780-decode under qemu-user (vm/arm64/host.sh says why).' \
        'exec /usr/bin/qemu-x86_64-static -L /x86_64 /x86_64/usr/bin/hd44780-decode "$@"' \
        >"$staging/usr/bin/hd44780-decode"
    chmod 0755 "$staging/usr/bin/hd44780-decode"
    (cd "$staging" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$cache/initramfs-$variant.cpio"
    echo "$cache/initramfs-$variant.cpio"
}

# arm64_boot INITRAMFS LOG: qemu's exit status (0 after the guest's poweroff; the verdict is in
# the console's marker lines).
arm64_boot() {
    local status=0
    timeout --kill-after=10 "$arm64_timeout" qemu-system-aarch64 \
        -machine virt -cpu cortex-a72 -accel tcg -m "${VM_TEST_MEMORY:-512M}" -smp 1 \
        -display none -monitor none -serial stdio -no-reboot \
        -kernel "$arm64_kernel_dir/vmlinuz" -initrd "$1" \
        -append "console=ttyAMA0 quiet loglevel=3 panic=-1 rdinit=/init" \
        </dev/null >"$2" 2>&1 || status=$?
    return "$status"
}
