#!/usr/bin/env bash
# The MQTT link against a real broker, the scenario of Tests/Host/mqtt.bats (which runs it once,
# in setup_file, and has one @test per check below): starts mosquitto on free loopback ports
# (plain, TLS with a test CA made by openssl, and one with a password file) and runs the simulator
# on real time (`simulate --headless --realtime` with an `mqtt` section) against it. What it
# checks, with mosquitto_sub capturing every topic and payload:
#   topics     availability, device discovery (and the per-entity topics emptied), state JSON, events as documented (docs/mqtt.md)
#   secrecy    a typed code appears in no payload (byte search), nor its length
#   retention  state and availability retained, events not
#   will       SIGKILL: the broker publishes availability offline (the last will)
#   discovery  republished when homeassistant/status says online
#   command    `send` on the command topic starts a countdown; `open` refused when not allowed
#   restart    the broker killed and restarted mid-countdown: reconnect, state republished, the
#              countdown's labels stay on their seconds
#   stalled    the broker stopped (SIGSTOP) mid-countdown: the labels stay on their seconds, the
#              state catches up once it reads again
#   fail closed  retained commands never run, a hung broker noticed within 1.5 keepalives,
#              oversized and huge messages dropped, a command flood rate-limited, a v3.1.1 broker
#   tls        connects with the test CA; a wrong CA is one log line and no busy loop
#   password   a wrong password is refused with one log line; a group-readable file is exit 78
#   check      `check` reports the broker: reachable, TLS, authenticated, round trip
# Waits are on conditions with generous time-outs, never fixed sleeps for correctness. The checks
# run where they stand in the sequence (a wait is also a check); each one's name, exit status,
# command and output go to WORK/checks.tsv and WORK/checks/N.* for the @tests to assert on.
#
#   Tests/Host/helpers/mqtt-scenario.bash BINARY WORK
set -euo pipefail
cd "$(dirname "$0")/../../.."

binary=${1:?the resend-button binary}
work=${2:?a directory for the logs and the checks}
mkdir -p "$work/checks"
: > "$work/checks.tsv"
pids=()
cleanup() {
    trap - EXIT
    local pid
    for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null || true; done
    wait 2> /dev/null || true
}
trap cleanup EXIT

