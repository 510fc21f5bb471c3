# shellcheck shell=bash
# The keypad's part of scripts/vm-test, host side (sourced by vm-test after its helpers; issue 14):
# - keypad_build: compiles vm/uinput-keypad.c (gcc -static) into .cache/vm/uinput-keypad when the
#   source changed;
# - keypad_pack STAGING: adds to a busybox guest's initramfs vm/keypad.sh (the scenarios),
#   uinput-keypad, our gpio-keymatrix.ko (vm/module) and Debian's uinput.ko and evdev.ko (both
#   modules in Debian's kernel: CONFIG_INPUT_UINPUT=m, CONFIG_INPUT_EVDEV=m). A missing module
#   (e.g. a kernel cache made before the keypad came) is left out: vm/keypad.sh then SKIPs what
#   needs it and says so.
# Uses vm-test's $cache, $module_dir, $kernel_dir and step.
# shellcheck disable=SC2154 # those come from scripts/vm-test

keypad_tool=$cache/uinput-keypad

keypad_build() {
    if [[ ! -x $keypad_tool || vm/uinput-keypad.c -nt $keypad_tool ]]; then
        step "uinput-keypad (gcc -static)"
        gcc -static -O2 -Wall -Wextra -Werror -o "$keypad_tool.tmp" vm/uinput-keypad.c
        mv "$keypad_tool.tmp" "$keypad_tool"
    fi
}

keypad_pack() { # keypad_pack STAGING
    local staging=$1 ko
    install -m 0644 vm/keypad.sh "$staging/vm/"
    install -D -m 0755 "$keypad_tool" "$staging/usr/bin/uinput-keypad"
    for ko in "$module_dir/gpio-keymatrix.ko" "$kernel_dir/modules/uinput.ko" "$kernel_dir/modules/evdev.ko"; do
        if [[ -f $ko ]]; then cp "$ko" "$staging/lib/modules/vm/"; fi
    done
}
