import HAL

/// A key matrix on mock GPIO lines, with the electrical behaviour that matters to a scanner:
/// columns pulled up (inactive high), rows that are high-Z, driven low (active) or, through the
/// lower-level `drive(_:_:)`, driven high; pressed keys connecting rows and columns.
///
/// - A column reads active (low) when a row driven low reaches it: directly through a pressed
///   key, or, without diodes, through any chain of pressed keys and undriven rows and columns
///   (which is how ghost keys appear). With diodes (cathode at the row) only directly.
/// - Every change of a row's drive or of a key is recorded with the clock's time (`timeline`), and
///   every moment at which a row driven low and a row driven high are connected through pressed
///   keys (a short between two outputs) is recorded in `shorts`.
///
/// `rowLines` and `columnLines` are the HAL views a scanner is given. A class so that both views
/// and the test see one matrix. Not thread-safe (virtual-time tests run on one thread).
public final class MockMatrix {
    /// What a row line is doing.
    public enum Drive: Hashable, Sendable {
        /// Released: an input or an open-drain output let go.
        case highZ
        /// Driven to the active level.
        case low
        /// Driven push-pull to the inactive level (what a safe scanner never does).
        case high
    }

    /// The state of every row and the keys down, from `time` until the next sample.
    public struct Sample: Hashable, Sendable {
        public var time: Instant
        public var drives: [Drive]
        /// The keys down as (row, column), row-major.
        public var keysDown: [Crossing]
    }

    /// A key position.
    public struct Crossing: Hashable, Sendable {
        public var row: Int
        public var column: Int
        public init(row: Int, column: Int) {
            self.row = row
            self.column = column
        }
    }

    /// Two outputs driven against each other through pressed keys.
    public struct Short: Hashable, Sendable {
        public var time: Instant
        /// The row driven low and the row driven high.
        public var lowRow: Int
        public var highRow: Int
        public init(time: Instant, lowRow: Int, highRow: Int) {
            self.time = time
            self.lowRow = lowRow
            self.highRow = highRow
        }
    }

    public let rows: Int
    public let columns: Int
    public let diodes: Bool
    public private(set) var drives: [Drive]
    public private(set) var timeline: [Sample] = []
    public private(set) var shorts: [Short] = []
    /// How many times the columns were read.
    public var reads: Int { drivesAtReads.count }
    /// The row drives at each read of the columns, in order.
    public private(set) var drivesAtReads: [[Drive]] = []

    private var down: [[Bool]]
    private let now: () -> Instant

    /// All rows start high-Z and all keys up.
    // (convenience: Embedded Swift allows no generic designated initialiser in a class.)
    public convenience init(rows: Int, columns: Int, diodes: Bool = false, clock: some MonotonicClock) {
        self.init(rows: rows, columns: columns, diodes: diodes, now: { clock.now() })
    }

    private init(rows: Int, columns: Int, diodes: Bool, now: @escaping () -> Instant) {
        precondition(rows > 0 && columns > 0 && columns <= 32, "MockMatrix: 1+ rows, 1-32 columns")
        self.rows = rows
        self.columns = columns
        self.diodes = diodes
        self.drives = Array(repeating: .highZ, count: rows)
        self.down = Array(repeating: Array(repeating: false, count: columns), count: rows)
        self.now = now
        record()
    }

    /// Presses (true) or releases the key at (`row`, `column`).
    public func setKey(row: Int, column: Int, down isDown: Bool) {
        guard down[row][column] != isDown else { return }
        down[row][column] = isDown
        record()
    }

    public func press(row: Int, column: Int) { setKey(row: row, column: column, down: true) }
    public func release(row: Int, column: Int) { setKey(row: row, column: column, down: false) }

    /// Sets a row line to any drive, push-pull high included (to show what the short detector
    /// catches; the HAL view never drives high).
    public func drive(_ row: Int, _ drive: Drive) {
        guard drives[row] != drive else { return }
        drives[row] = drive
        record()
    }

    /// The columns' logical levels now: bit c set when column c is pulled low (active).
    public func columnMask() -> UInt32 {
        var mask: UInt32 = 0
        for column in 0..<columns where isLow(column: column) { mask |= 1 << UInt32(column) }
        return mask
    }

    /// The HAL row view: active drives low, inactive releases to high-Z.
    public var rowLines: RowLines { RowLines(matrix: self) }
    /// The HAL column view.
    public var columnLines: ColumnLines { ColumnLines(matrix: self) }

    public struct RowLines: MatrixRowLines {
        let matrix: MockMatrix
        public var count: Int { matrix.rows }
        public mutating func setActive(_ index: Int, _ active: Bool) throws(HALError) {
            guard index >= 0 && index < matrix.rows else {
                throw HALError(.invalidArgument, operation: "set matrix row " + decimalDigits(index))
            }
            matrix.drive(index, active ? .low : .highZ)
        }
    }

    public struct ColumnLines: MatrixColumnLines {
        let matrix: MockMatrix
        public var count: Int { matrix.columns }
        public mutating func read() throws(HALError) -> UInt32 {
            matrix.drivesAtReads.append(matrix.drives)
            return matrix.columnMask()
        }
    }

    // MARK: - Electrical model

    /// Column nodes are 0..<columns, row nodes columns..<columns+rows; without diodes pressed keys
    /// join a row node and a column node.
    private func component(of start: Int) -> [Int] {
        var seen = Array(repeating: false, count: columns + rows)
        var stack = [start]
        var members: [Int] = []
        seen[start] = true
        while let node = stack.popLast() {
            members.append(node)
            var neighbours: [Int] = []
            if node < columns {
                for row in 0..<rows where down[row][node] { neighbours.append(columns + row) }
            } else {
                let row = node - columns
                for column in 0..<columns where down[row][column] { neighbours.append(column) }
            }
            for next in neighbours where !seen[next] {
                seen[next] = true
                stack.append(next)
            }
        }
        return members
    }

    private func isLow(column: Int) -> Bool {
        if diodes {
            return (0..<rows).contains { down[$0][column] && drives[$0] == .low }
        }
        return component(of: column).contains { $0 >= columns && drives[$0 - columns] == .low }
    }

    private func record() {
        let time = now()
        var keys: [Crossing] = []
        for row in 0..<rows {
            for column in 0..<columns where down[row][column] { keys.append(Crossing(row: row, column: column)) }
        }
        timeline.append(Sample(time: time, drives: drives, keysDown: keys))
        guard !diodes else { return }
        for low in 0..<rows where drives[low] == .low {
            let reach = component(of: columns + low)
            for node in reach where node >= columns && drives[node - columns] == .high {
                shorts.append(Short(time: time, lowRow: low, highRow: node - columns))
            }
        }
    }
}
