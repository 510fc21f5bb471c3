# The power-cut scenario's verdict (vm/powercut/host.sh; Tests/Host/powercut-verdict.bats pins it):
#     awk -f vm/powercut/verdict.awk -v cooldown=SECONDS -v fsck=FILE -v label=TEXT boot-000.log ...
# The logs are the consoles of the boots in order, one line each `<host time> <console line>`
# (vm/powercut/init's PC lines, the program's log, `PC-HOST CUT ...` where the host cut the
# power). Boot k's opening lines show what survived cut k-1; boot k-1's lines say what had
# happened before that cut. FILE has one line `<cut> clean|dirty` per cut (e2fsck -fn on the
# image after the journal's replay). Every cut must leave:
#   - the state file the new one (the last version boot k-1 wrote: PC VERSION) or an old one (an
#     earlier version, or the file boot k-1 found: the write under way at the cut did not land);
#     never torn: readable by the program, not empty; a file the program cannot read is moved
#     aside (`state unreadable ... moved_to=X`; X listed by PC MOVED when the guest looked after
#     that line: PC LOOP);
#   - every check that had started (PC VERIFY: the verify command ran) counted: the file's
#     entry.failures at least boot k-1's count plus those checks (a shortfall is a free try), and
#     no more than its count plus the codes submitted;
#   - a countdown whose send had run (PC SEND after PC PRESS <ms>) and whose end the program had
#     not logged (`countdown finished`) still in the file, ending no earlier than that press plus
#     the cooldown (the same guest clock wrote both): otherwise an early reopening;
#   - the file system clean.
# Prints one line per problem, then the summary line; exit status 0 when every cut passed.

function reset_boot() {
    mount_ok = 0; file = ""; size = -1; failures = ""; countdown_end = ""; program_state = ""
    moved_to = ""; delete moved; looked_after_move = 0; verifies = 0; submitted = 0; delete versions; last_version = ""; cut_text = ""
}

# The json fields: "failures": N inside "entry", "countdownEndsUnixMs": N|null.
function json_number(text, key,    rest) {
    if (index(text, "\"" key "\": ") == 0) return ""
    rest = substr(text, index(text, "\"" key "\": ") + length(key) + 4)
    if (rest ~ /^null/) return "null"
    if (match(rest, /^[0-9]+/)) return substr(rest, 1, RLENGTH)
    return ""
}

function problem(text) {
    problems++
    print label ": cut " (boot - 1) (previous_cut != "" ? " (" previous_cut ")" : "") ": " text
}

# Judges cut boot-1 from what boot `boot` found, against what boot-1 did.
function judge(    count, expected, restored, readable, gained) {
    cuts++
    if (!mount_ok) { problem("the state disk did not mount"); return }
    readable = (program_state == "restored")
    if (file == "absent") {
        # Absent is right only when nothing was there, or the last boot moved an unreadable file
        # aside and wrote nothing after it.
        if (previous_versions_count > 0 || (previous_file != "absent" && previous_state != "unreadable")) {
            torn++
            problem("the state file is gone (it was " previous_file ", " previous_versions_count " versions written)")
        } else {
            old++
        }
    } else {
        seen[file] = 1
        if (size == 0 && program_state != "unreadable") {
            torn++
            problem("an empty state file, not refused by the program (" program_state ")")
        } else if (program_state == "unreadable") {
            torn++
            problem("the state file is torn: the program could not read it (" size " bytes)")
            if (moved_to == "" || moved_to == "-")
                problem("the unreadable file was not moved aside (moved_to=" moved_to ")")
            else if (looked_after_move && !(moved_to in moved))
                problem("the unreadable file was not moved aside: no " moved_to " after the program said so")
        } else if (file == previous_last) {
            new++
        } else if (file == previous_file || file in previous_versions) {
            old++
        } else {
            unrecorded++
        }
    }
    # Tries: what boot-1 resumed with, plus the checks it started.
    restored = readable && failures != "" ? failures + 0 : 0
    expected = previous_failures + previous_verifies
    checks += previous_verifies
    gained = restored - previous_failures
    if (gained < 0) gained = 0
    counted += (gained < previous_verifies ? gained : previous_verifies)
    if (restored < expected) {
        free_tries += expected - restored
        problem("free try: " (expected - restored) " of " previous_verifies " checks started not counted (file: " restored " wrong codes, expected at least " expected ")")
    }
    if (restored > previous_failures + previous_submitted) {
        problem("tries from nowhere: " restored " wrong codes, at most " (previous_failures + previous_submitted) " possible")
    }
    # The countdown running at the cut.
    if (pending_at_cut != "") {
        if (!readable || countdown_end == "" || countdown_end == "null" || countdown_end + 0 < pending_at_cut + 0) {
            early++
            problem("early reopening: a countdown due to end at " pending_at_cut " (press + " cooldown " s) is " (countdown_end == "" || countdown_end == "null" ? "gone" : "ending at " countdown_end))
        } else {
            margin = countdown_end - pending_at_cut
            if (min_margin == "" || margin < min_margin) min_margin = margin
            countdowns++
        }
    }
    if ((boot - 1) in fsck_result) {
        if (fsck_result[boot - 1] == "clean") fsck_clean++
        else problem("e2fsck -fn: " fsck_result[boot - 1])
    } else {
        problem("no e2fsck result")
    }
}

