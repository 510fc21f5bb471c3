# The OLED scenario's verdict (vm/oled.sh): reads oled-decode's output (what a person read on the
# glass after each transaction, each cell matched against the font's glyphs) and prints one line
# "PASS ..." or "FAIL <why>".
# Variables (-v): seconds (the countdown), started (the log's `countdown started` stamp),
# tolerance (s), stall (optional, s: default 0.250), countdown (the label as a printf format of
# the seconds, e.g. "重新获取(%02d)"), ready (the label after the countdown), stopped (line 1
# after SIGTERM). Line 2 of the glass is the label, line 1 the title.
# - every cell on the glass is a glyph of the font (a "?" fails: pixels no glyph explains);
# - after the press frame the label shows countdown(seconds-1) ... countdown(1), then ready, in
#   that order and nothing else (a frame may take several transactions: one showing the label
#   it had is part of the next frame);
# - each label's frame starts within `tolerance` of its second after `started` (the deadlines'
#   origin), with the one-stall exception of vm/glass-verdict.awk, and so does the press frame. A
#   frame may take several transactions (a command write, then the data; a rectangle per changed
#   line): its time is the start of its first one, a transaction that starts more than 5 ms after
#   the previous one's wire time (`byte`, s per byte: default 0.00009, 100 kHz) ended;
# - no datasheet rule broken (the emulator's violations), every transfer acknowledged, line 1
#   shows `stopped` after SIGTERM.
function abs(x) { return x < 0 ? -x : x }
function bad(m) { if (!failed) print "FAIL " m; failed = 1 }
function late(t, n,   e) { e = t - started - (seconds - n)
    if (stall_pending) {
        stall_pending = 0
        if (abs(e) > tolerance) bad(sprintf("the label of %d s left reached the glass %+.3f s from its second, after the one of %d s left at %+.3f s: late twice in a row", n, e, n + 1, stall_e))
    }
    if (abs(e) <= tolerance) { if (abs(e) > abs(worst)) worst = e; return }
    if (stalls == 0 && e > 0 && e <= stall_bound && n > 0) { stalls = 1; stall_pending = 1; stall_e = e; stall_n = n; return }
    bad(sprintf("the label of %d s left reached the glass %+.3f s from its second", n, e)) }
BEGIN { stall_bound = stall != "" ? stall + 0 : 0.250; tick_min = -1; byte_s = byte != "" ? byte + 0 : 0.00009; have_end = 0 }
/^violation / { violations++; if (!first_violation) first_violation = $0; next }
/ nak$/ { naks++; next }
/^[0-9.]* tx=[0-9]* wire=[0-9]* data=[0-9]* \|/ {
    t = $1; wire = substr($3, 6) + 0
    if (!have_end || t - prev_end > 0.005) frame_t = t
    prev_end = t + wire * byte_s; have_end = 1
    glass = substr($0, index($0, "|"))
    split(glass, row, "|"); title = row[2]; label = row[3]
    if (index(glass, "?") && !unexplained) { unexplained = 1; bad("transaction " substr($2, 4) " shows \"" glass "\": a cell no glyph of the font explains (\"?\")") }
    if (phase == 0) {
        if (label == sprintf(countdown, seconds)) { phase = 2; press_t = frame_t; shown = label; due = seconds - 1; frame_b = 0; frame_tx = 0; next }
        before = label; next
    }
    if (phase == 2) {
        frame_b += wire; frame_tx++
        if (label == shown) next
        want = due > 0 ? sprintf(countdown, due) : ready
        if (label != want) { bad("the label shows \"" label "\" where \"" want "\" was due"); phase = 9; next }
        late(frame_t, due)
        if (due > 0) {
            ticks++; tick_b += frame_b; tick_tx += frame_tx
            if (tick_min < 0 || frame_b < tick_min) tick_min = frame_b
            if (frame_b > tick_max) tick_max = frame_b
        } else { end_b = frame_b; end_tx = frame_tx }
        shown = label; frame_b = 0; frame_tx = 0
        if (due == 0) { phase = 3; next }
        due--; next
    }
    if (phase == 3) { last_title = title; after++ }
}
END {
    if (phase == 0) bad("the glass never showed \"" sprintf(countdown, seconds) "\" (the label before: \"" before "\")")
    else if (phase == 2) bad("the countdown on the glass did not reach \"" ready "\" (it stopped at \"" shown "\")")
    if (violations) bad(violations " datasheet rules broken, as the OLED emulator saw them; the first: " first_violation)
    if (naks) bad(naks " transfers not acknowledged")
    if (phase == 3 && abs(press_t - started) > tolerance) bad(sprintf("the press frame reached the glass %+.3f s from countdown started", press_t - started))
    if (phase == 3 && (after < 1 || last_title != stopped)) bad("the glass after SIGTERM shows \"" last_title "\", not \"" stopped "\"")
    if (!failed) printf "PASS \"%s\" -> \"%s\" (press frame %+.3f s after countdown started) ... \"%s\": %d ticks of %d-%d B (%d tx in all), end %d B in %d tx; labels within %+.3f s of their seconds%s; glyphs all the font's; \"%s\" after SIGTERM\n", before, sprintf(countdown, seconds), press_t - started, ready, ticks, tick_min, tick_max, tick_tx, end_b, end_tx, worst, stalls ? sprintf(" (but one: the label of %d s left %+.3f s, the next one on time: a guest stall)", stall_n, stall_e) : "", stopped
}
