#!/usr/bin/env bats
# The verification adapters of adapters/ end to end, with real commands and without a network, a
# modem or a phone (docs/testing.md, The verification adapters):
#   - verify-api against a local stand-in for the hosted API (Tests/Adapters/verify-standin.py on
#     127.0.0.1), through the simulator (`simulate --headless --realtime` with the adapter as send
#     and verify command): each screen as the exit-code contract says (docs/verification.md);
#   - gsm against gammu's own gammu-smsd-inject with its files service (a spool directory, no
#     modem): the injected message holds the code, and nothing else does (strace over every process);
#   - totp against the test vectors of RFC 6238 (SHA1, SHA256, SHA512), its window and replay check;
#   - every adapter refuses a configuration file its group or others may read (exit 78).
# Needs curl, python3, oathtool, strace (scripts/build-deps --test) and gammu-smsd-inject, taken from
# the gammu-smsd package extracted into .cache/gammu-smsd when it is not installed (so that no SMS
# daemon is enabled on this machine).

load helpers/common

adapters=$REPO/adapters
account=ACcheckadapters
service=VAcheckadapters

setup_file() {
    local tool
    for tool in curl python3 oathtool strace; do
        command -v "$tool" > /dev/null || skip "$tool is missing (scripts/build-deps --test installs it)"
    done
    RESEND_BINARY=$(debug_binary)
    # No spaces in any path: --send-command and --verify-command split on spaces.
    [[ $BATS_FILE_TMPDIR != *" "* ]] || skip "the temporary directory's path has a space: $BATS_FILE_TMPDIR"
    local inject
    inject=$(command -v gammu-smsd-inject || true)
    if [[ -z $inject ]]; then
        inject=$REPO/.cache/gammu-smsd/usr/bin/gammu-smsd-inject
        if [[ ! -x $inject ]]; then
            rm -rf .cache/gammu-smsd && mkdir -p .cache/gammu-smsd/deb
            (cd .cache/gammu-smsd/deb && apt-get download gammu-smsd > /dev/null)
            dpkg -x .cache/gammu-smsd/deb/gammu-smsd_*.deb .cache/gammu-smsd
        fi
    fi
    mkdir -p "$BATS_FILE_TMPDIR/bin"
    ln -s "$inject" "$BATS_FILE_TMPDIR/bin/gammu-smsd-inject"
    # The token is kept in a file, not exported: it must be in no process's environment.
    local token=token-$RANDOM$RANDOM$RANDOM
    echo "$token" > "$BATS_FILE_TMPDIR/token"
    python3 Tests/Adapters/verify-standin.py --port-file "$BATS_FILE_TMPDIR/port" --account-sid "$account" \
        --auth-token "$token" --service-sid "$service" > "$BATS_FILE_TMPDIR/standin.log" 2>&1 3>&- &
    echo $! > "$BATS_FILE_TMPDIR/standin.pid"
    local _
    for _ in $(seq 100); do [[ -s $BATS_FILE_TMPDIR/port ]] && break; sleep 0.05; done
    [[ -s $BATS_FILE_TMPDIR/port ]] || { cat "$BATS_FILE_TMPDIR/standin.log" >&2; return 1; }
    export RESEND_BINARY
}

teardown_file() {
    [[ ! -s $BATS_FILE_TMPDIR/standin.pid ]] || kill "$(cat "$BATS_FILE_TMPDIR/standin.pid")" 2> /dev/null || true
}

setup() {
    binary=$RESEND_BINARY
    token=$(cat "$BATS_FILE_TMPDIR/token")
    work=$BATS_TEST_TMPDIR
    base=http://127.0.0.1:$(cat "$BATS_FILE_TMPDIR/port")
    export PATH=$BATS_FILE_TMPDIR/bin:$PATH
    keypad_config "$work/keypad.json5" 3
    keypad_config "$work/keypad10.json5" 10
}

control() { curl -sf -X POST "$base/_control/$1" > /dev/null; }

