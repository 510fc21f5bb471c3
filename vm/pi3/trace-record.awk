# qemu's I2C trace -> the i2c-plain record format that hd44780-decode reads (pi3 guest, host side).
#
# Input: qemu's `-trace 'i2c_*'` lines with `-msg timestamp=on`, e.g.
#     11080@1796141030.982601:i2c_event start(addr:0x27)
#     11080@1796141030.982924:i2c_send send(addr:0x27) data:0x00
#     11080@1796141030.982931:i2c_event finish(addr:0x27)
# (<qemu thread>@<host gettimeofday s.us>). Variables (-v): address (0x27), offset_us (host minus
# guest CLOCK_MONOTONIC, whole microseconds, from vm/pi3/host.sh's time marks), from_us and to_us
# (the window, host microseconds). A START to `address` opens a message (start_recv: a read), each
# send/recv byte goes into it, a repeated START opens the next message of the same transaction,
# `finish` closes the transaction. Output, one line per message (vm/module/i2c-plain.c's record):
#     <transaction> <start s.nnnnnnnnn> <end s.nnnnnnnnn> <i>/<n> <w|r> 0x<address> ack <length> <hex|->
# in the guest's clock: start = the START's stamp, end = the finish's. Every message is `ack`:
# qemu traces only addresses a device answers (a write to an absent one leaves no line).
function us(stamp,   p) { split(stamp, p, "."); return p[1] * 1000000 + p[2] }
function guest(t,   g) { g = t - offset_us; return sprintf("%d.%06d000", int(g / 1000000), g % 1000000) }
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
    n++; start[n] = t; dir[n] = (event ~ /start_recv/) ? "r" : "w"; data[n] = ""; len[n] = 0
    next
}
event ~ /^i2c_(send|recv) / && open {
    data[n] = data[n] substr(event, length(event) - 1); len[n]++
    next
}
event ~ /^i2c_event finish/ && open {
    transaction++
    for (i = 1; i <= n; i++)
        printf "%d %s %s %d/%d %s %s ack %d %s\n", transaction, guest(start[i]), guest(t), i, n, dir[i], address, len[i], (len[i] ? data[i] : "-")
    open = 0
}
