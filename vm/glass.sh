# shellcheck shell=sh
# The glass scenario of vm-test (i2c-plain only): sourced by vm/scenarios.sh when ADAPTER=plain,
# after its helpers (begin, pass, fail, start_run, stop_run, ...) are defined.
#
# A 60 s countdown on the plain adapter, then the adapter's record (every message the program
# wrote, vm/module/i2c-plain.c) decoded by hd44780-decode (HALMock's HD44780 emulator, built by
# vm-test) into what the glass showed after each transaction, checked against:
# - the byte counts of BENCHMARKS.md (the I2C rows of its table, copied into the guest as
#   /vm/BENCHMARKS.md, so a change of the driver's byte stream updates one place): init, first
#   paint, press, one- and two-digit ticks, the end, the whole countdown;
# - one transaction per frame: after the press frame each transaction shows the next label,
#   "Resend (59)" ... "Resend (01)", then "Resend";
# - time: each label's transaction within TOLERANCE of its second after the press frame, and the
#   press frame within TOLERANCE of the log's `countdown started`;
# - no protocol mistake seen by the emulator; "Stopped" on the glass after SIGTERM.
# shellcheck disable=SC2154 # TOLERANCE, RUN_STATUS and the helpers come from vm/scenarios.sh

BENCHMARKS=/vm/BENCHMARKS.md
GLASS_SECONDS=${GLASS_SECONDS:-60}

# benchmark ROW: the "ours" cell of BENCHMARKS.md's LAST row "| I2C: ROW | ...", e.g. "34 B in 6 tx"
# (a later table supersedes an earlier one, as its "Figure 1 again after issue 11" does).
benchmark() { grep -F "| I2C: $1 |" "$BENCHMARKS" | tail -n 1 | cut -d'|' -f3 | sed 's/^ *//; s/ *$//'; }
# bytes_of CELL: "5-9" of "5-9 B in 1 tx (x53)"; transactions_of CELL: "1".
bytes_of() { echo "$1" | sed -n 's/^\([0-9][0-9-]*\) B in [0-9][0-9]* tx.*/\1/p'; }
transactions_of() { echo "$1" | sed -n 's/^[0-9][0-9-]* B in \([0-9][0-9]*\) tx.*/\1/p'; }

scenario_glass() {
    begin glass "the glass on the plain adapter: a ${GLASS_SECONDS} s countdown decoded from the recorded bytes; byte counts of BENCHMARKS.md, one transaction per frame, each label on its second"
    rows="LCD init (datasheet 4-bit dance)|first paint (Verification / Send code)|press (Send code -> Resend (60))|tick, one digit changes|tick, two digits change|end of countdown (-> Resend)|whole 60 s countdown (press frame to Resend)"
    expectations=""
    old_ifs=$IFS
    IFS='|'
    for row in $rows; do
        cell=$(benchmark "$row")
        bytes=$(bytes_of "$cell")
        transactions=$(transactions_of "$cell")
        echo "BENCHMARKS.md: I2C: $row: '$cell'"
        if [ -z "$bytes" ] || [ -z "$transactions" ]; then
            IFS=$old_ifs
            fail glass "BENCHMARKS.md has no readable row '| I2C: $row | <n> B in <n> tx |' (found '$cell')"
            return
        fi
        expectations="$expectations $bytes $transactions"
    done
    IFS=$old_ifs
    # shellcheck disable=SC2086 # the figures are separate words
    set -- $expectations
    if [ "$GLASS_SECONDS" != 60 ]; then
        echo "GLASS_SECONDS=$GLASS_SECONDS: the press and whole-countdown figures (60 s) are not checked"
    fi

    record_clear
    log=/tmp/glass.log
    if ! start_run "$log" --duration "$GLASS_SECONDS"; then
        show_log "$log"
        stop_run
        fail glass "run did not come up within 10 s"
        return
    fi
    sleep 0.5
    clean_press
    wait_until $((GLASS_SECONDS + 5)) has "$log" "countdown finished"
    sleep 0.3
    stop_run
    show_log "$log"
    record_dump >/tmp/glass.record
    hd44780-decode --columns 16 --rows 2 --address "$LCD_ADDRESS" </tmp/glass.record >/tmp/glass.txt 2>&1
    decode_status=$?
    echo "the record: $(wc -l </tmp/glass.record) messages; hd44780-decode -> $decode_status:"
    sed 's/^/    /' /tmp/glass.txt
    verdict=$(awk -v seconds="$GLASS_SECONDS" -v started="$(stamp "$log" "countdown started")" \
        -v tolerance="$TOLERANCE" \
        -v init_b="$1" -v init_tx="$2" -v paint_b="$3" -v paint_tx="$4" -v press_b="$5" -v press_tx="$6" \
        -v one_b="$7" -v one_tx="$8" -v two_b="$9" -v two_tx="${10}" -v end_b="${11}" -v end_tx="${12}" \
        -v whole_b="${13}" -v whole_tx="${14}" '
        function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
        function within(v, r,   p, n) { n = split(r, p, "-"); return n == 1 ? v == p[1] : (v >= p[1] && v <= p[2]) }
        function abs(x) { return x < 0 ? -x : x }
        function bad(m) { if (!failed) print "FAIL " m; failed = 1 }
        function late(t, n,   e) { e = t - press_t - (seconds - n); if (abs(e) > abs(worst)) worst = e
            if (abs(e) > tolerance) bad(sprintf("the label of %d s left reached the bus %+.3f s from its second", n, e)) }
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
            if (seconds == 60) {
                if (press_tx != 1 || b_press != press_b) bad("press: " b_press " B, not " press_b " B in " press_tx " tx")
                if (n_whole != whole_tx || b_whole != whole_b) bad("whole countdown: " b_whole " B in " n_whole " tx, not " whole_b " B in " whole_tx " tx")
            }
            if (end_tx != 1 || b_end != end_b) bad("end of countdown: " b_end " B, not " end_b " B in " end_tx " tx")
            if (one_tx != 1 || two_tx != 1) bad("BENCHMARKS.md ticks take " one_tx " and " two_tx " tx, the check expects 1")
            if (after < 1 || last_top != "Stopped") bad("the glass after SIGTERM shows \"" last_top "\", not \"Stopped\"")
            if (!failed) printf "PASS init %d B in %d tx, first paint %d B, press %d B, %d one-digit ticks (%s B), %d two-digit ticks (%s B), end %d B: %d B in %d tx; labels within %+.3f s of their seconds; Stopped after SIGTERM\n", b_init, n_init, b_paint, b_press, n_one, one_b, n_two, two_b, b_end, b_whole, n_whole, worst
        }' /tmp/glass.txt)
    echo "started line: $(line_of "$log" started)"
    if [ "$decode_status" != 0 ]; then
        fail glass "hd44780-decode exited with $decode_status"
    elif [ "$(field "$log" started i2c_writes)" != batched ]; then
        fail glass "the started line says i2c_writes=$(field "$log" started i2c_writes), not batched"
    elif [ "$RUN_STATUS" != 0 ]; then
        fail glass "run exited with $RUN_STATUS after SIGTERM"
    elif [ "${verdict%% *}" != PASS ]; then
        fail glass "${verdict#FAIL }"
    else
        pass glass "i2c_writes=batched; ${verdict#PASS }"
    fi
}
