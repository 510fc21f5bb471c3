import HAL
import ResendCore
import Testing

/// An arbitrary start, away from the clock's origin.
private let t0 = Instant(nanoseconds: 5_000_000_000)
private let window = TimeSpan.milliseconds(20)

private func ms(_ milliseconds: Int64) -> TimeSpan { .milliseconds(milliseconds) }
private func edge(_ pressed: Bool, at time: Instant) -> ButtonEdge { ButtonEdge(pressed: pressed, time: time) }

/// `count` alternating edges 100 us apart, starting at `start`, the last one at level `last`.
/// With an even count and `last == true` the first edge is a release from released (a lost edge).
private func burst(_ count: Int, settling last: Bool, from start: Instant) -> [ButtonEdge] {
    (0..<count).map { index in
        let stepsFromEnd = count - 1 - index
        return edge(stepsFromEnd % 2 == 0 ? last : !last, at: start + .microseconds(100 * Int64(index)))
    }
}

/// 500 edges from a linear congruential generator started at `seed`: gaps of 0 to 39 ms, one edge in
/// seven stamped 3 ms before the one it follows, two in three at the pressed level.
private func pseudoRandomEdges(seed: Int) -> [ButtonEdge] {
    var random = seed
    var time = t0
    var edges: [ButtonEdge] = []
    for _ in 0..<500 {
        random = (random &* 1_103_515_245 &+ 12_345) & 0x7FFF_FFFF
        time = time + ms(Int64(random % 40))
        let stamp = random % 7 == 0 ? time - ms(3) : time
        edges.append(edge(random % 3 != 0, at: stamp))
    }
    return edges
}

/// Expects at least one change, in time order, each the opposite of the one before.
private func expectOrderedAndAlternating(_ changes: [DebouncedChange], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!changes.isEmpty, sourceLocation: sourceLocation)
    for (earlier, later) in zip(changes, changes.dropFirst()) {
        #expect(earlier.time <= later.time, sourceLocation: sourceLocation)
        #expect(earlier.pressed != later.pressed, sourceLocation: sourceLocation)
    }
}

/// Drives the debouncer as the event loop does: before each edge, handles every deadline that
/// elapsed; after the last edge, runs the deadlines until nothing is pending. Returns every change.
private func run(_ debouncer: inout Debouncer, _ edges: [ButtonEdge]) -> [DebouncedChange] {
    var changes: [DebouncedChange] = []
    for next in edges {
        while let due = debouncer.nextDeadline, due <= next.time {
            if let change = debouncer.advance(to: due) { changes.append(change) }
        }
        if let change = debouncer.feed(next) { changes.append(change) }
    }
    while let due = debouncer.nextDeadline {
        if let change = debouncer.advance(to: due) { changes.append(change) }
    }
    return changes
}

@Suite("Debouncer, stable mode")
struct StableDebouncerTests {
    @Test("a bounce burst settling pressed gives one press at last edge + window", arguments: 1...50)
    func burstGivesOnePress(edgeCount: Int) {
        var debouncer = Debouncer(window: window)
        let edges = burst(edgeCount, settling: true, from: t0)
        #expect(edges.last!.time - edges.first!.time < ms(5))
        for raw in edges {
            #expect(debouncer.feed(raw) == nil)
        }
        let last = edges.last!.time
        #expect(debouncer.nextDeadline == last + window)
        #expect(debouncer.advance(to: last + window / 2) == nil)
        #expect(debouncer.advance(to: last + window - TimeSpan(nanoseconds: 1)) == nil)
        #expect(debouncer.isPressed == false)
        #expect(debouncer.advance(to: last + window) == DebouncedChange(pressed: true, time: last + window))
        #expect(debouncer.isPressed)
        #expect(debouncer.suppressedEdges == edgeCount - 1)
        #expect(debouncer.nextDeadline == nil)
        #expect(debouncer.advance(to: last + .seconds(10)) == nil)
    }

