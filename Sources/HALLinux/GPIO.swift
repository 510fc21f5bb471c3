import CGPIOD
import CLinuxOS
import HAL

/// The libgpiod generation HALLinux was compiled against (see scripts/libgpiod-v2).
public enum LibGPIOD {
    /// 1 (libgpiod 1.6.x: Debian 12 / bookworm) or 2 (libgpiod 2.x: Debian 13 / trixie).
    public static var apiGeneration: Int { Int(rb_gpio_api_generation()) }
    /// The linked library's version, e.g. "1.6.3" or "2.3".
    public static var version: String { String(cString: rb_gpio_library_version()) }
    /// Kernel debounce (`GPIOButton.Configuration.kernelDebounce`) needs v2.
    public static var supportsKernelDebounce: Bool { rb_gpio_supports_kernel_debounce() }
}

/// Where a GPIO line is: its chip's character device and its offset on that chip.
public struct GPIOLineLocation: Hashable, Sendable {
    /// "/dev/gpiochip0"
    public var chipPath: String
    public var offset: UInt32
    /// The line's name when it was found by name ("GPIO17"); used in messages only.
    public var name: String?

    public init(chipPath: String, offset: UInt32, name: String? = nil) {
        self.chipPath = chipPath
        self.offset = offset
        self.name = name
    }

    /// "GPIO17 (line 17 of /dev/gpiochip0)" or "line 17 of /dev/gpiochip0".
    public var description: String {
        let place = "line \(offset) of \(chipPath)"
        return name.map { "\($0) (\(place))" } ?? place
    }
}

/// One line as the kernel reports it.
public struct GPIOLineInfo: Hashable, Sendable {
    public var offset: UInt32
    /// The line name from the device tree ("GPIO17"), nil when unnamed.
    public var name: String?
    /// Who holds the line ("resend-button", "onewire@0"), nil when free or unnamed.
    public var consumer: String?
    /// True when requested by a process or claimed by a kernel driver.
    public var isUsed: Bool
    public var isOutput: Bool
    public var isActiveLow: Bool

    public init(offset: UInt32, name: String?, consumer: String?, isUsed: Bool, isOutput: Bool, isActiveLow: Bool) {
        self.offset = offset
        self.name = name
        self.consumer = consumer
        self.isUsed = isUsed
        self.isOutput = isOutput
        self.isActiveLow = isActiveLow
    }
}

/// A GPIO chip and its lines, read through the character device.
public struct GPIOChipInfo: Hashable, Sendable {
    /// "/dev/gpiochip0"
    public var path: String
    /// The kernel's name, "gpiochip0".
    public var name: String
    /// The driver's label, "pinctrl-bcm2711" (Pi 4) or "pinctrl-rp1" (Pi 5).
    public var label: String
    public var lines: [GPIOLineInfo]

    public init(path: String, name: String, label: String, lines: [GPIOLineInfo]) {
        self.path = path
        self.name = name
        self.label = label
        self.lines = lines
    }

    /// Opens the chip and reads its label and every line. Blocks briefly (one ioctl per line).
    public static func read(path: String) throws(HALError) -> GPIOChipInfo {
        let chip = try OpenChip(path: path)
        var info = rb_gpio_chip_info()
        _ = try Syscall.run("read chip info of \(path)") { rb_gpio_chip_get_info(chip.pointer, &info) }
        var lines: [GPIOLineInfo] = []
        lines.reserveCapacity(Int(info.num_lines))
        for offset in 0..<info.num_lines {
            lines.append(try chip.lineInfo(offset: offset))
        }
        return GPIOChipInfo(
            path: path, name: string(fromTuple: info.name), label: string(fromTuple: info.label), lines: lines)
    }

    /// Reads one line's current state.
    public static func lineInfo(_ location: GPIOLineLocation) throws(HALError) -> GPIOLineInfo {
        try OpenChip(path: location.chipPath).lineInfo(offset: location.offset)
    }

    /// "gpiochip0 [pinctrl-bcm2711] (58 lines)"
    public var summary: String { "\(name) [\(label)] (\(lines.count) lines)" }
}

