# Scenarios of vm-test, run by /init inside the guest (busybox sh). Exit status: failure count.
. /vm/hardware.sh
failures=0

begin() { echo "--- SCENARIO $1 BEGIN: $2"; }
pass() { echo "SCENARIO $1 PASS: $2"; }
fail() { echo "SCENARIO $1 FAIL: $2"; failures=$((failures + 1)); }
# shellcheck disable=SC2317 # used by the scenarios that can be skipped
skip() { echo "SCENARIO $1 SKIP: $2"; }

scenario_1() {
    begin 1 "the simulated chip and lines by name, the i2c-stub LCD"
    gpiodetect
    gpioinfo "$(sim_chip)"
    bus=$(stub_bus)
    i2cdetect -y -r "$bus"
    if ! gpiofind button >/dev/null || ! gpiofind led >/dev/null; then
        fail 1 "gpiofind does not find the lines"
    elif ! i2cdetect -y -r "$bus" | grep -q ' 27'; then
        fail 1 "i2cdetect does not see 0x27 on bus $bus"
    else
        pass 1 "gpio-sim lines found, i2c-stub answers at 0x27 on bus $bus"
    fi
}

scenario_1
exit "$failures"