    @Test("a glitch shorter than the window gives no press", arguments: 1...19)
    func glitchIgnored(milliseconds: Int) {
        var debouncer = Debouncer(window: window)
        let changes = run(&debouncer, [edge(true, at: t0), edge(false, at: t0 + ms(Int64(milliseconds)))])
        #expect(changes == [])
        #expect(debouncer.isPressed == false)
        #expect(debouncer.nextDeadline == nil)
        #expect(debouncer.suppressedEdges == 2)
    }

    @Test("at half the window after the last edge nothing, at the window the press")
    func halfWindowThenWindow() {
        var debouncer = Debouncer(window: window)
        #expect(debouncer.feed(edge(true, at: t0)) == nil)
        #expect(debouncer.advance(to: t0 + ms(10)) == nil)
        #expect(debouncer.nextDeadline == t0 + ms(20))
        #expect(debouncer.advance(to: t0 + ms(20)) == DebouncedChange(pressed: true, time: t0 + ms(20)))
    }

    @Test("a level held for exactly the window counts, even when the next edge comes at that instant")
    func heldExactlyWindow() {
        var debouncer = Debouncer(window: window)
        #expect(debouncer.feed(edge(true, at: t0)) == nil)
        // The loop did not call advance: the edge at the deadline reports the press first.
        #expect(debouncer.feed(edge(false, at: t0 + ms(20))) == DebouncedChange(pressed: true, time: t0 + ms(20)))
        #expect(debouncer.nextDeadline == t0 + ms(40))
        #expect(debouncer.advance(to: t0 + ms(40)) == DebouncedChange(pressed: false, time: t0 + ms(40)))
    }

    @Test("a late advance reports the change at its deadline, not at the late instant")
    func lateAdvance() {
        var debouncer = Debouncer(window: window)
        _ = debouncer.feed(edge(true, at: t0))
        #expect(debouncer.advance(to: t0 + .seconds(3)) == DebouncedChange(pressed: true, time: t0 + ms(20)))
    }

    @Test("holding the button does not repeat the press")
    func holdingDoesNotRepeat() {
        var debouncer = Debouncer(window: window)
        var edges = burst(7, settling: true, from: t0)
        // Contact chatter while held (each glitch shorter than the window), then a long hold.
        edges += [
            edge(false, at: t0 + ms(500)), edge(true, at: t0 + ms(502)),
            edge(false, at: t0 + ms(900)), edge(true, at: t0 + ms(915)),
        ]
        let changes = run(&debouncer, edges)
        #expect(changes.map(\.pressed) == [true])
        #expect(debouncer.advance(to: t0 + .seconds(60)) == nil)
    }