/// All GPIO chips found under a device directory, and the ones that could not be read.
public struct GPIOScan: Hashable, Sendable {
    public var chips: [GPIOChipInfo]
    /// One error per /dev/gpiochipN that could not be opened or read (e.g. `.permission`).
    public var failures: [HALError]

    public init(chips: [GPIOChipInfo], failures: [HALError]) {
        self.chips = chips
        self.failures = failures
    }

    /// Reads every /dev/gpiochipN (in number order). Never throws: failures are collected.
    public static func scan(deviceDirectory: String = "/dev") -> GPIOScan {
        var scan = GPIOScan(chips: [], failures: [])
        for path in Discovery.deviceNodes(prefix: "gpiochip", in: deviceDirectory) {
            do throws(HALError) {
                scan.chips.append(try GPIOChipInfo.read(path: path))
            } catch {
                scan.failures.append(error)
            }
        }
        return scan
    }
}

/// Finds the line called `name` (e.g. "GPIO17") among `chips`. The first match in chip order wins.
/// Throws `.notFound` whose `operation` lists the chips searched (or says there were none).
public func findLine(named name: String, in chips: [GPIOChipInfo]) throws(HALError) -> GPIOLineLocation {
    for chip in chips {
        if let line = chip.lines.first(where: { $0.name == name }) {
            return GPIOLineLocation(chipPath: chip.path, offset: line.offset, name: name)
        }
    }
    let searched = chips.isEmpty ? "no GPIO chips were found" : "searched " + chips.map { $0.summary }.joined(separator: ", ")
    throw HALError(.notFound, operation: "find GPIO line \"\(name)\": \(searched)", errno: ENOENT)
}

/// Scans /dev/gpiochip* and finds the line called `name`. When it is missing, the error also
/// names the chips that could not be read (their permission error is usually the real cause).
public func findLine(named name: String, deviceDirectory: String = "/dev") throws(HALError) -> GPIOLineLocation {
    let scan = GPIOScan.scan(deviceDirectory: deviceDirectory)
    do throws(HALError) {
        return try findLine(named: name, in: scan.chips)
    } catch {
        guard let first = scan.failures.first else { throw error }
        let unreadable = scan.failures.map { "\($0.operation) (\(describe($0)))" }.joined(separator: ", ")
        throw HALError(first.kind, operation: "\(error.operation); could not read \(unreadable)", errno: first.errno)
    }
}

extension GPIOBias {
    var shimValue: rb_gpio_bias {
        switch self {
        case .pullUp: RB_GPIO_BIAS_PULL_UP
        case .pullDown: RB_GPIO_BIAS_PULL_DOWN
        case .disabled: RB_GPIO_BIAS_DISABLED
        case .asIs: RB_GPIO_BIAS_AS_IS
        }
    }
}

/// The push-button: one input line requested with edge detection on both edges.
///
/// Active-low is applied by the kernel (the request's active-low flag), so every level and edge
/// this class reports is logical: `pressed == true` means the button is pressed. Edge times are
/// the kernel's CLOCK_MONOTONIC timestamps, comparable with `SystemClock`. The line is released
/// when the object goes away. Not thread-safe; use from the event loop's thread.
public final class GPIOButton {
    public struct Configuration: Hashable, Sendable {
        /// Pull-up by default: a button between the pin and ground.
        public var bias: GPIOBias
        /// True by default: pressed pulls the line low.
        public var activeLow: Bool
        /// The consumer name other programs (gpioinfo) see.
        public var consumer: String
        /// Kernel debounce period (libgpiod v2 only; rounded down to whole microseconds).
        /// Nil: none; the program's own debouncer works on raw edges.
        public var kernelDebounce: TimeSpan?

        public init(bias: GPIOBias = .pullUp, activeLow: Bool = true, consumer: String = defaultConsumer, kernelDebounce: TimeSpan? = nil) {
            self.bias = bias
            self.activeLow = activeLow
            self.consumer = consumer
            self.kernelDebounce = kernelDebounce
        }
    }

