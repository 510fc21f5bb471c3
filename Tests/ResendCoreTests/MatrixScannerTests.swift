import HAL
import HALMock
import ResendCore
import Testing

/// A scanner on a mock matrix: the rows and columns are `MockMatrix` lines, time is virtual.
private struct Bench {
    let clock = ManualClock(Instant(nanoseconds: 1_000_000_000))
    let matrix: MockMatrix
    var scanner: MatrixScanner<MockMatrix.RowLines, MockMatrix.ColumnLines, VirtualDelay>
    var keys = KeyDebouncer()
    /// The debounced key events, in order.
    var typed: [KeyEvent] = []

    init(layout: KeypadLayout = .threeByFour, diodes: Bool = false, settle: TimeSpan = .microseconds(10)) {
        matrix = MockMatrix(rows: layout.rows, columns: layout.columns, diodes: diodes, clock: clock)
        scanner = MatrixScanner(
            rows: matrix.rowLines, columns: matrix.columnLines, delay: VirtualDelay(clock: clock),
            layout: layout, diodes: diodes, settle: settle)
    }

    var now: Instant { clock.now() }

    mutating func start() throws {
        try scanner.start()
    }

    /// One scan now; its raw events go through the debouncer.
    @discardableResult
    mutating func scan() throws -> [KeyEvent] {
        let events = try scanner.scan(now: now)
        for event in events { typed += keys.feed(event) }
        return events
    }

    /// Moves the clock to `time`, scanning whenever the scanner asks to and handing the debouncer
    /// its deadlines, as the loop would.
    mutating func run(until time: Instant) throws {
        while true {
            let next = earliest(scanner.nextScan, keys.nextDeadline)
            guard let next, next <= time else { break }
            clock.set(to: max(now, next))
            if let scan = scanner.nextScan, scan <= now { try self.scan() }
            typed += keys.advance(to: now)
        }
        clock.set(to: max(now, time))
    }

    /// No row was ever driven to the inactive level, and every read of the columns saw exactly
    /// one row driven (the others high-Z).
    var oneRowPerReadAndNeverDrivenHigh: Bool {
        !matrix.timeline.contains { $0.drives.contains(.high) }
            && matrix.drivesAtReads.allSatisfy { drives in drives.filter { $0 == .low }.count == 1 && !drives.contains(.high) }
    }
}

/// `ms` milliseconds after the scan bench's start (1 s).
private func benchTime(_ ms: Int64) -> Instant { Instant(nanoseconds: 1_000_000_000) + .milliseconds(ms) }

@Suite("Matrix scanner")
struct MatrixScannerTests {
    @Test func idleDrivesEveryRowSoAnyKeyPullsItsColumn() throws {
        var bench = Bench()
        try bench.start()
        #expect(bench.matrix.drives == [.low, .low, .low, .low])
        #expect(bench.matrix.columnMask() == 0)
        bench.matrix.press(row: 2, column: 1)
        #expect(bench.matrix.columnMask() == 0b010, "the edge the event source waits for")
        #expect(bench.scanner.nextScan == nil, "idle: no polling")
    }

    @Test func aScanFindsTheKeyAndPollsUntilItIsReleased() throws {
        var bench = Bench()
        try bench.start()
        bench.matrix.press(row: 1, column: 2)
        let first = bench.now
        let pressed = try bench.scan()
        #expect(pressed == [KeyEvent(.digit6, .pressed, at: first)], "stamped with the scan's start")
        #expect(bench.matrix.drives == [.low, .low, .low, .low], "back to idle after the scan")
        #expect(bench.scanner.nextScan == first + .milliseconds(5))
        bench.matrix.release(row: 1, column: 2)
        let second = bench.now
        let released = try bench.scan()
        #expect(released == [KeyEvent(.digit6, .released, at: second)])
        #expect(bench.scanner.nextScan == nil)
        #expect(bench.oneRowPerReadAndNeverDrivenHigh)
    }

    @Test func eachRowIsGivenTheSettleTimeBeforeTheColumnsAreRead() throws {
        var bench = Bench()
        try bench.start()
        let before = bench.now
        try bench.scan()
        #expect(bench.now - before == .microseconds(40), "4 rows x 10 us")
        #expect(bench.matrix.reads == 4)
    }

    @Test func aConfiguredSettleTimeIsWhatEachRowWaits() throws {
        var bench = Bench(settle: .microseconds(60))
        try bench.start()
        let before = bench.now
        try bench.scan()
        #expect(bench.now - before == .microseconds(240), "4 rows x 60 us")
        #expect(bench.scanner.delay.requests == Array(repeating: .microseconds(60), count: 4))
    }

    @Test func everyKeyOfThe3x4And4x4LayoutsIsFound() throws {
        for layout in [KeypadLayout.threeByFour, .fourByFour] {
            var bench = Bench(layout: layout)
            try bench.start()
            var found: [Key] = []
            for row in 0..<layout.rows {
                for column in 0..<layout.columns {
                    bench.matrix.press(row: row, column: column)
                    found += try bench.scan().map(\.key)
                    bench.matrix.release(row: row, column: column)
                    try bench.scan()
                }
            }
            let symbols = String(decoding: found.map(\.symbol), as: UTF8.self)
            #expect(symbols == (layout.columns == 3 ? "123456789*0#" : "123A456B789C*0#D"))
        }
    }

