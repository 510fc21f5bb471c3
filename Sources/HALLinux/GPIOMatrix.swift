import CGPIOD
import CLinuxOS
import HAL

/// The lines of a key matrix on GPIO, for a scanner (ResendCore's `MatrixScanner`)
/// that drives them through `rowLines` and `columnLines`. No kernel driver is needed.
///
/// - Rows are open-drain outputs, active-low (`rb_gpio_request_open_drain_output`: the uAPI's
///   open-drain flag, v1 GPIOHANDLE_REQUEST_OPEN_DRAIN, v2 GPIO_V2_LINE_FLAG_OPEN_DRAIN): active
///   pulls the row low, inactive releases it to high impedance. On chips without open-drain
///   hardware (the Pi's pinctrl-bcm2835, gpio-sim) gpiolib emulates it by switching the line to
///   input for the high level (drivers/gpio/gpiolib.c, gpio_set_open_drain_value_commit). A row is
///   therefore never driven high, and two keys held in one column never short two outputs.
///   Requested active: the idle state, in which any key pulls its column low.
/// - Rows are requested with the pull-up (`rowBias`) as well: a released row is an input, and an
///   input keeps its pad's pull unless the request sets one. A Pi's GPIO9-27 reset to pull-down
///   (GPIO0-8 to pull-up), and a held key joining a pulled-up column to a pulled-down released
///   row leaves the column mid-supply, in the input's undefined band: the key would show in every
///   row scanned (a phantom key).
/// - Columns are inputs with the internal pull-up, active-low, with edge events on both edges
///   (kernel CLOCK_MONOTONIC timestamps; uAPI v1 since Linux 5.7). On uAPI v1 every line has its
///   own event descriptor; for one code path on v1 and v2 every column is its own request here,
///   so `columnDescriptors` has one descriptor per column.
///
/// Everything is released when the object goes away (rows return to the chip's default, which on
/// a Pi keeps the last direction and level). Not thread-safe; use from the event loop's thread.
public final class GPIOMatrixLines {
    public let rows: [GPIOLineLocation]
    public let columns: [GPIOLineLocation]
    private let rowRequests: [OpaquePointer?]
    private let columnRequests: [OpaquePointer?]

    /// The rows' pull while released (open drain: then they are inputs): up, whatever the pad's
    /// reset pull, so a released row never fights a column's pull-up.
    public static let rowBias = GPIOBias.pullUp
    /// The columns' pull: up (a key pulls its column to a driven row's low level).
    public static let columnBias = GPIOBias.pullUp

    /// Requests every row (open drain with the pull-up, driven active) and every column (pull-up, both edges), in
    /// that order. At most 32 columns. On a failure the lines requested so far are released and
    /// the error names the line (`.busy` adds the holder the kernel reports, as for the button).
    public init(rows: [GPIOLineLocation], columns: [GPIOLineLocation], consumer: String = defaultConsumer) throws(HALError) {
        precondition(!rows.isEmpty && !columns.isEmpty && columns.count <= 32, "GPIOMatrixLines: 1+ rows, 1-32 columns")
        var requested: [OpaquePointer?] = []
        do throws(HALError) {
            for (index, row) in rows.enumerated() {
                var request: OpaquePointer?
                _ = try requestLine(row, purpose: "request keypad row \(index + 1)") {
                    rb_gpio_request_open_drain_output(row.chipPath, row.offset, Self.rowBias.shimValue, true, true, consumer, &request)
                }
                requested.append(request)
            }
            for (index, column) in columns.enumerated() {
                var request: OpaquePointer?
                _ = try requestLine(column, purpose: "request keypad column \(index + 1)") {
                    rb_gpio_request_input(column.chipPath, column.offset, Self.columnBias.shimValue, true, 0, consumer, &request)
                }
                requested.append(request)
            }
        } catch {
            for request in requested { rb_gpio_request_release(request) }
            throw error
        }
        self.rows = rows
        self.columns = columns
        self.rowRequests = Array(requested.prefix(rows.count))
        self.columnRequests = Array(requested.dropFirst(rows.count))
    }

    deinit {
        for request in rowRequests + columnRequests { rb_gpio_request_release(request) }
    }

