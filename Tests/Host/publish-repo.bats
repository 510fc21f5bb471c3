#!/usr/bin/env bats
# scripts/publish-repo: a signed apt repository served on 127.0.0.1 to a private apt (the
# machine's apt is not touched), and its refusals.
# bats file_tags=release

load helpers/common

repo_arches=(arm64 armhf amd64)

setup_file() {
    # A shipped feature's check never skips: a missing tool fails the file, naming it.
    command -v apt-ftparchive > /dev/null || { echo "apt-ftparchive is missing (scripts/build-deps --test installs apt-utils)" >&2; return 1; }
    command -v gpg > /dev/null || { echo "gpg is missing (scripts/build-deps --test installs gnupg)" >&2; return 1; }
    RESEND_RELEASE_BINARY=$(release_binary)
    DEB=$(shared_deb)
    export RESEND_RELEASE_BINARY DEB
    fake_debs "$BATS_FILE_TMPDIR/repo-in" > "$BATS_FILE_TMPDIR/debs"
}

# fake_debs DIR: packages for each architecture and suite made from the native one (only the
# Architecture and Version fields differ: the repository is under test here, not the binaries),
# uncompressed (fast); prints `--deb SUITE=FILE` pairs, one word a line.
fake_debs() {
    local dir=$1 suite suffix arch tree=$1/tree out version
    version=$(program_version)
    for suite in bookworm trixie; do
        suffix=+deb12
        [[ $suite == trixie ]] && suffix=+deb13
        for arch in "${repo_arches[@]}"; do
            out=$dir/$suite/resend-button_$version${suffix}_$arch.deb
            rm -rf "$tree" && mkdir -p "$dir" && dpkg-deb -R "$DEB" "$tree"
            sed -i -e "s/^Architecture: .*/Architecture: $arch/" -e "s/^Version: .*/Version: $version$suffix/" "$tree/DEBIAN/control"
            mkdir -p "$(dirname "$out")"
            dpkg-deb -Znone --root-owner-group --build "$tree" "$out" > /dev/null
            printf '%s\n' --deb "$suite=$out"
        done
    done
    rm -rf "$tree"
}

setup() {
    version=$(program_version)
    work=$BATS_TEST_TMPDIR
    mapfile -t repo_debs < "$BATS_FILE_TMPDIR/debs"
    key=$(new_key "$work/gnupg" resend-test)
}

teardown() {
    [[ -z ${server_pid:-} ]] || kill "$server_pid" 2> /dev/null || true
}

# new_key GNUPGHOME NAME: a throwaway signing key; prints its fingerprint.
new_key() {
    mkdir -p "$1" && chmod 0700 "$1"
    GNUPGHOME=$1 gpg --batch --quiet --passphrase '' --quick-gen-key "$2 <$2@example.org>" ed25519 sign never 2> /dev/null
    GNUPGHOME=$1 gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "fpr" && !found { print $10; found = 1 }'
}
# apt_private DIR COMMAND ARGS...: apt with its state, cache, lists and sources all under DIR.
apt_private() {
    local d=$1
    shift
    apt-get -q -o Dir::State="$d/state" -o Dir::State::status="$d/status" -o Dir::Cache="$d/cache" \
        -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$d/sources.list.d" \
        -o Dir::Etc::Trusted=/dev/null -o Dir::Etc::TrustedParts="$d/trusted.gpg.d" \
        -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts="$d/preferences.d" \
        -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 -o APT::Architectures::=armhf \
        -o Debug::NoLocking=1 -o APT::Sandbox::User=root -o Acquire::Languages=none \
        -o Acquire::http::Proxy::127.0.0.1=DIRECT "$@"
}
apt_private_setup() { # apt_private_setup DIR SOURCES_FILE
    rm -rf "$1" && mkdir -p "$1/state/lists/partial" "$1/cache/archives/partial" "$1/sources.list.d" "$1/trusted.gpg.d" "$1/preferences.d"
    touch "$1/status"
    cp "$2" "$1/sources.list.d/resend-button.sources"
}
publish() { # publish OUTPUT LOG ARGS...
    local output=$1 log=$2
    shift 2
    GNUPGHOME=$work/gnupg scripts/publish-repo --output "$output" --key "$key" "$@" > "$log" 2>&1
}