    public let line: GPIOLineLocation
    public let configuration: Configuration
    private let request: OpaquePointer
    /// Per-line sequence number of the last edge read (v2); 0 before the first.
    private var lastSequence: UInt64 = 0
    /// Edges the kernel dropped (its event buffer overflowed), counted from v2 sequence gaps.
    /// Always 0 on v1, which has no sequence numbers. The caller decides whether to log.
    public private(set) var droppedEvents: UInt64 = 0
    /// True when the last `readEdges()` found the kernel's buffer full (a read of
    /// `readCapacity` events: on uAPI v1 the buffer holds 16 and drops the newest) or a sequence
    /// gap (v2): edges may be missing, so the caller should read the level (`isPressed`).
    public private(set) var lastReadMayHaveLostEdges = false

    /// Requests the line. Throws `.busy` naming the current consumer when the kernel reports one,
    /// `.unsupported` for kernel debounce on libgpiod v1, `.notFound` / `.permission` for the chip.
    public init(line: GPIOLineLocation, configuration: Configuration = Configuration()) throws(HALError) {
        if configuration.kernelDebounce != nil && !LibGPIOD.supportsKernelDebounce {
            throw HALError(
                .unsupported, operation: "kernel debounce on \(line.description) needs libgpiod v2 (this build uses \(LibGPIOD.version))",
                errno: EOPNOTSUPP)
        }
        let debounceMicroseconds = UInt32(clamping: max(configuration.kernelDebounce?.microseconds ?? 0, 0))
        var request: OpaquePointer?
        _ = try requestLine(line, purpose: "request button") {
            rb_gpio_request_input(
                line.chipPath, line.offset, configuration.bias.shimValue, configuration.activeLow,
                debounceMicroseconds, configuration.consumer, &request)
        }
        guard let request else { preconditionFailure("GPIOButton: the shim succeeded without a request") }
        self.request = request
        self.line = line
        self.configuration = configuration
    }

    deinit { rb_gpio_request_release(request) }

    /// The request's descriptor: poll it for POLLIN, then call `readEdges()`.
    public var fileDescriptor: Int32 { rb_gpio_request_fd(request) }

    /// The current logical level: true when pressed. Does not block.
    public func isPressed() throws(HALError) -> Bool {
        let request = self.request
        return try Syscall.run("read \(line.description)") { rb_gpio_request_get_value(request) } == 1
    }

    /// The edges pending in the kernel, oldest first. Never blocks: returns [] when none are pending.
    /// Sequence gaps (v2) add to `droppedEvents`.
    public func readEdges() throws(HALError) -> [ButtonEdge] {
        var edges: [ButtonEdge] = []
        var buffer = [rb_gpio_edge](repeating: rb_gpio_edge(), count: GPIOButton.readCapacity)
        let request = self.request
        let droppedBefore = droppedEvents
        lastReadMayHaveLostEdges = false
        while true {
            let count = try GPIOButton.readEdgeEvents(of: request, into: &buffer, operation: "read edges of \(line.description)")
            for event in buffer.prefix(Int(count)) {
                droppedEvents += GPIOButton.droppedEvents(after: lastSequence, next: event.line_seqno)
                if event.line_seqno != 0 { lastSequence = event.line_seqno }
                edges.append(ButtonEdge(pressed: event.rising, time: event.time))
            }
            if Int(count) == buffer.count { lastReadMayHaveLostEdges = true }
            if droppedEvents != droppedBefore { lastReadMayHaveLostEdges = true }
            if Int(count) < buffer.count { return edges }
        }
    }

    /// Reads the edge events queued on `request` into `buffer`, at most `buffer.count` of them,
    /// without blocking (the request's descriptor is non-blocking); returns how many were read.
    /// Failures throw, named `operation`.
    static func readEdgeEvents(
        of request: OpaquePointer?, into buffer: inout [rb_gpio_edge], operation: @autoclosure () -> String
    ) throws(HALError) -> Int32 {
        try buffer.withUnsafeMutableBufferPointer { chunk in
            Result { () throws(HALError) -> Int32 in
                try Syscall.run(operation()) { rb_gpio_request_read_edges(request, chunk.baseAddress, UInt32(chunk.count)) }
            }
        }.get()
    }

