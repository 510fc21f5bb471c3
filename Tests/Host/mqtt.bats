#!/usr/bin/env bats
# The MQTT link against a real mosquitto broker on loopback, the simulator on real time
# (docs/testing.md, step 4 of scripts/test; about 2 minutes). The scenario
# (helpers/mqtt-scenario.bash) runs once, in setup_file: brokers, subscribers and simulators in
# sequence, each check run where it stands (a wait is also a check) and recorded; each @test below
# asserts one of them, and shows its command (arguments expanded) and output when it fails.

load helpers/common

setup_file() {
    local tool
    for tool in mosquitto mosquitto_sub mosquitto_pub mosquitto_passwd openssl python3; do
        command -v "$tool" > /dev/null || skip "$tool is missing (scripts/build-deps --test installs it)"
    done
    RESEND_BINARY=$(debug_binary)
    export RESEND_BINARY
    local status=0
    Tests/Host/helpers/mqtt-scenario.bash "$RESEND_BINARY" "$BATS_FILE_TMPDIR/mqtt" > "$BATS_FILE_TMPDIR/scenario.log" 2>&1 3>&- || status=$?
    echo "$status" > "$BATS_FILE_TMPDIR/scenario.status"
}

# recorded NAME: the scenario's check NAME ran and passed.
recorded() {
    local tsv=$BATS_FILE_TMPDIR/mqtt/checks.tsv line status n
    line=$(awk -F '\t' -v name="$1" '$1 == name { print; exit }' "$tsv")
    [[ -n $line ]] || { tail -n 20 "$BATS_FILE_TMPDIR/scenario.log"; fail "the scenario never reached this check (it stopped: see its log above)"; }
    IFS=$'\t' read -r _ status n <<< "$line"
    if [[ $status != 0 ]]; then
        echo "command: $(cat "$BATS_FILE_TMPDIR/mqtt/checks/$n.cmd")"
        echo "exit status: $status"
        sed 's/^/  | /' "$BATS_FILE_TMPDIR/mqtt/checks/$n.out"
        fail "the check failed"
    fi
    # A check that measured something says what (in the TAP output, as a comment).
    if [[ $(cat "$BATS_FILE_TMPDIR/mqtt/checks/$n.cmd") == figures\ * ]]; then
        echo "# figures: $(head -n 1 "$BATS_FILE_TMPDIR/mqtt/checks/$n.out")" >&3
    fi
}

@test "MQTT: the scenario ran to its end (every broker, subscriber and simulator started as planned)" {
    run cat "$BATS_FILE_TMPDIR/scenario.log"
    assert_equal "$(cat "$BATS_FILE_TMPDIR/scenario.status")" 0
    assert_line --regexp '^mqtt-scenario: [0-9]+ checks run$'
}

@test "MQTT: every check of the scenario has its @test here" {
    local name missing=0
    while IFS=$'\t' read -r name _; do
        grep -qxF "    recorded \"$name\"" "$BATS_TEST_FILENAME" || { echo "no @test for: $name"; missing=1; }
    done < "$BATS_FILE_TMPDIR/mqtt/checks.tsv"
    ((missing == 0))
}

@test "MQTT: availability online, retained" {
    recorded "availability online, retained"
}

@test "MQTT: discovery: one device message with the panel's entities" {
    recorded "discovery: one device message with the panel's entities"
}

@test "MQTT: discovery: the per-entity topics emptied (none with a payload)" {
    recorded "discovery: the per-entity topics emptied (none with a payload)"
}

@test "MQTT: state JSON retained, every documented key" {
    recorded "state JSON retained, every documented key"
}

@test "MQTT: event code_sent, not retained" {
    recorded "event code_sent, not retained"
}

@test "MQTT: event code_rejected, not retained" {
    recorded "event code_rejected, not retained"
}

@test "MQTT: event lockout_started and state lockout true" {
    recorded "event lockout_started and state lockout true"
}

@test "MQTT: no event is retained" {
    recorded "no event is retained"
}

@test "MQTT: the typed code is in no payload" {
    recorded "the typed code is in no payload"
}

@test "MQTT: no payload carries a code length or key" {
    recorded "no payload carries a code length or key"
}

@test "MQTT: late subscriber: availability and state retained" {
    recorded "late subscriber: availability and state retained"
}

@test "MQTT: late subscriber: no event" {
    recorded "late subscriber: no event"
}

@test "MQTT: discovery republished on homeassistant/status online" {
    recorded "discovery republished on homeassistant/status online"
}

@test "MQTT: open refused when not allowed (logged)" {
    recorded "open refused when not allowed (logged)"
}

@test "MQTT: open refused: the output stayed off" {
    recorded "open refused: the output stayed off"
}

@test "MQTT: SIGKILL: the last will says offline (retained)" {
    recorded "SIGKILL: the last will says offline (retained)"
}

@test "MQTT: command send: a countdown starts" {
    recorded "command send: a countdown starts"
}

@test "MQTT: command send: logged" {
    recorded "command send: logged"
}

@test "MQTT: command send: code_sent event" {
    recorded "command send: code_sent event"
}

@test "MQTT: broker gone: one log line" {
    recorded "broker gone: one log line"
}

@test "MQTT: broker back: reconnected" {
    recorded "broker back: reconnected"
}

@test "MQTT: state republished after the restart (retained, counting down)" {
    recorded "state republished after the restart (retained, counting down)"
}

@test "MQTT: availability republished after the restart" {
    recorded "availability republished after the restart"
}