@test "publish-repo: apt updates from it on 127.0.0.1, verifies its signature (Signed-By), finds arm64, armhf and amd64 in bookworm and trixie" {
    publish "$work/repo" "$work/publish.log" --architectures "${repo_arches[*]}" --url http://127.0.0.1:PORT/ "${repo_debs[@]}" \
        || { cat "$work/publish.log"; false; }
    assert_equal "$(tail -n 1 "$work/publish.log")" "$work/repo"
    # Served on a loopback port by a plain static server.
    local port tries=0
    port=$(free_port)
    python3 -m http.server --bind 127.0.0.1 --directory "$work/repo" "$port" > "$work/http.log" 2>&1 &
    server_pid=$!
    until python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/resend-button.gpg')" 2> /dev/null; do
        ((++tries < 50)) || { cat "$work/http.log"; fail "the server did not come up"; }
        sleep 0.1
    done
    local suite arch suffix shown
    for suite in bookworm trixie; do
        suffix=+deb12
        [[ $suite == trixie ]] && suffix=+deb13
        # The device's two files: the keyring (Signed-By) and the suite's .sources.
        sed -e "s|^URIs: .*|URIs: http://127.0.0.1:$port/|" \
            -e "s|^Signed-By: .*|Signed-By: $work/repo/resend-button.gpg|" "$work/repo/$suite.sources" > "$work/$suite.sources"
        apt_private_setup "$work/apt-$suite" "$work/$suite.sources"
        # Any warning (unsigned, weak digest, a missing index) fails the test.
        run apt_private "$work/apt-$suite" update
        assert_success
        refute_line --regexp '^(W|E):'
        for arch in "${repo_arches[@]}"; do
            run apt_private "$work/apt-$suite" -qq --print-uris download "resend-button:$arch"
            assert_success
            assert_equal "${#lines[@]}" 1
            shown=$(apt-cache -o Dir::State="$work/apt-$suite/state" -o Dir::State::status="$work/apt-$suite/status" \
                -o Dir::Cache="$work/apt-$suite/cache" -o Dir::Etc::SourceList=/dev/null \
                -o Dir::Etc::SourceParts="$work/apt-$suite/sources.list.d" \
                -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 -o APT::Architectures::=armhf \
                show "resend-button:$arch" 2>&1)
            grep -qx "Version: $version$suffix" <<< "$shown" || fail "$suite: resend-button:$arch is not version $version$suffix: $shown"
        done
    done
    # The same repository with another key in Signed-By: apt refuses it.
    local other
    other=$(new_key "$work/gnupg-other" someone-else)
    GNUPGHOME=$work/gnupg-other gpg --batch --export "$other" > "$work/other.gpg"
    sed "s|^Signed-By: .*|Signed-By: $work/other.gpg|" "$work/bookworm.sources" > "$work/other.sources"
    apt_private_setup "$work/apt-other" "$work/other.sources"
    run apt_private "$work/apt-other" update
    assert_output --regexp 'NO_PUBKEY|is not signed'
}

@test "publish-repo refuses (65) and writes nothing when a suite lacks an architecture, or when a new publication would drop one it had" {
    local incomplete=() item before
    # Everything but trixie's armhf.
    for ((item = 0; item < ${#repo_debs[@]}; item += 2)); do
        [[ ${repo_debs[item + 1]} == trixie=*_armhf.deb ]] || incomplete+=(--deb "${repo_debs[item + 1]}")
    done
    run publish "$work/repo-incomplete" "$work/incomplete.log" --architectures "${repo_arches[*]}" "${incomplete[@]}"
    assert_failure 65
    assert_not_exist "$work/repo-incomplete"
    expect_contains "$work/incomplete.log" "publish-repo: refused: trixie has no package for armhf" "nothing was published"
    # A complete repository, then a new publication of it without armhf.
    publish "$work/repo" "$work/publish.log" --architectures "${repo_arches[*]}" "${repo_debs[@]}" || { cat "$work/publish.log"; false; }
    assert_file_exists "$work/repo/dists/trixie/Release"
    before=$(cd "$work/repo" && find . -type f -printf '%p %s %T@\n' | sort)
    # Every package but the armhf ones: only the rule of what was published before can refuse it.
    local without_armhf=()
    for ((item = 0; item < ${#repo_debs[@]}; item += 2)); do
        [[ ${repo_debs[item + 1]} == *_armhf.deb ]] || without_armhf+=(--deb "${repo_debs[item + 1]}")
    done
    run publish "$work/repo" "$work/dropped.log" --architectures "arm64 amd64" "${without_armhf[@]}"
    assert_failure 65
    expect_contains "$work/dropped.log" "was published for armhf before, and --architectures (arm64 amd64) leaves it out"
    [[ $before == "$(cd "$work/repo" && find . -type f -printf '%p %s %T@\n' | sort)" ]] || fail "the repository changed"
}
