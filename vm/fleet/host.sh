# shellcheck shell=bash
# shellcheck disable=SC2154 # cache, root, debian_mirror, arm64_*, fleet_timeout: scripts/vm-test's and vm/arm64/host.sh's
# The fleet guests, host side (sourced by scripts/vm-test after vm/arm64/host.sh; uses its
# variables and functions: cache, root, step, die, debian_mirror, apt_http_proxy, the arm64
# kernel and modules of arm64_prepare, arm64_build_binary).
#
# A fleet guest is a debootstrapped arm64 Debian (bookworm, or trixie with the libgpiod v2 build)
# with systemd as PID 1 under qemu-system-aarch64 `virt` (TCG, one Cortex-A72), on Debian 12's
# arm64 kernel, with the simulated hardware of the systemd guest (gpio-sim, i2c-plain). It has no
# resend-button at boot: it installs it with apt from a repository that scripts/publish-repo wrote
# and signed with a throwaway key, served by `python3 -m http.server` on the host's loopback
# address (the guest reaches it as 10.0.2.2, QEMU's user networking); the host drives the guest
# over SSH on a loopback-forwarded port (hostfwd), publishes version N+1 in the middle, and runs
# board/ansible's role against the bookworm guest (vm/fleet/scenarios.sh).
#
# The root file system: `debootstrap --foreign --arch arm64` here (download and unpack, nothing of
# arm64 runs on the host: no binfmt_misc needed), then the second stage in the guest itself
# (qemu-system-aarch64, rdinit=vm/fleet/second-stage), which writes the finished tree as a tar
# archive onto a raw virtio disk; cached as .cache/vm/fleet/rootfs-<suite>-<hash>.tar (the hash
# covers the package list, the mirror and fleet_recipe). The whole tree is the initramfs, as in the
# x86-64 systemd guest (vm/systemd/host.sh).

fleet_cache=$cache/fleet
# Bump when the debootstrap step, the second stage or the clean-up changes.
fleet_recipe=1
fleet_memory=${VM_FLEET_MEMORY:-2048M}
# What the guests need besides the minbase: systemd as init, udev, modprobe, the service's
# libraries (libgpiod2 is bookworm's libgpiod v1; trixie's build links libgpiod v2 in), apt's
# unattended-upgrades, and SSH with python3 (Ansible's modules; python3-apt for its apt module).
fleet_packages_common=systemd,systemd-sysv,udev,dbus,kmod,procps,iproute2,libi2c0,unattended-upgrades,python3-apt,openssh-server
fleet_packages() { # fleet_packages SUITE
    case $1 in
        bookworm) echo "$fleet_packages_common,libgpiod2" ;;
        trixie) echo "$fleet_packages_common" ;;
    esac
}
fleet_mirror() { # the Debian mirror of SUITE: the machine's (the bookworm entry serves trixie too)
    case $1 in
        trixie) echo "${VM_DEBIAN_TRIXIE_MIRROR:-$debian_mirror}" ;;
        *) echo "$debian_mirror" ;;
    esac
}

fleet_key() { # fleet_key SUITE: the cache key of SUITE's tree
    printf '%s %s %s' "$fleet_recipe" "$(fleet_packages "$1")" "$(fleet_mirror "$1")" | sha256sum | cut -c1-12
}

# fleet_foreign SUITE: the first stage (download, unpack) in .cache/vm/fleet/foreign-SUITE-KEY.
fleet_foreign() {
    local suite=$1 key tree proxy
    key=$(fleet_key "$suite")
    tree=$fleet_cache/foreign-$suite-$key
    [[ -f $tree.ready ]] && { echo "$tree"; return 0; }
    step "debootstrap --foreign --arch arm64 $suite (minbase + $(fleet_packages "$suite")) from $(fleet_mirror "$suite")" >&2
    rm -rf "$tree"
    mkdir -p "$fleet_cache"
    proxy=${http_proxy:-$(apt_http_proxy)}
    if ! env ${proxy:+"http_proxy=$proxy"} debootstrap --foreign --arch arm64 --variant=minbase \
        --include="$(fleet_packages "$suite")" "$suite" "$tree" "$(fleet_mirror "$suite")" \
        >"$fleet_cache/debootstrap-$suite.log" 2>&1; then
        tail -n 30 "$fleet_cache/debootstrap-$suite.log" >&2
        die "debootstrap --foreign $suite failed (log: $fleet_cache/debootstrap-$suite.log)"
    fi
    touch "$tree.ready"
    echo "$tree"
}

