import HAL
import HALMock
import ResendCore
import Testing

/// No wait: the mock matrix settles at once.
private struct NoSettle: Delay {
    mutating func delay(_ span: TimeSpan) {}
}

/// A GPIO matrix keypad on virtual time: the keys' events come from a script (a key event may be
/// lost: the key moves, nothing is delivered), and a level read is a real scan of a `MockMatrix`
/// whose keys move at their scripted times, as `run`'s matrix backend answers.
private struct ScannedMatrixSource: EventSource {
    var inner: VirtualEventSource
    let matrix: MockMatrix
    var scanner: MatrixScanner<MockMatrix.RowLines, MockMatrix.ColumnLines, NoSettle>
    /// Where each key physically is from when: (time, key, down), sorted by time.
    var moves: [(time: Instant, key: Key, down: Bool)] = []
    /// Scans made for level reads.
    var reads = 0

    init(clock: ManualClock) {
        inner = VirtualEventSource(clock: clock)
        matrix = MockMatrix(rows: 4, columns: 3, clock: clock)
        scanner = MatrixScanner(rows: matrix.rowLines, columns: matrix.columnLines, delay: NoSettle(), layout: .threeByFour)
    }

    /// `key` goes down or up at `time`; `delivered` false: its event is lost.
    mutating func move(_ key: Key, down: Bool, at time: Instant, delivered: Bool = true) {
        moves.append((time, key, down))
        moves.sort { $0.time < $1.time }
        if delivered { inner.schedule(.key(KeyEvent(key, down ? .pressed : .released, at: time)), at: time) }
    }

    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        try inner.wait(until: deadline)
    }

    /// The matrix scanned now: `key` down or up; nil for the button (not on the matrix).
    mutating func readLevel(of key: Key) throws(HALError) -> ButtonLevel? {
        let now = inner.clock.now()
        guard let row = KeypadLayout.threeByFour.keys.firstIndex(where: { $0.contains(key) }),
            let column = KeypadLayout.threeByFour.keys[row].firstIndex(of: key)
        else { return nil }
        for move in moves where move.time <= now {
            guard let r = KeypadLayout.threeByFour.keys.firstIndex(where: { $0.contains(move.key) }),
                let c = KeypadLayout.threeByFour.keys[r].firstIndex(of: move.key)
            else { continue }
            matrix.setKey(row: r, column: c, down: move.down)
        }
        reads += 1
        _ = try scanner.scan(now: now)
        return ButtonLevel(pressed: scanner.down[row] & (1 << UInt32(column)) != 0, time: now)
    }
}

@Suite("One repair for every key")
struct KeyRepairTests {
    @Test("a matrix key whose release was lost is repaired from a scan after edgesMayBeLost, like the button: typed again, it counts")
    func lostMatrixReleaseIsRepaired() throws {
        let device = KeypadDevice()
        var source = ScannedMatrixSource(clock: device.clock)
        source.move(.button, down: true, at: kt(1))
        source.move(.button, down: false, at: kt(1.1))
        // 5 pressed at 3 s; its release at 3.1 s is lost; the backend notices at 3.2 s.
        source.move(.digit5, down: true, at: kt(3))
        source.move(.digit5, down: false, at: kt(3.1), delivered: false)
        source.inner.schedule(.edgesMayBeLost, at: kt(3.2))
        // Typed again.
        source.move(.digit5, down: true, at: kt(3.4))
        source.move(.digit5, down: false, at: kt(3.5))
        source.inner.schedule(.stop, at: kt(5))
        var loop = device.loop(source: source, verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        #expect(loop.display.screen(at: kt(2)).first == "Code: ________")
        #expect(loop.display.screen(at: kt(3.3)).first == "Code: *_______")
        // The second 5 counts: the scan found the key up, so its next press is a press.
        #expect(loop.display.screen(at: kt(4)).first == "Code: **______")
        #expect(loop.observer.events.contains { $0.event == .keyEdgesLost })
    }

    @Test("the press's bounces suppressed counts the button's bounces only, not a keypad key's")
    func bouncesCountTheButtonOnly() throws {
        var device = KeypadDevice()
        // A digit bouncing four times before the send (ignored by the flow, still debounced).
        for (index, ms) in [0, 1, 2, 3, 4].enumerated() {
            let time = kt(0.5) + .milliseconds(Int64(ms))
            device.source.schedule(.key(KeyEvent(.digit7, index % 2 == 0 ? .pressed : .released, at: time)), at: time)
        }
        device.source.schedule(.key(KeyEvent(.digit7, .released, at: kt(0.6))), at: kt(0.6))
        device.tap(.button, at: kt(1))
        device.stop(at: kt(3))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        #expect(loop.runner.requests.count == 1)
        #expect(!loop.observer.events.contains { if case .bouncesSuppressed = $0.event { true } else { false } })
    }
}