# screens FILE TEXT...: each TEXT is the start of a screen line the simulator printed, in this order.
screens() {
    local file=$1 text line=0 found
    shift
    for text in "$@"; do
        found=$(grep -nF -- "screen |$text" "$file" | awk -F: -v after="$line" '$1 > after { print $1; exit }')
        [[ -n $found ]] || { echo "no screen '|$text' after line $line of:"; cat "$file"; return 1; }
        line=$found
    done
}
# absent SECRET FILE...: SECRET is in none of the files.
absent() {
    local secret=$1 file
    shift
    for file in "$@"; do
        if grep -qaF -- "$secret" "$file"; then
            echo "the secret is in $file:"
            grep -naF -- "$secret" "$file" | head -n 5
            return 1
        fi
    done
}
# private FILE TEXT: writes an adapter's configuration file, mode 600.
private() { (umask 077 && printf '%s\n' "$2" > "$1"); }
# refute_in FILE PATTERN: no line of FILE matches PATTERN (grep -E).
refute_in() {
    if grep -E -- "$2" "$1"; then
        echo "in $1: $2"
        return 1
    fi
}

# A keypad without lines (the simulator brings its own), the door output pulsed for 0.5 s.
keypad_config() { # keypad_config FILE MAXATTEMPTS [MORE keypad.entry KEYS]
    cat > "$1" << EOF
{
  keypad: {
    enabled: true,
    verify: { command: ["/bin/false"] },
    output: { line: "GPIO26", pulseMs: 500 },
    entry: { maxAttempts: $2, ${3:-} },
  },
}
EOF
}
# api_config NAME PHONE [BASE] [TIMEOUT]: $work/NAME.conf for verify-api, one phone per test
# (the stand-in's limits are per phone).
api_config() {
    private "$work/$1.conf" "account_sid = $account
auth_token = $token
service_sid = $service
to = $2
base_url = ${3:-$base}/v2
timeout_seconds = ${4:-3}"
}
# simulate_api NAME SCRIPT [CONFIG]: the simulator with verify-api as send and verify command.
simulate_api() {
    "$binary" simulate --config "${3:-$work/keypad.json5}" --headless --realtime --events --duration 60 \
        --send-command "$adapters/verify-api send --config $work/$1.conf" \
        --verify-command "$adapters/verify-api check --config $work/$1.conf" \
        --script "$2" > "$work/$1.log" 2>&1 || { cat "$work/$1.log"; return 1; }
    cat "$work/$1.log"
}
# in_background NAME SCRIPT [CONFIG]: simulate_api in the background; waits for the code field.
in_background() {
    simulate_api "$@" > /dev/null 3>&- &
    background_pid=$!
    local _
    for _ in $(seq 100); do
        grep -q 'screen |Code: ' "$work/$1.log" 2> /dev/null && return 0
        sleep 0.05
    done
    echo "the code field never showed:"
    cat "$work/$1.log"
    return 1
}

# --- verify-api against the stand-in, through the simulator -------------------------------------

@test "verify-api: the right code opens the door (Code accepted, output on); code and token in no argv, environment or log" {
    api_config accepted +491510000001
    control "next-code?code=482913"
    # The keys come from a file: the test's own typing must not put the code in an argv.
    echo "press@0 keys@2:482913# end@6" > "$work/accepted.script"
    strace -f -qq -e trace=execve -v -s 4096 -o "$work/accepted.trace" -- \
        "$binary" simulate --config "$work/keypad.json5" --headless --realtime --events --duration 60 \
        --send-command "$adapters/verify-api send --config $work/accepted.conf" \
        --verify-command "$adapters/verify-api check --config $work/accepted.conf" \
        --script-file "$work/accepted.script" > "$work/accepted.log" 2>&1
    cat "$work/accepted.log"
    screens "$work/accepted.log" "Sending..." "Code: ______" "Checking..." "Code accepted   |Welcome"
    grep -q '^[0-9.]* output on$' "$work/accepted.log" || fail "the door output never went on"
    # The check named the verification by the SID the send left in the session directory.
    assert_equal "$(curl -sf "$base/_control/checks" | tail -n 1)" VerificationSid
    # The recording works: curl was started, with neither the code nor the token in sight.
    grep -q 'execve(".*/curl"' "$work/accepted.trace" || fail "no curl in the execve trace"
    absent 482913 "$work/accepted.log" "$work/accepted.trace"
    absent "$token" "$work/accepted.log" "$work/accepted.trace"
}

