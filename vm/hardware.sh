# shellcheck shell=sh
# The simulated hardware of the vm-test guest (sourced by /init and /vm/scenarios.sh; busybox sh).
#
# GPIO: one gpio-sim chip (configfs) with 4 lines, line 0 named "button", line 1 named "led".
#   Drive the button with sim_pull: gpio-sim's "pull" attribute SETS the simulated input level
#   (pull-up -> 1, pull-down -> 0). The button is active-low with pull-up bias, so
#   pull-down = pressed, pull-up = released. Read the LED with sim_value (the physical level the
#   consumer drives; an unrequested line reads 0).
# I2C: two adapters, each with an "LCD backpack" at 0x27 (a PCF8574's address with all jumpers
#   open); the scenarios run once per adapter, chosen by $ADAPTER:
#   - stub (default): i2c-stub, SMBus only (one transaction per expander byte), found by the
#     adapter name "SMBus stub driver";
#   - plain: our i2c-plain module (vm/module/i2c-plain.c), plain I2C like the Pi's i2c-bcm2835
#     (one write() per frame), found by the adapter name "i2c-plain test adapter"; it records every
#     message (record_* below) and says EREMOTEIO while the device is away.
ADAPTER=${ADAPTER:-stub}

SIM_CONFIG=/sys/kernel/config/gpio-sim/vmtest
LCD_ADDRESS=0x27
# Where the stub's chip goes while the "LCD" is away: the lowest 7-bit address, outside the
# backpack ranges (0x20-0x27, 0x38-0x3f) that programs probe.
LCD_AWAY_ADDRESS=0x08
BUTTON_OFFSET=0
LED_OFFSET=1

make_gpio_sim() {
    mkdir "$SIM_CONFIG" "$SIM_CONFIG/bank0" || return 1
    echo 4 > "$SIM_CONFIG/bank0/num_lines" || return 1
    mkdir "$SIM_CONFIG/bank0/line$BUTTON_OFFSET" "$SIM_CONFIG/bank0/line$LED_OFFSET" || return 1
    echo button > "$SIM_CONFIG/bank0/line$BUTTON_OFFSET/name" || return 1
    echo led > "$SIM_CONFIG/bank0/line$LED_OFFSET/name" || return 1
    echo 1 > "$SIM_CONFIG/live" || return 1
}

# The platform device (gpio-sim.N) and the chip (gpiochipM) made by make_gpio_sim.
sim_device() { cat "$SIM_CONFIG/dev_name"; }
sim_chip() { cat "$SIM_CONFIG/bank0/chip_name"; }
sim_line_dir() { echo "/sys/devices/platform/$(sim_device)/$(sim_chip)/sim_gpio$1"; }

# sim_pull OFFSET pull-up|pull-down: sets the simulated input level of a line.
sim_pull() { echo "$2" > "$(sim_line_dir "$1")/pull"; }
# sim_value OFFSET: prints 0 or 1, the level of the line.
sim_value() { cat "$(sim_line_dir "$1")/value"; }

press() { sim_pull "$BUTTON_OFFSET" pull-down; }
release() { sim_pull "$BUTTON_OFFSET" pull-up; }
led_level() { sim_value "$LED_OFFSET"; }

