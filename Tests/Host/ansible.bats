#!/usr/bin/env bats
# board/ansible: the resend_button role's configuration part run for real on this machine
# (connection local, a throwaway directory, a secret from Ansible Vault), and its service tasks
# against a stand-in systemctl. The repository, package and real service tasks act on the
# machine's apt and systemd and are left out.

load helpers/common

setup_file() {
    # A shipped feature's check never skips: a missing tool fails the file, naming it.
    command -v ansible-playbook > /dev/null || { echo "ansible-playbook is missing (scripts/build-deps --test installs ansible-core)" >&2; return 1; }
    RESEND_BINARY=$(debug_binary)
    export RESEND_BINARY
}

setup() {
    a=$BATS_TEST_TMPDIR/ansible
    mkdir -p "$a/host_vars" "$a/bin"
    echo 'a throwaway vault password' > "$a/vault-pass"
}

ansible_in() { # ansible_in DIR ARGS...: the playbook against DIR's inventory
    local dir=$1
    shift
    ANSIBLE_NOCOLOR=1 ANSIBLE_GATHERING=explicit ANSIBLE_HOME=$dir/home ANSIBLE_LOCAL_TEMP=$dir/tmp ANSIBLE_REMOTE_TEMP=$dir/tmp ANSIBLE_RETRY_FILES_ENABLED=0 \
        ansible-playbook -i "$dir/inventory.yml" board/ansible/playbook.yml --tags config \
        --vault-password-file "$dir/vault-pass" "$@" < /dev/null
}
# play N ARGS...: one run of the playbook, its output in $a/runN.log (and shown when it fails).
play() {
    local n=$1
    shift
    ansible_in "$a" "$@" > "$a/run$n.log" 2>&1 || { cat "$a/run$n.log"; return 1; }
}
# inventory LINES...: $a/inventory.yml, the host localhost (connection local, the config in $a,
# the binary under test, group root) with these host variables (YAML lines) added.
inventory() {
    {
        printf '%s\n' 'resend_button_panels:' '  hosts:' '    localhost:'
        printf '      %s\n' 'ansible_connection: local' 'ansible_become: false' 'ansible_python_interpreter: /usr/bin/python3' \
            "resend_button_config_dir: $a/etc/resend-button" "resend_button_binary: $RESEND_BINARY" 'resend_button_group: root' "$@"
    } > "$a/inventory.yml"
}
changed_of() { sed -n 's/^localhost *: .*changed=\([0-9]*\).*/\1/p' "$1"; }

@test "ansible-playbook --syntax-check board/ansible/playbook.yml" {
    ANSIBLE_NOCOLOR=1 ansible-playbook --syntax-check -i board/ansible/inventory.example.yml board/ansible/playbook.yml
}

@test "ansible role (tags config): writes the config and the vault secret (0640), validates with config check, restarts only on a change, keeps the good file on a bad value" {
    local config=$a/etc/resend-button/config.json5
    ansible-vault encrypt_string --vault-password-file "$a/vault-pass" 'token-4711' --name vault_sms_api_token \
        > "$a/host_vars/localhost.yml" 2> /dev/null
    inventory 'resend_button_manage_service: false' 'resend_button_config:' '  cooldown: { seconds: 45 }' '  lcd: { geometry: 20x4 }' \
        'resend_button_credentials:' '  sms_api_token: "{{ vault_sms_api_token }}"'
    play 1
    "$RESEND_BINARY" config check "$config"
    expect_contains "$config" '"seconds": 45' '"geometry": "20x4"' '"line": "GPIO17"'
    assert_equal "$(cat "$a/etc/resend-button/credentials/sms_api_token")" token-4711
    assert_equal "$(stat -c %a "$a/etc/resend-button/credentials/sms_api_token")" 640
    run grep token-4711 "$a/run1.log"
    assert_failure 1
    grep -q 'RUNNING HANDLER \[resend_button : Restart resend-button\]' "$a/run1.log" || fail "no restart after a change"
    # Nothing changed: nothing done, no restart.
    play 2
    assert_equal "$(changed_of "$a/run2.log")" 0
    run grep 'RUNNING HANDLER' "$a/run2.log"
    assert_failure 1
    # A bad value never reaches the device: config check refuses it, the file stays.
    cp "$config" "$a/before.json5"
    run play 3 -e '{"resend_button_config": {"cooldown": {"seconds": 0}}}'
    assert_failure
    expect_contains "$a/run3.log" 'failed to validate' 'cooldown.seconds'
    cmp "$a/before.json5" "$config" || fail "the bad configuration replaced the good one"
}

# A restart that failed is done by the next run, though that run changes no file: the service
# tasks against a stand-in systemctl (first on PATH; the systemd module runs `show`, `is-enabled`
# and `restart`) whose main PID goes up on each restart and whose `restart` fails, leaving the
# running process alone, while $a/refuse exists (as systemd refuses a restart of a unit with
# RefuseManualStart=yes).
@test "ansible role: a restart that failed (refused, the old process running on) is done by the next run, which changes no file; then changed=0" {
    local config=(-e '{"resend_button_config": {"cooldown": {"seconds": 50}}}')
    echo 1 > "$a/pid"
    cat > "$a/bin/systemctl" << EOF
#!/usr/bin/env bash
echo "\$*" >> "$a/systemctl.log"
case "\$1" in
    show) printf 'Id=resend-button.service\nLoadState=loaded\nActiveState=active\nSubState=running\nMainPID=%s\n' "\$(cat "$a/pid")" ;;
    is-enabled) echo enabled ;;
    restart)
        if [[ -e "$a/refuse" ]]; then echo "Failed to restart \$2: Operation refused" >&2; exit 1; fi
        echo \$((\$(cat "$a/pid") + 1)) > "$a/pid" ;;
    *) echo "unexpected: systemctl \$*" >&2; exit 1 ;;
esac
EOF
    chmod +x "$a/bin/systemctl"
    inventory "resend_button_restart_record: $a/var/lib/resend-button-ansible/restarted-with" \
        'resend_button_config:' '  cooldown: { seconds: 45 }'
    export PATH=$a/bin:$PATH
    play 1 --tags config,service
    assert_equal "$(cat "$a/pid")" 2
    play 2 --tags config,service
    assert_equal "$(changed_of "$a/run2.log")" 0
    assert_equal "$(cat "$a/pid")" 2
    # Run 3: a new cooldown written, its restart refused: the play fails, the old process runs on.
    touch "$a/refuse"
    run play 3 --tags config,service "${config[@]}"
    assert_failure
    expect_contains "$a/run3.log" 'Unable to restart service resend-button.service'
    expect_contains "$a/etc/resend-button/config.json5" '"seconds": 50'
    assert_equal "$(cat "$a/pid")" 2
    # Run 4: the same inventory, no file left to change: the restart still due is done.
    rm "$a/refuse"
    play 4 --tags config,service "${config[@]}"
    expect_contains "$a/run4.log" 'RUNNING HANDLER [resend_button : Restart resend-button]'
    assert_equal "$(cat "$a/pid")" 3
    # Run 5: all is well again: nothing changes, no restart.
    play 5 --tags config,service "${config[@]}"
    assert_equal "$(changed_of "$a/run5.log")" 0
    assert_equal "$(cat "$a/pid")" 3
    run grep 'RUNNING HANDLER' "$a/run5.log"
    assert_failure 1
}
