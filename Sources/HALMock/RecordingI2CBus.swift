import HAL

/// A device on the mock I2C bus. The bus hands it every data byte of a successful write, stamped
/// with the time the byte arrives.
public protocol I2CDevice: AnyObject {
    /// One data byte (the address byte is the bus's business) arriving at `time`.
    func receive(_ byte: UInt8, at time: Instant)
    /// Whether the device answers a probe (an ACK to its address). Defaults to true.
    func acknowledgesProbe() -> Bool
    /// A START and this device's address at `time`, before the transaction's bytes (devices whose
    /// protocol begins each write afresh, like an OLED's control byte). Defaults to nothing.
    func transactionStarted(at time: Instant)
    /// The STOP after the transaction's last byte. Defaults to nothing.
    func transactionEnded(at time: Instant)
}

extension I2CDevice {
    public func acknowledgesProbe() -> Bool { true }
    public func transactionStarted(at time: Instant) {}
    public func transactionEnded(at time: Instant) {}
}

/// An `I2CBus` that records every write transaction, delivers the bytes to attached mock devices
/// with bus timing, and can be told to fail.
///
/// Timing model: one transaction occupies the wire for `(1 + bytes.count) * byteTime` (the address
/// byte, then each data byte). It starts at `clock.now()`, or when the previous transaction ends if
/// that is later (there is one wire; a caller writing faster than the wire would in reality have
/// been blocked). Data byte `i` (0-based) reaches the device at `start + (i + 1) * byteTime`.
/// By default the bus never moves the clock, so a caller's delay counts from the moment it called
/// `write`, not from the end of the transfer: the emulator then judges waits slightly stricter than
/// real hardware would. Built with `blocking: true` on a `ManualClock`, `write` instead advances
/// the clock to the end of the transaction, as a real synchronous write takes that long.
///
/// Failure injection applies to `write` only (to make `probe` fail, `detach` the device). A failed
/// transaction delivers no bytes, is recorded with its kind, does not count in `wireBytes`, and
/// throws `HALError(kind, operation: "write i2c 0x27", errno: 0)`. Failures are checked in this
/// order: no device attached (`.noDevice`, consumes no injected failure), then "fail always", then
/// the time windows, then "fail the next N".
public final class RecordingI2CBus: I2CBus {
    /// One write on the wire.
    public struct Transaction: Hashable, Sendable {
        public var address: I2CAddress
        /// The data bytes (without the address byte).
        public var bytes: [UInt8]
        /// When the transaction started on the wire (its address byte).
        public var time: Instant
        /// Why it failed, or nil when the device received the bytes.
        public var failure: HALError.Kind?

        public var failed: Bool { failure != nil }

        public init(address: I2CAddress, bytes: [UInt8], time: Instant, failure: HALError.Kind? = nil) {
            self.address = address
            self.bytes = bytes
            self.time = time
            self.failure = failure
        }

        /// The trace line: "i2c 0x27 <- 3C 38", with " FAILED(kind)" appended for a failure.
        public var traceLine: String {
            var line = "i2c \(Format.address(address)) <-"
            for byte in bytes {
                line += " " + Format.hexByte(byte)
            }
            if let failure {
                line += " FAILED(\(failure))"
            }
            return line
        }
    }

    /// A time window in which every write fails: `from <= start < to`.
    private struct FailureWindow {
        var from: Instant
        var to: Instant
        var kind: HALError.Kind
    }

    public let supportsMultiByteWrite: Bool
    /// Time on the wire of one byte (address or data): 9 SCL clocks.
    public let byteTime: TimeSpan

    /// Every write so far (successful and failed), in order.
    public private(set) var transactions: [Transaction] = []
    /// When the wire becomes idle: the end of the last transaction (nil before the first). A test
    /// that wants writes to block like real ones sets its `ManualClock` here after each write.
    public private(set) var wireFreeAt: Instant?
    /// Every probe so far with its answer, in order.
    public private(set) var probes: [(address: I2CAddress, acknowledged: Bool)] = []

    private let now: () -> Instant
    /// Set for a blocking bus: the clock `write` advances.
    private let blockingClock: ManualClock?
    private var devices: [I2CAddress: any I2CDevice] = [:]
    private var failNextCount = 0
    private var failNextKind: HALError.Kind = .injected
    private var failAlwaysKind: HALError.Kind?
    private var failureWindows: [FailureWindow] = []

    /// Standard-mode I2C: 100 kHz SCL, 9 clocks per byte (8 bits + ACK) = 90 us.
    public static let standardModeByteTime = TimeSpan.microseconds(90)

    /// - Parameters:
    ///   - clock: stamps transactions; the bus only reads it.
    ///   - supportsMultiByteWrite: false models an SMBus-only adapter: a write of more than one
    ///     byte is then a caller bug (precondition failure).
    ///   - byteTime: wire time of one byte, 90 us at 100 kHz.
    // (convenience: Embedded Swift allows no generic designated initialiser in a class.)
    public convenience init(
        clock: some MonotonicClock, supportsMultiByteWrite: Bool = true, byteTime: TimeSpan = RecordingI2CBus.standardModeByteTime
    ) {
        self.init(now: { clock.now() }, blockingClock: nil, supportsMultiByteWrite: supportsMultiByteWrite, byteTime: byteTime)
    }

