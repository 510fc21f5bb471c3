# shellcheck shell=bash
# shellcheck disable=SC2154 # cache, root, decoder, fleet_*, arm64_*: scripts/vm-test's and vm/fleet/host.sh's
# shellcheck disable=SC2016 # single quotes: what the guest's shell expands
# The fleet guests' scenarios, host side (sourced by scripts/vm-test after vm/fleet/host.sh).
# fleet_run SUITE LOG boots the guest of SUITE (bookworm: the libgpiod v1 build; trixie: v2),
# drives it over SSH and writes the markers to LOG, as the other guests write theirs on the
# console:
#     VM-TEST BOOTED ...
#     --- SCENARIO fleet-<suite>-<n> BEGIN: <what>
#     SCENARIO fleet-<suite>-<n> PASS|FAIL: <what or why>
#     VM-TEST DONE failures=<count>
# The repository: scripts/publish-repo with a throwaway gpg key, the package of
# `scripts/package --arch arm64 --binary` (the cross-built binary) as version N (+deb12 or +deb13),
# and the same binary packaged again as N+1 (suffix .1), published while a countdown runs.

fleet_cooldown=600
fleet_ssh_timeout=${VM_FLEET_BOOT_TIMEOUT:-600}
fleet_guest_timeout=${VM_FLEET_TIMEOUT:-2400}

fleet_free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# fleet_ssh COMMAND...: runs COMMAND in the guest as root (no terminal: stdin is what the caller gives).
fleet_ssh() {
    ssh -q -i "$fleet_work/id" -p "$fleet_ssh_port" -o BatchMode=yes -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o ConnectTimeout=20 -o LogLevel=ERROR root@127.0.0.1 "$@"
}

# Each scenario also ends with vm/lib.sh's machine-readable line, which scripts/vm-test collects:
#     RESULT fleet-<suite>-<n> pass|fail <seconds> <what or why>
fleet_begin() { echo; echo "--- SCENARIO fleet-$fleet_suite-$1 BEGIN: $2"; fleet_started=$SECONDS; }
fleet_result() { echo "RESULT fleet-$fleet_suite-$1 $2 $((SECONDS - ${fleet_started:-$SECONDS})) $(printf '%s' "$3" | tr '\t\n\r' '   ')"; }
fleet_pass() { echo "SCENARIO fleet-$fleet_suite-$1 PASS: $2"; fleet_result "$1" pass "$2"; }
fleet_fail() {
    echo "SCENARIO fleet-$fleet_suite-$1 FAIL: $2"; fleet_result "$1" fail "$2"
    fleet_failures=$((fleet_failures + 1))
}

