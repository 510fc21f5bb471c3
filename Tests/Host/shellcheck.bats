#!/usr/bin/env bats
# Shellcheck over every shell file of the repository (scripts, CI, adapters, the board's and the VM
# guests' scripts, these checks themselves).

load helpers/common

setup_file() {
    command -v shellcheck > /dev/null || skip "shellcheck is missing (apt-get install shellcheck)"
}

# shell_files: every tracked file that is a shell script: *.sh, *.bash, *.bats, or a sh/bash shebang.
shell_files() {
    local file
    git ls-files --cached --others --exclude-standard | while read -r file; do
        [[ -f $file ]] || continue
        case $file in
            *.sh | *.bash | *.bats) echo "$file" ;;
            *) grep -qE '^#!.*\b(ba|da)?sh\b' < <(head -n 1 "$file") && echo "$file" || true ;;
        esac
    done
}

@test "every shell file in the repository is shellcheck-clean at warning severity, guest scripts included" {
    mapfile -t files < <(shell_files)
    ((${#files[@]} >= 40)) || fail "only ${#files[@]} shell files found"
    printf '%s\n' "${files[@]}" | grep -x vm/lib.sh > /dev/null || fail "vm/lib.sh is not among the files"
    printf '%s\n' "${files[@]}" | grep -x Tests/Host/shellcheck.bats > /dev/null || fail "the .bats files are not among the files"
    run shellcheck -x -S warning "${files[@]}"
    assert_success
}

@test "scripts/ and .ci/run are shellcheck-clean at every severity" {
    local files=() file
    for file in scripts/* .ci/run; do
        [[ -f $file ]] && grep -qE '^#!.*\b(ba)?sh\b' < <(head -n 1 "$file") && files+=("$file")
    done
    ((${#files[@]} >= 20)) || fail "only ${#files[@]} scripts found"
    run shellcheck "${files[@]}"
    assert_success
}

@test "the adapters are shellcheck-clean as POSIX sh (dash runs them on Debian)" {
    run shellcheck -x -s sh adapters/verify-api adapters/gsm adapters/totp
    assert_success
}
