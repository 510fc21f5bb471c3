# shellcheck shell=sh
# The glass scenario of vm-test (i2c-plain only): sourced by vm/scenarios.sh when ADAPTER=plain,
# after vm/lib.sh and its helpers (begin, pass, fail, start_run, stop_run, ...) are defined.
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
        run_not_up "$log" "run did not come up within 10 s" glass
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
        -v whole_b="${13}" -v whole_tx="${14}" -f /vm/glass-verdict.awk /tmp/glass.txt)
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