# fleet_fetch SUITE FOLDER PACKAGE...: downloads the arm64 .debs of PACKAGE from SUITE's archive
# into FOLDER: bookworm through the private apt state of vm/arm64/host.sh (arm64_fetch), another
# suite through one of its own beside it, .cache/vm/fleet/apt-SUITE (SUITE main from fleet_mirror,
# Debian's archive key), with the same arm64_apt (its arm64_apt_dir shadowed here).
fleet_fetch() {
    local suite=$1 folder=$2
    shift 2
    if [[ $suite == bookworm ]]; then
        arm64_fetch "$folder" "$@"
        return
    fi
    local arm64_apt_dir=$fleet_cache/apt-$suite key=/usr/share/keyrings/debian-archive-keyring.gpg
    [[ -f $key ]] || die "$key is missing (package debian-archive-keyring)"
    step "apt-get update (private arm64 state: $(fleet_mirror "$suite") $suite)" >&2
    mkdir -p "$arm64_apt_dir"/{state,lists/partial,cache/archives/partial,sources.list.d} "$folder"
    : >"$arm64_apt_dir/status"
    printf 'deb [signed-by=%s] %s %s main\n' "$key" "$(fleet_mirror "$suite")" "$suite" >"$arm64_apt_dir/sources.list"
    arm64_apt apt-get -qq update || die "apt-get update of the arm64 package lists of $suite failed"
    # apt's sandbox user cannot write to the cache folder: download as is (apt warns).
    (cd "$folder" && arm64_apt apt-get download -q "$@" 2>&1 |
        grep -v -e '^W: Download is performed unsandboxed' -e '^Get:' -e '^Fetched' >&2) || true
}

# The arm64 kernel's modules these guests need beyond arm64_prepare's: the virtio disk (the
# second stage writes its tree there) and network (SSH, the repository). Debian builds them as
# modules; those the kernel has built in are skipped (modules.builtin).
fleet_kernel_modules=(virtio_mmio virtio_blk failover net_failover virtio_net)
fleet_kmod_dir=$fleet_cache/kmod-$kversion
fleet_kmods() { # extracts them once into .cache/vm/fleet/kmod-VERSION/kernel/...
    [[ -f $fleet_kmod_dir/ready ]] && return 0
    step "arm64 kernel modules ${fleet_kernel_modules[*]} (linux-image-$arm64_abi $kversion)"
    local debs=$fleet_cache/debs deb tree=$fleet_cache/kernel-tree name path
    rm -rf "$debs" "$tree" "$fleet_kmod_dir"
    arm64_fetch "$debs" "linux-image-$arm64_abi=$kversion"
    deb=$(find "$debs" -name "linux-image-${arm64_abi}_*.deb" | head -n 1)
    [[ -n $deb ]] || die "apt-get download linux-image-$arm64_abi=$kversion (arm64) failed"
    dpkg-deb -x "$deb" "$tree"
    local modules=$tree/lib/modules/$arm64_abi
    mkdir -p "$fleet_kmod_dir"
    : >"$fleet_kmod_dir/order"
    for name in "${fleet_kernel_modules[@]}"; do
        path=$(cd "$modules" && find kernel -name "$name.ko" | head -n 1)
        if [[ -n $path ]]; then
            install -D -m 0644 "$modules/$path" "$fleet_kmod_dir/$path"
            echo "$path" >>"$fleet_kmod_dir/order"
        else
            grep -q "/$name.ko\$" "$modules/modules.builtin" || die "the arm64 kernel has no $name, neither as a module nor built in"
        fi
    done
    cp "$modules/modules.builtin" "$modules/modules.builtin.modinfo" "$fleet_kmod_dir/"
    rm -rf "$debs" "$tree"
    touch "$fleet_kmod_dir/ready"
}

# fleet_qemu LOG TIMEOUT INITRAMFS APPEND EXTRA...: qemu-system-aarch64 `virt` with the arm64 kernel.
fleet_qemu() {
    local log=$1 timeout=$2 initramfs=$3 append=$4
    shift 4
    timeout --kill-after=10 "$timeout" qemu-system-aarch64 \
        -machine virt -cpu cortex-a72 -accel tcg -m "$fleet_memory" -smp 1 \
        -display none -monitor none -serial "file:$log" -no-reboot \
        -kernel "$arm64_kernel_dir/vmlinuz" -initrd "$initramfs" \
        -append "console=ttyAMA0 panic=-1 $append" "$@" </dev/null
}