@test "verify-api: a wrong code is Wrong, 2 left (pending: exit 1, a try counted)" {
    api_config wrong +491510000002
    control "next-code?code=482913"
    simulate_api wrong "press@0 keys@0.5:111111# end@3"
    screens "$work/wrong.log" "Checking..." "Wrong, 2 left"
    refute_in "$work/wrong.log" 'output on'
}

@test "verify-api: five wrong codes, then the service's check limit (429, 60202: Try again later, no try counted), then 404 (Code expired)" {
    api_config five +491510000003
    control "next-code?code=4829"
    # Five wrong codes, then the right one twice: the service allows 5 checks; the 6th is HTTP
    # 429 (60202) and the verification is gone, so the 7th is HTTP 404. Each check has 2 s and
    # more (curl and python3 on a loaded host) before the next code is typed.
    simulate_api five "press@0 keys@0.5:1111# keys@3.7:2222# keys@6.9:3333# keys@10.1:5555# keys@13.3:6666# keys@16.5:4829# keys@19.7:4829# end@22" "$work/keypad10.json5"
    screens "$work/five.log" "Wrong, 9 left" "Wrong, 8 left" "Wrong, 7 left" "Wrong, 6 left" "Wrong, 5 left" \
        "Try again later" "Code expired"
    refute_in "$work/five.log" 'output on'
}

@test "verify-api: the right code after the service's 10 minutes is 404: Code expired" {
    api_config expired +491510000004
    control "next-code?code=482913"
    in_background expired "press@0 keys@1:482913# end@3.5"
    control "advance?seconds=601"
    wait "$background_pid"
    screens "$work/expired.log" "Checking..." "Code expired"
    refute_in "$work/expired.log" 'output on'
}

@test "verify-api: the sixth send in 10 minutes is 429 (60203): exit 75, Try later, the button ready again, no code field" {
    api_config sends +491510000005
    local _
    # Five sends within 10 minutes are allowed (the same code each time) ...
    for _ in 1 2 3 4 5; do "$adapters/verify-api" send --config "$work/sends.conf" > /dev/null; done
    # ... the sixth is HTTP 429 (60203): exit 75, nothing sent.
    run "$adapters/verify-api" send --config "$work/sends.conf"
    assert_failure 75
    assert_output --partial 60203
    simulate_api sends "press@0 end@1.5"
    screens "$work/sends.log" "Sending..." "Try later       |Send code"
    refute_in "$work/sends.log" 'screen \|Code: '
}

@test "verify-api: no network at the send: exit 75, Try later, the button ready again" {
    # A port nobody listens on: connection refused, as with the network down.
    api_config down +491510000006 "http://127.0.0.1:$(free_port)"
    simulate_api down "press@0 end@1.5"
    screens "$work/down.log" "Sending..." "Try later       |Send code"
    grep -q 'send finished result=.* exit=75' "$work/down.log" || fail "the send did not exit 75"
}

@test "verify-api: a service that does not answer within timeout_seconds: exit 75, Try again later" {
    api_config stalled +491510000007 "$base" 1
    control "next-code?code=482913"
    in_background stalled "press@0 keys@1:482913# end@4.5"
    control "stall?seconds=3"
    local waited=0
    wait "$background_pid" || waited=$?
    control "stall?seconds=0"
    assert_equal "$waited" 0
    screens "$work/stalled.log" "Checking..." "Try again later"
    grep -q 'verify finished result=.* exit=75' "$work/stalled.log" || fail "the check did not exit 75"
    refute_in "$work/stalled.log" 'output on'
}

