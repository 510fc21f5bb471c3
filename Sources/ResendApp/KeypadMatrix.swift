import HAL
import HALLinux
import ResendConfig
import ResendCore

/// The keypad parts `run` acquires with the rest of the hardware (so one start names every
/// missing line): the output line and, for the matrix backend, the matrix's lines.
struct AcquiredKeypad {
    /// The door strike or relay (`keypad.output.line`); nil when none is configured.
    var output: GPIOOutput?
    /// The matrix's rows and columns (`keypad.backend: "matrix"`); nil for evdev.
    var matrix: GPIOMatrixLines?
}

/// Finds and requests the keypad's lines; appends one failure per line that is missing (and the
/// first request that fails) to `failures`. Nil when the keypad is off or something failed.
func acquireKeypad(_ keypad: DeviceConfig.Keypad, facts: StartupFacts, failures: inout [ExitError]) -> AcquiredKeypad? {
    guard keypad.enabled else { return nil }
    var acquired = AcquiredKeypad()
    var failed = false
    // Without any GPIO chip every line would only repeat the button's message.
    guard facts.gpioChipCount > 0 else { return nil }
    if let name = keypad.output.line {
        let spec = LineSpec(parsing: name) ?? .named(name)
        do throws(HALError) {
            acquired.output = try GPIOOutput(line: try locate(spec), activeLow: keypad.output.activeLow, initiallyActive: false)
        } catch {
            failures.append(startupFailure(error, resource: .keypadLine(role: "keypad output", spec), facts: facts))
            failed = true
        }
    }
    if keypad.backend == .matrix {
        var rows: [GPIOLineLocation] = []
        var columns: [GPIOLineLocation] = []
        let named =
            keypad.rows.enumerated().map { ("keypad row \($0.offset + 1)", $0.element, true) }
            + keypad.columns.enumerated().map { ("keypad column \($0.offset + 1)", $0.element, false) }
        for (role, name, isRow) in named {
            let spec = LineSpec(parsing: name) ?? .named(name)
            do throws(HALError) {
                let location = try locate(spec)
                if isRow { rows.append(location) } else { columns.append(location) }
            } catch {
                failures.append(startupFailure(error, resource: .keypadLine(role: role, spec), facts: facts))
                failed = true
            }
        }
        if rows.count == keypad.rows.count && columns.count == keypad.columns.count {
            do throws(HALError) {
                acquired.matrix = try GPIOMatrixLines(rows: rows, columns: columns)
            } catch {
                failures.append(startupFailure(error, resource: .keypadMatrix, facts: facts))
                failed = true
            }
        }
    }
    return failed ? nil : acquired
}

/// `run`'s matrix keypad (`keypad.backend: "matrix"`): the acquired lines scanned by ResendCore's
/// `MatrixScanner`, when `MatrixWatch` says so, its raw key changes delivered to the loop as
/// `.key` inputs through `LinuxEventSource` (every key then goes through the debouncer).
///
/// Registers one descriptor per column (edge events) and a one-shot timer. Idle, every row is
/// driven and the timer is disarmed: the process sleeps until a column changes. While a key is
/// down the timer re-scans every 5 ms (`MatrixScanner.defaultPollInterval`), which is how a second
/// key in the same column, and every release, is seen. Lives as long as the loop (the caller keeps
/// it); `stop()` releases the rows to high impedance.
final class MatrixKeypadAttachment {
    /// For the `started` line: `matrix 4x3 rows GPIO5,GPIO6,GPIO13,GPIO19 columns GPIO12,GPIO16,GPIO20 diodes no`.
    let summary: String
    private let lines: GPIOMatrixLines
    private let timer: OneShotTimer
    private let clock = SystemClock()
    private var watch: MatrixWatch<GPIOMatrixLines.Rows, GPIOMatrixLines.Columns, SpinDelay, SystemClock>

    /// Starts the watch (every row driven, one scan) and registers the columns and the timer with
    /// `source`. `layout` must match the lines (the configuration check sees to it). Each row is
    /// given `settle` before its columns are read, waited exactly (`SpinDelay`).
    init(lines: GPIOMatrixLines, layout: KeypadLayout, diodes: Bool, settle: TimeSpan, source: inout LinuxEventSource) throws(HALError) {
        self.lines = lines
        self.timer = try OneShotTimer()
        let scanner = MatrixScanner(
            rows: lines.rowLines, columns: lines.columnLines, delay: SpinDelay(), layout: layout, diodes: diodes, settle: settle)
        self.watch = MatrixWatch(scanner: scanner, clock: SystemClock())
        self.summary = MatrixKeypadAttachment.summary(rows: lines.rows, columns: lines.columns, diodes: diodes)
        try watch.start()
        try timer.set(watch.nextScan)
        for fd in lines.columnDescriptors {
            _ = source.register(fileDescriptor: fd) { () throws(HALError) -> [LoopInput] in try self.columnsReadable() }
        }
        _ = source.register(fileDescriptor: timer.fileDescriptor) { () throws(HALError) -> [LoopInput] in try self.timerReadable() }
        source.register { (key: Key) throws(HALError) -> ButtonLevel? in try self.level(of: key) }
    }

    /// `key`'s level by a scan (the loop's repair of a lost change); nil for a key not on the matrix.
    private func level(of key: Key) throws(HALError) -> ButtonLevel? {
        let level = try watch.level(of: key, now: clock.now())
        // While polling, the scan's own column edges would only wake the loop to be ignored.
        if watch.nextScan != nil { _ = try lines.drainColumnEdges() }
        return level
    }

    static func summary(rows: [GPIOLineLocation], columns: [GPIOLineLocation], diodes: Bool) -> String {
        func names(_ lines: [GPIOLineLocation]) -> String {
            lines.map { $0.name ?? "\($0.chipPath):\($0.offset)" }.joined(separator: ",")
        }
        return "matrix \(rows.count)x\(columns.count) rows \(names(rows)) columns \(names(columns)) diodes \(diodes ? "yes" : "no")"
    }

    /// Releases every row (no current flows while the program is stopped) and disarms the timer.
    func stop() {
        try? watch.stop()
        try? timer.set(nil)
    }

    /// Scans made so far (for tests and the benchmarks).
    var scans: Int { watch.scans }
    /// Scans rejected as ambiguous (possible ghost keys; never with `diodes`).
    var ambiguousScans: Int { watch.scanner.ambiguousScans }

    private func columnsReadable() throws(HALError) -> [LoopInput] {
        let drained = try lines.drainColumnEdges()
        guard drained.count > 0 else { return [] }
        let events = try watch.columnEdges(newest: drained.newest, now: clock.now())
        try afterScan()
        return events.map { .key($0) }
    }

    private func timerReadable() throws(HALError) -> [LoopInput] {
        guard try timer.consume() else { return [] }
        let events = try watch.timerFired(now: clock.now())
        try afterScan()
        return events.map { .key($0) }
    }

    /// Arms the timer for the next poll, if any. While polling, the edges the scan itself made are
    /// drained at once (they would only wake the loop to be ignored); when idle they are left to
    /// the watch, since a new key's edge may be among them.
    private func afterScan() throws(HALError) {
        try timer.set(watch.nextScan)
        if watch.nextScan != nil { _ = try lines.drainColumnEdges() }
    }
}
