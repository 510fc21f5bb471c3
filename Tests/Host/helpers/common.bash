# shellcheck shell=bash
# What every host-side check (Tests/Host/*.bats) shares: `load helpers/common` at the top of a file.
#
# - bats-support, bats-assert and bats-file (Debian's packages, /usr/lib/bats);
# - pipefail (bats sets errexit for each test: every failing command fails its test, and with
#   pipefail a failing command inside a pipeline does too);
# - the working directory is the repository root, $REPO;
# - the binaries under test, built (incrementally) only when a file asks for one:
#     debug_binary     $RESEND_BINARY, else `swift build --product resend-button`'s (debug)
#     release_binary   $RESEND_RELEASE_BINARY, else scripts/release-build's (static release)
#   Call them from setup_file and export what they print, so a file builds once.
# - expect_contains FILE TEXT...: every TEXT occurs in FILE (fixed strings), naming the first missing.
# - free_port: a free TCP port on 127.0.0.1.
bats_load_library bats-support
bats_load_library bats-assert
bats_load_library bats-file
set -o pipefail

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
cd "$REPO" || exit 1

debug_binary() {
    if [[ -n ${RESEND_BINARY:-} ]]; then
        echo "$RESEND_BINARY"
        return
    fi
    # Warnings are errors, as in scripts/test (the same flags: neither rebuilds the other's products).
    RESEND_STRICT=${RESEND_STRICT:-1} swift build --product resend-button > "$BATS_FILE_TMPDIR/debug-build.log" 2>&1 \
        || { cat "$BATS_FILE_TMPDIR/debug-build.log" >&2; return 1; }
    echo "$(RESEND_STRICT=${RESEND_STRICT:-1} swift build --show-bin-path)/resend-button"
}

release_binary() {
    if [[ -n ${RESEND_RELEASE_BINARY:-} ]]; then
        echo "$RESEND_RELEASE_BINARY"
        return
    fi
    scripts/release-build 2> "$BATS_FILE_TMPDIR/release-build.log" || { cat "$BATS_FILE_TMPDIR/release-build.log" >&2; return 1; }
}

expect_contains() {
    local file=$1 text
    shift
    for text in "$@"; do
        grep -qF -- "$text" "$file" || { echo "missing in $file: $text"; return 1; }
    done
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# build_deb DIR [ARGS...]: scripts/package of the release binary ($RESEND_RELEASE_BINARY) into DIR
# (its log in DIR.log); prints the .deb's path.
build_deb() {
    local dir=$1
    shift
    scripts/package --binary "$RESEND_RELEASE_BINARY" --output "$dir" "$@" > "$dir.log" 2>&1 || { cat "$dir.log" >&2; return 1; }
    tail -n 1 "$dir.log"
}

# shared_deb [SUFFIX]: the package of the release binary (with --version-suffix SUFFIX), built
# once per bats run (in $BATS_RUN_TMPDIR, shared by the files of one `bats` call; its log is
# beside it, .log); prints its path. A failed build fails every call.
shared_deb() {
    local dir=$BATS_RUN_TMPDIR/deb${1:-}
    if [[ ! -f $dir.path ]]; then
        build_deb "$dir" ${1:+--version-suffix "$1"} > "$dir.path" || { rm -f "$dir.path"; return 1; }
    fi
    cat "$dir.path"
}

# program_version: the version the package carries (programVersion, Sources/ResendDevice/ProgramVersion.swift).
program_version() { sed -n 's/^public let programVersion = "\(.*\)"$/\1/p' Sources/ResendDevice/ProgramVersion.swift; }