    @Test("the next press needs a debounced release first")
    func pressNeedsRelease() {
        var debouncer = Debouncer(window: window)
        let edges = [
            edge(true, at: t0),  // press
            edge(false, at: t0 + ms(100)), edge(true, at: t0 + ms(110)),  // 10 ms release glitch: no new press
            edge(false, at: t0 + ms(300)),  // real release
            edge(true, at: t0 + ms(400)),  // second press
        ]
        let changes = run(&debouncer, edges)
        #expect(
            changes == [
                DebouncedChange(pressed: true, time: t0 + ms(20)),
                DebouncedChange(pressed: false, time: t0 + ms(320)),
                DebouncedChange(pressed: true, time: t0 + ms(420)),
            ])
        #expect(debouncer.suppressedEdges == 2)
    }

    @Test("a repeated level while a change is pending restarts the window")
    func duplicateRestartsWindow() {
        var debouncer = Debouncer(window: window)
        _ = debouncer.feed(edge(true, at: t0))
        _ = debouncer.feed(edge(true, at: t0 + ms(15)))  // a release was lost in between
        #expect(debouncer.nextDeadline == t0 + ms(35))
        #expect(debouncer.advance(to: t0 + ms(20)) == nil)
        #expect(debouncer.advance(to: t0 + ms(35)) == DebouncedChange(pressed: true, time: t0 + ms(35)))
        #expect(debouncer.suppressedEdges == 1)
    }

    @Test("a repeated level with nothing pending changes nothing and counts as a bounce")
    func duplicateWhenSettled() {
        var debouncer = Debouncer(window: window)
        #expect(debouncer.feed(edge(false, at: t0)) == nil)
        #expect(debouncer.nextDeadline == nil)
        #expect(debouncer.isPressed == false)
        #expect(debouncer.suppressedEdges == 1)
    }

    @Test("an edge stamped before the last edge is taken at the last edge's time")
    func outOfOrderEdge() {
        var debouncer = Debouncer(window: window)
        _ = debouncer.feed(edge(true, at: t0 + ms(10)))
        _ = debouncer.feed(edge(false, at: t0 + ms(5)))  // older stamp: the line went back at 10 ms at the earliest
        #expect(debouncer.nextDeadline == nil)
        _ = debouncer.feed(edge(true, at: t0 + ms(12)))
        #expect(debouncer.nextDeadline == t0 + ms(32))
        #expect(debouncer.advance(to: t0 + ms(32)) == DebouncedChange(pressed: true, time: t0 + ms(32)))
    }

    @Test("an edge stamped before a reported change does not rewrite it; changes stay in time order")
    func edgeOlderThanChange() {
        var debouncer = Debouncer(window: window)
        _ = debouncer.feed(edge(true, at: t0))
        #expect(debouncer.advance(to: t0 + ms(25)) == DebouncedChange(pressed: true, time: t0 + ms(20)))
        // A release stamped 18 ms arrives late: it is handled as at 20 ms.
        #expect(debouncer.feed(edge(false, at: t0 + ms(18))) == nil)
        #expect(debouncer.nextDeadline == t0 + ms(40))
        #expect(debouncer.advance(to: t0 + ms(40)) == DebouncedChange(pressed: false, time: t0 + ms(40)))
    }

    @Test("a debouncer started pressed reports the release first")
    func startsPressed() {
        var debouncer = Debouncer(window: window, pressed: true)
        let changes = run(&debouncer, [edge(false, at: t0), edge(true, at: t0 + ms(100))])
        #expect(changes.map(\.pressed) == [false, true])
    }

    @Test("changes come out in time order and alternate, whatever the input", arguments: [1, 2, 3, 7, 11])
    func ordered(seed: Int) {
        var debouncer = Debouncer(window: window)
        let edges = pseudoRandomEdges(seed: seed)
        let changes = run(&debouncer, edges)
        expectOrderedAndAlternating(changes)
        #expect(changes.first?.pressed == true)
        #expect(debouncer.suppressedEdges == edges.count - changes.count)
    }
}

@Suite("Debouncer, prompt mode")
struct PromptDebouncerTests {
    @Test("a bounce burst gives one press at its first edge", arguments: 1...50)
    func burstGivesOnePress(edgeCount: Int) {
        var debouncer = Debouncer(window: window, mode: .prompt)
        // Odd counts start with a press; even ones with a lost-edge release, then the press.
        let edges = burst(edgeCount, settling: true, from: t0)
        let firstPress = edges.first { $0.pressed }!.time
        var changes: [DebouncedChange] = []
        for raw in edges {
            if let change = debouncer.feed(raw) { changes.append(change) }
        }
        #expect(changes == [DebouncedChange(pressed: true, time: firstPress)])
        #expect(debouncer.nextDeadline == nil)
        #expect(debouncer.advance(to: t0 + .seconds(1)) == nil)
        #expect(debouncer.suppressedEdges == edgeCount - 1)
    }

    @Test("the first edge is reported at once, then the line is ignored for the window")
    func promptThenLockout() {
        var debouncer = Debouncer(window: window, mode: .prompt)
        #expect(debouncer.feed(edge(true, at: t0)) == DebouncedChange(pressed: true, time: t0))
        #expect(debouncer.feed(edge(false, at: t0 + ms(5))) == nil)
        #expect(debouncer.nextDeadline == t0 + ms(20))
        #expect(debouncer.advance(to: t0 + ms(10)) == nil)
        // The line stayed released: at the end of the lock-out the release is reported.
        #expect(debouncer.advance(to: t0 + ms(20)) == DebouncedChange(pressed: false, time: t0 + ms(20)))
        #expect(debouncer.nextDeadline == nil)
    }