    @Test func twoKeysInOneColumnAreBothFoundWithoutAShort() throws {
        var bench = Bench()
        try bench.start()
        bench.matrix.press(row: 0, column: 1)
        bench.matrix.press(row: 2, column: 1)
        let events = try bench.scan()
        #expect(events.map(\.key) == [.digit2, .digit8])
        #expect(bench.matrix.shorts.isEmpty)
        #expect(bench.oneRowPerReadAndNeverDrivenHigh)
    }

    @Test func aSecondKeyInTheColumnOfAHeldKeyIsFoundByPolling() throws {
        var bench = Bench()
        try bench.start()
        bench.matrix.press(row: 0, column: 0)
        try bench.scan()
        try bench.run(until: benchTime(100))
        // No column edge: column 0 is already active. The poll finds the second key.
        bench.matrix.press(row: 3, column: 0)
        try bench.run(until: benchTime(200))
        #expect(bench.typed.map(\.key) == [.digit1, .star])
        #expect(bench.oneRowPerReadAndNeverDrivenHigh)
        #expect(bench.typed.allSatisfy { $0.isPress })
        #expect(bench.matrix.shorts.isEmpty)
    }

    @Test func aGhostScanIsRejectedWithoutDiodes() throws {
        var bench = Bench()
        try bench.start()
        // Three corners of a rectangle: the fourth (row 1, column 1 = "5") reads pressed too.
        bench.matrix.press(row: 0, column: 0)
        bench.matrix.press(row: 0, column: 1)
        bench.matrix.press(row: 1, column: 0)
        let events = try bench.scan()
        #expect(events.isEmpty)
        #expect(bench.scanner.ambiguousScans == 1)
        #expect(bench.scanner.nextScan != nil, "keys are down: keep looking")
        bench.matrix.release(row: 0, column: 1)
        #expect(try bench.scan().map(\.key) == [.digit1, .digit4], "unambiguous again")
    }

    @Test func withDiodesThreeKeysAreThreeKeys() throws {
        var bench = Bench(diodes: true)
        try bench.start()
        bench.matrix.press(row: 0, column: 0)
        bench.matrix.press(row: 0, column: 1)
        bench.matrix.press(row: 1, column: 0)
        #expect(try bench.scan().map(\.key) == [.digit1, .digit2, .digit4])
        #expect(bench.scanner.ambiguousScans == 0)
    }

    @Test func theShortDetectorCatchesAPushPullScanner() throws {
        // What popular libraries do: the unselected rows driven high. Two keys in one column then
        // short a high output to a low one. The mock must see it, or the tests above prove nothing.
        let bench = Bench()
        bench.matrix.press(row: 0, column: 1)
        bench.matrix.press(row: 2, column: 1)
        for row in 0..<4 { bench.matrix.drive(row, .high) }
        bench.matrix.drive(0, .low)
        #expect(bench.matrix.shorts.map(\.lowRow) == [0])
        #expect(bench.matrix.shorts.map(\.highRow) == [2])
        #expect(!bench.oneRowPerReadAndNeverDrivenHigh)
    }

    @Test func aBouncingKeyIsDebouncedAcrossScans() throws {
        var bench = Bench()
        try bench.start()
        // Contact bounce seen by scans 1 ms apart, then the key settles pressed.
        for (ms, down) in [(0, true), (1, false), (2, true), (3, false), (4, true)] as [(Int64, Bool)] {
            try bench.run(until: benchTime(ms))
            bench.matrix.setKey(row: 0, column: 2, down: down)
            try bench.scan()
        }
        try bench.run(until: benchTime(23))
        #expect(bench.typed.isEmpty, "not yet: the window runs from the last bounce (4 ms)")
        try bench.run(until: benchTime(24))
        #expect(bench.typed.map(\.key) == [.digit3])
        #expect(bench.typed.first?.at == benchTime(24), "20 ms after the last bounce")
        #expect(bench.keys.suppressedEdges(of: .digit3) == 4)
    }

    @Test func bounceOnOneKeyDoesNotDelayAnother() throws {
        var bench = Bench()
        try bench.start()
        bench.matrix.press(row: 0, column: 0)
        try bench.scan()
        try bench.run(until: benchTime(10))
        bench.matrix.press(row: 1, column: 1)
        try bench.scan()
        bench.matrix.release(row: 1, column: 1)
        try bench.scan()
        try bench.run(until: benchTime(100))
        #expect(bench.typed.map(\.key) == [.digit1], "the 5 was a glitch; the 1 counted on time")
        #expect(bench.typed.first?.at == benchTime(20))
    }

    @Test func stopReleasesEveryRow() throws {
        var bench = Bench()
        try bench.start()
        try bench.scanner.stop()
        #expect(bench.matrix.drives == [.highZ, .highZ, .highZ, .highZ])
    }

    @Test func ambiguityIsTwoRowsSharingTwoColumns() {
        typealias Scanner = MatrixScanner<MockMatrix.RowLines, MockMatrix.ColumnLines, VirtualDelay>
        #expect(!Scanner.isAmbiguous([0b011, 0b000, 0b000]))
        #expect(!Scanner.isAmbiguous([0b001, 0b001, 0b001]), "one column shared is two real keys in a column")
        #expect(Scanner.isAmbiguous([0b011, 0b011, 0b000]))
        #expect(Scanner.isAmbiguous([0b000, 0b110, 0b110]))
    }
}
