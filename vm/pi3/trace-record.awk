# qemu's I2C trace -> the i2c-plain record format that hd44780-decode reads (pi3 guest, host side).
#
# Input: qemu's `-trace 'i2c_*'` lines with `-msg timestamp=on`, e.g.
#     11080@1796141030.982601:i2c_event start(addr:0x27)
#     11080@1796141030.982924:i2c_send send(addr:0x27) data:0x00
#     11080@1796141030.982931:i2c_event finish(addr:0x27)
# (<qemu thread>@<host gettimeofday s.us>). Variables (-v): address (0x27), offset_us (host minus
# guest CLOCK_MONOTONIC, whole microseconds, from vm/pi3/host.sh's time marks), from_us and to_us
# (the window, host microseconds). A START to `address` opens a message (`start` a write; any other
# start a read: qemu 10.0 traces a START in the receive direction as `start_async`, as a trial with
# `i2ctransfer r1@0x27` showed), each send/recv byte goes into it, a repeated START opens the next message of the same transaction,
# `finish` closes the transaction. Output, one line per message (vm/module/i2c-plain.c's record):
#     <transaction> <start s.nnnnnnnnn> <end s.nnnnnnnnn> <i>/<n> <w|r> 0x<address> ack <length> <hex|->
# in the guest's clock (offset_us), on a modelled bus timeline (below).
#
# The timeline: qemu's BSC model has no bus rate (a byte moves as soon as the driver puts it in
# the FIFO: 13 bytes took 31 us between START and STOP), while the Pi's controller clocks them at
# the device tree's clock-frequency (100 kHz: 90 us a byte with its acknowledge), and the
# program's write() returns only then. So each transaction is laid out as the Pi would clock it:
# it lasts its wire time at bus_hz (9 clocks per byte, an address byte per message) or qemu's,
# whichever is longer, and starts at qemu's START, or later when the previous transaction's
# modelled end plus the gap the program left after qemu's STOP (a wait relative to its write:
# capped at 50 ms, far above the driver's longest, the HD44780's 4.1 ms) comes later. A wait
# longer than that is an absolute deadline (a tick): no shift is carried past it. The largest
# shift (modelled start minus qemu's START) goes to stderr as "shift max <us> us, mean <us> us".
function us(stamp,   p) { split(stamp, p, "."); return p[1] * 1000000 + p[2] }
function guest(t,   g) { g = t - offset_us; return sprintf("%d.%06d000", int(g / 1000000), g % 1000000) }
BEGIN { if (bus_hz == "") bus_hz = 100000; if (cap_us == "") cap_us = 50000 }
{
    at = index($0, "@"); colon = index($0, ":")
    if (!at || colon < at) next
    t = us(substr($0, at + 1, colon - at - 1))
    if (t < from_us || t > to_us) next
    event = substr($0, colon + 1)
    if (!match(event, /addr:0x[0-9a-f][0-9a-f]/)) next
    if (substr(event, RSTART + 5, 4) != address) next
}
event ~ /^i2c_event start/ {
    if (!open) { open = 1; n = 0; begun = t }
    n++; start[n] = t; dir[n] = (event ~ /^i2c_event start\(/) ? "w" : "r"; data[n] = ""; len[n] = 0
    next
}
event ~ /^i2c_(send|recv) / && open {
    data[n] = data[n] substr(event, length(event) - 1); len[n]++
    next
}
event ~ /^i2c_event finish/ && open {
    transaction++
    wire = 0
    for (i = 1; i <= n; i++) { w[i] = int(((len[i] + 1) * 9 * 1000000 + bus_hz - 1) / bus_hz); wire += w[i] }
    vs = begun
    if (transaction > 1) { gap = begun - last_end; if (gap > cap_us) gap = cap_us; if (model_end + gap > vs) vs = model_end + gap }
    ve = vs + (wire > t - begun ? wire : t - begun)
    if (vs - begun > shift_max) shift_max = vs - begun
    shift_sum += vs - begun
    at_us = vs
    for (i = 1; i <= n; i++) {
        printf "%d %s %s %d/%d %s %s ack %d %s\n", transaction, guest(at_us), guest(ve), i, n, dir[i], address, len[i], (len[i] ? data[i] : "-")
        at_us += w[i]
    }
    model_end = ve; last_end = t
    open = 0
}
END { if (transaction) printf "shift max %d us, mean %d us\n", shift_max, shift_sum / transaction > "/dev/stderr" }