    @Test("a release after the window is reported at once")
    func releaseAfterWindow() {
        var debouncer = Debouncer(window: window, mode: .prompt)
        let changes = run(&debouncer, [edge(true, at: t0), edge(false, at: t0 + ms(300))])
        #expect(changes == [DebouncedChange(pressed: true, time: t0), DebouncedChange(pressed: false, time: t0 + ms(300))])
    }

    @Test("two changes due in one feed are both reported, in order")
    func twoChangesDue() {
        var debouncer = Debouncer(window: window, mode: .prompt)
        _ = debouncer.feed(edge(true, at: t0))
        _ = debouncer.feed(edge(false, at: t0 + ms(5)))
        // advance was not called at 20 ms; a press at 50 ms makes the release (20 ms) and itself due.
        #expect(debouncer.feed(edge(true, at: t0 + ms(50))) == DebouncedChange(pressed: false, time: t0 + ms(20)))
        #expect(debouncer.nextDeadline == t0 + ms(50))
        #expect(debouncer.advance(to: t0 + ms(50)) == DebouncedChange(pressed: true, time: t0 + ms(50)))
        #expect(debouncer.nextDeadline == nil)
    }

    @Test("changes come out in time order and alternate, whatever the input", arguments: [1, 2, 3, 7, 11])
    func ordered(seed: Int) {
        var debouncer = Debouncer(window: window, mode: .prompt)
        let edges = pseudoRandomEdges(seed: seed)
        let changes = run(&debouncer, edges)
        expectOrderedAndAlternating(changes)
        #expect(debouncer.suppressedEdges == edges.count - changes.count)
    }
}

/// Reconciling with a read of the line when edges were lost (issue #11: the v1 uAPI's 16-event
/// buffer drops the newest event, so the settling edge of a long burst is the one that goes).
struct DebouncerReconcileTests {
    @Test("a read agreeing with the last edge changes nothing")
    func agreeingRead() {
        var debouncer = Debouncer(window: window)
        _ = debouncer.feed(edge(true, at: t0))
        #expect(debouncer.reconcile(ButtonLevel(pressed: true, time: t0 + ms(5))) == nil)
        #expect(debouncer.nextDeadline == t0 + window)
        #expect(debouncer.reconciledLevels == 0)
    }

    @Test("stable: the settling press edge lost after a bounce release; the read starts the window, the press comes one window later, not before")
    func lostSettlingPress() {
        var debouncer = Debouncer(window: window)
        _ = debouncer.feed(edge(true, at: t0))
        _ = debouncer.feed(edge(false, at: t0 + ms(1)))  // the last edge kept; the settling press was dropped
        #expect(debouncer.nextDeadline == nil)  // by the edges alone: released, nothing pending
        #expect(debouncer.reconcile(ButtonLevel(pressed: true, time: t0 + ms(3))) == nil)
        #expect(debouncer.advance(to: t0 + ms(3) + window - TimeSpan(nanoseconds: 1)) == nil)
        #expect(debouncer.advance(to: t0 + ms(3) + window) == DebouncedChange(pressed: true, time: t0 + ms(3) + window))
        #expect(debouncer.reconciledLevels == 1)
    }

    @Test("stable: a window closing on a lost release is not a press: the read restarts nothing and settles the burst as bounces")
    func lostReleaseNoPhantomPress() {
        var debouncer = Debouncer(window: window)
        _ = debouncer.feed(edge(true, at: t0))
        // The closing release was dropped: the line is back at released when the window closes.
        #expect(debouncer.reconcile(ButtonLevel(pressed: false, time: t0 + window)) == nil)
        #expect(debouncer.nextDeadline == nil)
        #expect(debouncer.advance(to: t0 + window + ms(100)) == nil)
        #expect(!debouncer.isPressed)
        #expect(debouncer.suppressedEdges == 2)
    }

    @Test("prompt: a lost press found by a read counts at once when no lock-out runs")
    func promptReconcile() {
        var debouncer = Debouncer(window: window, mode: .prompt)
        #expect(debouncer.reconcile(ButtonLevel(pressed: true, time: t0)) == DebouncedChange(pressed: true, time: t0))
        #expect(debouncer.isPressed)
    }
}