load_i2c_stub() {
    insmod /lib/modules/vm/i2c-stub.ko chip_addr="$LCD_ADDRESS" || return 1
    [ -n "$(stub_bus)" ] || return 1
    # i2c-dev makes /dev/i2c-N through devtmpfs; wait for the node (udev-less).
    n=0
    while [ ! -e "/dev/i2c-$(stub_bus)" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
    [ -e "/dev/i2c-$(stub_bus)" ]
}

unload_i2c_stub() { rmmod i2c_stub; }

# adapter_bus NAME: the number N of the I2C adapter named NAME (/dev/i2c-N), empty when absent.
adapter_bus() {
    for adapter in /sys/bus/i2c/devices/i2c-*; do
        [ -e "$adapter/name" ] || continue
        if [ "$(cat "$adapter/name")" = "$1" ]; then
            echo "${adapter##*/i2c-}"
            return 0
        fi
    done
}
# stub_bus: the number N of the i2c-stub adapter (/dev/i2c-N), empty when it is not loaded.
stub_bus() { adapter_bus "SMBus stub driver"; }
# plain_bus: the same for the i2c-plain adapter.
plain_bus() { adapter_bus "i2c-plain test adapter"; }
# lcd_bus: the bus of the adapter the scenarios use ($ADAPTER).
lcd_bus() { if [ "$ADAPTER" = plain ]; then plain_bus; else stub_bus; fi; }

# load_i2c_plain: the plain adapter with its device at LCD_ADDRESS; debugfs for its record.
load_i2c_plain() {
    grep -q ' /sys/kernel/debug ' /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug || return 1
    insmod /lib/modules/vm/i2c-plain.ko address="$LCD_ADDRESS" || return 1
    [ -n "$(plain_bus)" ] || return 1
    n=0
    while [ ! -e "/dev/i2c-$(plain_bus)" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
    [ -e "/dev/i2c-$(plain_bus)" ]
}
PLAIN_RECORD=/sys/kernel/debug/i2c-plain/record
# record_clear: forgets what the plain adapter recorded so far.
record_clear() { echo > "$PLAIN_RECORD"; }
# record_dump: the plain adapter's record, one line per message (vm/module/i2c-plain.c):
#   <transaction> <start s.nnnnnnnnn> <end s.nnnnnnnnn> <i>/<n> <w|r> 0x<address> <ack|nak> <length> <hex bytes|->
record_dump() { cat "$PLAIN_RECORD"; }
# record_last_byte: the last byte acknowledged in a write to the LCD, as 0xNN (empty: none).
record_last_byte() {
    record_dump | awk -v a="$(printf '0x%02x' "$LCD_ADDRESS")" \
        '$5 == "w" && $6 == a && $7 == "ack" && $8 > 0 { last = substr($9, length($9) - 1) } END { if (last != "") print "0x" last }'
}

# lcd_last_byte: the last byte the LCD got, as 0xNN: i2c-stub's receive-byte (the register its
# pointer names; see the witness below), i2c-plain's record (empty: nothing acknowledged).
lcd_last_byte() {
    if [ "$ADAPTER" = plain ]; then record_last_byte; else stub_receive "$LCD_ADDRESS"; fi
}

# The "LCD" vanishes and comes back, while programs keep /dev/i2c-N open.
# stub: transfers to 0x27 fail with ENODEV: our i2c-stub build has a writable chip_addr
#   (vm/module/Makefile says why); while away, the same stub chip (registers, pointer) answers at
#   LCD_AWAY_ADDRESS.
# plain: the device stops acknowledging (EREMOTEIO, as on the Pi) through the module's `present`.
lcd_vanish() {
    if [ "$ADAPTER" = plain ]; then
        echo 0 > /sys/module/i2c_plain/parameters/present
    else
        echo "$LCD_AWAY_ADDRESS" > /sys/module/i2c_stub/parameters/chip_addr
    fi
}
lcd_return() {
    if [ "$ADAPTER" = plain ]; then
        echo 1 > /sys/module/i2c_plain/parameters/present
    else
        echo "$LCD_ADDRESS" > /sys/module/i2c_stub/parameters/chip_addr
    fi
}
# The stub's memory as a witness of the last byte a program sent. i2c-stub keeps 256 registers
# and a register pointer per chip: an SMBus send-byte (the SMBus path's one write per expander
# byte) sets the pointer to the byte, a receive-byte returns the register the pointer names (and
# advances it). With every register holding its own number, a receive-byte returns the last byte
# sent. The i2c-tools binaries are named by path: busybox's sh runs its own i2c applets (which
# parse numbers as hex) in preference to the PATH.
I2CSET=/usr/sbin/i2cset
I2CGET=/usr/sbin/i2cget

# stub_fill_identity ADDRESS: register k := k, 32 registers per I2C-block write.
stub_fill_identity() {
    bus=$(stub_bus)
    base=0
    while [ $base -lt 256 ]; do
        values=""
        i=0
        while [ $i -lt 32 ]; do values="$values $((base + i))"; i=$((i + 1)); done
        # shellcheck disable=SC2086 # the values are separate arguments
        $I2CSET -y "$bus" "$1" $base $values i || return 1
        base=$((base + 32))
    done
}
# stub_send ADDRESS BYTE: one SMBus send-byte.
stub_send() { $I2CSET -y "$(stub_bus)" "$1" "$2"; }
# stub_receive ADDRESS: one SMBus receive-byte, printed as 0xNN.
stub_receive() { $I2CGET -y "$(stub_bus)" "$1"; }

# The key matrix: our gpio-keymatrix module (vm/module/gpio-keymatrix.c), 4x3, lines KP_R0..KP_R3
# (rows) and KP_C0..KP_C2 (columns); keys are pressed through its debugfs files.
KM=/sys/kernel/debug/gpio-keymatrix
# keymatrix_chip: gpiochipN of gpio-keymatrix (empty when not loaded).
keymatrix_chip() { gpiodetect | sed -n 's/^\(gpiochip[0-9]*\) \[gpio-keymatrix\].*/\1/p'; }
km_key() { echo "$1 $2 $3" >"$KM/keys"; }
km_release_all() { echo "release all" >"$KM/keys"; }
km_record() { cat "$KM/record"; }
km_record_clear() { echo > "$KM/record"; }
km_shorts() { cat "$KM/shorts"; }
# The 4x3 layout: the row and column of a key.
key_position() {
    case $1 in
        1) echo "0 0" ;; 2) echo "0 1" ;; 3) echo "0 2" ;;
        4) echo "1 0" ;; 5) echo "1 1" ;; 6) echo "1 2" ;;
        7) echo "2 0" ;; 8) echo "2 1" ;; 9) echo "2 2" ;;
        '*') echo "3 0" ;; 0) echo "3 1" ;; '#') echo "3 2" ;;
    esac
}
# matrix_type KEYS [HOLD GAP]: presses and releases each key in turn (seconds; default 0.1, 0.15).
matrix_type() {
    keys=$1 hold=${2:-0.1} gap=${3:-0.15}
    while [ -n "$keys" ]; do
        rest=${keys#?}
        k=${keys%"$rest"}
        # shellcheck disable=SC2046 # row and column are two words
        set -- $(key_position "$k")
        km_key press "$1" "$2"
        sleep "$hold"
        km_key release "$1" "$2"
        keys=$rest
        [ -n "$keys" ] && sleep "$gap"
    done
}
