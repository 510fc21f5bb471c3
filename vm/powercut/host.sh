# shellcheck shell=bash
# The power-cut scenario, host side (issue 35; sourced by scripts/vm-test after its helpers):
# the release binary's real loop in an x86-64 busybox guest (vm/powercut/init) with its state
# directory on ext4 on a virtio disk image, and the power cut under it many times: qemu SIGKILLed
# at seeded moments, the image checked (e2fsck -fn after the journal's replay, on a copy) and
# booted again; vm/powercut/verdict.awk judges every cut from the consoles.
#
#   powercut_prepare                   modules, helpers (once per kernel / source change)
#   powercut_pack BINARY               the initramfs; prints its path
#   powercut_run INITRAMFS CUTS SEED MUTANT ID
#                                      CUTS cuts from a fresh image, seeded by SEED; MUTANT none,
#                                      nodirsync or inplace (vm/powercut/mutant.c); appends the
#                                      RESULT row `powercut ID pass|fail SECONDS SUMMARY` to
#                                      $results; 0 when every cut passed
#
# What is cut: the guest's memory, with its page cache and ext4's running journal transaction,
# and every write the guest had not yet issued to the disk. The disk is attached with
# cache=none (O_DIRECT on the image: the host's page cache is bypassed, and e2fsck reads exactly
# what the guest's writes left); a write the guest's block layer completed is in the image, as
# on a card that has acknowledged it. A device cache that loses acknowledged but unflushed
# writes is not modelled (docs/testing.md says so).
#
# The moment of each cut (RANDOM seeded with SEED, so one seed gives one schedule; the guest's
# timing under TCG varies a little between runs): 4 in 10 a few ms after a check started (the
# n-th PC VERIFY, n 1-3, then 0-39 ms), 3 in 10 right after `code submitted` (the n-th, then
# 0-24 ms: inside that code's write: the temporary file, its fsync, the rename, the directory's
# fsync), 1 in 10 right after `countdown started` (0-29 ms: inside the press's write), 2 in 10
# at a random time 0-7999 ms after PC READY. A boot that does not reach its moment within
# $powercut_watchdog seconds is cut there and counts as a failure.
# Uses vm-test's $cache, $kernel_dir, $module_dir, $abi, $kversion, $results, $tools, step, die,
# fetch_deb, stage_common, copy_with_libraries, keypad_pack.
# shellcheck disable=SC2154 # those come from scripts/vm-test

powercut_dir=$cache/powercut
powercut_watchdog=120
# Debian's modules the guest adds (paths under the package's kernel/), in load order.
powercut_kos=(drivers/virtio/virtio_ring.ko drivers/virtio/virtio.ko
    drivers/virtio/virtio_pci_legacy_dev.ko drivers/virtio/virtio_pci_modern_dev.ko
    drivers/virtio/virtio_pci.ko drivers/block/virtio_blk.ko crypto/crc32c_generic.ko lib/crc16.ko
    fs/mbcache.ko fs/jbd2/jbd2.ko fs/ext4/ext4.ko)

