#!/usr/bin/env bats
# verify-api's reading of the service's answer: only the top-level "status" and "valid" of one
# JSON object decide, and approval needs both ("approved" and true). The answers come from a
# stand-in curl on PATH that prints a prepared body and HTTP status (no network, no service);
# the adapter is the real one (ADAPTERS: another adapters/ directory to run, e.g. an older one).
#
#   bats --tap Tests/Host/verify-api-json.bats

bats_load_library bats-support
bats_load_library bats-assert

setup() {
    adapters=${ADAPTERS:-$BATS_TEST_DIRNAME/../../adapters}
    mkdir -p "$BATS_TEST_TMPDIR/bin" "$BATS_TEST_TMPDIR/session"
    cat > "$BATS_TEST_TMPDIR/bin/curl" << 'CURL'
#!/bin/sh
cat > /dev/null
cat "$FAKE_BODY"
printf '\n%s' "${FAKE_HTTP:-200}"
CURL
    chmod +x "$BATS_TEST_TMPDIR/bin/curl"
    PATH=$BATS_TEST_TMPDIR/bin:$PATH
    conf=$BATS_TEST_TMPDIR/verify-api.conf
    (umask 077 && printf '%s\n' "account_sid = ACtest" "auth_token = secret-token" "service_sid = VAtest" \
        "to = +491701234567" "base_url = http://127.0.0.1:9/v2" > "$conf")
    export FAKE_BODY=$BATS_TEST_TMPDIR/body FAKE_HTTP=200 RESEND_SESSION_DIR=$BATS_TEST_TMPDIR/session
}

# answer BODY: the service's next answer.
answer() { printf '%s' "$1" > "$FAKE_BODY"; }
check() { run "$adapters/verify-api" check --config "$conf" <<< 123456; }

@test "a flat approved answer with valid true: exit 0" {
    answer '{"sid":"VE1","status":"approved","valid":true}'
    check
    assert_success
    assert_output "code approved"
}

@test "pending at the top, approved only in a nested attempt: a wrong code (exit 1), never approved" {
    answer '{"sid":"VE1","status":"pending","valid":false,"attempts":[{"channel":"sms","status":"approved"}]}'
    check
    assert_failure 1
    assert_output "code wrong"
}

@test "approved at the top, pending in a nested attempt: approved (exit 0)" {
    answer '{"sid":"VE1","status":"approved","valid":true,"attempts":[{"channel":"sms","status":"pending"}]}'
    check
    assert_success
}

@test "a repeated top-level status is no verdict (exit 2)" {
    answer '{"sid":"VE1","status":"pending","valid":true,"status":"approved"}'
    check
    assert_failure 2
    assert_output --partial "unexpected answer"
}

@test "reordered members: valid and status anywhere at the top level count" {
    answer '{"valid":true,"to":"+491701234567","channel":"sms","status":"approved","sid":"VE1"}'
    check
    assert_success
}

@test "a pretty-printed answer over many lines reads the same" {
    answer '{
  "sid": "VE1",
  "service_sid": "VAtest",
  "status"  :
      "approved",
  "valid": true,
  "sna": { "status": "pending" }
}'
    check
    assert_success
}

@test "approved with valid false is no verdict (exit 2)" {
    answer '{"sid":"VE1","status":"approved","valid":false}'
    check
    assert_failure 2
}

@test "approved without valid is no verdict (exit 2)" {
    answer '{"sid":"VE1","status":"approved"}'
    check
    assert_failure 2
}

@test "approved with valid as the string \"true\" is no verdict (exit 2)" {
    answer '{"sid":"VE1","status":"approved","valid":"true"}'
    check
    assert_failure 2
}

@test "no top-level status, approved only nested: no verdict (exit 2)" {
    answer '{"sid":"VE1","valid":true,"check":{"status":"approved"}}'
    check
    assert_failure 2
}

@test "a huge answer (2 MB) is no verdict (exit 2)" {
    { printf '{"status":"approved","valid":true,"padding":"'; head -c 2000000 /dev/zero | tr '\0' x; printf '"}'; } > "$FAKE_BODY"
    check
    assert_failure 2
}

@test "a truncated answer is no verdict (exit 2)" {
    answer '{"sid":"VE1","status":"approved","valid":true'
    check
    assert_failure 2
}

@test "an answer that is not an object is no verdict (exit 2)" {
    answer '["status","approved","valid",true]'
    check
    assert_failure 2
    answer '"status\":\"approved\",\"valid\":true"'
    check
    assert_failure 2
}

@test "an answer nested 100000 deep is no verdict (exit 2), nothing crashes" {
    { head -c 100000 /dev/zero | tr '\0' '['; head -c 100000 /dev/zero | tr '\0' ']'; } > "$FAKE_BODY"
    check
    assert_failure 2
}

@test "a status with spaces or quotes is not printed as it came (exit 2)" {
    answer '{"status":"approved \" rm -rf","valid":true}'
    check
    assert_failure 2
    refute_output --partial "rm -rf"
}

@test "send keeps the top-level sid, not a nested one" {
    answer '{"sid":"VE2","status":"pending","attempts":[{"sid":"VXnested"}]}'
    FAKE_HTTP=201 run "$adapters/verify-api" send --config "$conf"
    assert_success
    assert_output "verification started status=pending"
    run cat "$RESEND_SESSION_DIR/verification-sid"
    assert_output "VE2"
}

@test "a rate limit names the top-level error code, not a nested one (exit 75)" {
    answer '{"code":60202,"message":"Max check attempts reached","more_info":{"code":1}}'
    FAKE_HTTP=429 check
    assert_failure 75
    assert_output --partial "error 60202"
}

@test "a final top-level status (expired) is Code expired (exit 3)" {
    answer '{"sid":"VE1","status":"expired","valid":false}'
    check
    assert_failure 3
    assert_output --partial "the verification is expired"
}
