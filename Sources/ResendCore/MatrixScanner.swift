import HAL

/// Which key sits at each crossing of a matrix keypad: `keys[row][column]`.
public struct KeypadLayout: Hashable, Sendable {
    public var keys: [[Key]]

    public init(keys: [[Key]]) {
        precondition(!keys.isEmpty && !keys[0].isEmpty, "KeypadLayout: at least one row and one column")
        precondition(keys.allSatisfy { $0.count == keys[0].count }, "KeypadLayout: every row needs the same columns")
        precondition(keys[0].count <= 32, "KeypadLayout: at most 32 columns")
        self.keys = keys
    }

    public var rows: Int { keys.count }
    public var columns: Int { keys[0].count }

    /// The common 12-key phone keypad: 4 rows of 3 (`123`, `456`, `789`, `*0#`).
    public static let threeByFour = KeypadLayout(keys: [
        [.digit1, .digit2, .digit3],
        [.digit4, .digit5, .digit6],
        [.digit7, .digit8, .digit9],
        [.star, .digit0, .pound],
    ])

    /// The common 16-key membrane keypad: 4 rows of 4 (`123A`, `456B`, `789C`, `*0#D`).
    public static let fourByFour = KeypadLayout(keys: [
        [.digit1, .digit2, .digit3, .a],
        [.digit4, .digit5, .digit6, .b],
        [.digit7, .digit8, .digit9, .c],
        [.star, .digit0, .pound, .d],
    ])
}

/// Scans a key matrix on GPIO lines: rows are outputs (driven active or released to high-Z, see
/// `MatrixRowLines`), columns are biased inputs. No kernel driver is needed.
///
/// - Idle costs nothing: `start` drives every row active, so a key pressed anywhere pulls its
///   column active; the event source waits for an edge on any column (no polling), then the loop
///   calls `scan(now:)`.
/// - A scan releases all rows, then drives one row at a time, waits `settle` (the column's pull-up
///   charging the line's capacitance), reads the columns and releases the row; at the end every
///   row is driven active again. At no moment is a row driven to the inactive level, so two keys
///   in one column never short two outputs.
/// - While any key is down, a column edge cannot announce a second key in the same column, nor
///   every release; so the scanner asks to be called again every `pollInterval` (`nextScan`) until
///   all keys are up, then goes back to waiting for edges.
/// - Without diodes, three keys on the corners of a rectangle make the fourth corner read pressed
///   (a ghost). A scan in which two rows share two or more active columns is ambiguous and is
///   rejected (nothing changes; `ambiguousScans` counts it) unless `diodes` is declared.
/// - Changes come out as raw `KeyEvent`s stamped with the scan's time; every key then goes
///   through the `KeyDebouncer` like any other key.
public struct MatrixScanner<Rows: MatrixRowLines, Columns: MatrixColumnLines, Wait: Delay> {
    public var rows: Rows
    public var columns: Columns
    public var delay: Wait
    public let layout: KeypadLayout
    public let diodes: Bool
    public let settle: TimeSpan
    public let pollInterval: TimeSpan

    /// The keys down as of the last accepted scan: one bit mask of columns per row.
    public private(set) var down: [UInt32]
    /// Scans rejected as ambiguous (possible ghost keys).
    public private(set) var ambiguousScans = 0
    /// When `scan(now:)` must be called again; nil when every key is up (wait for a column edge).
    public private(set) var nextScan: Instant?

    /// The default time a column is given to settle after its row changes: 10 us
    /// (`keypad.settleMicroseconds` sets another). The slow case is a column rising through its
    /// pull-up after the row that held it low is released: from 0 V to VIH (2.0 V of 3.3 V) takes
    /// RC * ln(3.3 / 1.3) = 0.93 RC, so 10 us covers RC up to 10.7 us: 165 pF of keypad, pin and
    /// cable against a 65 kohm pull-up (the high end of the Pi's 50-65 kohm).
    public static var defaultSettle: TimeSpan { .microseconds(10) }
    /// The default re-scan period while a key is down: 5 ms, a quarter of the default debounce
    /// window, so the debouncer sees a press settle within a window plus 5 ms.
    public static var defaultPollInterval: TimeSpan { .milliseconds(5) }