# fleet_glass OUT: the guest's i2c-plain record decoded here (hd44780-decode, 100 kHz) into OUT.
fleet_glass() {
    fleet_ssh /vm/guest.sh record </dev/null | "$decoder" --address 0x27 >"$1" 2>&1
}
# fleet_labels GLASS [FROM]: "<time> <row 2>" per decoded transaction after the last blank glass
# (a program's init clears it) at or after FROM (record time, default 0); nothing when no program
# started after FROM.
fleet_labels() {
    awk -v from="${2:-0}" '/ tx=[0-9]* wire=/ {
            glass = substr($0, index($0, "|")); split(glass, r, "|"); l = r[3]; sub(/ +$/, "", l)
            if ($1 + 0 >= from + 0 && glass ~ /^[| ]*$/) { n = 0; started = 1; next }
            line[n++] = $1 " " l
        }
        END { if (started) for (i = 0; i < n; i++) print line[i] }' "$1"
}
# fleet_ticks LABELS [ORIGIN]: checks a running countdown: "Resend (N)" labels, each one less than
# the one before and 1 s (+-0.25 s) after it. Prints "ok FIRST LAST COUNT" or "bad WHAT".
# With ORIGIN (the record time of "Resend ($fleet_cooldown)", when the countdown began) the labels
# are those of a resumed countdown: the first is drawn when the new process starts, at any phase
# of the second, and must be the count of that moment (between ORIGIN + cooldown - N and the next
# label's time, +-0.25 s); every later one comes at ORIGIN + cooldown - N (+-0.25 s), on the grid
# of the countdown that began before the restart (the program keeps its deadline, not its count).
fleet_ticks() {
    awk -v origin="${2:-}" -v cooldown="$fleet_cooldown" 'function abs(x) { return x < 0 ? -x : x }
        match($0, /Resend \(([0-9]+)\)$/) {
            n = substr($0, RSTART + 8, RLENGTH - 9) + 0
            if (count > 0 && n != previous - 1) { print "bad \"Resend (" n ")\" after \"Resend (" previous ")\""; bad = 1; exit }
            if (origin != "") {
                due = origin + cooldown - n
                if (count == 0 && ($1 < due - 0.25 || $1 > due + 1.25)) {
                    printf "bad the first label after the restart, \"Resend (%d)\", at %.3f: that count is due from %.3f to %.3f (countdown began at %.3f)\n", n, $1, due, due + 1, origin; bad = 1; exit
                }
                if (count > 0 && abs($1 - due) > 0.25) {
                    printf "bad \"Resend (%d)\" at %.3f, %.3f s off the countdown begun at %.3f\n", n, $1, $1 - due, origin; bad = 1; exit
                }
            } else if (count > 0 && abs($1 - t - 1) > 0.25) { printf "bad \"Resend (%d)\" %.3f s after the label before it\n", n, $1 - t; bad = 1; exit }
            if (count == 0) first = n
            previous = n; t = $1; count++
        }
        END { if (!bad) { if (count) print "ok", first, previous, count; else print "bad no countdown label" } }' "$1"
}
fleet_version() { fleet_ssh "dpkg-query -W -f '\${Version}' resend-button" </dev/null; }
fleet_property() { fleet_ssh systemctl show -p "$1" --value resend-button.service </dev/null; }
fleet_wait_active() { # fleet_wait_active SECONDS
    local limit=$((SECONDS + $1))
    until [[ $(fleet_property ActiveState) == active ]]; do
        ((SECONDS < limit)) || return 1
        sleep 1
    done
}

