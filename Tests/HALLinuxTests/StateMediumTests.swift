import Glibc
import HAL
import Testing

@testable import HALLinux

/// /proc/self/mountinfo of a Raspberry Pi OS root with raspi-config's "Overlay File System" on
/// (the overlayroot initramfs hook: the SD card's root read-only at /media/root-ro, the upper layer
/// on a tmpfs at /media/root-rw), with /boot/firmware and the usual tmpfs mounts.
private let overlayRoot = """
    22 1 0:21 / / rw,relatime shared:1 - overlay overlayroot rw,lowerdir=/media/root-ro,upperdir=/media/root-rw/overlay,workdir=/media/root-rw/overlay-workdir
    23 22 179:2 / /media/root-ro ro,relatime shared:2 - ext4 /dev/mmcblk0p2 ro
    24 22 0:20 / /media/root-rw rw,relatime shared:3 - tmpfs tmpfs-root rw
    25 22 0:5 / /dev rw,nosuid,relatime shared:4 - devtmpfs udev rw,size=187640k
    26 22 0:24 / /run rw,nosuid,nodev,noexec,relatime shared:5 - tmpfs tmpfs rw,size=44028k,mode=755
    27 22 179:1 / /boot/firmware rw,relatime shared:6 - vfat /dev/mmcblk0p1 rw,fmask=0022,dmask=0022

    """

/// The same with a persistent partition for the state bind-mounted at /var/lib/resend-button.
private let overlayRootWithStatePartition =
    overlayRoot + """
        30 22 179:3 /resend-button /var/lib/resend-button rw,relatime shared:9 - ext4 /dev/mmcblk0p3 rw

        """

/// A plain SD card root, /tmp on tmpfs, log2ram-style /var/log on zram.
private let diskRoot = """
    22 1 179:2 / / rw,noatime shared:1 - ext4 /dev/mmcblk0p2 rw
    26 22 0:24 / /tmp rw,nosuid,nodev shared:5 - tmpfs tmpfs rw
    28 22 254:0 / /var/log rw,relatime shared:7 - ext4 /dev/zram0 rw
    29 22 0:30 / /srv/my\\040state rw,relatime shared:8 - ramfs none rw

    """

/// A container: an overlay root whose upper layer lives on the host, out of sight.
private let containerRoot = """
    600 500 0:52 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/ABC,upperdir=/var/lib/docker/overlay2/abc/diff,workdir=/var/lib/docker/overlay2/abc/work
    601 600 0:55 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw

    """

private let tmpfs = Syscall.Outcome.succeed(Int(StateMedium.tmpfsMagic))
private let overlay = Syscall.Outcome.succeed(Int(StateMedium.overlayMagic))
private let ext4 = Syscall.Outcome.succeed(0xEF53)  // EXT4_SUPER_MAGIC
private func device(_ major: Int, _ minor: Int) -> Syscall.Outcome { .succeed(major << 32 | minor) }

@Suite("the state directory's medium: does it survive a power cut (statfs and mountinfo, scripted)")
struct StateMediumTests {
    @Test("a state directory on tmpfs forgets; the summary names the directory, the mount and its source")
    func tmpfsForgets() {
        let (medium, unused) = Syscall.withScript([tmpfs, device(0, 24)]) {
            StateMedium.of(stateFile: "/tmp/resend/state.json", mountinfo: diskRoot)
        }
        #expect(unused == 0)
        #expect(medium.verdict == .forgets)
        #expect(medium.summary == "/tmp/resend is on tmpfs (mount /tmp, source tmpfs)")
    }

    @Test("a state directory not made yet is judged by its nearest existing parent")
    func missingDirectoryWalksUp() {
        let (medium, unused) = Syscall.withScript([.fail(ENOENT), .fail(ENOENT), tmpfs, device(0, 24)]) {
            StateMedium.of(stateFile: "/tmp/a/b/state.json", mountinfo: diskRoot)
        }
        #expect(unused == 0)
        #expect(medium.verdict == .forgets)
        #expect(medium.directory == "/tmp")
    }