@test "verify-api: a refused login is Send failed (exit 1) and Check failed (exit 2), naming HTTP 401" {
    private "$work/badauth.conf" "account_sid = $account
auth_token = wrong
service_sid = $service
to = +491510000008
base_url = $base/v2"
    run "$adapters/verify-api" send --config "$work/badauth.conf"
    assert_failure 1
    assert_output --partial 'HTTP 401'
    run bash -c 'echo 123456 | "$1" check --config "$2"' - "$adapters/verify-api" "$work/badauth.conf"
    assert_failure 2
    assert_output --partial 'HTTP 401'
}

# --- gsm through gammu-smsd-inject's files service ----------------------------------------------
gsm_setup() {
    mkdir -p "$work/spool/inbox" "$work/spool/outbox" "$work/spool/sent" "$work/spool/error"
    cat > "$work/smsdrc" << EOF
[gammu]
connection = none
[smsd]
service = files
logfile = $work/gammu.log
debuglevel = 255
inboxpath = $work/spool/inbox/
outboxpath = $work/spool/outbox/
sentsmspath = $work/spool/sent/
errorsmspath = $work/spool/error/
EOF
    private "$work/gsm.conf" "to = +491510000009
template = Door code: {code}, valid 10 minutes
smsd_config = $work/smsdrc"
}

@test "gsm: the code goes into gammu-smsd's outbox (mode 640), in no argv, environment or output" {
    gsm_setup
    # The unit's drop-in sets UMask=0027: the injected file is then readable by gammu-smsd's group.
    (umask 0027 && echo 590317 | strace -f -qq -e trace=execve -v -s 4096 -o "$work/gsm.trace" -- \
        "$adapters/gsm" send --config "$work/gsm.conf") > "$work/gsm.out" 2>&1 || { cat "$work/gsm.out"; false; }
    cat "$work/gsm.out"
    local message
    message=$(find "$work/spool/outbox" -type f)
    [[ $(wc -l <<< "$message") == 1 && -n $message ]] || fail "not one message in the outbox: $message"
    grep -q '^; Door code: 590317, valid 10 minutes$' "$message" || { cat "$message"; fail "not the template with the code"; }
    [[ $message == *+491510000009* ]] || fail "not for the configured number: $message"
    assert_equal "$(stat -c %a "$message")" 640
    grep -q 'execve(".*gammu-smsd-inject", \["gammu-smsd-inject", "-c", ".*", "TEXT", "+491510000009"\]' "$work/gsm.trace" \
        || { grep execve "$work/gsm.trace"; fail "gammu-smsd-inject not started as expected"; }
    [[ ! -e $work/gammu.log ]] || cat "$work/gammu.log" >> "$work/gsm.out"
    absent 590317 "$work/gsm.out" "$work/gsm.trace"
}