# check NAME COMMAND...: runs one check now; its exit status goes to checks.tsv (NAME, status, N),
# its command and output to checks/N.cmd and checks/N.out.
checks=0
check() {
    local name=$1 status=0
    shift
    checks=$((checks + 1))
    printf '%q ' "$@" > "$work/checks/$checks.cmd"
    "$@" > "$work/checks/$checks.out" 2>&1 || status=$?
    printf '%s\t%s\t%s\n' "$name" "$status" "$checks" >> "$work/checks.tsv"
}
# figures TEXT COMMAND...: prints TEXT (the measured figures), then runs the command.
figures() {
    echo "$1"
    shift
    "$@"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# wait_for FILE PATTERN [SECONDS]: until an extended regex matches a line of FILE.
wait_for() {
    local file=$1 pattern=$2 limit=${3:-20} end
    end=$((SECONDS + limit))
    while ((SECONDS < end)); do
        grep -qE -- "$pattern" "$file" 2> /dev/null && return 0
        sleep 0.05
    done
    echo "mqtt-scenario: timed out after ${limit}s waiting for /$pattern/ in $(basename "$file")" >&2
    return 1
}
count() { grep -cE -- "$2" "$1" 2> /dev/null || true; }
# wait_count FILE PATTERN N [SECONDS]: until N lines of FILE match.
wait_count() {
    local end=$((SECONDS + ${4:-20}))
    while ((SECONDS < end)); do
        (($(count "$1" "$2") >= $3)) && return 0
        sleep 0.05
    done
    echo "mqtt-scenario: timed out waiting for $3 lines /$2/ in $(basename "$1")" >&2
    return 1
}

# broker NAME PORT [EXTRA CONFIG LINES...]: starts mosquitto, waits until it takes connections.
broker() {
    local name=$1 port=$2
    shift 2
    {
        echo "listener $port 127.0.0.1"
        echo "persistence false"
        # Run as whoever runs the test (as root mosquitto would switch to its own user, which
        # cannot read the test's private directory).
        echo "user $(id -un)"
        printf '%s\n' "$@"
    } > "$work/$name.conf"
    grep -q '^allow_anonymous' "$work/$name.conf" || echo "allow_anonymous true" >> "$work/$name.conf"
    # A fresh log each start: a restarted broker's "running" is its own.
    mosquitto -c "$work/$name.conf" > "$work/$name.log" 2>&1 &
    broker_pid=$!
    pids+=("$broker_pid")
    wait_for "$work/$name.log" "mosquitto version .* running" 10
}

# subscribe FILE PORT [ARGS...]: captures "retain topic payload" lines of every topic.
subscribe() {
    local file=$1 port=$2
    shift 2
    # MQTT v5's retain-as-published: the retain flag as the device set it (v3.1.1 brokers clear it
    # on messages delivered live).
    mosquitto_sub -h 127.0.0.1 -p "$port" -V 5 --retain-as-published -t '#' -F '%r %t %p' "$@" > "$file" 2>&1 &
    sub_pid=$!
    pids+=("$sub_pid")
    # The subscription is in place once the broker logs it.
    sleep 0.2
}

# simulate NAME CONFIG ARGS...: the simulator on real time in the background, its lines in NAME.out.
simulate() {
    local name=$1 config=$2
    shift 2
    "$binary" simulate --headless --realtime --events --config "$config" "$@" > "$work/$name.out" 2> "$work/$name.err" &
    sim_pid=$!
    pids+=("$sim_pid")
}

config() { # FILE PORT [EXTRA KEYS]: an mqtt section (keepalive 5 s; host \$host) plus a keypad
    cat > "$1" << EOF
{
  keypad: { enabled: true, verify: { command: ["/bin/false"] }, output: { line: "GPIO26", pulseMs: 500 },
            entry: { maxAttempts: 2 } },
  mqtt: { enabled: true, host: "${host:-127.0.0.1}", port: $2, baseTopic: "rb/test", keepaliveSeconds: 5 ${3:-} },
}
EOF
}

echo "mqtt-scenario: $binary against $(mosquitto -h 2> /dev/null | head -1)"

# ---- 1. topics, payloads, secrecy, retention, discovery on homeassistant/status, commands, will
port=$(free_port)
broker plain "$port"
subscribe "$work/all.txt" "$port"
config "$work/c1.json5" "$port"
# A code of 6 digits typed twice (rejected twice: lockout), in a run that stays up for the later checks.
simulate one "$work/c1.json5" --duration 30 --mock-send ok@0.2 --mock-verify reject@0.1 \
    --script "press@0.2 keys@1:271828# keys@4:271828# end@120"
wait_for "$work/all.txt" '^0 rb/test/event \{"event_type":"lockout_started"\}$' 20 || true
check "availability online, retained" grep -qx '1 rb/test/availability online' "$work/all.txt"
check "discovery: one device message with the panel's entities" grep -qE '^1 homeassistant/device/rb_test/config \{"dev":.*"cmps":\{"event":\{"platform":"event"' "$work/all.txt"
check "discovery: the per-entity topics emptied (none with a payload)" test "$(count "$work/all.txt" '^1 homeassistant/(event|sensor|binary_sensor|button)/rb_test/[a-z_]+/config \{')" -eq 0
check "state JSON retained, every documented key" grep -qE '^1 rb/test/state \{"status":"cooldown","seconds_left":[0-9]+,"sends_left":null,"entry":"entering","attempts_left":2,"lockout":false,"lockout_seconds_left":0,"display_online":true\}$' "$work/all.txt"
check "event code_sent, not retained" grep -qx '0 rb/test/event {"event_type":"code_sent"}' "$work/all.txt"
check "event code_rejected, not retained" grep -qx '0 rb/test/event {"event_type":"code_rejected"}' "$work/all.txt"
check "event lockout_started and state lockout true" grep -qE '^1 rb/test/state .*"entry":"locked_out","attempts_left":2,"lockout":true,"lockout_seconds_left":[1-9]' "$work/all.txt"
check "no event is retained" test "$(count "$work/all.txt" '^1 rb/test/event')" -eq 0
check "the typed code is in no payload" test "$(grep -c '271828' "$work/all.txt")" -eq 0
check "no payload carries a code length or key" test "$(count "$work/all.txt" 'length|"key|digit')" -eq 0

# A late subscriber gets the retained messages only: availability, state, discovery; no event.
mosquitto_sub -h 127.0.0.1 -p "$port" -t 'rb/test/#' -F '%r %t %p' -W 2 > "$work/late.txt" 2>&1 || true
check "late subscriber: availability and state retained" test "$(count "$work/late.txt" '^1 rb/test/(availability|state) ')" -eq 2
check "late subscriber: no event" test "$(count "$work/late.txt" 'rb/test/event')" -eq 0

before=$(count "$work/all.txt" '/config \{')
mosquitto_pub -h 127.0.0.1 -p "$port" -t homeassistant/status -m online
wait_for "$work/all.txt" '^1 homeassistant/device/rb_test/config' 10 || true
check "discovery republished on homeassistant/status online" wait_count "$work/all.txt" '/config \{' $((before + 1)) 10

mosquitto_pub -h 127.0.0.1 -p "$port" -t rb/test/command -m open
check "open refused when not allowed (logged)" wait_for "$work/one.out" 'mqtt command refused command=open' 10
check "open refused: the output stayed off" test "$(count "$work/one.out" 'output active')" -eq 0

kill -9 "$sim_pid"
wait "$sim_pid" 2> /dev/null || true
check "SIGKILL: the last will says offline (retained)" wait_for "$work/all.txt" '^1 rb/test/availability offline$' 15

# ---- 2. command send, and the broker killed and restarted mid-countdown
config "$work/c2.json5" "$port"
: > "$work/all.txt.2"
kill "$sub_pid" 2> /dev/null || true
subscribe "$work/two-a.txt" "$port"
simulate two "$work/c2.json5" --duration 12 --script "end@30"
wait_for "$work/two.out" 'mqtt connected' 10
mosquitto_pub -h 127.0.0.1 -p "$port" -t rb/test/command -m send
check "command send: a countdown starts" wait_for "$work/two.out" 'countdown started seconds=12' 10
check "command send: logged" grep -q 'mqtt command command=send' "$work/two.out"
check "command send: code_sent event" wait_for "$work/two-a.txt" '^0 rb/test/event \{"event_type":"code_sent"\}' 10
wait_for "$work/two.out" 'Resend \(10\)' 10
kill -9 "$broker_pid"
wait "$broker_pid" 2> /dev/null || true
check "broker gone: one log line" wait_for "$work/two.out" 'mqtt down broker=127.0.0.1:' 10
sleep 1.5 # the broker stays away for a while (a restart), so the client retries at least once
broker plain "$port"
subscribe "$work/two-b.txt" "$port"
check "broker back: reconnected" wait_count "$work/two.out" 'mqtt connected' 2 15
check "state republished after the restart (retained, counting down)" wait_for "$work/two-b.txt" '^1 rb/test/state \{"status":"cooldown","seconds_left":[0-9]' 10
check "availability republished after the restart" wait_for "$work/two-b.txt" '^1 rb/test/availability online' 10
check "the countdown ends" wait_for "$work/two.out" 'countdown finished' 20
# Labels on their seconds: "Resend (NN)" shows at press + (12 - NN) s. The outage (about 3 s) must
# not shift them; the tolerance of 0.5 s per label is for a loaded host's scheduling (the worst
# deviation is printed).
start=$(awk '/countdown started/ { print $1; exit }' "$work/two.out")
# shellcheck disable=SC2016 # an awk program
labels() { awk -v start="$start" '
    /screen .*Resend \([0-9]+\)/ { split($0, part, /Resend \(/); due = start + 12 - substr(part[2], 1, 2); d = $1 - due; if (d < 0) d = -d; if (d > worst) worst = d; n++ }
    /countdown finished/ { d = $1 - (start + 12); if (d < 0) d = -d; if (d > worst) worst = d; n++ }
    END { printf "%d %d\n", n, worst * 1000 }' "$work/two.out"; }
read -r label_count worst_ms <<< "$(labels)"
check "labels stay on their seconds across the restart (13 changes, each within 500 ms)" figures "$label_count changes, worst ${worst_ms} ms off" test "$label_count" -eq 13 -a "$worst_ms" -lt 500
kill "$sim_pid" 2> /dev/null || true
wait "$sim_pid" 2> /dev/null || true
check "SIGTERM: availability offline published before the end" wait_for "$work/two-b.txt" '^1 rb/test/availability offline$' 10
"$binary" check --config "$work/c2.json5" > "$work/check-plain.out" 2>&1 || true
check "check: the broker reachable, no TLS, anonymous, a round trip" \
    grep -qE "^OK MQTT broker 127.0.0.1:$port reachable, no TLS, anonymous, round trip [0-9]+\.[0-9] ms$" "$work/check-plain.out"

# ---- 2b. a broker that stops reading (SIGSTOP) mid-countdown: the loop never waits for it
kill "$sub_pid" 2> /dev/null || true
subscribe "$work/stop.txt" "$port"
simulate stop "$work/c2.json5" --duration 6 --script "press@0.5 end@30"
wait_for "$work/stop.out" 'mqtt connected' 10
wait_for "$work/stop.out" 'Resend \(06\)' 10
kill -STOP "$broker_pid"
check "stopped broker: the countdown runs on and ends" wait_for "$work/stop.out" 'countdown finished' 15
start=$(awk '/countdown started/ { print $1; exit }' "$work/stop.out")
# shellcheck disable=SC2016 # an awk program
read -r stop_labels stop_worst <<< "$(awk -v start="$start" '
    /screen .*Resend \([0-9]+\)/ { split($0, part, /Resend \(/); due = start + 6 - substr(part[2], 1, 2); d = $1 - due; if (d < 0) d = -d; if (d > worst) worst = d; n++ }
    END { printf "%d %d\n", n, worst * 1000 }' "$work/stop.out")"
check "stopped broker: every label on its second (6 changes, each within 500 ms)" figures "$stop_labels changes, worst ${stop_worst} ms off" test "$stop_labels" -eq 6 -a "$stop_worst" -lt 500
kill -CONT "$broker_pid"
check "broker reading again: the state catches up (ready)" wait_for "$work/stop.txt" '^1 rb/test/state \{"status":"ready"' 20
kill "$sim_pid" 2> /dev/null || true

# ---- 2c. fail closed: retained commands, a silent broker, oversized and huge messages, floods
# A retained command is never run: not at the start, not at a reconnection (a client with the
# device's client id takes its place twice: two forced reconnections). A broker of its own, whose
# log says what it sent to whom.
port=$(free_port)
broker failclosed "$port" "log_type all"
mosquitto_pub -h 127.0.0.1 -p "$port" -r -t rb/test/command -m open
mosquitto_pub -h 127.0.0.1 -p "$port" -r -t homeassistant/status -m online
kill "$sub_pid" 2> /dev/null || true
subscribe "$work/retain.txt" "$port"
config "$work/c7.json5" "$port" ", allowOpen: true, clientId: \"rb-retain\""
simulate retain "$work/c7.json5" --duration 5 --script "end@60"
wait_for "$work/retain.out" 'mqtt connected' 10
for round in 2 3; do
    mosquitto_sub -h 127.0.0.1 -p "$port" -i rb-retain -t rb/none -W 1 > /dev/null 2>&1 || true
    wait_count "$work/retain.out" 'mqtt connected' "$round" 15 || true
done
check "retained command: two forced reconnections happened" test "$(count "$work/retain.out" 'mqtt connected')" -ge 3
check "retained open: the output never pulsed (start and two reconnections)" test "$(count "$work/retain.out" 'output active|mqtt command command=')" -eq 0
check "retained command: the broker never sent it to the device" \
    test "$(count "$work/failclosed.log" "Sending PUBLISH to rb-retain .*r1.*'rb/test/command'")" -eq 0
# Home Assistant's retained `online` still reaches the device (and discovery follows).
check "retained homeassistant/status online: still sent to the device at each connection" \
    test "$(count "$work/failclosed.log" "Sending PUBLISH to rb-retain .*r1.*'homeassistant/status'")" -ge 3
check "discovery published after the reconnections" wait_for "$work/retain.txt" '^1 homeassistant/device/rb_test/config \{' 10
mosquitto_pub -h 127.0.0.1 -p "$port" -t rb/test/command -m open
check "a live open (allowed) still pulses the output" wait_for "$work/retain.out" 'output active' 10
kill "$sim_pid" 2> /dev/null || true
mosquitto_pub -h 127.0.0.1 -p "$port" -r -t rb/test/command -n

# A broker that stops answering mid-countdown (SIGSTOP): noticed within 1.5 keepalives and 1 s of
# when it was last heard (keepalive 5 s: 8.5 s; it was heard at most a keepalive and 1 s before
# it stopped, so 8.5 s after the stop at most, 9.5 s allowed), with a reason that says so, though
# the state is published every second; what went into the dead connection is counted.
config "$work/c8.json5" "$port"
simulate hung "$work/c8.json5" --duration 30 --script "press@0.5 end@60"
wait_for "$work/hung.out" 'Resend \(27\)' 15
kill -STOP "$broker_pid"
stopped_at=$(awk '/screen .*Resend \(27\)/ { print $1; exit }' "$work/hung.out")
wait_for "$work/hung.out" 'mqtt down' 40 || true
down_at=$(awk '/mqtt down/ { print $1; exit }' "$work/hung.out")
down_after=$(awk -v a="${stopped_at:-0}" -v b="${down_at:-999}" 'BEGIN { printf "%d", (b - a) * 1000 }')
check "hung broker: mqtt down within 1.5 keepalives and 2 s (9.5 s) after it stopped" figures "mqtt down ${down_after} ms after the broker stopped" test "$down_after" -lt 9500
check "hung broker: the reason names the keepalive" grep -qE 'mqtt down .*reason="the broker did not answer within the keepalive \(5 s\)"' "$work/hung.out"
check "hung broker: the messages into the dead connection are counted" grep -qE 'mqtt down .* unconfirmed=[1-9]' "$work/hung.out"
kill -CONT "$broker_pid"
check "hung broker answering again: reconnected" wait_count "$work/hung.out" 'mqtt connected' 2 20
kill "$sim_pid" 2> /dev/null || true

# Dropped messages are logged with their size and topic kind; a flood of commands is a few lines
# and a summary; a huge message never reaches the device (MQTT v5 Maximum Packet Size): its peak
# memory stays where it was.
config "$work/c9.json5" "$port"
simulate flood "$work/c9.json5" --duration 15 --script "press@0.5 end@60"
wait_for "$work/flood.out" 'mqtt connected' 10
sim_rss() { awk '/^VmHWM:/ { print $2 }' "/proc/$sim_pid/status"; }
mosquitto_pub -h 127.0.0.1 -p "$port" -t rb/test/command -m "$(printf 'x%.0s' $(seq 300))"
check "a 300-byte command: dropped and logged with its size and topic kind" \
    wait_for "$work/flood.out" 'mqtt message dropped topic=command bytes=300 topic_bytes=15 reason=payload_too_long' 10
before_kb=$(sim_rss)
head -c "${MQTT_TEST_HUGE_MB:-20}000000" /dev/zero | mosquitto_pub -h 127.0.0.1 -p "$port" -i rb-huge -t rb/test/command -s
wait_for "$work/failclosed.log" 'Client rb-huge disconnected' 30 || true
mosquitto_pub -h 127.0.0.1 -p "$port" -t rb/test/command -m after-huge
wait_for "$work/flood.out" 'command=after-huge' 10 || true
after_kb=$(sim_rss)
check "a huge command (20 MB, or MQTT_TEST_HUGE_MB): the peak memory grows by less than 4 MB" figures "a ${MQTT_TEST_HUGE_MB:-20} MB command: peak memory ${before_kb} kB -> ${after_kb} kB" test $((after_kb - before_kb)) -lt 4096
printf 'send\n%.0s' $(seq 5000) | mosquitto_pub -h 127.0.0.1 -p "$port" -t rb/test/command -l
wait_for "$work/flood.out" 'log suppressed event="mqtt command" count=[0-9]+ seconds=10' 30 || true
check "5000 commands: at most 10 lines of each kind" figures "$(count "$work/flood.out" 'mqtt command command=send') logged" \
    test "$(count "$work/flood.out" 'mqtt command command=send')" -le 10
check "5000 commands: a summary line counts the rest" grep -qE 'log suppressed event="mqtt command" count=[0-9]{3,} seconds=10' "$work/flood.out"
check "the flood: the countdown ran on and ended" wait_for "$work/flood.out" 'countdown finished' 40
kill "$sim_pid" 2> /dev/null || true

# A broker that speaks only MQTT v3.1.1 (a stand-in in front of mosquitto that answers a v5
# CONNECT with "unacceptable protocol version"): the device falls back, says so once, and still
# refuses a retained command, once per connection, with a log line.
v3_port=$(free_port)
cat > "$work/v3proxy.py" << 'PY'
import socket, sys, threading
listen, upstream = int(sys.argv[1]), int(sys.argv[2])
def pipe(a, b):
    try:
        while (data := a.recv(65536)):
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
def serve(client):
    head = b""
    while len(head) < 9:
        more = client.recv(9 - len(head))
        if not more: return client.close()
        head += more
    # CONNECT: 0x10, remaining length (one byte here), protocol name "MQTT" (2 + 4), level
    if head[8] == 5:
        client.sendall(b"\x20\x02\x00\x01")
        return client.close()
    server = socket.create_connection(("127.0.0.1", upstream))
    server.sendall(head)
    threading.Thread(target=pipe, args=(server, client), daemon=True).start()
    pipe(client, server)
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", listen))
listener.listen()
print("listening", flush=True)
while True:
    threading.Thread(target=serve, args=(listener.accept()[0],), daemon=True).start()
PY
python3 "$work/v3proxy.py" "$v3_port" "$port" > "$work/v3proxy.log" 2>&1 &
pids+=("$!")
wait_for "$work/v3proxy.log" listening 10
mosquitto_pub -h 127.0.0.1 -p "$port" -r -t rb/test/command -m open
config "$work/c10.json5" "$v3_port" ", allowOpen: true, clientId: \"rb-v3\""
simulate v3 "$work/c10.json5" --duration 5 --script "end@60"
check "v3.1.1 broker: connected after the fallback" wait_for "$work/v3.out" 'mqtt connected' 15
check "v3.1.1 broker: the fallback said once" test "$(count "$work/v3.out" 'mqtt protocol broker=127.0.0.1:[0-9]+ version=3.1.1')" -eq 1
mosquitto_sub -h 127.0.0.1 -p "$port" -i rb-v3 -t rb/none -W 1 > /dev/null 2>&1 || true
wait_count "$work/v3.out" 'mqtt connected' 2 15 || true
check "v3.1.1 broker: a retained open refused once per connection" test "$(count "$work/v3.out" 'mqtt command refused retained=1 command=open')" -eq 2
check "v3.1.1 broker: the output never pulsed" test "$(count "$work/v3.out" 'output active|mqtt command command=')" -eq 0
kill "$sim_pid" 2> /dev/null || true
mosquitto_pub -h 127.0.0.1 -p "$port" -r -t rb/test/command -n

# ---- 3. TLS with a test CA
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=resend test CA" -keyout "$work/ca.key" -out "$work/ca.pem" 2> /dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$work/server.key" -out "$work/server.csr" 2> /dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$work/san.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
    -extfile "$work/san.ext" -out "$work/server.pem" 2> /dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=other CA" -keyout "$work/other.key" -out "$work/other.pem" 2> /dev/null
tls_port=$(free_port)
broker tls "$tls_port" "cafile $work/ca.pem" "certfile $work/server.pem" "keyfile $work/server.key"
mosquitto_sub -h localhost -p "$tls_port" --cafile "$work/ca.pem" -V 5 --retain-as-published -t '#' -F '%r %t %p' > "$work/tls.txt" 2>&1 &
pids+=("$!")
sleep 0.2
host=localhost config "$work/c3.json5" "$tls_port" ", tls: { caFile: \"$work/ca.pem\" }"
simulate tls "$work/c3.json5" --duration 5 --script "press@0.2 end@30"
check "TLS: connected with the test CA" wait_for "$work/tls.out" 'mqtt connected broker=localhost:' 15
check "TLS: state published over TLS" wait_for "$work/tls.txt" '^1 rb/test/state ' 10
kill "$sim_pid" 2> /dev/null || true
"$binary" check --config "$work/c3.json5" > "$work/check-tls.out" 2>&1 || true
check "check: TLS with the test CA" grep -qE "^OK MQTT broker localhost:$tls_port reachable, TLS \(CA $work/ca.pem\), anonymous, round trip" "$work/check-tls.out"
host=localhost config "$work/c4.json5" "$tls_port" ", tls: { caFile: \"$work/other.pem\" }"
simulate badtls "$work/c4.json5" --duration 5 --script "end@30"
wait_for "$work/badtls.out" 'mqtt down' 15 || true
sleep 4 # a window in which a busy loop would spin: its log lines and CPU time are the check
check "TLS with a wrong CA: one log line" test "$(count "$work/badtls.out" '^[0-9.]+ mqtt ')" -eq 1
check "TLS with a wrong CA: never connected" test "$(count "$work/badtls.out" 'mqtt connected')" -eq 0
"$binary" check --config "$work/c4.json5" > "$work/check-badtls.out" 2>&1 || true
check "check: a wrong CA is a PROBLEM with OpenSSL's reason" grep -qE "^PROBLEM MQTT broker localhost:$tls_port: .*certificate verify failed" "$work/check-badtls.out"
ticks=$(awk '{ print $14 + $15 }' "/proc/$sim_pid/stat")
check "TLS with a wrong CA: no busy loop (< 0.5 s CPU)" test "$ticks" -lt $(($(getconf CLK_TCK) / 2))
kill "$sim_pid" 2> /dev/null || true

# ---- 4. user name and password file
pw_port=$(free_port)
mosquitto_passwd -b -c "$work/passwd" door correct-horse 2> /dev/null
broker auth "$pw_port" "allow_anonymous false" "password_file $work/passwd"
printf 'wrong-horse\n' > "$work/wrong.pw"
printf 'correct-horse\n' > "$work/right.pw"
chmod 600 "$work/wrong.pw" "$work/right.pw"
config "$work/c5.json5" "$pw_port" ", username: \"door\", passwordFile: \"$work/wrong.pw\""
simulate badpw "$work/c5.json5" --duration 5 --script "end@30"
check "wrong password: refused, logged" wait_for "$work/badpw.out" 'mqtt refused broker=127.0.0.1:[0-9]+ reason=' 15
sleep 4 # several retries (1 s, 2 s) fall in this window: still one line
check "wrong password: one log line for all retries" test "$(count "$work/badpw.out" '^[0-9.]+ mqtt ')" -eq 1
check "wrong password: the device works meanwhile" grep -q 'screen |Verification' "$work/badpw.out"
kill "$sim_pid" 2> /dev/null || true
"$binary" check --config "$work/c5.json5" > "$work/check-pw.out" 2>&1 || true
check "check: a wrong password is a PROBLEM naming the keys to fix" \
    grep -qE "^PROBLEM MQTT broker 127.0.0.1:$pw_port \(no TLS\) refused the connection: .*(not authorised|Not authorized).*; check mqtt.username and mqtt.passwordFile$" "$work/check-pw.out"
config "$work/c6.json5" "$pw_port" ", username: \"door\", passwordFile: \"$work/right.pw\""
simulate goodpw "$work/c6.json5" --duration 5 --script "end@30"
check "right password: connected" wait_for "$work/goodpw.out" 'mqtt connected' 15
kill "$sim_pid" 2> /dev/null || true
chmod 640 "$work/right.pw"
status=0
"$binary" simulate --headless --realtime --config "$work/c6.json5" --script "end@1" > "$work/mode.out" 2>&1 || status=$?
check "group-readable password file: exit 78" test "$status" -eq 78
check "group-readable password file: says so" grep -q 'mqtt.passwordFile .* may be read by others (mode 640); allow only its owner' "$work/mode.out"

echo "mqtt-scenario: $checks checks run"
