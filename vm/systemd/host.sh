# shellcheck shell=bash
# shellcheck disable=SC2154 # cache, abi, kernel_dir, module_dir, systemd_timeout, debian_mirror: scripts/vm-test's
# The host side of the systemd VM (sourced by scripts/vm-test; uses its variables and functions:
# cache, kernel_dir, module_dir, abi, step, die, as_root, debian_mirror: the mirror of the
# machine's apt configuration that serves bookworm, vm/apt-sources.sh).
#
# The guest: Debian 12 (bookworm) with systemd as PID 1, made by debootstrap from the Debian
# archive (minbase + systemd, udev, dbus, kmod, procps, gpiod and the .deb's libraries; curl for
# the verify-api adapter and python3 for the stand-in of the verification API it talks to), booted
# on the same Debian kernel as the busybox VM. The whole root file system is the initramfs
# (rdinit=/sbin/init): the kernel unpacks it into a tmpfs and systemd runs from there. That needs
# no block device, no virtio or ext4 modules and no switch_root (Debian's kernel has virtio_blk
# and ext4 only as modules), at the price of about 0.3 GB of guest memory.
#
# Added to the root file system for each run (the debootstrap tree is cached):
# - /lib/modules/<abi>: configfs, i2c-dev (from Debian's kernel package), gpio-sim, irq_sim,
#   i2c-plain, gpio-keymatrix (vm/module), with `depmod`, so that modprobe and systemd's modprobe@ units work;
# - /vm: vm/lib.sh, vm/hardware.sh, vm/systemd/scenarios.sh, hd44780-decode, the .deb of scripts/package,
#   Tests/Adapters/verify-standin.py (the verification API's stand-in, served on the guest's loopback);
# - vmtest.service (vm/systemd/vmtest.service) enabled; gettys and apt's timers masked.
#
# Cache: .cache/vm/systemd/rootfs-<key>.tar, key = suite + a hash of the package list and of
# this recipe's version, so a change of either makes a new tree.

systemd_suite=bookworm
systemd_mirror=$debian_mirror
systemd_packages=systemd,systemd-sysv,udev,dbus,kmod,procps,gpiod,libgpiod2,libi2c0,libmosquitto1,curl,python3
# Bump when the debootstrap step or its clean-up changes.
systemd_recipe=1
systemd_cache=$cache/systemd

systemd_rootfs_tar() { # prints the cached tarball's path, building it first when missing
    local key tar tree
    key=$systemd_suite-$(printf '%s %s %s' "$systemd_recipe" "$systemd_packages" "$systemd_mirror" | sha256sum | cut -c1-12)
    tar=$systemd_cache/rootfs-$key.tar
    if [[ ! -f $tar ]]; then
        command -v debootstrap >/dev/null || {
            step "apt-get install debootstrap" >&2
            as_root apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
        }
        tree=$systemd_cache/debootstrap-$key
        step "debootstrap $systemd_suite (minbase + $systemd_packages) from $systemd_mirror" >&2
        as_root rm -rf "$tree"
        mkdir -p "$systemd_cache"
        # debootstrap does not read apt's configuration: apt's HTTP proxy, if any, as http_proxy.
        local proxy
        proxy=${http_proxy:-$(apt_http_proxy)}
        if ! as_root env ${proxy:+"http_proxy=$proxy"} debootstrap --variant=minbase --include="$systemd_packages" \
            "$systemd_suite" "$tree" "$systemd_mirror" >"$systemd_cache/debootstrap.log" 2>&1; then
            tail -n 30 "$systemd_cache/debootstrap.log" >&2
            die "debootstrap failed (log: $systemd_cache/debootstrap.log)"
        fi
        # What the VM never reads: downloaded packages, package lists, documentation, locales.
        as_root rm -rf "$tree"/var/cache/apt/archives/*.deb "$tree"/var/lib/apt/lists/* \
            "$tree"/usr/share/doc "$tree"/usr/share/man "$tree"/usr/share/info "$tree"/usr/share/locale
        as_root tar --numeric-owner -C "$tree" -cf "$tar.tmp" .
        as_root mv "$tar.tmp" "$tar"
        as_root rm -rf "$tree"
    fi
    echo "$tar"
}

# systemd_pack DEB DECODER: prints the initramfs (the whole root file system) path.
systemd_pack() {
    local deb=$1 decoder=$2 tar staging=$systemd_cache/root unit
    tar=$(systemd_rootfs_tar)
    step "systemd root file system (${tar#"$root"/} + modules, tests, .deb)" >&2
    as_root rm -rf "$staging"
    mkdir -p "$staging"
    as_root tar --numeric-owner -C "$staging" -xf "$tar"
    # Modules: where modprobe looks for them, with their dependencies.
    local modules=$staging/lib/modules/$abi
    as_root install -D -m 0644 "$kernel_dir/modules/configfs.ko" "$modules/kernel/fs/configfs/configfs.ko"
    as_root install -D -m 0644 "$kernel_dir/modules/i2c-dev.ko" "$modules/kernel/drivers/i2c/i2c-dev.ko"
    as_root install -D -m 0644 -t "$modules/extra" "$module_dir"/{gpio-sim,irq_sim,i2c-plain,gpio-keymatrix}.ko
    # (no lists of the kernel's own modules: nothing here loads a built-in one by name)
    as_root touch "$modules"/modules.{order,builtin,builtin.modinfo}
    as_root depmod -b "$staging" "$abi"
    # The tests.
    as_root install -D -m 0644 -t "$staging/vm" vm/lib.sh vm/hardware.sh
    as_root install -D -m 0755 vm/systemd/scenarios.sh "$staging/vm/scenarios.sh"
    as_root install -D -m 0755 Tests/Adapters/verify-standin.py "$staging/vm/verify-standin.py"
    as_root install -D -m 0755 "$decoder" "$staging/usr/local/bin/hd44780-decode"
    as_root install -D -m 0644 "$deb" "$staging/vm/resend-button.deb"
    as_root install -D -m 0644 vm/systemd/vmtest.service "$staging/etc/systemd/system/vmtest.service"
    as_root mkdir -p "$staging/etc/systemd/system/multi-user.target.wants"
    as_root ln -sf /etc/systemd/system/vmtest.service "$staging/etc/systemd/system/multi-user.target.wants/vmtest.service"
    # Quiet and quick: no login prompts on the console the tests write to, no apt timers.
    for unit in serial-getty@.service getty@.service getty.target apt-daily.timer \
        apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer; do
        as_root ln -sf /dev/null "$staging/etc/systemd/system/$unit"
    done
    echo vmtest | as_root tee "$staging/etc/hostname" >/dev/null
    (cd "$staging" && as_root find . -print0 | LC_ALL=C sort -z |
        as_root cpio --null -o -H newc --quiet) >"$systemd_cache/root.cpio"
    as_root rm -rf "$staging"
    echo "$systemd_cache/root.cpio"
}

# systemd_boot INITRAMFS LOG: qemu's exit status (isa-debug-exit, as in the busybox VM).
systemd_boot() {
    local status=0
    timeout --kill-after=10 "$systemd_timeout" qemu-system-x86_64 \
        -accel tcg -m "${VM_SYSTEMD_MEMORY:-1536M}" -smp 1 \
        -display none -monitor none -serial stdio -no-reboot \
        -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
        -kernel "$kernel_dir/vmlinuz" -initrd "$1" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/sbin/init systemd.show_status=0" \
        </dev/null >"$2" 2>&1 || status=$?
    return "$status"
}
