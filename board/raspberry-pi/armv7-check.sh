# shellcheck shell=sh
# armv7_problem CPUINFO: returns 0 and prints nothing when the CPUs that the file CPUINFO (the
# text of /proc/cpuinfo) describes are ARMv7 or later; otherwise prints why not, one line, and
# returns 1. The armhf package is built for ARMv7 (Debian's armhf libc and start files are too),
# yet 32-bit Raspberry Pi OS on a Pi 1, Zero or Zero W (ARM1176, ARMv6) also says armhf.
#
# What the kernels print (arch/arm/kernel/setup.c, arch/arm64/kernel/cpuinfo.c):
# - a 32-bit kernel: "model name : ARMv6-compatible processor rev 7 (v6l)" on ARMv6, "ARMv7
#   Processor rev 4 (v7l)" on ARMv7; "CPU architecture: 7" on both (it is no ARM version there);
# - a 64-bit kernel to a 32-bit process: "model name : ARMv8 Processor rev 3 (v8l)"; to a
#   64-bit one no model name, "CPU architecture: 8".
# Sourced by scripts/deploy and copied into the package's preinst by scripts/package.
armv7_problem() {
    [ -r "$1" ] || { echo "cannot read $1"; return 1; }
    awk '
        /^model name[ \t]*:/ {
            model = $0
            sub(/^[^:]*:[ \t]*/, "", model)
            if (match(model, /\(v[0-9]+/)) {
                v = substr(model, RSTART + 2, RLENGTH - 2) + 0
                if (lowest == "" || v < lowest) { lowest = v; lowest_model = model }
            }
        }
        /^CPU part[ \t]*:/ && $NF == "0xb76" { arm1176 = 1 }
        /^CPU architecture[ \t]*:/ { architecture = ($NF == "AArch64") ? 8 : $NF + 0 }
        END {
            if (lowest != "" && lowest < 7) { printf "the CPU is ARMv%d (model name: %s)\n", lowest, lowest_model; exit 1 }
            if (arm1176) { print "the CPU is an ARM1176 (CPU part 0xb76), which is ARMv6"; exit 1 }
            if (lowest != "" || architecture >= 8) exit 0
            if (architecture > 0) { printf "the CPU says \"CPU architecture: %d\" and no model name, which does not tell ARMv6 from ARMv7\n", architecture; exit 1 }
            print "it names no ARM CPU (no model name with a version, no CPU architecture)"
            exit 1
        }' "$1"
}
