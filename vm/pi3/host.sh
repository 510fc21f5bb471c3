# shellcheck shell=bash
# shellcheck disable=SC2154 # cache, root, step, die, arm64_*, copy_with_libraries, keypad_tool...: scripts/vm-test's
# The host side of the pi3 guest (sourced by scripts/vm-test after vm/arm64/host.sh; issue 23).
#
# The guest: qemu's `raspi3b` machine (a Raspberry Pi 3 Model B: BCM2837, four Cortex-A53, 1 GiB)
# booting Debian 12's arm64 kernel (the arm64 guest's, same package) with the kernel package's own
# device tree for the board (broadcom/bcm2837-rpi-3-b.dtb), so the drivers are the Pi's:
# pinctrl-bcm2835 (built in; gpiochip0 with the device tree's line names "GPIO17", ...),
# i2c-bcm2835 (the BSC controller with its 16-byte FIFO and interrupts; module), bcm2835_wdt
# (`reboot -f` ends qemu under -no-reboot). The busybox initramfs has vm/pi3/init and
# vm/pi3/scenarios.sh (ids pi3-*), the arm64 userland of vm/arm64/host.sh, the cross-built binary
# (scripts/cross-build --arch arm64 [--gpiod v2]), uinput-keypad and i2c-mark (vm/pi3/i2c-mark.c)
# built with aarch64-linux-gnu-gcc -static.
# Devices on qemu's I2C buses: an at24c-eeprom at 0x27 on i2c-bus.1 (the Pi's i2c-1) stands in for
# the LCD backpack (qemu has no PCF8574 model in Debian's build; the EEPROM acknowledges every
# write; rom-size is required: without it qemu dies with SIGFPE on the first write); another at
# 0x50 on i2c-bus.0 takes i2c-mark's time marks. `-trace 'i2c_*' -msg timestamp=on` writes every
# START, byte and STOP with the host's clock into the trace file: the host converts the 0x27
# part between the marks into the i2c-plain record (vm/pi3/trace-record.awk), in the guest's
# CLOCK_MONOTONIC by the marks' offset, and decodes it with hd44780-decode into the glass, checked
# by vm/glass-verdict.awk as the other guests' glass (pi3_glass, below).
# GPIO inputs cannot be driven here (qemu's bcm2835 GPIO model has no inputs and no edge
# detection): Send is the keypad's A key on a uinput keypad.
# The LED line (GPIO27) is followed from the host: qemu's bcm2835 GPIO model has no trace events,
# but it raises its output N (`unnamed-gpio-out[N]`) whenever the guest changes an output pin's
# level. Before the guest starts (-S), the monitor (commands from a file) links output 27 to
# input 59 of the BCM2835 interrupt controller (`gpu-irq[59]`: no device drives it and no driver
# enables it, so the guest never sees it) and resumes; `-trace bcm2835_ic_set_gpu_irq` then
# stamps each level of GPIO27 with the host's clock, mapped onto the guest's by the same marks
# (pi3_led). (A pca9552's GPIO input, the other sink qemu offers, traces nothing on input
# changes.) The level written when the line is requested shows only when the pin is already an
# output (the kernel writes the value before it makes the pin an output; after pi3-glass's warm-up
# run it is one); every change after it shows.
#
# QEMU: raspi3b with these devices needs QEMU 10 (Debian bookworm-backports); installing it would
# replace the machine's qemu-system-common, which the other guests' QEMU 7.2 needs, so it is only
# downloaded and extracted (a private apt state, the machine's own mirror for bookworm-backports,
# vm/apt-sources.sh) into .cache/vm/pi3/qemu-<version>, and run from there with -L (firmware) and
# QEMU_MODULE_DIR. It runs on bookworm's libraries.

pi3_cache=$cache/pi3
pi3_apt_dir=$pi3_cache/apt
pi3_qemu_packages=(qemu-system-arm qemu-system-common qemu-system-data)

pi3_apt() { # apt-get on the private state (the host's architecture, bookworm-backports only)
    apt-get -o Dir::State="$pi3_apt_dir/state" -o Dir::State::Lists="$pi3_apt_dir/lists" \
        -o Dir::State::status="$pi3_apt_dir/status" -o Dir::Cache="$pi3_apt_dir/cache" \
        -o Dir::Etc::SourceList="$pi3_apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null \
        -o Debug::NoLocking=1 "$@"
}