@test "MQTT: the countdown ends" {
    recorded "the countdown ends"
}

@test "MQTT: labels stay on their seconds across the restart (13 changes, each within 500 ms)" {
    recorded "labels stay on their seconds across the restart (13 changes, each within 500 ms)"
}

@test "MQTT: SIGTERM: availability offline published before the end" {
    recorded "SIGTERM: availability offline published before the end"
}

@test "MQTT: check: the broker reachable, no TLS, anonymous, a round trip" {
    recorded "check: the broker reachable, no TLS, anonymous, a round trip"
}

@test "MQTT: stopped broker: the countdown runs on and ends" {
    recorded "stopped broker: the countdown runs on and ends"
}

@test "MQTT: stopped broker: every label on its second (6 changes, each within 500 ms)" {
    recorded "stopped broker: every label on its second (6 changes, each within 500 ms)"
}

@test "MQTT: broker reading again: the state catches up (ready)" {
    recorded "broker reading again: the state catches up (ready)"
}

@test "MQTT: retained command: two forced reconnections happened" {
    recorded "retained command: two forced reconnections happened"
}

@test "MQTT: retained open: the output never pulsed (start and two reconnections)" {
    recorded "retained open: the output never pulsed (start and two reconnections)"
}

@test "MQTT: retained command: the broker never sent it to the device" {
    recorded "retained command: the broker never sent it to the device"
}

@test "MQTT: retained homeassistant/status online: still sent to the device at each connection" {
    recorded "retained homeassistant/status online: still sent to the device at each connection"
}

@test "MQTT: discovery published after the reconnections" {
    recorded "discovery published after the reconnections"
}

@test "MQTT: a live open (allowed) still pulses the output" {
    recorded "a live open (allowed) still pulses the output"
}

@test "MQTT: hung broker: mqtt down within 1.5 keepalives and 2 s (9.5 s) after it stopped" {
    recorded "hung broker: mqtt down within 1.5 keepalives and 2 s (9.5 s) after it stopped"
}

@test "MQTT: hung broker: the reason names the keepalive" {
    recorded "hung broker: the reason names the keepalive"
}

@test "MQTT: hung broker: the messages into the dead connection are counted" {
    recorded "hung broker: the messages into the dead connection are counted"
}

@test "MQTT: hung broker answering again: reconnected" {
    recorded "hung broker answering again: reconnected"
}

@test "MQTT: a 300-byte command: dropped and logged with its size and topic kind" {
    recorded "a 300-byte command: dropped and logged with its size and topic kind"
}

@test "MQTT: a huge command (20 MB, or MQTT_TEST_HUGE_MB): the peak memory grows by less than 4 MB" {
    recorded "a huge command (20 MB, or MQTT_TEST_HUGE_MB): the peak memory grows by less than 4 MB"
}

@test "MQTT: 5000 commands: at most 10 lines of each kind" {
    recorded "5000 commands: at most 10 lines of each kind"
}

@test "MQTT: 5000 commands: a summary line counts the rest" {
    recorded "5000 commands: a summary line counts the rest"
}

@test "MQTT: the flood: the countdown ran on and ended" {
    recorded "the flood: the countdown ran on and ended"
}

@test "MQTT: v3.1.1 broker: connected after the fallback" {
    recorded "v3.1.1 broker: connected after the fallback"
}

@test "MQTT: v3.1.1 broker: the fallback said once" {
    recorded "v3.1.1 broker: the fallback said once"
}

@test "MQTT: v3.1.1 broker: a retained open refused once per connection" {
    recorded "v3.1.1 broker: a retained open refused once per connection"
}

@test "MQTT: v3.1.1 broker: the output never pulsed" {
    recorded "v3.1.1 broker: the output never pulsed"
}

@test "MQTT: TLS: connected with the test CA" {
    recorded "TLS: connected with the test CA"
}

@test "MQTT: TLS: state published over TLS" {
    recorded "TLS: state published over TLS"
}

@test "MQTT: check: TLS with the test CA" {
    recorded "check: TLS with the test CA"
}

@test "MQTT: TLS with a wrong CA: one log line" {
    recorded "TLS with a wrong CA: one log line"
}

@test "MQTT: TLS with a wrong CA: never connected" {
    recorded "TLS with a wrong CA: never connected"
}

@test "MQTT: check: a wrong CA is a PROBLEM with OpenSSL's reason" {
    recorded "check: a wrong CA is a PROBLEM with OpenSSL's reason"
}

@test "MQTT: TLS with a wrong CA: no busy loop (< 0.5 s CPU)" {
    recorded "TLS with a wrong CA: no busy loop (< 0.5 s CPU)"
}

@test "MQTT: wrong password: refused, logged" {
    recorded "wrong password: refused, logged"
}

@test "MQTT: wrong password: one log line for all retries" {
    recorded "wrong password: one log line for all retries"
}

@test "MQTT: wrong password: the device works meanwhile" {
    recorded "wrong password: the device works meanwhile"
}

@test "MQTT: check: a wrong password is a PROBLEM naming the keys to fix" {
    recorded "check: a wrong password is a PROBLEM naming the keys to fix"
}

@test "MQTT: right password: connected" {
    recorded "right password: connected"
}

@test "MQTT: group-readable password file: exit 78" {
    recorded "group-readable password file: exit 78"
}

@test "MQTT: group-readable password file: says so" {
    recorded "group-readable password file: says so"
}