@test "gsm: through the simulator, the device's code reaches the outbox, and only there (not the output, the state file, any argv or environment)" {
    gsm_setup
    cat > "$work/keypad-gsm.json5" << EOF
{
  send: { command: ["/bin/false"] },
  keypad: {
    enabled: true,
    code: { source: "device", length: 6 },
    entry: { minLength: 6, maxLength: 6 },
    output: { line: "GPIO26", pulseMs: 500 },
  },
}
EOF
    # The device draws the code and hands it to gsm on its standard input; a wrong code is typed
    # (the right one is known only once the run is under way). Every execve is recorded.
    (umask 0027 && strace -f -qq -e trace=execve -v -s 4096 -o "$work/gsm-sim.trace" -- \
        "$binary" simulate --config "$work/keypad-gsm.json5" --headless --realtime --events --duration 60 \
        --state-file "$work/gsm-state.json" --send-command "$adapters/gsm send --config $work/gsm.conf" \
        --script "press@0 keys@2:000000# end@4.5") > "$work/gsm-sim.log" 2>&1 || { cat "$work/gsm-sim.log"; false; }
    cat "$work/gsm-sim.log"
    local message code
    message=$(find "$work/spool/outbox" -type f)
    [[ -n $message && $(wc -l <<< "$message") == 1 ]] || fail "not one message in the outbox: $message"
    code=$(sed -n 's/^; Door code: \([0-9]*\), valid 10 minutes$/\1/p' "$message")
    [[ $code =~ ^[0-9]{6}$ ]] || { cat "$message"; fail "no 6-digit code in the message"; }
    [[ $code != 000000 ]] || fail "the device drew 000000, the wrong code typed: run again"
    screens "$work/gsm-sim.log" "Sending..." "Code: ______" "Wrong, 2 left"
    grep -q 'execve(".*gammu-smsd-inject"' "$work/gsm-sim.trace" || fail "no gammu-smsd-inject in the trace"
    assert_file_not_empty "$work/gsm-state.json"
    absent "$code" "$work/gsm-sim.log" "$work/gsm-sim.trace" "$work/gsm-state.json"
}

@test "gsm: a template without {code} is exit 78, naming the key" {
    gsm_setup
    private "$work/gsm-bad.conf" "to = +491510000009
template = no code here
smsd_config = $work/smsdrc"
    run bash -c 'echo 590317 | "$1" send --config "$2"' - "$adapters/gsm" "$work/gsm-bad.conf"
    assert_failure 78
    assert_output --partial 'template: no {code} in it'
}

# --- totp ----------------------------------------------------------------------------------------
# RFC 6238 appendix B: the secrets are "12345678901234567890" repeated to 20, 32 and 64 bytes.
base32_of() { printf '%s' "$1" | base32 -w 0; }
sha1_secret=$(base32_of 12345678901234567890)
sha256_secret=$(base32_of 12345678901234567890123456789012)
sha512_secret=$(base32_of 1234567890123456789012345678901234567890123456789012345678901234)
# totp_config NAME ALGORITHM SECRET [WINDOW]
totp_config() {
    rm -f "$work/$1.last"
    private "$work/$1.conf" "secret = $3
digits = 8
algorithm = $2
window = ${4:-1}
replay_file = $work/$1.last"
}
# totp_check NAME TIME CODE: the adapter's exit status for CODE at TIME.
totp_check() {
    local code=0
    echo "$3" | RESEND_TOTP_TIME=$2 "$adapters/totp" check --config "$work/$1.conf" > /dev/null 2>&1 || code=$?
    echo "$code"
}

@test "totp: the RFC 6238 test vectors (SHA1, SHA256, SHA512, 8 digits) are accepted, a digit off is not" {
    local vector time sha1 sha256 sha512 off results bad=0
    for vector in "59 94287082 46119246 90693936" "1111111109 07081804 68084774 25091201" \
        "1111111111 14050471 67062674 99943326" "1234567890 89005924 91819424 93441116" \
        "2000000000 69279037 90698825 38618901" "20000000000 65353130 77737706 47863826"; do
        read -r time sha1 sha256 sha512 <<< "$vector"
        totp_config v1 SHA1 "$sha1_secret"
        totp_config v256 SHA256 "$sha256_secret"
        totp_config v512 SHA512 "$sha512_secret"
        # One digit off is wrong (checked first: the right code is accepted once).
        off=$(totp_check v1 "$time" "${sha1%?}$(((${sha1: -1} + 1) % 10))")
        results="$(totp_check v1 "$time" "$sha1") $(totp_check v256 "$time" "$sha256") $(totp_check v512 "$time" "$sha512")"
        echo "T=$time: SHA1 $sha1, SHA256 $sha256, SHA512 $sha512: exit $results; one digit off: exit $off"
        [[ $results == "0 0 0" && $off == 1 ]] || bad=1
    done
    ((bad == 0))
}

