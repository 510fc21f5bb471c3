// Watching a directory for entries that appear (inotify(7)): how an unplugged input device is
// seen coming back without a timer. Conventions: -1 with errno set on failure.
#ifndef RB_INOTIFY_H
#define RB_INOTIFY_H

/// An inotify instance, non-blocking and close-on-exec (inotify_init1).
int rb_inotify_open(void);
/// Watches the directory `path` (IN_ONLYDIR; a final symbolic link is followed) for entries
/// created, moved in or changed in their attributes (udev sets an input node's group and mode
/// after devtmpfs created it), and for the directory itself being deleted or moved away. Returns
/// the watch descriptor; adding the same directory again returns the same one.
int rb_inotify_watch_directory(int fd, const char *path);
/// Removes a watch (EINVAL when the kernel already dropped it: the directory was deleted).
int rb_inotify_unwatch(int fd, int watch);
/// Reads and discards every pending event: the number of events read, 0 when none (EAGAIN).
int rb_inotify_drain(int fd);

#endif