# pi3_prepare: QEMU 10 (extracted), i2c-mark; sets pi3_qemu_root. Needs arm64_prepare first.
pi3_prepare() {
    local marker=$pi3_cache/qemu-current
    if [[ ! -f $marker || ! -x $(cat "$marker")/usr/bin/qemu-system-aarch64 ]]; then
        local mirror key=/usr/share/keyrings/debian-archive-keyring.gpg
        mirror=$(apt_mirror bookworm-backports VM_DEBIAN_MIRROR) || exit 1
        [[ -f $key ]] || die "$key is missing (package debian-archive-keyring)"
        step "QEMU 10 from bookworm-backports ($mirror; private apt state, extracted, not installed)"
        mkdir -p "$pi3_apt_dir"/{state,lists/partial,cache/archives/partial}
        : >"$pi3_apt_dir/status"
        printf 'deb [signed-by=%s] %s bookworm-backports main\n' "$key" "$mirror" >"$pi3_apt_dir/sources.list"
        pi3_apt -qq update || die "apt-get update of bookworm-backports failed"
        local debs=$pi3_cache/debs version
        rm -rf "$debs"
        mkdir -p "$debs"
        (cd "$debs" && pi3_apt download -q "${pi3_qemu_packages[@]}" 2>&1 |
            grep -v -e '^W: Download is performed unsandboxed' -e '^Get:' -e '^Fetched' >&2) || true
        version=$(find "$debs" -name 'qemu-system-arm_*.deb' | head -n 1 | sed 's/.*qemu-system-arm_\([^_]*\)_.*/\1/; s/%3a/:/')
        [[ -n $version ]] || die "apt-get download qemu-system-arm (bookworm-backports) failed"
        local tree=$pi3_cache/qemu-${version//:/_} package deb
        rm -rf "$tree"
        for package in "${pi3_qemu_packages[@]}"; do
            deb=$(find "$debs" -name "${package}_*.deb" | head -n 1)
            [[ -n $deb ]] || die "apt-get download $package (bookworm-backports) failed"
            dpkg-deb -x "$deb" "$tree"
        done
        [[ -x $tree/usr/bin/qemu-system-aarch64 ]] || die "no qemu-system-aarch64 in $tree"
        local missing
        missing=$(ldd "$tree/usr/bin/qemu-system-aarch64" | sed -n 's/^[[:space:]]*\([^ ]*\) => not found.*/\1/p' | tr '\n' ' ')
        [[ -z $missing ]] || die "QEMU 10 (${tree#"$root"/}) needs libraries this machine lacks: $missing(apt-get install qemu-system-arm brings them)"
        rm -rf "$debs"
        echo "$tree" >"$marker"
    fi
    pi3_qemu_root=$(cat "$marker")

    local tool=$pi3_cache/i2c-mark
    if [[ ! -x $tool || vm/pi3/i2c-mark.c -nt $tool ]]; then
        step "i2c-mark (aarch64-linux-gnu-gcc -static)"
        aarch64-linux-gnu-gcc -static -O2 -Wall -Wextra -Werror -o "$tool.tmp" vm/pi3/i2c-mark.c
        mv "$tool.tmp" "$tool"
    fi
    tool=$pi3_cache/uinput-keypad
    if [[ ! -x $tool || vm/uinput-keypad.c -nt $tool ]]; then
        step "uinput-keypad for arm64 (aarch64-linux-gnu-gcc -static)"
        aarch64-linux-gnu-gcc -static -O2 -Wall -Wextra -Werror -o "$tool.tmp" vm/uinput-keypad.c
        mv "$tool.tmp" "$tool"
    fi
}

# pi3_pack VARIANT BINARY: prints the initramfs path (VARIANT: pi3-v1, pi3-v2).
pi3_pack() {
    local variant=$1 binary=$2 staging=$cache/initramfs-$1 ko
    rm -rf "$staging"
    mkdir -p "$staging"
    cp -a "$arm64_userland"/. "$staging/"
    rm -f "$staging/ready" "$staging/usr/bin/qemu-x86_64-static"
    mkdir -p "$staging"/{bin,lib/modules/vm,vm/pi3,usr/bin}
    install -m 0755 vm/pi3/init "$staging/init"
    install -m 0644 vm/lib.sh "$staging/vm/"
    install -m 0644 vm/pi3/scenarios.sh "$staging/vm/pi3/"
    echo "$variant" >"$staging/vm/variant"
    for ko in i2c-bcm2835 i2c-dev bcm2835_wdt evdev uinput; do
        cp "$arm64_kernel_dir/modules/$ko.ko" "$staging/lib/modules/vm/"
    done
    install -m 0755 "$binary" "$staging/usr/bin/resend-button"
    install -m 0755 "$pi3_cache/i2c-mark" "$pi3_cache/uinput-keypad" "$staging/usr/bin/"
    (cd "$staging" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$cache/initramfs-$variant.cpio"
    echo "$cache/initramfs-$variant.cpio"
}

# The LED's line and the interrupt controller's input that follows it (above).
pi3_led_gpio=27
pi3_led_irq=59

# pi3_boot INITRAMFS LOG TRACE: qemu's exit status (0 after the guest's reboot -f). The console is
# the mini UART (the second serial port; ttyS1 in the guest).
pi3_boot() {
    local status=0 monitor=$3.monitor
    rm -f "$3"
    printf 'qom-set /machine/soc/peripherals/gpio unnamed-gpio-out[%s] /machine/soc/peripherals/ic/gpu-irq[%s]\nqom-get /machine/soc/peripherals/gpio unnamed-gpio-out[%s]\ncont\n' \
        "$pi3_led_gpio" "$pi3_led_irq" "$pi3_led_gpio" >"$monitor.in"
    QEMU_MODULE_DIR=$pi3_qemu_root/usr/lib/x86_64-linux-gnu/qemu \
        timeout --kill-after=10 "$pi3_timeout" "$pi3_qemu_root/usr/bin/qemu-system-aarch64" \
        -L "$pi3_qemu_root/usr/share/qemu" -machine raspi3b -accel tcg,thread=single \
        -display none -monitor none -no-reboot -serial null -serial "file:$2" \
        -kernel "$arm64_kernel_dir/vmlinuz" -dtb "$arm64_kernel_dir/bcm2837-rpi-3-b.dtb" -initrd "$1" \
        -append "console=ttyS1,115200 quiet loglevel=3 panic=-1 rdinit=/init" \
        -device at24c-eeprom,bus=i2c-bus.1,address=0x27,rom-size=256 \
        -device at24c-eeprom,bus=i2c-bus.0,address=0x50,rom-size=256 \
        -S -chardev "file,id=monitor,path=$monitor.out,input-path=$monitor.in" -mon chardev=monitor,mode=readline \
        -trace 'i2c_*' -trace bcm2835_ic_set_gpu_irq -msg timestamp=on -D "$3" \
        </dev/null >"$2.qemu" 2>&1 || status=$?
    # qemu's own messages (e.g. a warning about the system's ui-opengl.so, which the private QEMU
    # does not load) go after the console.
    [[ -s $2.qemu ]] && { echo "--- qemu:"; cat "$2.qemu"; } >>"$2"
    return "$status"
}

# pi3_offset LOG TRACE FIRST COUNT: "<offset_us> <half-width_us>" from the marks FIRST..: each
# mark's byte crossed the bus between the guest's <before> and <after>, and the trace stamps it
# with the host's clock H: the offset (host - guest) lies in [H - after, H - before]; the marks'
# intervals intersected (a constant offset: TCG's guest clock runs on the host's).
pi3_offset() {
    awk -v first="$3" -v count="$4" '
        function us(s,   p) { split(s, p, "."); return p[1] * 1000000 + substr(p[2] "000000000", 1, 6) }
        function hex(s,   v, i) { s = tolower(s); sub(/^0x/, "", s); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
        FNR == NR { if ($1 == "PI3-MARK") { b = hex($3); before[b] = us($4); after[b] = us($5) } next }
        /i2c_send send\(addr:0x50\)/ {
            at = index($0, "@"); colon = index($0, ":"); h = us(substr($0, at + 1, colon - at - 1))
            b = hex(substr($0, length($0) - 1))
            if (b < first || b >= first + count || !(b in before) || (b in seen)) next
            seen[b] = 1; n++
            lo_b = h - after[b]; hi_b = h - before[b]
            if (n == 1 || lo_b > lo) lo = lo_b
            if (n == 1 || hi_b < hi) hi = hi_b
        }
        END { if (n < count || lo > hi) { print "none " n " " lo " " hi; exit 1 } printf "%.0f %.0f\n", int((lo + hi) / 2), int((hi - lo) / 2) }
    ' "$1" "$2"
}

# pi3_led TRACE OFFSET FROM TO STARTED FINISHED TOLERANCE: the verdict on the LED line from qemu's
# trace (host microseconds FROM..TO, OFFSET host minus guest) against the countdown's log stamps
# (guest seconds): "PASS <what>" or "FAIL <why>". The LED is on while Send is available: the first
# change from TOLERANCE seconds before the countdown's start on turns it off within TOLERANCE of
# the start, the next turns it on within TOLERANCE of the end, and a change before them (the run's
# start, when the pin was already an output) left it on.
pi3_led() {
    awk -v irq="$pi3_led_irq" -v offset_us="$2" -v from_us="$3" -v to_us="$4" -v started="$5" -v finished="$6" -v tolerance="$7" '
        function abs(x) { return x < 0 ? -x : x }
        index($0, "bcm2835_ic_set_gpu_irq GPU irq #" irq " level ") {
            at = index($0, "@"); colon = index($0, ":"); split(substr($0, at + 1, colon - at - 1), p, ".")
            h = p[1] * 1000000 + p[2]
            if (h < from_us || h > to_us) next
            n++; when[n] = (h - offset_us) / 1e6; level[n] = $NF
        }
        END {
            if (started == "" || finished == "") { print "FAIL no countdown started/finished in the log"; exit }
            for (k = 1; k <= n && when[k] < started - tolerance; k++) before = level[k]
            if (before == "0") { printf "FAIL the LED was off (its last change, at %.3f, was to 0) when the countdown started\n", when[k - 1]; exit }
            if (k + 1 > n) { printf "FAIL the LED line changed %d times from the countdown on, not off at its start and on at its end\n", n - k + 1; exit }
            off = when[k] - started; on = when[k + 1] - finished
            if (level[k] != 0 || level[k + 1] != 1) { printf "FAIL from the countdown on the LED changed to %s and then %s, not 0 (off) and 1 (on)\n", level[k], level[k + 1]; exit }
            if (abs(off) > tolerance) { printf "FAIL the LED went off %+.3f s from countdown started, not within %.3f s\n", off, tolerance; exit }
            if (abs(on) > tolerance) { printf "FAIL the LED came on %+.3f s from countdown finished, not within %.3f s\n", on, tolerance; exit }
            printf "PASS GPIO27 off %+.1f ms from countdown started, on %+.1f ms from countdown finished (off for %.3f s), no change between; %d changes between the marks%s\n", off * 1000, on * 1000, when[k + 1] - when[k], n, (k > 1 ? sprintf(", on %.3f s before the start", started - when[k - 1]) : "")
        }' "$1"
}

# pi3_glass VARIANT LOG TRACE: the host half of pi3-glass and pi3-led; appends their RESULT lines
# to LOG (with the seconds the guest's half took, from its GUEST-OK line).
pi3_glass() {
    local variant=$1 log=$2 trace=$3 id=pi3-glass
    local text seconds
    text=$(tr -d '\r' <"$log")
    if ! grep -q '^PI3-GLASS GUEST-OK' <<<"$text"; then
        # The guest said why pi3-glass failed (or never got there): no run for the LED either.
        echo "RESULT pi3-led fail 0 no countdown to follow: the glass run failed in the guest (pi3-glass)" >>"$log"
        return 0
    fi
    seconds=$(sed -n 's/^PI3-GLASS GUEST-OK seconds=\([0-9.]*\) .*/\1/p' <<<"$text" | head -n 1)
    local pre post offset half drift
    if ! pre=$(pi3_offset <(echo "$text") "$trace" 16 8) || ! post=$(pi3_offset <(echo "$text") "$trace" 32 8); then
        local why="the time marks do not tie the trace to the guest's clock (before: $pre; after: $post)"
        printf 'RESULT %s fail %s %s\n' "$id" "$seconds" "$why" pi3-led "$seconds" "$why" >>"$log"
        return 0
    fi
    offset=${pre% *}
    half=$(( ${pre#* } > ${post#* } ? ${pre#* } : ${post#* } ))
    drift=$(( ${post% *} - offset ))
    local from to
    from=$(awk '/i2c_send send\(addr:0x50\) data:0x17/ { at = index($0, "@"); colon = index($0, ":"); split(substr($0, at + 1, colon - at - 1), p, "."); printf "%.0f\n", p[1] * 1000000 + p[2]; exit }' "$trace")
    to=$(awk '/i2c_send send\(addr:0x50\) data:0x20/ { at = index($0, "@"); colon = index($0, ":"); split(substr($0, at + 1, colon - at - 1), p, "."); printf "%.0f\n", p[1] * 1000000 + p[2]; exit }' "$trace")
    local record=$cache/$variant.record glass=$cache/$variant.glass status=0
    local shift
    shift=$(awk -v address=0x27 -v offset_us="$offset" -v from_us="$from" -v to_us="$to" -v bus_hz=100000 \
        -f vm/pi3/trace-record.awk "$trace" 2>&1 >"$record")
    # The record's timeline is the Pi's bus at the device tree's 100 kHz (vm/pi3/trace-record.awk
    # says how and why); the decoder lays the bytes out at the same rate.
    "$decoder" --columns 16 --rows 2 --address 0x27 --bus-hz 100000 <"$record" >"$glass" 2>&1 || status=$?
    local started finished figures=() row cell bytes transactions
    started=$(sed -n 's/^PI3-LOG \([0-9.]*\) countdown started\( .*\)\{0,1\}$/\1/p' <<<"$text" | head -n 1)
    finished=$(sed -n 's/^PI3-LOG \([0-9.]*\) countdown finished\( .*\)\{0,1\}$/\1/p' <<<"$text" | head -n 1)
    local rows=("LCD init (datasheet 4-bit dance)" "first paint (Verification / Send code)" "press (Send code -> Resend (60))"
        "tick, one digit changes" "tick, two digits change" "end of countdown (-> Resend)" "whole 60 s countdown (press frame to Resend)")
    for row in "${rows[@]}"; do
        cell=$(grep -F "| I2C: $row |" BENCHMARKS.md | tail -n 1 | cut -d'|' -f3 | sed 's/^ *//; s/ *$//')
        bytes=$(echo "$cell" | sed -n 's/^\([0-9][0-9-]*\) B in [0-9][0-9]* tx.*/\1/p')
        transactions=$(echo "$cell" | sed -n 's/^[0-9][0-9-]* B in \([0-9][0-9]*\) tx.*/\1/p')
        figures+=("$bytes" "$transactions")
    done
    # The press frame's bound: 50 ms plus how far the marks leave the clocks' offset open. The
    # press frame's bytes are not BENCHMARKS.md's: with a keypad, line 1 shows the entry's field
    # ("Code: ______") from the press on (press_free: the rest of the countdown is checked).
    local tolerance
    tolerance=$(awk -v h="$half" 'BEGIN { printf "%.6f", 0.050 + h / 1e6 }')
    local verdict led
    led=$(pi3_led "$trace" "$offset" "$from" "$to" "$started" "$finished" "$tolerance")
    verdict=$(awk -v seconds=60 -v started="$started" -v tolerance="$tolerance" \
        -v init_b="${figures[0]}" -v init_tx="${figures[1]}" -v paint_b="${figures[2]}" -v paint_tx="${figures[3]}" \
        -v press_b="${figures[4]}" -v press_tx="${figures[5]}" -v one_b="${figures[6]}" -v one_tx="${figures[7]}" \
        -v two_b="${figures[8]}" -v two_tx="${figures[9]}" -v end_b="${figures[10]}" -v end_tx="${figures[11]}" \
        -v whole_b="${figures[12]}" -v whole_tx="${figures[13]}" -v press_free=keypad -f vm/glass-verdict.awk "$glass")
    {
        echo "--- pi3-glass, host side: clock offset host-guest $offset us (marks +-$half us, drift over the run $drift us); record $(wc -l <"$record") messages (${record#"$root"/}; modelled 100 kHz timeline: $shift); hd44780-decode -> $status (${glass#"$root"/})"
        echo "--- the bytes per transaction: $(awk '{ n[$8]++ } END { for (k in n) printf "%s B x%d, ", k, n[k] }' "$record")"
        sed 's/^/    /' "$glass" | head -n 200
        if [[ $status != 0 ]]; then
            echo "RESULT $id fail $seconds hd44780-decode exited with $status"
        elif [[ ${verdict%% *} != PASS ]]; then
            echo "RESULT $id fail $seconds ${verdict#FAIL }"
        else
            echo "RESULT $id pass $seconds decoded from qemu's I2C trace (clocks tied by marks +-$half us, press frame bound $tolerance s): ${verdict#PASS }"
        fi
        echo "--- pi3-led, host side: GPIO27 in qemu's trace (gpu-irq[$pi3_led_irq]): $(grep -c "GPU irq #$pi3_led_irq level" "$trace") changes in the whole boot"
        if [[ ${led%% *} == PASS ]]; then
            echo "RESULT pi3-led pass $seconds ${led#PASS } (bound $tolerance s)"
        else
            echo "RESULT pi3-led fail $seconds ${led#FAIL }"
        fi
    } >>"$log"
}
