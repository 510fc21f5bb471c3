// Linux input devices (evdev): the ioctls and the kernel's struct input_event, whose layout
// depends on the C library's time_t (include/uapi/linux/input.h), read here so Swift sees one
// fixed layout. Conventions: -1 with errno set on failure.
#ifndef RB_EVDEV_H
#define RB_EVDEV_H

#include <stdint.h>

// The module's one header for scripts/cross-build's module map (it takes the first): the rest
// of the shim is included from here.
#include "rb_inotify.h"

/// One event as read from the device, its time in nanoseconds on the clock set by
/// rb_evdev_open (CLOCK_MONOTONIC).
struct rb_input_event {
    int64_t time_ns;
    int32_t value;
    uint16_t type;
    uint16_t code;
};

/// Opens `path` read-only, non-blocking and close-on-exec, without following a final symbolic
/// link unless `follow_links` (the /dev/input/by-path and by-id names are links), and asks for
/// CLOCK_MONOTONIC event times (EVIOCSCLOCKID; drivers/input/evdev.c, evdev_set_clk_type).
/// Returns the descriptor.
int rb_evdev_open(const char *path, int follow_links);
/// Takes the device exclusively (EVIOCGRAB 1: no other reader, the console included, gets its
/// events) or lets it go (0).
int rb_evdev_grab(int fd, int grab);
/// Reads the pending events into `events` (at most `capacity`): their number, 0 when none is
/// pending (EAGAIN); -1 with errno ENODEV once the device is gone (unplugged). End of file (which
/// evdev never gives; a pipe standing in for a device gives it when its writer closed) is ENODEV
/// too: the device is gone.
int rb_evdev_read(int fd, struct rb_input_event *events, int capacity);
/// The device's name (EVIOCGNAME) into `name` (NUL-terminated, at most `size` bytes).
int rb_evdev_name(int fd, char *name, int size);
/// The key codes the device can report (EVIOCGBIT(EV_KEY)): a bit per code, code N in bit N % 8
/// of byte N / 8, into `bits` (`size` bytes, zeroed first). Returns the bytes the kernel filled.
int rb_evdev_key_bits(int fd, uint8_t *bits, int size);
/// The keys down now (EVIOCGKEY; drivers/input/evdev.c, evdev_handle_get_val: the device's key
/// bitmap under its event lock), in the layout of rb_evdev_key_bits. Returns the bytes filled.
int rb_evdev_key_state(int fd, uint8_t *bits, int size);

#endif
