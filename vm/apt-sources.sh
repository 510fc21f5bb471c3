# shellcheck shell=bash
# The Debian mirror the guests' packages come from, taken from this machine's own apt
# configuration, so vm-test follows whatever mirror or caching proxy the machine is set up with
# and the repository names none. Sourced by scripts/vm-test (the arm64 and systemd guests use it).
#
#   apt_mirror SUITE [VARIABLE]
# prints the URI of the machine's apt source that serves SUITE (e.g. bookworm, bookworm-security,
# bookworm-backports), without a trailing slash: the first enabled `deb` entry, in apt's order
# (sources.list, then sources.list.d/*.list and *.sources by name), whose suites include SUITE.
# A `-backports` or `-updates` suite that no entry names is taken from the entry of its release
# (Debian serves them from the same archive). When VARIABLE is given and set in the environment,
# its value wins (an explicit override). Otherwise, when no entry serves SUITE: one line on stderr
# naming the suite and the files looked at, status 1.
#
#   apt_http_proxy
# prints apt's Acquire::http::Proxy (empty when none), for tools that do not read apt's
# configuration (debootstrap reads http_proxy).
#
# Where: apt-config's Dir::Etc::SourceList and Dir::Etc::SourceParts (/etc/apt/sources.list and
# /etc/apt/sources.list.d when apt-config is missing); APT_SOURCES_LIST and APT_SOURCES_PARTS, when
# set, replace them (for trying a configuration). Both formats: one-line (`deb [options] URI SUITE
# COMPONENT...`) and deb822 (`Types:`, `URIs:`, `Suites:`, `Enabled: no` skipped; continuation
# lines and comments allowed). Only http, https and file URIs count (what debootstrap and apt both
# fetch from); cdrom: and the like are skipped.

apt_source_files() { # prints the source files apt reads, in its order
    local list=${APT_SOURCES_LIST:-} parts=${APT_SOURCES_PARTS:-} settings
    if [[ -z $list || -z $parts ]] && command -v apt-config >/dev/null; then
        settings=$(apt-config shell apt_list Dir::Etc::SourceList/f apt_parts Dir::Etc::SourceParts/d 2>/dev/null) || settings=
        local apt_list='' apt_parts=''
        eval "$settings"
        list=${list:-$apt_list}
        parts=${parts:-$apt_parts}
    fi
    list=${list:-/etc/apt/sources.list}
    parts=${parts:-/etc/apt/sources.list.d}
    parts=${parts%/}
    [[ -f $list ]] && printf '%s\n' "$list"
    if [[ -d $parts ]]; then
        local file
        for file in "$parts"/*; do
            case $file in *.list | *.sources) [[ -f $file ]] && printf '%s\n' "$file" ;; esac
        done
    fi
    return 0
}

apt_sources() { # prints "URI SUITE" per enabled deb entry and suite, in apt's order
    local file
    while IFS= read -r file; do
        case $file in
            *.sources)
                awk '
                    function flush(   i, j, nu, ns, u, s, types, t, deb) {
                        if (enabled != "no") {
                            nt = split(field["types"], t, " "); deb = 0
                            for (i = 1; i <= nt; i++) if (t[i] == "deb") deb = 1
                            if (deb) {
                                nu = split(field["uris"], u, " "); ns = split(field["suites"], s, " ")
                                for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print u[i], s[j]
                            }
                        }
                        delete field; enabled = ""; last = ""
                    }
                    /^#/ { next }
                    /^[ \t]*$/ { flush(); next }
                    /^[ \t]/ { if (last != "") field[last] = field[last] " " $0; next }
                    {
                        name = tolower(substr($0, 1, index($0, ":") - 1)); value = substr($0, index($0, ":") + 1)
                        gsub(/^[ \t]+|[ \t]+$/, "", value)
                        if (name == "enabled") enabled = tolower(value)
                        field[name] = value; last = name
                    }
                    END { flush() }' "$file"
                ;;
            *)
                awk '
                    { sub(/#.*/, "") }
                    $1 == "deb" {
                        i = 2
                        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                        if (i + 1 <= NF) print $i, $(i + 1)
                    }' "$file"
                ;;
        esac
    done < <(apt_source_files)
}

apt_mirror() {
    local suite=$1 variable=${2:-} release uri
    if [[ -n $variable && -n ${!variable:-} ]]; then
        printf '%s\n' "${!variable%/}"
        return 0
    fi
    release=$suite
    case $suite in *-backports | *-updates) release=${suite%-*} ;; esac
    uri=$(apt_sources | awk -v suite="$suite" -v release="$release" '
        $1 !~ /^(https?:\/\/|file:\/)/ { next }
        $2 == suite && exact == "" { exact = $1 }
        $2 == release && fallback == "" { fallback = $1 }
        END { if (exact != "") print exact; else if (fallback != "") print fallback }')
    if [[ -z $uri ]]; then
        local files
        files=$(apt_source_files | paste -sd, - | sed 's/,/, /g')
        printf 'vm-test: no apt source of this machine serves the suite %s (looked in: %s); add a deb entry for it%s\n' \
            "$suite" "${files:-no sources files found}" "${variable:+ or set $variable to a mirror URI}" >&2
        return 1
    fi
    printf '%s\n' "${uri%/}"
}

apt_http_proxy() {
    command -v apt-config >/dev/null || return 0
    local proxy=''
    eval "$(apt-config shell proxy Acquire::http::Proxy 2>/dev/null)"
    [[ $proxy == DIRECT ]] && proxy=''
    printf '%s\n' "$proxy"
}
