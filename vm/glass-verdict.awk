# The glass scenario's verdict (vm/glass.sh, and the pi3 guest's host side, vm/pi3/host.sh):
# reads hd44780-decode's output and prints one line "PASS ..." or "FAIL <why>".
# Variables (-v): seconds (the countdown), started (the log's `countdown started` stamp), tolerance
# (s), and the BENCHMARKS.md figures init_b init_tx paint_b paint_tx press_b press_tx one_b one_tx
# two_b two_tx end_b end_tx whole_b whole_tx (bytes may be a range "5-9"); press_free (non-empty:
# the press frame's bytes are not checked, the rest of the whole countdown is).
function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
function within(v, r,   p, n) { n = split(r, p, "-"); return n == 1 ? v == p[1] : (v >= p[1] && v <= p[2]) }
function abs(x) { return x < 0 ? -x : x }
function bad(m) { if (!failed) print "FAIL " m; failed = 1 }
# A label more than `tolerance` from its second fails, with one exception: a single label late by at
# most `stall` (default 0.250 s) whose next label is back within `tolerance`. That is the guest (a
# TCG vCPU the host did not run for a moment), not the program: a countdown that counts ticks or
# drifts is late on every label after it, and fails. The stall is named in the PASS line.
function late(t, n,   e) { e = t - press_t - (seconds - n)
    if (stall_pending) {
        stall_pending = 0
        if (abs(e) > tolerance) bad(sprintf("the label of %d s left reached the bus %+.3f s from its second, after the one of %d s left at %+.3f s: late twice in a row", n, e, n + 1, stall_e))
    }
    if (abs(e) <= tolerance) { if (abs(e) > abs(worst)) worst = e; return }
    if (stalls == 0 && e > 0 && e <= stall_bound && n > 0) { stalls = 1; stall_pending = 1; stall_e = e; stall_n = n; return }
    bad(sprintf("the label of %d s left reached the bus %+.3f s from its second", n, e)) }
BEGIN { stall_bound = stall != "" ? stall + 0 : 0.250 }
/^violation / { violations++; next }
/ nak$/ { naks++; next }
/^[0-9.]* tx=[0-9]* wire=/ {
    t = $1; wire = substr($3, 6) + 0
    glass = substr($0, index($0, "|"))
    split(glass, row, "|"); top = trim(row[2]); label = trim(row[3])
    if (phase == 0) {
        if (glass ~ /^[| ]*$/) { n_init++; b_init += wire; next }
        phase = 1; b_paint = wire; paint_glass = top " / " label; next
    }
    if (phase == 1) {
        if (label == sprintf("Resend (%02d)", seconds)) {
            phase = 2; press_t = t; b_press = wire; n_whole = 1; b_whole = wire; due = seconds - 1; next
        }
        idle_writes++; next
    }
    if (phase == 2) {
        n_whole++; b_whole += wire
        want = due > 0 ? sprintf("Resend (%02d)", due) : "Resend"
        if (label != want) { bad("transaction " substr($2, 4) " shows \"" label "\" where \"" want "\" was due: not one transaction per frame"); phase = 9; next }
        late(t, due)
        if (due == 0) { b_end = wire; phase = 3; next }
        if (due % 10 == 9) { n_two++; if (!within(wire, two_b)) bad("the tick to \"" label "\" (two digits) is " wire " B, not " two_b " B") }
        else { n_one++; if (!within(wire, one_b)) bad("the tick to \"" label "\" (one digit) is " wire " B, not " one_b " B") }
        due--; next
    }
    if (phase == 3) { last_top = top; after++ }
}
END {
    if (phase < 3) bad("the countdown on the glass did not reach its end (phase " phase ")")
    if (violations) bad(violations " protocol violations seen by the HD44780 emulator")
    if (naks) bad(naks " transfers not acknowledged")
    if (n_init != init_tx || b_init != init_b) bad("init: " b_init " B in " n_init " tx, not " init_b " B in " init_tx " tx")
    if (paint_tx != 1 || b_paint != paint_b) bad("first paint (" paint_glass "): " b_paint " B in 1 tx, not " paint_b " B in " paint_tx " tx")
    if (idle_writes) bad(idle_writes " transactions between the first paint and the press frame")
    if (abs(press_t - started) > tolerance) bad(sprintf("the press frame reached the bus %+.3f s from countdown started", press_t - started))
    if (seconds == 60 && press_free != "") {
        # The press frame is not BENCHMARKS.md's (e.g. a keypad's entry line takes line 1): the
        # rest of the countdown still is.
        if (n_whole != whole_tx || b_whole - b_press != whole_b - press_b) bad("whole countdown after the press frame: " (b_whole - b_press) " B in " (n_whole - 1) " tx, not " (whole_b - press_b) " B in " (whole_tx - 1) " tx")
    } else if (seconds == 60) {
        if (press_tx != 1 || b_press != press_b) bad("press: " b_press " B, not " press_b " B in " press_tx " tx")
        if (n_whole != whole_tx || b_whole != whole_b) bad("whole countdown: " b_whole " B in " n_whole " tx, not " whole_b " B in " whole_tx " tx")
    }
    if (end_tx != 1 || b_end != end_b) bad("end of countdown: " b_end " B, not " end_b " B in " end_tx " tx")
    if (one_tx != 1 || two_tx != 1) bad("BENCHMARKS.md ticks take " one_tx " and " two_tx " tx, the check expects 1")
    if (after < 1 || last_top != "Stopped") bad("the glass after SIGTERM shows \"" last_top "\", not \"Stopped\"")
    if (!failed) printf "PASS init %d B in %d tx, first paint %d B, press %d B, %d one-digit ticks (%s B), %d two-digit ticks (%s B), end %d B: %d B in %d tx; labels within %+.3f s of their seconds%s; Stopped after SIGTERM\n", b_init, n_init, b_paint, b_press, n_one, one_b, n_two, two_b, b_end, b_whole, n_whole, worst, stalls ? sprintf(" (but one: the label of %d s left %+.3f s, the next one on time: a guest stall)", stall_n, stall_e) : ""
}
