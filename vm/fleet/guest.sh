#!/bin/sh
# shellcheck shell=sh
# The fleet guests' side (vm/fleet/host.sh packs it as /vm/guest.sh; vm/fleet/scenarios.sh runs
# it over SSH as root, one command a call): the simulated hardware of vm/hardware.sh on the
# i2c-plain adapter, a press, the adapter's record, the panel's configuration.
#   guest.sh hardware           loads the modules, makes the lines and the "LCD", clears the
#                               record; prints the LCD's bus number
#   guest.sh press              a clean 0.2 s press of the button
#   guest.sh record             the i2c-plain record (hd44780-decode reads it on the host)
#   guest.sh bus                the LCD's bus number
#   guest.sh uptime             the guest's CLOCK_MONOTONIC-like uptime (the record's time base)
#   guest.sh configure COOLDOWN writes /etc/resend-button/config.json5 for the simulated
#                               hardware: the user's edit
# shellcheck source=../hardware.sh disable=SC1091 # /vm/hardware.sh in the guest
. /vm/hardware.sh
# shellcheck disable=SC2034 # hardware.sh reads it
ADAPTER=plain
CONFIG=/etc/resend-button/config.json5

case $1 in
    hardware)
        modprobe configfs || exit 1
        grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config || exit 1
        modprobe gpio-sim && modprobe i2c-dev || exit 1
        grep -q ' /sys/kernel/debug ' /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug || exit 1
        modprobe i2c-plain address="$LCD_ADDRESS" || exit 1
        make_gpio_sim || exit 1
        release
        bus=$(plain_bus)
        n=0
        while { [ -z "$bus" ] || [ ! -e "/dev/i2c-$bus" ]; } && [ $n -lt 100 ]; do sleep 0.1; bus=$(plain_bus); n=$((n + 1)); done
        [ -e "/dev/i2c-$bus" ] || exit 1
        udevadm settle
        record_clear
        echo "$bus"
        ;;
    press) press; sleep 0.2; release ;;
    record) record_dump ;;
    bus) plain_bus ;;
    uptime) cut -d' ' -f1 /proc/uptime ;;
    configure)
        cat >"$CONFIG.new" <<END
// Edited on this panel (vm-test fleet guest): the simulated hardware.
{
  button: { line: "button", debounceMs: 30 },
  led: { line: "led" },
  lcd: { bus: $(plain_bus), address: $LCD_ADDRESS },
  cooldown: { seconds: $2 },
  stateFile: "/var/lib/resend-button/state.json",
}
END
        mv "$CONFIG.new" "$CONFIG"
        ;;
    *) echo "guest.sh: unknown command '$1'" >&2; exit 64 ;;
esac
