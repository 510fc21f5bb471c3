# vm-test's results as TAP (version 12, the plan last): one test per row of .cache/vm/results.tsv
# (a header line, then `variant id result seconds reason`, tab-separated), named `VARIANT ID`:
#   ok 1 x86_64-v1 1 (3.2 s) one countdown of 3.000 s
#   not ok 2 x86_64-v1 2 (4.0 s) the LED stayed on
#   ok 3 arm64-v1 9 # skip no uinput in this kernel
#   1..3
# A `boot` row (a guest that failed without a failing scenario) is a failing test too.
#   awk -F '\t' -f vm/results-tap.awk .cache/vm/results.tsv
BEGIN { FS = "\t" }
NR == 1 { next }
{
    n++
    if ($3 == "skip") {
        printf "ok %d %s %s # skip %s\n", n, $1, $2, $5
    } else {
        printf "%s %d %s %s (%s s) %s\n", ($3 == "pass" ? "ok" : "not ok"), n, $1, $2, $4, $5
    }
}
END { printf "1..%d\n", n }
