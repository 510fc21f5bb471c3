# shellcheck shell=sh disable=SC2154 # adapter_name, adapter_keys, adapter_bad_input_status: set by the caller
# Sourced by the adapters in this directory (verify-api, gsm, totp), never run on its own.
#
# adapter_config NAME [FILE]: loads the adapter's configuration into variables cfg_KEY.
#   The file is FILE when given, else $CREDENTIALS_DIRECTORY/NAME.conf when systemd's
#   LoadCredential= provides it, else /etc/resend-button/NAME.conf. It must be a regular file that
#   neither its group nor others may read (mode 600 or 400; a credential from LoadCredential= is
#   0400): anything else exits 78 with a message naming the file and the mode. Lines are
#   `key = value` (spaces around = and at the ends are dropped), `#` starts a comment line. A key
#   not in $adapter_keys, a value with a double quote or a backslash (values are handed to curl
#   and templates unquoted) or a line without = exits 78 naming the file and line.
# adapter_fail STATUS MESSAGE...: prints "NAME: MESSAGE" on standard error and exits STATUS.
# adapter_read_code: reads one line of 1 to 32 digits from standard input into $code; anything
#   else exits $adapter_bad_input_status (the code itself is never printed).
# adapter_json ANSWER KEY...: reads a service's answer ANSWER (JSON) and sets json_KEY to the
#   value of each top-level member KEY: a string as it is when it is 1 to 64 printable ASCII
#   characters without spaces, quotes or backslashes (else "?"; "true" and "false" as strings are
#   "?" too, never the booleans), an integer, true or false, and
#   empty when the member is missing or null (an array, an object or a fraction is "?"). Only the
#   top level counts: a "status" inside an array or an object is not the answer's status. Returns
#   1, setting nothing, when the answer is not one JSON object, repeats a key (which one would
#   count is anyone's guess) or is over 1 MiB. The parser is python3's json module: installed
#   on every Raspberry Pi OS, and Debian's python3 package elsewhere (python3-minimal lacks it:
#   exit 78).
# Callers set adapter_name, adapter_keys (space-separated) and adapter_bad_input_status first.

adapter_fail() {
    adapter_status=$1
    shift
    printf '%s: %s\n' "$adapter_name" "$*" >&2
    exit "$adapter_status"
}

adapter_config() {
    if [ -n "${2:-}" ]; then
        adapter_file=$2
    elif [ -n "${CREDENTIALS_DIRECTORY:-}" ] && [ -e "$CREDENTIALS_DIRECTORY/$1.conf" ]; then
        adapter_file=$CREDENTIALS_DIRECTORY/$1.conf
    else
        adapter_file=/etc/resend-button/$1.conf
    fi
    [ -e "$adapter_file" ] || adapter_fail 78 "$adapter_file: no such file (the adapter's configuration: KEY = VALUE lines, see the header of $0)"
    [ -f "$adapter_file" ] || adapter_fail 78 "$adapter_file: not a regular file"
    adapter_mode=$(stat -L -c %a "$adapter_file") || adapter_fail 78 "$adapter_file: cannot stat it"
    case $adapter_mode in
        *00) ;;
        *) adapter_fail 78 "$adapter_file: mode $adapter_mode lets its group or others read it; it holds credentials: chmod 600 it (owner the service user, or root with LoadCredential=)" ;;
    esac
    [ -r "$adapter_file" ] || adapter_fail 78 "$adapter_file: cannot be read by user $(id -un) (mode $adapter_mode, owner $(stat -L -c %U "$adapter_file")): chown it to the service user, or load it with LoadCredential="
    adapter_line=0
    while IFS= read -r adapter_text || [ -n "$adapter_text" ]; do
        adapter_line=$((adapter_line + 1))
        adapter_text=${adapter_text#"${adapter_text%%[! 	]*}"}
        case $adapter_text in
            '' | '#'*) continue ;;
            *=*) ;;
            *) adapter_fail 78 "$adapter_file:$adapter_line: expected 'key = value'" ;;
        esac
        adapter_key=${adapter_text%%=*}
        adapter_key=${adapter_key%"${adapter_key##*[! 	]}"}
        adapter_value=${adapter_text#*=}
        adapter_value=${adapter_value#"${adapter_value%%[! 	]*}"}
        adapter_value=${adapter_value%"${adapter_value##*[! 	]}"}
        case " $adapter_keys " in
            *" $adapter_key "*) ;;
            *) adapter_fail 78 "$adapter_file:$adapter_line: unknown key '$adapter_key' (known: $adapter_keys)" ;;
        esac
        case $adapter_value in
            *'"'* | *\\*) adapter_fail 78 "$adapter_file:$adapter_line: $adapter_key: a value may not hold a double quote or a backslash" ;;
        esac
        eval "cfg_$adapter_key=\$adapter_value"
    done < "$adapter_file"
}