    /// How many edges the kernel dropped between per-line sequence numbers `previous` and `next`
    /// (v2 numbers each line's events from 1; 0 means "no number", as on v1).
    public static func droppedEvents(after previous: UInt64, next: UInt64) -> UInt64 {
        guard next != 0, next > previous + 1 else { return 0 }
        return next - previous - 1
    }

    /// Events read per call: the v1 kernel buffer's size (gpiolib-cdev.c: DECLARE_KFIFO(events,
    /// struct gpioevent_data, 16)), so a full read means the buffer was full.
    static let readCapacity = 16
}

/// The consumer name the program's lines carry.
public let defaultConsumer = "resend-button"

/// An output line such as the LED. `set(true)` means on; the kernel inverts for active-low.
/// The line is released (and returns to its default state) when the object goes away.
public final class GPIOOutput: OutputLine {
    public let line: GPIOLineLocation
    private let request: OpaquePointer

    /// Requests the line as an output driven to `initiallyActive`. Errors as for `GPIOButton`.
    public init(line: GPIOLineLocation, activeLow: Bool = false, initiallyActive: Bool = false, consumer: String = defaultConsumer) throws(HALError) {
        var request: OpaquePointer?
        _ = try requestLine(line, purpose: "request output") {
            rb_gpio_request_output(line.chipPath, line.offset, activeLow, initiallyActive, consumer, &request)
        }
        guard let request else { preconditionFailure("GPIOOutput: the shim succeeded without a request") }
        self.request = request
        self.line = line
    }

    deinit { rb_gpio_request_release(request) }

    /// Drives the line; returns once the kernel has set it.
    public func set(_ active: Bool) throws(HALError) {
        let request = self.request
        _ = try Syscall.run("set \(line.description)") { rb_gpio_request_set_value(request, active) }
    }
}

/// Runs a line request through the seam; on EBUSY, asks the kernel who holds the line (the
/// button, the LED and the keypad's lines).
func requestLine(_ line: GPIOLineLocation, purpose: String, _ call: () -> Int32) throws(HALError) -> Int32 {
    do throws(HALError) {
        return try Syscall.run("\(purpose) \(line.description)", call)
    } catch  where error.kind == .busy {
        let holder = (try? GPIOChipInfo.lineInfo(line))?.consumer
        let suffix = holder.map { ": held by \"\($0)\"" } ?? ": held by another consumer"
        throw HALError(.busy, operation: error.operation + suffix, errno: error.errno)
    }
}

/// A chip opened for reading information; closed on deinit.
private final class OpenChip {
    let path: String
    let pointer: OpaquePointer

    init(path: String) throws(HALError) {
        var chip: OpaquePointer?
        _ = try Syscall.run("open \(path)") { rb_gpio_chip_open(path, &chip) }
        guard let chip else { preconditionFailure("GPIO chip: the shim succeeded without a chip") }
        self.path = path
        self.pointer = chip
    }

    deinit { rb_gpio_chip_close(pointer) }

    func lineInfo(offset: UInt32) throws(HALError) -> GPIOLineInfo {
        var info = rb_gpio_line_info()
        _ = try Syscall.run("read line \(offset) of \(path)") { rb_gpio_chip_get_line_info(pointer, offset, &info) }
        let name = string(fromTuple: info.name)
        let consumer = string(fromTuple: info.consumer)
        return GPIOLineInfo(
            offset: offset, name: name.isEmpty ? nil : name, consumer: consumer.isEmpty ? nil : consumer,
            isUsed: info.used, isOutput: info.is_output, isActiveLow: info.active_low)
    }
}

/// A NUL-terminated C char array imported as a tuple.
func string<T>(fromTuple tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension rb_gpio_edge {
    /// The kernel's timestamp of the edge, on CLOCK_MONOTONIC.
    var time: Instant { Instant(nanoseconds: Int64(clamping: timestamp_ns)) }
}