    /// - Parameter layout: must match `rows.count` and `columns.count`.
    public init(
        rows: Rows, columns: Columns, delay: Wait, layout: KeypadLayout, diodes: Bool = false,
        settle: TimeSpan = MatrixScanner.defaultSettle, pollInterval: TimeSpan = MatrixScanner.defaultPollInterval
    ) {
        precondition(
            rows.count == layout.rows && columns.count == layout.columns,
            "MatrixScanner: the layout must match the row and column lines")
        precondition(pollInterval > .zero, "MatrixScanner: the poll interval must be longer than zero")
        self.rows = rows
        self.columns = columns
        self.delay = delay
        self.layout = layout
        self.diodes = diodes
        self.settle = settle
        self.pollInterval = pollInterval
        self.down = Array(repeating: 0, count: layout.rows)
    }

    /// Drives every row active: the idle state, in which any key pulls its column active.
    public mutating func start() throws(HALError) {
        for row in 0..<layout.rows { try rows.setActive(row, true) }
    }

    /// Releases every row to high-Z (on stop; a released matrix draws no current).
    public mutating func stop() throws(HALError) {
        for row in 0..<layout.rows { try rows.setActive(row, false) }
        nextScan = nil
    }

    /// Scans the matrix at `now` and returns the raw changes since the last accepted scan (releases
    /// first, then presses, each in row-major order), all stamped `now`. An ambiguous scan returns
    /// nothing. Leaves every row driven active. On a HAL error the rows are left as they were at
    /// the failure; call `start` again to recover.
    public mutating func scan(now: Instant) throws(HALError) -> [KeyEvent] {
        let seen = try read()

        if !diodes && MatrixScanner.isAmbiguous(seen) {
            ambiguousScans += 1
            // Keys are certainly down: look again soon.
            nextScan = now + pollInterval
            return []
        }
        var events: [KeyEvent] = []
        for row in 0..<layout.rows {
            let released = down[row] & ~seen[row]
            for column in 0..<layout.columns where released & (1 << UInt32(column)) != 0 {
                events.append(KeyEvent(layout.keys[row][column], .released, at: now))
            }
        }
        for row in 0..<layout.rows {
            let pressed = seen[row] & ~down[row]
            for column in 0..<layout.columns where pressed & (1 << UInt32(column)) != 0 {
                events.append(KeyEvent(layout.keys[row][column], .pressed, at: now))
            }
        }
        down = seen
        nextScan = seen.contains { $0 != 0 } ? now + pollInterval : nil
        return events
    }

    /// `key`'s level by a scan at `now`, for the loop's repair of a lost change
    /// (`EventSource.readLevel(of:)`): nil for a key not in the layout, or when the scan is
    /// ambiguous. The scan is a real one (every row driven in turn, every row driven again after)
    /// but changes nothing the scanner reports: `down` and `nextScan` stay, so the next `scan`
    /// still reports the change to the debouncer, which by then agrees.
    public mutating func level(of key: Key, now: Instant) throws(HALError) -> ButtonLevel? {
        guard let row = layout.keys.firstIndex(where: { $0.contains(key) }), let column = layout.keys[row].firstIndex(of: key) else {
            return nil
        }
        let seen = try read()
        if !diodes && MatrixScanner.isAmbiguous(seen) { return nil }
        return ButtonLevel(pressed: seen[row] & (1 << UInt32(column)) != 0, time: now)
    }

    /// One pass over the rows: the columns active with each row driven alone (masked), every row
    /// driven again at the end.
    private mutating func read() throws(HALError) -> [UInt32] {
        for row in 0..<layout.rows { try rows.setActive(row, false) }
        var seen: [UInt32] = []
        for row in 0..<layout.rows {
            try rows.setActive(row, true)
            delay.delay(settle)
            seen.append(try columns.read() & columnMask)
            try rows.setActive(row, false)
        }
        for row in 0..<layout.rows { try rows.setActive(row, true) }
        return seen
    }

    /// True when two rows share two or more active columns: without diodes, the fourth corner of
    /// such a rectangle may be a ghost, and which keys are really down cannot be told.
    public static func isAmbiguous(_ rowMasks: [UInt32]) -> Bool {
        for first in rowMasks.indices {
            for second in rowMasks.indices where second > first {
                if (rowMasks[first] & rowMasks[second]).nonzeroBitCount >= 2 { return true }
            }
        }
        return false
    }

    private var columnMask: UInt32 {
        layout.columns >= 32 ? UInt32.max : (UInt32(1) << UInt32(layout.columns)) - 1
    }
}