    /// A bus on virtual time; with `blocking` true, each `write` advances `clock` to the end of its
    /// transaction (the time it would have blocked), failed ones included.
    public convenience init(
        clock: ManualClock, supportsMultiByteWrite: Bool = true, byteTime: TimeSpan = RecordingI2CBus.standardModeByteTime, blocking: Bool
    ) {
        self.init(now: { clock.now() }, blockingClock: blocking ? clock : nil, supportsMultiByteWrite: supportsMultiByteWrite, byteTime: byteTime)
    }

    private init(now: @escaping () -> Instant, blockingClock: ManualClock?, supportsMultiByteWrite: Bool, byteTime: TimeSpan) {
        precondition(byteTime >= .zero, "byteTime must not be negative")
        self.now = now
        self.blockingClock = blockingClock
        self.supportsMultiByteWrite = supportsMultiByteWrite
        self.byteTime = byteTime
    }

    // MARK: Devices

    /// Puts `device` on the bus at `address`. Attaching two devices at one address is a test bug.
    public func attach(_ device: some I2CDevice, at address: I2CAddress) {
        precondition(devices[address] == nil, "a device is already attached at \(Format.address(address))")
        devices[address] = device
    }

    /// Removes whatever is at `address` (unplugging it): later writes there throw `.noDevice`.
    public func detach(at address: I2CAddress) {
        devices[address] = nil
    }

    // MARK: I2CBus

    /// Records the transaction and delivers the bytes (see the type's timing and failure model).
    public func write(_ bytes: [UInt8], to address: I2CAddress) throws(HALError) {
        precondition(!bytes.isEmpty, "an I2C write needs at least one data byte")
        precondition(
            supportsMultiByteWrite || bytes.count == 1,
            "\(bytes.count)-byte write on a bus without multi-byte writes: send one byte per transaction")
        var start = now()
        if let wireFreeAt, wireFreeAt > start {
            start = wireFreeAt
        }
        if let kind = failure(for: address, at: start) {
            transactions.append(Transaction(address: address, bytes: bytes, time: start, failure: kind))
            // The address byte went out and was not acknowledged (or the transfer was aborted).
            occupyWire(until: start + byteTime)
            throw HALError(kind, operation: "write i2c \(Format.address(address))", errno: 0)
        }
        transactions.append(Transaction(address: address, bytes: bytes, time: start))
        occupyWire(until: start + byteTime * Int64(bytes.count + 1))
        guard let device = devices[address] else { preconditionFailure("RecordingI2CBus: no device at an address that answered") }
        device.transactionStarted(at: start)
        for (index, byte) in bytes.enumerated() {
            device.receive(byte, at: start + byteTime * Int64(index + 1))
        }
        device.transactionEnded(at: start + byteTime * Int64(bytes.count + 1))
    }

    /// True when a device is attached at `address` and acknowledges. Never throws here (the mock
    /// bus always exists); injected write failures do not apply to probes.
    public func probe(_ address: I2CAddress) throws(HALError) -> Bool {
        let acknowledged = devices[address]?.acknowledgesProbe() ?? false
        probes.append((address: address, acknowledged: acknowledged))
        return acknowledged
    }

    private func occupyWire(until end: Instant) {
        wireFreeAt = end
        if let blockingClock, end > blockingClock.now() {
            blockingClock.set(to: end)
        }
    }

    // MARK: Records

    /// Bytes on the wire: 1 address byte + the data bytes, summed over successful transactions.
    public var wireBytes: Int {
        transactions.reduce(0) { $1.failed ? $0 : $0 + 1 + $1.bytes.count }
    }

    /// Successful transactions only.
    public var successfulTransactions: [Transaction] {
        transactions.filter { !$0.failed }
    }

    /// One readable line per transaction: "i2c 0x27 <- 3C 38" (failed ones end in "FAILED(kind)").
    public var trace: [String] {
        transactions.map { $0.traceLine }
    }

    /// Forgets the recorded transactions and probes (so `wireBytes` and `trace` start again from
    /// zero). Devices, injected failures and the wire timing are kept.
    public func resetCounters() {
        transactions.removeAll()
        probes.removeAll()
    }

    // MARK: Failure injection

    /// The next `count` writes to an attached device fail with `kind`.
    public func failNext(_ count: Int, with kind: HALError.Kind = .injected) {
        precondition(count >= 0, "failNext needs a count >= 0")
        failNextCount = count
        failNextKind = kind
    }

    /// Writes that start in `[from, to)` fail with `kind`. Windows accumulate until cleared.
    public func fail(from: Instant, to: Instant, with kind: HALError.Kind = .injected) {
        precondition(from <= to, "failure window ends before it starts")
        failureWindows.append(FailureWindow(from: from, to: to, kind: kind))
    }

    /// Every write fails with `kind` until `clearFailures()`.
    public func failAlways(with kind: HALError.Kind = .injected) {
        failAlwaysKind = kind
    }

    /// Removes every injected failure (always, windows and the next-N count).
    public func clearFailures() {
        failAlwaysKind = nil
        failureWindows.removeAll()
        failNextCount = 0
    }

    private func failure(for address: I2CAddress, at start: Instant) -> HALError.Kind? {
        if devices[address] == nil {
            return .noDevice
        }
        if let failAlwaysKind {
            return failAlwaysKind
        }
        if let window = failureWindows.first(where: { $0.from <= start && start < $0.to }) {
            return window.kind
        }
        if failNextCount > 0 {
            failNextCount -= 1
            return failNextKind
        }
        return nil
    }
}