# fleet_prepare SUITE: the binary, the tree, the key, the packages, the repository, the server.
fleet_prepare() {
    local suite=$1 variant=v1 suffix=+deb12 binary
    [[ $suite == trixie ]] && { variant=v2; suffix=+deb13; }
    step "resend-button for arm64, libgpiod $variant (scripts/cross-build --arch arm64 --gpiod $variant)"
    binary=$(arm64_build_binary "$variant") || die "scripts/cross-build --arch arm64 --gpiod $variant failed"
    fleet_tar=$(fleet_rootfs_tar "$suite")
    fleet_work=$fleet_cache/run-$suite
    rm -rf "$fleet_work"
    mkdir -p "$fleet_work/gnupg"
    chmod 0700 "$fleet_work/gnupg"
    export GNUPGHOME=$fleet_work/gnupg
    step "fleet $suite: a throwaway signing key, the packages N and N+1, the repository with N"
    gpg --batch --quiet --passphrase '' --quick-gen-key "vm-test throwaway <vm-test@example.org>" ed25519 sign 1d 2>/dev/null \
        || die "gpg --quick-gen-key failed"
    fleet_fpr=$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
    local out
    out=$(scripts/package --arch arm64 --gpiod "$variant" --binary "$binary" --version-suffix "$suffix" \
        --output "$fleet_work/deb-n" 2>&1) || { echo "$out" >&2; die "scripts/package ($suite, N) failed"; }
    fleet_deb_n=$(tail -n 1 <<<"$out")
    out=$(scripts/package --arch arm64 --gpiod "$variant" --binary "$binary" --version-suffix "$suffix.1" \
        --output "$fleet_work/deb-n1" 2>&1) || { echo "$out" >&2; die "scripts/package ($suite, N+1) failed"; }
    fleet_deb_n1=$(tail -n 1 <<<"$out")
    fleet_version_n=$(dpkg-deb -f "$fleet_deb_n" Version)
    fleet_version_n1=$(dpkg-deb -f "$fleet_deb_n1" Version)
    fleet_http_port=$(fleet_free_port)
    fleet_ssh_port=$(fleet_free_port)
    fleet_url=http://10.0.2.2:$fleet_http_port
    fleet_publish "$fleet_deb_n" >&2 || die "scripts/publish-repo ($suite, N) failed"
    fleet_stand_in "$fleet_deb_n"
    ssh-keygen -q -t ed25519 -N '' -C vm-test -f "$fleet_work/id"
}
# fleet_stand_in DEB: the guest has no Debian apt source (it installs only from the test's
# repository), and its tree holds only the packages of fleet_packages: a Depends of DEB that the
# tree lacks (libmosquitto1 since the MQTT adapter, issue 21), and what that needs in turn that the
# tree lacks, is downloaded here for arm64 from the archive of the guest's own release (fleet_fetch:
# bookworm's or trixie's) into a flat repository signed with the same throwaway key,
# $fleet_work/repo/debian-stand-in/, which the guest follows as a stand-in for Debian's archive (a
# panel has Debian's own sources). So the tree is not rebuilt for a new library.
# Sets fleet_stand_in_packages (empty when the tree has every Depends).
fleet_stand_in() {
    local deb=$1 status name missing=() queue=() dir=$fleet_work/repo/debian-stand-in file dep
    status=$(tar -xOf "$fleet_tar" ./var/lib/dpkg/status)
    # the names the tree has: installed packages and what they provide
    local have
    have=$(awk '/^Package: / { print $2 } /^Provides: / { sub(/^Provides: /, ""); n = split($0, p, /, */); for (i = 1; i <= n; i++) { sub(/ .*/, "", p[i]); print p[i] } }' <<<"$status" | sort -u)
    # (the first of alternatives; an alternative the tree has counts as met)
    fleet_depends_names() {
        dpkg-deb -f "$1" Depends | tr ',' '\n' | while IFS= read -r dep; do
            local alt first=
            while IFS= read -r alt; do
                alt=$(sed 's/(.*//; s/:any//; s/^ *//; s/ *$//' <<<"$alt")
                [[ -n $alt ]] || continue
                [[ -n $first ]] || first=$alt
                grep -qxF "$alt" <<<"$have" && { first=$alt; break; }
            done < <(tr '|' '\n' <<<"$dep")
            [[ -z $first ]] || echo "$first"
        done
    }
    while read -r name; do
        grep -qxF "$name" <<<"$have" || queue+=("$name")
    done < <(fleet_depends_names "$deb")
    fleet_stand_in_packages=
    ((${#queue[@]})) || return 0
    rm -rf "$dir"
    mkdir -p "$dir"
    while ((${#queue[@]})); do
        step "fleet $fleet_suite: ${queue[*]} (Depends of the package, not in the tree): from $fleet_suite's archive into a signed stand-in for it"
        fleet_fetch "$fleet_suite" "$dir" "${queue[@]}"
        missing+=("${queue[@]}")
        local next=()
        for name in "${queue[@]}"; do
            file=$(find "$dir" -name "${name}_*_arm64.deb" -o -name "${name}_*_all.deb" | head -n 1)
            [[ -n $file ]] || die "apt-get download $name (arm64, $fleet_suite) failed"
            while read -r dep; do
                grep -qxF "$dep" <<<"$have" && continue
                [[ " ${missing[*]} ${next[*]} " == *" $dep "* ]] || next+=("$dep")
            done < <(fleet_depends_names "$file")
        done
        queue=("${next[@]}")
    done
    fleet_stand_in_packages=${missing[*]}
    (cd "$dir" && apt-ftparchive packages . >Packages && apt-ftparchive \
        -o APT::FTPArchive::Release::Origin="vm-test Debian stand-in" release . >../stand-in.Release &&
        mv ../stand-in.Release Release) \
        || die "apt-ftparchive (the stand-in) failed"
    gpg --batch --yes --quiet --local-user "$fleet_fpr" --clearsign -o "$dir/InRelease" "$dir/Release" \
        || die "gpg --clearsign (the stand-in) failed"
    chmod -R a+rX "$dir"
}

fleet_publish() { # fleet_publish DEB: publishes DEB into the run's repository
    scripts/publish-repo --output "$fleet_work/repo" --key "$fleet_fpr" --url "$fleet_url" \
        --suites "$fleet_suite" --architectures arm64 --deb "$fleet_suite=$1"
}

fleet_run() {
    fleet_suite=$1
    local log=$2 initramfs started status=0
    fleet_failures=0
    fleet_prepare "$fleet_suite"
    initramfs=$(fleet_pack "$fleet_suite" "$fleet_tar" "$fleet_work/id.pub")
    /usr/bin/python3 -m http.server --bind 127.0.0.1 --directory "$fleet_work/repo" "$fleet_http_port" \
        >"$fleet_work/http.log" 2>&1 &
    fleet_http_pid=$!
    step "boot qemu-system-aarch64 (fleet-$fleet_suite, virt, TCG; console: ${fleet_work#"$root"/}/serial.log, markers: ${log#"$root"/}.txt)"
    fleet_qemu "$fleet_work/serial.log" "$fleet_guest_timeout" "$initramfs" \
        "rdinit=/sbin/init net.ifnames=0 quiet loglevel=3 systemd.show_status=0" \
        -netdev "user,id=net,hostfwd=tcp:127.0.0.1:$fleet_ssh_port-:22" -device virtio-net-device,netdev=net &
    fleet_qemu_pid=$!
    started=$SECONDS
    local limit=$((SECONDS + fleet_ssh_timeout))
    until fleet_ssh true </dev/null 2>/dev/null; do
        if ((SECONDS > limit)) || ! kill -0 "$fleet_qemu_pid" 2>/dev/null; then
            { echo "no SSH from the guest within ${fleet_ssh_timeout}s"; tail -n 40 "$fleet_work/serial.log"; } >"$log"
            fleet_stop
            return 1
        fi
        sleep 3
    done
    step "fleet-$fleet_suite: SSH after $((SECONDS - started)) s"
    fleet_scenarios >"$log" 2>&1 || status=$?
    fleet_stop
    return "$status"
}
fleet_stop() {
    fleet_ssh systemctl poweroff </dev/null >/dev/null 2>&1 || true
    local n=0
    while kill -0 "$fleet_qemu_pid" 2>/dev/null && ((n < 60)); do sleep 1; n=$((n + 1)); done
    # (the background job is a subshell running `timeout qemu...`: timeout passes the signal on)
    pkill -TERM -P "$fleet_qemu_pid" 2>/dev/null || true
    kill "$fleet_qemu_pid" 2>/dev/null || true
    wait "$fleet_qemu_pid" 2>/dev/null || true
    kill "$fleet_http_pid" 2>/dev/null || true
    wait "$fleet_http_pid" 2>/dev/null || true
}

# fleet_scenarios: the scenarios, in order; their markers on stdout.
fleet_scenarios() {
    local out bus status version t0 t1 pid_before pid_after verdict resumed fleet_origin
    echo "VM-TEST BOOTED variant=fleet-$fleet_suite $(fleet_ssh 'echo kernel=$(uname -r) arch=$(dpkg --print-architecture) debian=$(cat /etc/debian_version) systemd=$(systemctl --version | head -n 1 | cut -d" " -f2) uptime=$(cut -d" " -f1 /proc/uptime)' </dev/null)"
    bus=$(fleet_ssh /vm/guest.sh hardware </dev/null) || { echo "VM-TEST SETUP FAILED: the simulated hardware (guest.sh hardware)"; return 1; }
    echo "i2c-plain is bus $bus; the repository: $fleet_url (key $fleet_fpr)"

    fleet_begin 1 "apt installs resend-button $fleet_version_n from the signed repository (Signed-By deb822 .sources, served on the host's loopback)"
    fleet_ssh 'cat > /usr/share/keyrings/resend-button.gpg' <"$fleet_work/repo/resend-button.gpg"
    fleet_ssh 'cat > /etc/apt/sources.list.d/resend-button.sources' <"$fleet_work/repo/$fleet_suite.sources"
    if [[ -n $fleet_stand_in_packages ]]; then
        echo "($fleet_stand_in_packages: from the stand-in for Debian's archive, $fleet_url/debian-stand-in/)"
        printf 'Types: deb\nURIs: %s/debian-stand-in/\nSuites: ./\nSigned-By: /usr/share/keyrings/resend-button.gpg\n' "$fleet_url" |
            fleet_ssh 'cat > /etc/apt/sources.list.d/debian-stand-in.sources'
    fi
    fleet_ssh cat /etc/apt/sources.list.d/resend-button.sources </dev/null
    t0=$SECONDS
    out=$(fleet_ssh 'apt-get update 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y resend-button 2>&1' </dev/null)
    status=$?
    echo "$out"
    version=$(fleet_version)
    if ((status != 0)); then
        fleet_fail 1 "apt-get update/install exited with $status"
    elif grep -qE '^(W|E|Warning|Error): ' <<<"$out"; then
        fleet_fail 1 "apt printed a warning or an error: $(grep -E '^(W|E|Warning|Error): ' <<<"$out" | head -n 1)"
    elif [[ $version != "$fleet_version_n" ]]; then
        fleet_fail 1 "installed version '$version', not $fleet_version_n"
    elif ! fleet_ssh cmp -s /usr/share/resend-button/config.json5 /etc/resend-button/config.json5 </dev/null; then
        fleet_fail 1 "postinst did not make /etc/resend-button/config.json5 from the default"
    else
        fleet_pass 1 "apt-get update (no warning: signature checked against Signed-By) and install of $version in $((SECONDS - t0)) s; /etc/resend-button/config.json5 made from the default"
    fi

    fleet_begin 2 "the user edits the configuration (the panel's wiring, cooldown ${fleet_cooldown} s), restarts the service; a press counts down on the decoded glass"
    fleet_ssh /vm/guest.sh configure "$fleet_cooldown" </dev/null
    fleet_ssh sha256sum /etc/resend-button/config.json5 </dev/null >"$fleet_work/config-edited.sha256"
    fleet_ssh 'systemctl reset-failed resend-button.service; systemctl restart resend-button.service' </dev/null
    fleet_wait_active 60
    fleet_ssh /vm/guest.sh press </dev/null
    sleep 5
    fleet_glass "$fleet_work/glass-2.txt"
    fleet_labels "$fleet_work/glass-2.txt" >"$fleet_work/labels-2.txt"
    verdict=$(fleet_ticks "$fleet_work/labels-2.txt")
    fleet_origin=$(awk -v label="Resend ($fleet_cooldown)" 'substr($0, index($0, " ") + 1) == label { print $1; exit }' "$fleet_work/labels-2.txt")
    echo "decoded glass (row 2 per transaction since the service's start):"
    sed 's/^/    /' "$fleet_work/labels-2.txt"
    if [[ $(fleet_property ActiveState) != active ]]; then
        fleet_fail 2 "the service is $(fleet_property ActiveState) after the edit and restart"
    elif [[ $verdict != ok* ]]; then
        fleet_fail 2 "the glass: ${verdict#bad }"
    elif read -r _ first last count <<<"$verdict" && ((first != fleet_cooldown)); then
        fleet_fail 2 "the countdown began at Resend ($first), not Resend ($fleet_cooldown)"
    else
        fleet_pass 2 "active with the edited configuration; the glass counted Resend ($first) to Resend ($last), $count labels 1 s apart"
    fi

    fleet_begin 3 "version $fleet_version_n1 published; unattended-upgrade upgrades without a prompt while the countdown runs; the edit is kept"
    fleet_publish "$fleet_deb_n1"
    fleet_ssh 'cat > /etc/apt/apt.conf.d/51resend-button-unattended-upgrades' <<<'Unattended-Upgrade::Origins-Pattern:: "origin=ResendButton,codename=${distro_codename}";'
    pid_before=$(fleet_property MainPID)
    t1=$(fleet_ssh /vm/guest.sh uptime </dev/null)
    t0=$SECONDS
    out=$(fleet_ssh 'apt-get update 2>&1 && unattended-upgrade -v 2>&1; echo "unattended-upgrade exit $?"' </dev/null)
    echo "$out"
    local upgrade_seconds=$((SECONDS - t0))
    fleet_ssh 'cat /var/log/unattended-upgrades/unattended-upgrades-dpkg.log 2>/dev/null' </dev/null >"$fleet_work/uu-dpkg.log"
    sed 's/^/    dpkg: /' "$fleet_work/uu-dpkg.log"
    version=$(fleet_version)
    if ! grep -q '^unattended-upgrade exit 0$' <<<"$out"; then
        fleet_fail 3 "unattended-upgrade failed: $(tail -n 1 <<<"$out")"
    elif [[ $version != "$fleet_version_n1" ]]; then
        fleet_fail 3 "the installed version is $version after unattended-upgrade, not $fleet_version_n1"
    elif grep -qiE 'conffile|\*\*\* config' "$fleet_work/uu-dpkg.log"; then
        fleet_fail 3 "dpkg asked about a configuration file: $(grep -iE 'conffile|\*\*\* config' "$fleet_work/uu-dpkg.log" | head -n 1)"
    elif ! fleet_ssh sha256sum /etc/resend-button/config.json5 </dev/null | cmp -s - "$fleet_work/config-edited.sha256"; then
        fleet_fail 3 "/etc/resend-button/config.json5 changed in the upgrade (the user's edit is lost)"
    else
        fleet_pass 3 "unattended-upgrade (with apt-get update: $upgrade_seconds s, no terminal) upgraded $fleet_version_n to $version; no question; the edited configuration is byte for byte the same"
    fi

    fleet_begin 4 "the service restarted into $fleet_version_n1 and resumed the countdown in progress (state file), on the glass"
    fleet_wait_active 60
    pid_after=$(fleet_property MainPID)
    sleep 4
    fleet_ssh journalctl -q -t resend-button -o cat --no-pager </dev/null >"$fleet_work/journal.txt"
    sed 's/^/    journal: /' "$fleet_work/journal.txt"
    resumed=$(sed -n 's/^[0-9.]* countdown resumed .*seconds_left=\([0-9]*\).*/\1/p' "$fleet_work/journal.txt" | tail -n 1)
    fleet_glass "$fleet_work/glass-4.txt"
    fleet_labels "$fleet_work/glass-4.txt" "$t1" >"$fleet_work/labels-4.txt"
    echo "decoded glass after the upgrade's restart (row 2 per transaction):"
    sed 's/^/    /' "$fleet_work/labels-4.txt"
    verdict=$(fleet_ticks "$fleet_work/labels-4.txt" "$fleet_origin")
    local first last count
    read -r _ first last count <<<"$verdict"
    if [[ $(fleet_property ActiveState) != active ]]; then
        fleet_fail 4 "the service is $(fleet_property ActiveState) after the upgrade"
    elif [[ $pid_after == "$pid_before" ]]; then
        fleet_fail 4 "the main PID is still $pid_before: the upgrade did not restart the service"
    elif [[ -z $resumed ]]; then
        fleet_fail 4 "no 'countdown resumed' in the journal after the restart"
    elif [[ -z $fleet_origin ]]; then
        fleet_fail 4 "scenario 2's glass has no Resend ($fleet_cooldown): no countdown start to check the resumed one against"
    elif [[ $verdict != ok* ]]; then
        fleet_fail 4 "the glass after the restart: ${verdict#bad }"
    elif ((first >= fleet_cooldown || first > resumed + 1 || first < resumed - 1)); then
        fleet_fail 4 "the glass resumed at Resend ($first), the journal at seconds_left=$resumed (cooldown $fleet_cooldown)"
    else
        fleet_pass 4 "new main PID $pid_after (was $pid_before); 'countdown resumed seconds_left=$resumed'; the glass went on from Resend ($first) to Resend ($last), $count labels, each after the first on the second of the countdown begun before the upgrade (+-0.25 s)"
    fi

    if [[ $fleet_suite == bookworm ]]; then
        fleet_ansible
        fleet_ansible_retry
    fi
    echo "VM-TEST DONE failures=$fleet_failures"
}

# fleet_ansible: board/ansible's playbook against the guest over SSH (the loopback-forwarded
# port), twice; a secret from Ansible Vault. Run 1 changes the configuration and restarts the
# service; run 2 changes nothing and restarts nothing.
fleet_ansible() {
    local a=$fleet_work/ansible pid1 pid2 pid3 status recap1 recap2 config mode t0 s1 s2
    fleet_begin 5 "board/ansible's role over SSH (127.0.0.1:$fleet_ssh_port -> the guest's 22): repository, package, configuration (validated by config check), vault secret, restart on change; a second run changes nothing"
    mkdir -p "$a/host_vars"
    echo 'a throwaway vault password' >"$a/vault-pass"
    ansible-vault encrypt_string --vault-password-file "$a/vault-pass" 'token-4711' --name vault_sms_api_token \
        >"$a/host_vars/panel-$fleet_suite.yml" 2>/dev/null
    cat >"$a/inventory.yml" <<END
resend_button_panels:
  hosts:
    panel-$fleet_suite:
      ansible_host: 127.0.0.1
      ansible_port: $fleet_ssh_port
      ansible_user: root
      ansible_become: false
      ansible_ssh_private_key_file: $fleet_work/id
      ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
      ansible_python_interpreter: /usr/bin/python3
      resend_button_repository_url: $fleet_url
      resend_button_repository_keyring: $fleet_work/repo/resend-button.gpg
      resend_button_config:
        button: { line: button, debounceMs: 30 }
        led: { line: led }
        lcd: { bus: $(fleet_ssh /vm/guest.sh bus </dev/null) }
        cooldown: { seconds: 45 }
      resend_button_credentials:
        sms_api_token: "{{ vault_sms_api_token }}"
END
    fleet_ansible_playbook() {
        ANSIBLE_NOCOLOR=1 ANSIBLE_HOME=$a/home ANSIBLE_LOCAL_TEMP=$a/tmp ANSIBLE_RETRY_FILES_ENABLED=0 \
            ANSIBLE_HOST_KEY_CHECKING=0 ANSIBLE_PIPELINING=1 ansible-playbook -i "$a/inventory.yml" board/ansible/playbook.yml \
            --vault-password-file "$a/vault-pass" </dev/null
    }
    pid1=$(fleet_property MainPID)
    t0=$SECONDS
    status=0
    fleet_ansible_playbook >"$a/run1.log" 2>&1 || status=$?
    s1=$((SECONDS - t0))
    sed 's/^/    run 1: /' "$a/run1.log"
    fleet_wait_active 60
    pid2=$(fleet_property MainPID)
    t0=$SECONDS
    fleet_ansible_playbook >"$a/run2.log" 2>&1 || status=$((status + $?))
    s2=$((SECONDS - t0))
    sed 's/^/    run 2: /' "$a/run2.log"
    pid3=$(fleet_property MainPID)
    recap1=$(sed -n "s/^panel-$fleet_suite *: //p" "$a/run1.log")
    recap2=$(sed -n "s/^panel-$fleet_suite *: //p" "$a/run2.log")
    config=$(fleet_ssh cat /etc/resend-button/config.json5 </dev/null)
    # (one string: ssh joins its arguments with spaces, and the guest's shell splits them again)
    mode=$(fleet_ssh "stat -c '%a %U %G' /etc/resend-button/credentials/sms_api_token" </dev/null)
    if ((status != 0)); then
        fleet_fail 5 "ansible-playbook failed (run 1: $recap1; run 2: $recap2)"
    elif [[ $recap1 != *failed=0* || $recap1 == *" changed=0 "* ]]; then
        fleet_fail 5 "the first run changed nothing or failed: $recap1"
    elif ! grep -q '"seconds": 45' <<<"$config" || ! grep -q 'Written by the resend_button Ansible role' <<<"$config"; then
        fleet_fail 5 "the configuration on the panel is not the inventory's"
    elif [[ $mode != "640 root resend-button" ]]; then
        fleet_fail 5 "the credential is '$mode', not 640 root resend-button"
    elif grep -q token-4711 "$a/run1.log" "$a/run2.log"; then
        fleet_fail 5 "the vault secret is in Ansible's output"
    elif ! grep -q 'RUNNING HANDLER \[resend_button : Restart resend-button\]' "$a/run1.log" || [[ $pid2 == "$pid1" ]]; then
        fleet_fail 5 "the first run did not restart the service (main PID $pid1 -> $pid2)"
    elif [[ $recap2 != *" changed=0 "* || $recap2 != *failed=0* ]]; then
        fleet_fail 5 "the second run was not a no-op: $recap2"
    elif grep -q 'RUNNING HANDLER' "$a/run2.log" || [[ $pid3 != "$pid2" ]]; then
        fleet_fail 5 "the second run restarted the service (main PID $pid2 -> $pid3)"
    else
        fleet_pass 5 "run 1 ($s1 s): $recap1, restarted (main PID $pid1 -> $pid2), the inventory's configuration and a 0640 secret on the panel; run 2 ($s2 s): $recap2, no restart"
    fi
}

# fleet_ansible_retry (bookworm, after fleet_ansible): a restart that failed is done by the next
# run. Run 3: the inventory's cooldown 45 -> 50, and the unit refuses a manual restart (a runtime
# drop-in with RefuseManualStart=yes: `systemctl restart` fails at once, the old process runs on
# with the old configuration, as after a handler that failed or never ran); the play fails in the
# handler. Run 4, the drop-in gone, the same inventory: no file changes, and yet the service is
# restarted into the new configuration (its `started` line says duration=50). Run 5: changed=0.
fleet_ansible_retry() {
    local a=$fleet_work/ansible pid3 pid4 pid5 st3=0 st4=0 st5=0 recap3 recap4 recap5 config started old_started t0 s4
    local dropin=/run/systemd/system/resend-button.service.d
    fleet_begin 6 "a restart that failed in one Ansible run (refused by the unit, the old process on the old configuration) is done by the next run, which changes no file; then changed=0"
    sed -i 's/cooldown: { seconds: 45 }/cooldown: { seconds: 50 }/' "$a/inventory.yml"
    fleet_ssh "mkdir -p $dropin && printf '[Unit]\nRefuseManualStart=yes\n' > $dropin/vm-test-refuse.conf && systemctl daemon-reload" </dev/null
    pid3=$(fleet_property MainPID)
    fleet_ansible_playbook >"$a/run3.log" 2>&1 || st3=$?
    sed 's/^/    run 3: /' "$a/run3.log"
    recap3=$(sed -n "s/^panel-$fleet_suite *: //p" "$a/run3.log")
    config=$(fleet_ssh cat /etc/resend-button/config.json5 </dev/null)
    old_started=$(fleet_ssh "journalctl -q -o cat _PID=$pid3 | grep '^[0-9.]* started ' | tail -n 1" </dev/null)
    echo "the process running after run 3 (main PID $(fleet_property MainPID)): $old_started"
    fleet_ssh "rm $dropin/vm-test-refuse.conf && systemctl daemon-reload" </dev/null
    t0=$SECONDS
    fleet_ansible_playbook >"$a/run4.log" 2>&1 || st4=$?
    s4=$((SECONDS - t0))
    sed 's/^/    run 4: /' "$a/run4.log"
    recap4=$(sed -n "s/^panel-$fleet_suite *: //p" "$a/run4.log")
    fleet_wait_active 60
    pid4=$(fleet_property MainPID)
    started=$(fleet_ssh "journalctl -q -o cat _PID=$pid4 | grep '^[0-9.]* started ' | tail -n 1" </dev/null)
    echo "the process running after run 4 (main PID $pid4): $started"
    fleet_ansible_playbook >"$a/run5.log" 2>&1 || st5=$?
    sed 's/^/    run 5: /' "$a/run5.log"
    recap5=$(sed -n "s/^panel-$fleet_suite *: //p" "$a/run5.log")
    pid5=$(fleet_property MainPID)
    if ((st3 == 0)) || [[ $recap3 != *failed=1* ]] || ! grep -q 'Operation refused' "$a/run3.log"; then
        fleet_fail 6 "run 3 did not fail on the refused restart (exit $st3; $recap3)"
    elif ! grep -q '"seconds": 50' <<<"$config"; then
        fleet_fail 6 "run 3 did not write the new configuration"
    elif [[ $old_started != *" duration=45 "* ]]; then
        fleet_fail 6 "after run 3 the running process is not the one with the old configuration: $old_started"
    elif ((st4 != 0 || st5 != 0)); then
        fleet_fail 6 "run 4 or 5 failed (run 4: exit $st4, $recap4; run 5: exit $st5, $recap5)"
    elif ! grep -q 'RUNNING HANDLER \[resend_button : Restart resend-button\]' "$a/run4.log" || [[ $pid4 == "$pid3" ]]; then
        fleet_fail 6 "run 4 did not restart the service (main PID $pid3 -> $pid4; $recap4): the panel runs the old configuration"
    elif [[ $started != *" duration=50 "* ]]; then
        fleet_fail 6 "after run 4 the service does not run the new configuration: $started"
    elif [[ $recap5 != *" changed=0 "* ]] || grep -q 'RUNNING HANDLER' "$a/run5.log" || [[ $pid5 != "$pid4" ]]; then
        fleet_fail 6 "run 5 was not a no-op (main PID $pid4 -> $pid5): $recap5"
    else
        fleet_pass 6 "run 3: $recap3, the restart refused, PID $pid3 still on duration=45; run 4 ($s4 s): $recap4, restarted (main PID $pid3 -> $pid4, duration=50); run 5: $recap5, no restart"
    fi
}