# adapter_require KEY...: exits 78 when one of the keys is missing or empty.
adapter_require() {
    for adapter_key in "$@"; do
        eval "adapter_value=\${cfg_$adapter_key:-}"
        [ -n "$adapter_value" ] || adapter_fail 78 "$adapter_file: $adapter_key is missing"
    done
}

# adapter_seconds KEY DEFAULT MAX: cfg_KEY as whole seconds 1..MAX (DEFAULT when unset), else 78.
adapter_seconds() {
    eval "adapter_value=\${cfg_$1:-$2}"
    case $adapter_value in
        '' | *[!0-9]* | 0*) adapter_fail 78 "$adapter_file: $1: expected whole seconds from 1 to $3, got '$adapter_value'" ;;
    esac
    if [ "${#adapter_value}" -gt 6 ] || [ "$adapter_value" -gt "$3" ]; then
        adapter_fail 78 "$adapter_file: $1: expected whole seconds from 1 to $3, got '$adapter_value'"
    fi
    eval "cfg_$1=\$adapter_value"
}

adapter_json() {
    command -v python3 > /dev/null || adapter_fail 78 "python3 is missing (apt install python3)"
    adapter_json_input=$1
    adapter_json_status=
    shift
    adapter_json_text=$(printf '%s' "$adapter_json_input" | python3 -I -S -c '
import json, sys
data = sys.stdin.buffer.read(1048577)
if len(data) > 1048576:
    sys.exit(3)
def unique(pairs):
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a repeated key")
    return dict(pairs)
try:
    answer = json.loads(data.decode("utf-8"), object_pairs_hook=unique)
except (ValueError, RecursionError):
    sys.exit(3)
if not isinstance(answer, dict):
    sys.exit(3)
for key in sys.argv[1:]:
    value = answer.get(key)
    if value is None:
        print("")
    elif value is True or value is False:
        print("true" if value else "false")
    elif isinstance(value, int) and abs(value) < 10**18:
        print(value)
    elif isinstance(value, str) and value not in ("true", "false") and 0 < len(value) <= 64 and all("!" <= c <= "~" and c not in "\"\\\x27" for c in value):
        print(value)
    else:
        print("?")
print(".")
' "$@") || adapter_json_status=$?
    adapter_json_input=
    case ${adapter_json_status:-0} in
        0) ;;
        3) return 1 ;;
        *) adapter_fail 78 "python3 cannot read JSON (exit $adapter_json_status): apt install python3" ;;
    esac
    for adapter_json_key in "$@"; do
        # shellcheck disable=SC2034 # read by the eval below
        adapter_json_value=${adapter_json_text%%"
"*}
        adapter_json_text=${adapter_json_text#*"
"}
        eval "json_$adapter_json_key=\$adapter_json_value"
    done
}

adapter_read_code() {
    code=
    IFS= read -r code || [ -n "$code" ] || adapter_fail "$adapter_bad_input_status" "standard input: no code (expected one line of digits)"
    case $code in
        '' | *[!0-9]*) code=; adapter_fail "$adapter_bad_input_status" "standard input: expected one line of digits" ;;
    esac
    [ "${#code}" -le 32 ] || { code=; adapter_fail "$adapter_bad_input_status" "standard input: more than 32 digits"; }
}