@test "totp: window steps either side, a code is accepted once, never an older step after a newer one" {
    # 07081804 is the code of step 37037036 (T = 1111111109).
    totp_config w SHA1 "$sha1_secret" 1
    [[ $(totp_check w 1111111139 07081804) == 0 ]] || fail "one step late, window 1: refused"
    [[ $(totp_check w 1111111139 07081804) == 1 ]] || fail "the same code twice: accepted"
    totp_config w SHA1 "$sha1_secret" 1
    [[ $(totp_check w 1111111079 07081804) == 0 ]] || fail "one step early, window 1: refused"
    totp_config w SHA1 "$sha1_secret" 1
    [[ $(totp_check w 1111111169 07081804) == 1 ]] || fail "two steps late, window 1: accepted"
    totp_config w SHA1 "$sha1_secret" 0
    [[ $(totp_check w 1111111139 07081804) == 1 ]] || fail "one step late, window 0: accepted"
    # A code of an earlier step than the last accepted one is refused too.
    totp_config w SHA1 "$sha1_secret" 1
    [[ $(totp_check w 1111111111 14050471) == 0 ]] || fail "the newer step's code: refused"
    [[ $(totp_check w 1111111111 07081804) == 1 ]] || fail "an older step after a newer one: accepted"
}

@test "totp: neither the typed code nor the secret is in any argv, environment or output" {
    totp_config trace SHA1 "$sha1_secret"
    echo 07081804 | RESEND_TOTP_TIME=1111111109 strace -f -qq -e trace=execve -v -s 4096 -o "$work/totp.trace" -- \
        "$adapters/totp" check --config "$work/trace.conf" > "$work/totp.out" 2>&1 || { cat "$work/totp.out"; false; }
    grep -q 'execve(".*/oathtool"' "$work/totp.trace" || fail "no oathtool in the execve trace"
    absent 07081804 "$work/totp.out" "$work/totp.trace"
    absent "$sha1_secret" "$work/totp.out" "$work/totp.trace"
}

@test "totp: through the simulator, the authenticator's code opens the door without a send" {
    # The code of now, typed on the simulator's keypad: a key (*) opens the entry, no send.
    local secret now code
    secret=$(head -c 20 /dev/urandom | base32 -w 0)
    private "$work/totp.conf" "secret = $secret
replay_file = $work/totp.last"
    keypad_config "$work/keypad-totp.json5" 3 "opensWithoutSend: true"
    now=$(date +%s)
    code=$(printf '%s\n' "$secret" | oathtool --totp -b -N "@$now" -)
    "$binary" simulate --config "$work/keypad-totp.json5" --headless --realtime --events --duration 60 \
        --verify-command "$adapters/totp check --config $work/totp.conf" \
        --script "key@0:* keys@0.5:$code# end@3.5" > "$work/totp.log" 2>&1 || { cat "$work/totp.log"; false; }
    cat "$work/totp.log"
    screens "$work/totp.log" "Checking..." "Code accepted   |Welcome"
    absent "$code" "$work/totp.log"
}

# --- every adapter: its configuration file must be private ----------------------------------------

@test "every adapter refuses a configuration file its group or others may read (exit 78, naming file and mode)" {
    local adapter
    api_config open +491510000010
    chmod 640 "$work/open.conf"
    for adapter in verify-api gsm totp; do
        case $adapter in
            verify-api) run "$adapters/verify-api" send --config "$work/open.conf" ;;
            gsm) run bash -c 'echo 1234 | "$1" send --config "$2"' - "$adapters/gsm" "$work/open.conf" ;;
            totp) run bash -c 'echo 1234 | "$1" check --config "$2"' - "$adapters/totp" "$work/open.conf" ;;
        esac
        [[ $status == 78 ]] || fail "$adapter: exit $status, not 78: $output"
        assert_line --regexp "^$adapter: $work/open.conf: mode 640 lets its group or others read it"
    done
}