# fleet_rootfs_tar SUITE: prints the cached tree's path (a tar archive), making it first when
# missing: the foreign tree, booted once with rdinit=vm/fleet/second-stage.
fleet_rootfs_tar() {
    local suite=$1 key tar tree cpio disk log status=0
    key=$(fleet_key "$suite")
    tar=$fleet_cache/rootfs-$suite-$key.tar
    [[ -f $tar ]] && { echo "$tar"; return 0; }
    tree=$(fleet_foreign "$suite")
    fleet_kmods
    install -m 0755 vm/fleet/second-stage "$tree/vm-second-stage"
    mkdir -p "$tree/vm-modules"
    while read -r path; do cp "$fleet_kmod_dir/$path" "$tree/vm-modules/"; done <"$fleet_kmod_dir/order"
    cp "$fleet_kmod_dir/order" "$tree/vm-modules/order"
    cpio=$fleet_cache/second-stage-$suite.cpio
    (cd "$tree" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$cpio"
    disk=$fleet_cache/second-stage-$suite.img
    rm -f "$disk"
    truncate -s 4G "$disk"
    log=$fleet_cache/second-stage-$suite.log
    step "debootstrap --second-stage of $suite in qemu-system-aarch64 (console: ${log#"$root"/})" >&2
    local started=$SECONDS
    fleet_qemu "$log" "${VM_FLEET_SECOND_STAGE_TIMEOUT:-7200}" "$cpio" "rdinit=/vm-second-stage" \
        -drive "file=$disk,format=raw,if=none,id=out" -device virtio-blk-device,drive=out || status=$?
    step "$suite: second stage $((SECONDS - started)) s" >&2
    rm -f "$cpio"
    if ! grep -q '^SECOND STAGE DONE' "$log"; then
        tail -n 40 "$log" >&2
        die "the second stage of $suite failed (qemu status $status; console: $log)"
    fi
    # The disk holds one tar archive from its first byte; tar stops at its end.
    tar -tf "$disk" >/dev/null || die "the second stage of $suite wrote no readable archive"
    # Copy just the archive (the rest of the sparse disk is zeros).
    local size
    size=$(tar -tvRf "$disk" 2>/dev/null | sed -n 's/^block \([0-9]*\): \*\* \(End of File\|Block of NULs\) \*\*$/\1/p' | head -n 1)
    [[ -n $size ]] || die "no end of archive on the second stage's disk"
    head -c $(((size + 2) * 512)) "$disk" >"$tar.tmp"
    mv "$tar.tmp" "$tar"
    rm -f "$disk"
    rm -rf "$tree" "$tree.ready"
    echo "$tar"
}

# fleet_pack SUITE TAR PUBLIC_KEY: prints the initramfs (the guest's whole root file system):
# the cached tree with the modules (with depmod), /vm/hardware.sh and /vm/guest.sh, root's
# authorized SSH key, the network unit, no Debian apt source (the guest installs only from the
# test's repository), gettys and apt's timers masked (the test runs unattended-upgrade itself).
fleet_pack() {
    local suite=$1 tar=$2 public_key=$3 staging=$fleet_cache/root-$1 unit
    step "fleet $suite root file system (${tar#"$root"/} + modules, vm/fleet/guest.sh, SSH key)" >&2
    rm -rf "$staging"
    mkdir -p "$staging"
    tar --numeric-owner -C "$staging" -xf "$tar"
    local modules=$staging/lib/modules/$arm64_abi path
    install -D -m 0644 "$arm64_kernel_dir/modules/configfs.ko" "$modules/kernel/fs/configfs/configfs.ko"
    install -D -m 0644 "$arm64_kernel_dir/modules/i2c-dev.ko" "$modules/kernel/drivers/i2c/i2c-dev.ko"
    install -D -m 0644 -t "$modules/extra" "$arm64_module_dir"/{gpio-sim,irq_sim,i2c-plain}.ko
    while read -r path; do install -D -m 0644 "$fleet_kmod_dir/$path" "$modules/$path"; done <"$fleet_kmod_dir/order"
    cp "$fleet_kmod_dir"/modules.builtin{,.modinfo} "$modules/"
    touch "$modules/modules.order"
    depmod -b "$staging" "$arm64_abi"
    install -D -m 0644 vm/hardware.sh "$staging/vm/hardware.sh"
    install -D -m 0755 vm/fleet/guest.sh "$staging/vm/guest.sh"
    install -d -m 0700 "$staging/root/.ssh"
    install -m 0600 "$public_key" "$staging/root/.ssh/authorized_keys"
    install -D -m 0644 vm/fleet/vm-net.service "$staging/etc/systemd/system/vm-net.service"
    mkdir -p "$staging/etc/systemd/system/multi-user.target.wants"
    ln -sf /etc/systemd/system/vm-net.service "$staging/etc/systemd/system/multi-user.target.wants/vm-net.service"
    rm -f "$staging/etc/apt/sources.list" "$staging"/etc/apt/sources.list.d/*
    for unit in serial-getty@.service getty@.service getty.target apt-daily.timer \
        apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer; do
        ln -sf /dev/null "$staging/etc/systemd/system/$unit"
    done
    echo "panel-$suite" >"$staging/etc/hostname"
    (cd "$staging" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$fleet_cache/root-$suite.cpio"
    rm -rf "$staging"
    echo "$fleet_cache/root-$suite.cpio"
}