# Carries boot's run over as the previous one.
function carry(    v) {
    previous_file = file
    previous_state = program_state
    previous_last = last_version
    previous_failures = (program_state == "restored" && failures != "") ? failures + 0 : 0
    previous_verifies = verifies
    previous_submitted = submitted
    delete previous_versions
    previous_versions_count = 0
    for (v in versions) { previous_versions[v] = 1; previous_versions_count++ }
    previous_cut = cut_text
}

BEGIN {
    if (cooldown == "") cooldown = 10
    if (label == "") label = "powercut"
    if (fsck != "") {
        while ((getline line < fsck) > 0) {
            split(line, f, " ")
            fsck_result[f[1]] = substr(line, length(f[1]) + 2)
        }
        close(fsck)
    }
    boot = -1
    pending = ""
    problems = 0
}

FNR == 1 {
    if (boot >= 0) {
        if (boot > 0) judge()
        carry()
    }
    boot++
    reset_boot()
    pending_at_cut = pending
}

{
    text = $0
    sub(/^[0-9.]+ /, "", text)
}
text ~ /^PC MOUNT ok/ { mount_ok = 1 }
text ~ /^PC FILE / {
    split(text, f, " ")
    file = f[3]
    size = (file == "absent") ? -1 : f[4] + 0
}
text ~ /^PC JSON / {
    failures = json_number(text, "failures")
    countdown_end = json_number(text, "countdownEndsUnixMs")
}
text ~ / state restored( |$)/ && program_state == "" { program_state = "restored" }
text ~ / state fresh start( |$)/ && program_state == "" { program_state = "fresh" }
text ~ / state unreadable / && program_state == "" {
    program_state = "unreadable"
    moved_to = text
    sub(/.*moved_to=/, "", moved_to)
    sub(/ .*/, "", moved_to)
}
text ~ /^PC MOVED / { moved[substr(text, 10)] = 1 }
text ~ /^PC LOOP$/ && program_state == "unreadable" { looked_after_move = 1 }
text ~ /^PC VERSION / { split(text, f, " "); versions[f[3]] = 1; last_version = f[3] }
text ~ /^PC VERIFY / { verifies++ }
text ~ / code submitted / { submitted++ }
text ~ /^PC PRESS / { split(text, f, " "); last_press = f[3] }
text ~ /^PC SEND / { pending = sprintf("%.0f", last_press + cooldown * 1000) }
text ~ / countdown finished( |$)/ { pending = "" }
text ~ /^PC-HOST CUT / { cut_text = substr(text, 13) }

END {
    if (boot > 0) judge()
    for (v in seen) versions_seen++
    summary = sprintf("cuts %d, file versions seen %d (old %d, new %d, unrecorded %d), tries counted %d/%d, torn %d, free tries %d, early reopenings %d (countdowns kept %d, least margin %s ms), fsck clean %d/%d",
        cuts, versions_seen, old, new, unrecorded, counted, checks, torn, free_tries, early, countdowns, (min_margin == "" ? "-" : min_margin), fsck_clean, cuts)
    print label ": " summary
    exit(problems > 0 || cuts == 0)
}