    /// The HAL view of the rows: `setActive(i, true)` pulls row i low, `false` releases it.
    public var rowLines: Rows { Rows(lines: self) }
    /// The HAL view of the columns: bit i of `read()` set when column i is low.
    public var columnLines: Columns { Columns(lines: self) }

    /// One descriptor per column, in column order: poll them for POLLIN, then `drainColumnEdges()`.
    public var columnDescriptors: [Int32] {
        columnRequests.map { request in request.map { rb_gpio_request_fd($0) } ?? -1 }
    }

    /// Drives row `index` active (pulled low) or releases it.
    public func setRow(_ index: Int, active: Bool) throws(HALError) {
        let request = rowRequests[index]
        _ = try Syscall.run("set keypad row \(index + 1) \(rows[index].description)") {
            rb_gpio_request_set_value(request, active)
        }
    }

    /// The columns' logical levels: bit i set when column i is active (low). One read per column.
    public func readColumns() throws(HALError) -> UInt32 {
        var mask: UInt32 = 0
        for (index, request) in columnRequests.enumerated() {
            let value = try Syscall.run("read keypad column \(index + 1) \(columns[index].description)") {
                rb_gpio_request_get_value(request)
            }
            if value == 1 { mask |= UInt32(1) << UInt32(index) }
        }
        return mask
    }

    /// Reads and discards the edge events pending on every column (never blocks); returns how many
    /// there were and the newest kernel timestamp among them (nil when none was pending).
    public func drainColumnEdges() throws(HALError) -> (count: Int, newest: Instant?) {
        var buffer = [rb_gpio_edge](repeating: rb_gpio_edge(), count: GPIOButton.readCapacity)
        var total = 0
        var newest: Instant?
        for (index, request) in columnRequests.enumerated() {
            while true {
                let count = try GPIOButton.readEdgeEvents(
                    of: request, into: &buffer, operation: "read edges of keypad column \(index + 1) \(columns[index].description)")
                for event in buffer.prefix(Int(count)) {
                    newest = max(newest ?? event.time, event.time)
                }
                total += Int(count)
                if Int(count) < buffer.count { break }
            }
        }
        return (total, newest)
    }

    public struct Rows: MatrixRowLines {
        let lines: GPIOMatrixLines
        public var count: Int { lines.rows.count }
        public mutating func setActive(_ index: Int, _ active: Bool) throws(HALError) {
            try lines.setRow(index, active: active)
        }
    }

    public struct Columns: MatrixColumnLines {
        let lines: GPIOMatrixLines
        public var count: Int { lines.columns.count }
        public mutating func read() throws(HALError) -> UInt32 { try lines.readColumns() }
    }
}

/// A one-shot CLOCK_MONOTONIC timer as a descriptor for the event source's poll set: the matrix
/// keypad's re-scan while a key is down. Disarmed, it never becomes readable (an idle keypad
/// costs no wake-ups). Non-blocking, close-on-exec; closed on deinit.
public final class OneShotTimer {
    public let fileDescriptor: Int32
    /// When it is armed to expire; nil when disarmed.
    public private(set) var deadline: Instant?

    public init() throws(HALError) {
        fileDescriptor = try Syscall.run("timerfd_create(CLOCK_MONOTONIC) for the keypad") { rb_timerfd_create_monotonic() }
    }

    deinit { _ = close(fileDescriptor) }

    /// Arms the timer at `deadline` (nil disarms). Re-arming at the same deadline does nothing.
    public func set(_ deadline: Instant?) throws(HALError) {
        guard deadline != self.deadline else { return }
        let fd = fileDescriptor
        if let deadline {
            _ = try Syscall.run("arm the keypad's timerfd") { rb_timerfd_arm_absolute(fd, deadline.nanoseconds) }
        } else {
            _ = try Syscall.run("disarm the keypad's timerfd") { rb_timerfd_disarm(fd) }
        }
        self.deadline = deadline
    }

    /// Reads the expiry (never blocks): true when the timer had expired. A consumed timer counts
    /// as disarmed.
    public func consume() throws(HALError) -> Bool {
        let fd = fileDescriptor
        let expired = try Syscall.run("read the keypad's timerfd") { rb_timerfd_consume(fd) } > 0
        if expired { deadline = nil }
        return expired
    }
}