powercut_prepare() {
    local modules=$powercut_dir/modules-$kversion ko missing=0 deb root
    mkdir -p "$powercut_dir"
    for ko in "${powercut_kos[@]}"; do [[ -f $modules/${ko##*/} ]] || missing=1; done
    if ((missing)); then
        step "virtio-blk and ext4 modules from linux-image-$abi $kversion (extracted, not installed)"
        deb=$(fetch_deb "linux-image-$abi" "$kversion")
        root=$(mktemp -d "$powercut_dir/kernel.XXXXXX")
        dpkg-deb -x "$deb" "$root"
        mkdir -p "$modules"
        for ko in "${powercut_kos[@]}"; do
            [[ -f $root/lib/modules/$abi/kernel/$ko ]] || die "the kernel package has no $ko"
            cp "$root/lib/modules/$abi/kernel/$ko" "$modules/"
        done
        rm -rf "$root" "$deb"
    fi
    if [[ ! -x $powercut_dir/pc-watch || vm/powercut/pc-watch.c -nt $powercut_dir/pc-watch ]]; then
        step "pc-watch (gcc -static)"
        gcc -static -O2 -Wall -Wextra -Werror -o "$powercut_dir/pc-watch.tmp" vm/powercut/pc-watch.c
        mv "$powercut_dir/pc-watch.tmp" "$powercut_dir/pc-watch"
    fi
    if [[ ! -f $powercut_dir/pc-mutant.so || vm/powercut/mutant.c -nt $powercut_dir/pc-mutant.so ]]; then
        step "pc-mutant.so (gcc -shared)"
        gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$powercut_dir/pc-mutant.so.tmp" vm/powercut/mutant.c -ldl
        mv "$powercut_dir/pc-mutant.so.tmp" "$powercut_dir/pc-mutant.so"
    fi
}

powercut_pack() { # powercut_pack BINARY: prints the initramfs path
    local staging=$powercut_dir/initramfs tool
    rm -rf "$staging"
    stage_common "$staging" powercut "$kernel_dir/modules" "$module_dir"
    install -m 0755 vm/powercut/init "$staging/init"
    install -m 0755 /bin/busybox "$staging/bin/busybox"
    copy_with_libraries "$staging" "$1" /usr/bin/resend-button
    for tool in "${tools[@]}"; do
        copy_with_libraries "$staging" "$tool" "$tool"
    done
    keypad_pack "$staging"
    install -m 0755 "$powercut_dir/pc-watch" "$staging/usr/bin/pc-watch"
    install -D -m 0644 "$powercut_dir/pc-mutant.so" "$staging/usr/lib/pc-mutant.so"
    cp "$powercut_dir/modules-$kversion"/*.ko "$staging/lib/modules/vm/"
    (cd "$staging" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$powercut_dir/initramfs.cpio"
    echo "$powercut_dir/initramfs.cpio"
}

# powercut_microseconds: the host's wall clock in microseconds.
powercut_microseconds() { echo "${EPOCHREALTIME/./}"; }

# powercut_fire WHAT: the power cut (powercut_boot's pid, log and fired, by bash's dynamic scope).
powercut_fire() {
    kill -KILL "$pid" 2>/dev/null || true
    fired=1
    powercut_cut=$1
    printf '%s PC-HOST CUT %s\n' "$EPOCHREALTIME" "$1" >>"$log"
}

# powercut_boot INITRAMFS IMAGE MODE MUTANT LOG KIND N DELAY_MS: boots the guest once and reads
# its console into LOG (each line stamped with the host's time), cutting the power (SIGKILL to
# qemu) at the moment KIND/N/DELAY_MS names (see the top); KIND final: no cut, the guest leaves
# by itself. Sets powercut_cut (what happened) and powercut_status (qemu's exit status).
powercut_boot() {
    local initramfs=$1 image=$2 mode=$3 mutant=$4 log=$5 kind=$6 n=$7 delay=$8
    local fifo=$powercut_dir/console.fifo pid fd line partial='' count=0 fired=0 ready='' now started
    rm -f "$fifo"
    mkfifo "$fifo"
    started=$(powercut_microseconds)
    printf '%s PC-HOST BOOT mode=%s mutant=%s cut=%s/%s/%s\n' "$EPOCHREALTIME" "$mode" "$mutant" "$kind" "$n" "$delay" >"$log"
    qemu-system-x86_64 \
        -accel tcg -m "${VM_TEST_MEMORY:-512M}" -smp 1 \
        -display none -monitor none -serial stdio -no-reboot \
        -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
        -kernel "$kernel_dir/vmlinuz" -initrd "$initramfs" \
        -drive "file=$image,format=raw,if=virtio,cache=none,aio=threads" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init pc.mode=$mode pc.mutant=$mutant ${powercut_append:-}" \
        </dev/null >"$fifo" 2>&1 &
    pid=$!
    exec {fd}<"$fifo"
    powercut_cut="none"
    while :; do
        if IFS= read -r -t 0.02 -u "$fd" line; then
            line=${partial}${line%$'\r'}
            partial=''
            printf '%s %s\n' "$EPOCHREALTIME" "$line" >>"$log"
            if ((!fired)); then
                case $kind:$line in
                    time:"PC READY") ready=$(powercut_microseconds) ;;
                    verify:"PC VERIFY "* | submitted:*" code submitted "* | countdown:*" countdown started "*)
                        count=$((count + 1))
                        if ((count == n)); then
                            sleep "$(printf '0.%03d' "$delay")"
                            powercut_fire "$kind n=$n +${delay}ms"
                        fi
                        ;;
                esac
            fi
        else
            if (($? <= 128)); then # end of file: qemu is gone
                [[ -z $partial$line ]] || printf '%s %s\n' "$EPOCHREALTIME" "$partial$line" >>"$log"
                break
            fi
            partial+=$line
        fi
        ((fired)) && continue
        now=$(powercut_microseconds)
        if [[ $kind == time && -n $ready ]] && ((now >= ready + delay * 1000)); then
            powercut_fire "time +${delay}ms"
        elif ((now - started > powercut_watchdog * 1000000)); then
            powercut_fire "watchdog ${powercut_watchdog}s"
        fi
    done
    exec {fd}<&-
    powercut_status=0
    # (braces: bash reports a job killed by a signal on stderr; that kill is ours)
    { wait "$pid" || powercut_status=$?; } 2>/dev/null
    rm -f "$fifo"
}

powercut_run() {
    local initramfs=$1 cuts=$2 seed=$3 mutant=$4 id=$5
    local run=$powercut_dir/run-$id image k kind n delay roll log verdict status=0 started=$SECONDS problems=()
    # The last boot measures the state disk's block-level wear (pc.wear=1, vm/powercut/init): about
    # 50 s more, so not in the sample (VM_POWERCUT_WEAR=0|1 decides otherwise).
    local wear=${VM_POWERCUT_WEAR:-1}
    [[ -n ${VM_POWERCUT_WEAR:-} || $id != powercut-sample ]] || wear=0
    rm -rf "$run"
    mkdir -p "$run"
    image=$run/state.img
    truncate -s 64M "$image"
    mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 -L resend-state "$image"
    : >"$run/fsck.txt"
    RANDOM=$seed
    for ((k = 0; k <= cuts; k++)); do
        log=$run/boot-$(printf '%03d' "$k").log
        if ((k == cuts)); then
            powercut_append="pc.wear=$wear"
            powercut_boot "$initramfs" "$image" final "$mutant" "$log" final 0 0
            powercut_append=
            if [[ $powercut_status != 1 ]]; then problems+=("the last boot ended with qemu status $powercut_status (not the guest's isa-debug-exit 0)"); fi
            break
        fi
        roll=$((RANDOM % 10))
        n=$((RANDOM % 3 + 1))
        case $roll in
            0 | 1 | 2 | 3) kind=verify delay=$((RANDOM % 40)) ;;
            4 | 5 | 6) kind=submitted delay=$((RANDOM % 25)) ;;
            7) kind=countdown n=1 delay=$((RANDOM % 30)) ;;
            *) kind=time delay=$((RANDOM % 8000)) ;;
        esac
        powercut_boot "$initramfs" "$image" run "$mutant" "$log" "$kind" "$n" "$delay"
        if grep -q ' PC SETUP FAILED' "$log"; then problems+=("boot $k: $(grep -m 1 -o 'PC SETUP FAILED.*' "$log")"); fi
        [[ $powercut_cut == watchdog* ]] && problems+=("boot $k: its moment ($kind n=$n +${delay}ms) did not come within ${powercut_watchdog}s")
        # The file system as the power cut left it: the journal replayed on a copy (what the next
        # mount does), then checked read-only.
        cp --sparse=always "$image" "$run/check.img"
        e2fsck -E journal_only -p "$run/check.img" >"$run/fsck-$k.txt" 2>&1 || true
        if e2fsck -fn "$run/check.img" >>"$run/fsck-$k.txt" 2>&1; then
            echo "$k clean" >>"$run/fsck.txt"
        else
            echo "$k dirty(see ${run#"$root"/}/fsck-$k.txt)" >>"$run/fsck.txt"
        fi
        printf 'powercut %s: cut %d/%d: %s\n' "$id" "$((k + 1))" "$cuts" "$powercut_cut" >&2
    done
    rm -f "$run/check.img"
    verdict=$(awk -f vm/powercut/verdict.awk -v cooldown=10 -v fsck="$run/fsck.txt" -v label="powercut $id" "$run"/boot-*.log) || status=1
    printf '%s\n' "$verdict"
    sed -n 's/^[0-9.]* PC WEAR /powercut '"$id"': block-level wear of the state disk: /p' "$run/boot-$(printf '%03d' "$cuts").log"
    if ((${#problems[@]})); then
        status=1
        printf 'powercut %s: %s\n' "$id" "${problems[@]}"
    fi
    local summary
    summary="$(tail -n 1 <<<"$verdict" | sed 's/^powercut [^:]*: //'); seed $seed, mutant $mutant, $((SECONDS - started)) s${problems[*]:+; ${problems[*]}}"
    printf 'powercut\t%s\t%s\t%s\t%s\n' "$id" "$( ((status == 0)) && echo pass || echo fail)" "$((SECONDS - started))" "$summary" >>"$results"
    printf '[powercut] %s %s (%s s): %s\n' "$( ((status == 0)) && echo PASS || echo FAIL)" "$id" "$((SECONDS - started))" "$summary"
    return "$status"
}