    @Test("the Raspberry Pi overlay root (upper layer on tmpfs) forgets; the summary names the upper layer")
    func raspberryPiOverlayForgets() {
        let (medium, unused) = Syscall.withScript([overlay, device(0, 21), tmpfs]) {
            StateMedium.of(stateFile: "/var/lib/resend-button/state.json", mountinfo: overlayRoot)
        }
        #expect(unused == 0)
        #expect(medium.verdict == .forgets)
        #expect(
            medium.summary
                == "/var/lib/resend-button is on overlay (mount /, source overlayroot) whose upper layer /media/root-rw/overlay is on tmpfs")
    }

    @Test("an overlay whose upper directory cannot be statted is judged by the mount holding that path (tmpfs-root at /media/root-rw)")
    func overlayUpperByMountinfo() {
        let (medium, _) = Syscall.withScript([overlay, device(0, 21), .fail(EACCES)]) {
            StateMedium.of(stateFile: "/var/lib/resend-button/state.json", mountinfo: overlayRoot)
        }
        #expect(medium.verdict == .forgets)
        #expect(medium.upperFileSystem == "tmpfs")
    }

    @Test("the overlay root with the state's partition bind-mounted at /var/lib/resend-button is durable")
    func bindMountedPartitionIsDurable() {
        let (medium, unused) = Syscall.withScript([ext4, device(179, 3)]) {
            StateMedium.of(stateFile: "/var/lib/resend-button/state.json", mountinfo: overlayRootWithStatePartition)
        }
        #expect(unused == 0)
        #expect(medium.verdict == .durable)
        #expect(medium.summary == "/var/lib/resend-button is on ext4 (mount /var/lib/resend-button, source /dev/mmcblk0p3)")
    }

    @Test("ext4 on the SD card is durable; ext4 on zram and a ramfs (mount point with an escaped space) forget")
    func blockDevicesAndRamfs() {
        let (disk, _) = Syscall.withScript([ext4, device(179, 2)]) {
            StateMedium.of(stateFile: "/var/lib/resend-button/state.json", mountinfo: diskRoot)
        }
        #expect(disk.verdict == .durable)
        let (zram, _) = Syscall.withScript([ext4, device(254, 0)]) { StateMedium.of(stateFile: "/var/log/resend/state.json", mountinfo: diskRoot) }
        #expect(zram.verdict == .forgets)
        #expect(zram.summary == "/var/log/resend is on ext4 (mount /var/log, source /dev/zram0)")
        let (ramfs, _) = Syscall.withScript([.succeed(Int(StateMedium.ramfsMagic)), device(0, 30)]) {
            StateMedium.of(stateFile: "/srv/my state/state.json", mountinfo: diskRoot)
        }
        #expect(ramfs.verdict == .forgets)
        #expect(ramfs.mount?.mountPoint == "/srv/my state")
    }

    @Test("a container's overlay root, its upper layer out of sight, is unknown, not durable")
    func containerOverlayIsUnknown() {
        let (medium, _) = Syscall.withScript([overlay, device(0, 52), .fail(ENOENT)]) {
            StateMedium.of(stateFile: "/var/lib/resend-button/state.json", mountinfo: containerRoot)
        }
        #expect(medium.verdict == .unknown)
        #expect(medium.summary.hasSuffix("whose upper layer /var/lib/docker/overlay2/abc/diff is on an unknown file system"))
    }

    @Test("statfs failing (EACCES) falls back to mountinfo's type for the mount of the path")
    func statfsFailureFallsBackToMountinfo() {
        let (medium, _) = Syscall.withScript([.fail(EACCES), .fail(EACCES)]) {
            StateMedium.of(stateFile: "/tmp/x/state.json", mountinfo: diskRoot)
        }
        #expect(medium.verdict == .forgets)
        #expect(medium.fileSystem == "tmpfs")
    }

    @Test("the real calls: this machine's /proc/self/mountinfo parses and names the mount of /")
    func realMachine() {
        let medium = StateMedium.of(stateFile: "/state.json")
        #expect(medium.mount?.mountPoint == "/")
        #expect(medium.directory == "/")
    }
}
