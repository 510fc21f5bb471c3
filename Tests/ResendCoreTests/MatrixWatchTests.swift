import HAL
import HALMock
import ResendCore
import Testing

/// A delay that advances the virtual clock and, at its `trigger`th call, runs `action` (a key
/// pressed in the middle of a scan).
private struct EventfulDelay: Delay {
    var inner: VirtualDelay
    var calls = 0
    var trigger = 0
    var action: (() -> Void)?

    mutating func delay(_ span: TimeSpan) {
        calls += 1
        if calls == trigger { action?() }
        inner.delay(span)
    }
}

/// A matrix watch on a mock 4x3 matrix in virtual time; column edges are modelled as the kernel
/// stamps them: at the moment a key changes.
private struct Bench {
    let clock = ManualClock(Instant(nanoseconds: 1_000_000_000))
    let matrix: MockMatrix
    var watch: MatrixWatch<MockMatrix.RowLines, MockMatrix.ColumnLines, EventfulDelay, ManualClock>

    init() {
        matrix = MockMatrix(rows: 4, columns: 3, clock: clock)
        let scanner = MatrixScanner(
            rows: matrix.rowLines, columns: matrix.columnLines, delay: EventfulDelay(inner: VirtualDelay(clock: clock)),
            layout: .threeByFour)
        watch = MatrixWatch(scanner: scanner, clock: clock)
    }

    var now: Instant { clock.now() }

    /// A key changes 1 ms from now; its column's edge (stamped then) reaches the watch 50 us later.
    mutating func key(row: Int, column: Int, down: Bool) throws -> [KeyEvent] {
        clock.advance(by: .milliseconds(1))
        matrix.setKey(row: row, column: column, down: down)
        let stamp = now
        clock.advance(by: .microseconds(50))
        return try watch.columnEdges(newest: stamp, now: now)
    }

    /// Runs the watch's timer until `time`, collecting what the scans report.
    mutating func run(until time: Instant) throws -> [KeyEvent] {
        var events: [KeyEvent] = []
        while let next = watch.nextScan, next <= time {
            clock.set(to: max(now, next))
            events += try watch.timerFired(now: now)
        }
        clock.set(to: max(now, time))
        return events
    }
}

private func keys(_ events: [KeyEvent]) -> [String] {
    events.map { String(decoding: [$0.key.symbol], as: UTF8.self) + ($0.isPress ? " down" : " up") }
}

@Suite("Matrix watch: when a GPIO matrix is scanned")
struct MatrixWatchTests {
    @Test func idleEveryRowIsDrivenAndNothingIsArmed() throws {
        var bench = Bench()
        try bench.watch.start()
        #expect(bench.matrix.drives == [.low, .low, .low, .low])
        #expect(bench.watch.nextScan == nil, "idle: no timer, only column edges wake the loop")
        #expect(bench.watch.scans == 1)
    }

    @Test func aColumnEdgeScansAndAHeldKeyIsPolledUntilItsRelease() throws {
        var bench = Bench()
        try bench.watch.start()
        #expect(keys(try bench.key(row: 1, column: 1, down: true)) == ["5 down"])
        let polled = try #require(bench.watch.nextScan)
        #expect(polled > bench.now && polled <= bench.now + .milliseconds(5), "polls while a key is down")
        // The release's edge comes while polling: ignored, the next poll reports it.
        #expect(try bench.key(row: 1, column: 1, down: false) == [])
        #expect(keys(try bench.run(until: bench.now + .milliseconds(10))) == ["5 up"])
        #expect(bench.watch.nextScan == nil, "every key up: back to waiting for edges")
        #expect(!bench.matrix.timeline.contains { $0.drives.contains(.high) })
    }

    @Test func twoKeysInOneColumnAreBothSeenPressedAndReleased() throws {
        var bench = Bench()
        try bench.watch.start()
        #expect(keys(try bench.key(row: 0, column: 0, down: true)) == ["1 down"])
        _ = try bench.run(until: bench.now + .milliseconds(20))
        // Column 0 is already low: the second key makes no edge; the poll finds it.
        bench.matrix.press(row: 1, column: 0)
        #expect(keys(try bench.run(until: bench.now + .milliseconds(6))) == ["4 down"])
        // Releasing one of the two leaves the column low: again only the poll sees it.
        bench.matrix.release(row: 0, column: 0)
        #expect(keys(try bench.run(until: bench.now + .milliseconds(6))) == ["1 up"])
        bench.matrix.release(row: 1, column: 0)
        #expect(keys(try bench.run(until: bench.now + .milliseconds(6))) == ["4 up"])
        #expect(bench.watch.nextScan == nil)
        #expect(bench.matrix.shorts.isEmpty, "two keys in one column never short two rows")
    }

    @Test func edgesTheScanItselfMadeStartNoFurtherScan() throws {
        var bench = Bench()
        try bench.watch.start()
        let scans = bench.watch.scans
        let end = try #require(bench.watch.lastScanEnd)
        // Edges stamped up to the end of the last scan (its own row driving) are ignored.
        #expect(try bench.watch.columnEdges(newest: end, now: bench.now) == [])
        #expect(try bench.watch.columnEdges(newest: end - .microseconds(30), now: bench.now) == [])
        #expect(bench.watch.scans == scans)
        #expect(bench.watch.ignoredEdges == 2)
        // A newer edge (a bounce that left nothing down) scans once and stays idle.
        bench.clock.advance(by: .milliseconds(1))
        #expect(try bench.watch.columnEdges(newest: bench.now, now: bench.now) == [])
        #expect(bench.watch.scans == scans + 1)
        #expect(bench.watch.nextScan == nil)
    }

    @Test func aKeyPressedDuringAScanIsNotMissed() throws {
        var bench = Bench()
        try bench.watch.start()
        // A bounce on column 2 starts a scan; during its third row's settle time, key 1 (row 0,
        // already read) comes down: the scan misses it and its edge predates the scan's end.
        bench.clock.advance(by: .milliseconds(1))
        let stamp = bench.now
        let matrix = bench.matrix
        bench.watch.scanner.delay.calls = 0
        bench.watch.scanner.delay.trigger = 3
        bench.watch.scanner.delay.action = { matrix.press(row: 0, column: 0) }
        #expect(try bench.watch.columnEdges(newest: stamp, now: bench.now) == [])
        bench.watch.scanner.delay.action = nil
        #expect(try bench.watch.columnEdges(newest: stamp, now: bench.now) == [], "its edge is older than the scan")
        // With every row driven its column reads low: the watch polls and finds it.
        #expect(bench.watch.nextScan != nil)
        #expect(keys(try bench.run(until: bench.now + .milliseconds(6))) == ["1 down"])
    }

    @Test func stopReleasesEveryRow() throws {
        var bench = Bench()
        try bench.watch.start()
        _ = try bench.key(row: 3, column: 2, down: true)
        try bench.watch.stop()
        #expect(bench.matrix.drives == [.highZ, .highZ, .highZ, .highZ])
        #expect(bench.watch.nextScan == nil)
    }
}
