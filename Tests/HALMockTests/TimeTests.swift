import HAL
import HALMock
import Testing

@Suite("Manual clock and virtual delay")
struct TimeTests {
    @Test("a manual clock starts where told and moves only when advanced or set")
    func manualClock() {
        let clock = ManualClock(.origin + .seconds(2))
        #expect(clock.now() == .origin + .seconds(2))
        #expect(clock.now() == .origin + .seconds(2))
        clock.advance(by: .milliseconds(250))
        #expect(clock.now() == Instant(nanoseconds: 2_250_000_000))
        clock.set(to: .origin + .seconds(3))
        #expect(clock.now() == .origin + .seconds(3))
        clock.set(to: .origin + .seconds(3))
        clock.advance(by: .zero)
        #expect(clock.now() == .origin + .seconds(3))
    }

    @Test("a manual clock starts at the origin by default")
    func defaultStart() {
        #expect(ManualClock().now() == .origin)
    }

    @Test("setting a manual clock backwards is a bug (crashes)")
    func backwardsCrashes() async {
        await #expect(processExitsWith: .failure) {
            let clock = ManualClock(.origin + .seconds(1))
            clock.set(to: .origin)
        }
    }

    @Test("advancing a manual clock by a negative span is a bug (crashes)")
    func negativeAdvanceCrashes() async {
        await #expect(processExitsWith: .failure) {
            ManualClock().advance(by: .microseconds(-1))
        }
    }

    @Test("a virtual delay advances the clock and records the total, shared by its copies")
    func virtualDelay() {
        let clock = ManualClock()
        let delay = VirtualDelay(clock: clock)
        var driverCopy = delay
        driverCopy.delay(.milliseconds(40))
        driverCopy.delay(.microseconds(4_100))
        driverCopy.delay(.zero)
        driverCopy.delay(.microseconds(-5))
        #expect(clock.now() == .origin + .microseconds(44_100))
        #expect(delay.total == .microseconds(44_100))
        #expect(delay.requests == [.milliseconds(40), .microseconds(4_100), .zero, .microseconds(-5)])
    }
}

@Suite("Recording LED")
struct RecordingLEDTests {
    @Test("the LED records each level with the clock's time")
    func history() throws {
        let clock = ManualClock()
        let led = RecordingLED(clock: clock)
        #expect(led.isOn == nil)
        try led.set(true)
        clock.advance(by: .seconds(1))
        try led.set(false)
        #expect(led.isOn == false)
        #expect(led.history.map(\.time) == [.origin, .origin + .seconds(1)])
        #expect(led.levels == [true, false])
    }

    @Test("an injected LED failure throws, changes nothing, and later sets work")
    func failure() throws {
        let clock = ManualClock()
        let led = RecordingLED(clock: clock)
        try led.set(true)
        led.failNext(1, with: .io)
        #expect(throws: HALError(.io, operation: "set LED")) { try led.set(false) }
        #expect(led.isOn == true)
        #expect(led.failures == 1)
        try led.set(false)
        #expect(led.levels == [true, false])
        led.failAlways()
        #expect(throws: HALError(.injected, operation: "set LED")) { try led.set(true) }
        #expect(throws: HALError(.injected, operation: "set LED")) { try led.set(true) }
        led.clearFailures()
        try led.set(true)
        #expect(led.isOn == true)
    }
}

@Suite("Button scripts")
struct ButtonScriptTests {
    let t0 = Instant.origin + .seconds(1)

    @Test("a clean press is a press edge then a release edge holdFor later")
    func press() {
        #expect(
            ButtonScript.press(at: t0, holdFor: .milliseconds(200)) == [
                ButtonEdge(pressed: true, time: t0),
                ButtonEdge(pressed: false, time: t0 + .milliseconds(200)),
            ])
    }

    @Test(
        "a bouncy press alternates, settles pressed after 2 * bounces edges, then releases",
        arguments: [0, 1, 3])
    func bouncyPress(bounces: Int) {
        let spacing = TimeSpan.milliseconds(1)
        let edges = ButtonScript.bouncyPress(at: t0, bounces: bounces, spacing: spacing, holdFor: .milliseconds(300))
        #expect(edges.count == 2 * bounces + 2)
        // Levels alternate, starting pressed; the last two are the settled press and the release.
        #expect(edges.map(\.pressed) == (0..<edges.count).map { $0 % 2 == 0 })
        #expect(edges.map(\.time) == edges.map(\.time).sorted())
        let settled = t0 + spacing * Int64(2 * bounces)
        #expect(edges[edges.count - 2] == ButtonEdge(pressed: true, time: settled))
        #expect(edges.last == ButtonEdge(pressed: false, time: settled + .milliseconds(300)))
        for index in 1..<(edges.count - 1) {
            #expect(edges[index].time - edges[index - 1].time == spacing)
        }
    }

    @Test("a bouncy press without bounces is a clean press")
    func bouncyWithoutBounces() {
        #expect(
            ButtonScript.bouncyPress(at: t0, bounces: 0, spacing: .milliseconds(1), holdFor: .milliseconds(50))
                == ButtonScript.press(at: t0, holdFor: .milliseconds(50)))
    }

    @Test("a glitch is a pressed pulse of the given width")
    func glitch() {
        #expect(
            ButtonScript.glitch(at: t0, width: .microseconds(500)) == [
                ButtonEdge(pressed: true, time: t0),
                ButtonEdge(pressed: false, time: t0 + .microseconds(500)),
            ])
    }
}

@Suite("Virtual event source")
struct VirtualEventSourceTests {
    let edgeA = ButtonEdge(pressed: true, time: .origin + .milliseconds(10))
    let edgeB = ButtonEdge(pressed: false, time: .origin + .milliseconds(10))
    let edgeC = ButtonEdge(pressed: true, time: .origin + .milliseconds(30))

    @Test("inputs come out in time order, equal times together in the order given, with the clock moved there")
    func ordering() throws {
        let clock = ManualClock()
        var source = VirtualEventSource(
            clock: clock,
            inputs: [
                (time: edgeC.time, input: .button(edgeC)),
                (time: edgeA.time, input: .button(edgeA)),
                (time: edgeB.time, input: .button(edgeB)),
            ])
        #expect(try source.wait(until: nil) == [.button(edgeA), .button(edgeB)])
        #expect(clock.now() == .origin + .milliseconds(10))
        #expect(try source.wait(until: nil) == [.button(edgeC)])
        #expect(clock.now() == .origin + .milliseconds(30))
    }

    @Test("a deadline before the next input returns nothing at the deadline; the input comes later")
    func deadlineFirst() throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock, edges: [edgeC])
        #expect(try source.wait(until: .origin + .milliseconds(20)) == [])
        #expect(clock.now() == .origin + .milliseconds(20))
        #expect(try source.wait(until: .origin + .milliseconds(40)) == [.button(edgeC)])
        #expect(clock.now() == .origin + .milliseconds(30))
    }

    @Test("an input due exactly at the deadline is returned")
    func inputAtDeadline() throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock, edges: [edgeC])
        #expect(try source.wait(until: edgeC.time) == [.button(edgeC)])
        #expect(clock.now() == edgeC.time)
    }

    @Test("a deadline in the past returns at once without moving the clock")
    func pastDeadline() throws {
        let clock = ManualClock(.origin + .seconds(1))
        var source = VirtualEventSource(clock: clock, edges: [ButtonEdge(pressed: true, time: .origin + .seconds(2))])
        #expect(try source.wait(until: .origin + .milliseconds(500)) == [])
        #expect(clock.now() == .origin + .seconds(1))
    }

    @Test("an input scheduled in the past is delivered at once, keeping its own edge time")
    func pastInput() throws {
        let clock = ManualClock(.origin + .seconds(1))
        var source = VirtualEventSource(clock: clock)
        source.schedule(edges: [edgeA])
        #expect(try source.wait(until: nil) == [.button(edgeA)])
        #expect(clock.now() == .origin + .seconds(1))
    }

    @Test("when the script is over, a wait without deadline returns stop, every time")
    func finalStop() throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock, edges: [edgeA])
        #expect(try source.wait(until: nil) == [.button(edgeA)])
        #expect(try source.wait(until: nil) == [.stop])
        #expect(try source.wait(until: nil) == [.stop])
        #expect(clock.now() == edgeA.time)
    }

    @Test("when the script is over, a wait with a deadline runs the clock to it")
    func deadlineAfterScript() throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock)
        #expect(try source.wait(until: .origin + .seconds(60)) == [])
        #expect(clock.now() == .origin + .seconds(60))
    }

    @Test("scheduled inputs join the script in time order, after inputs already due at the same time")
    func scheduleMore() throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock, edges: [edgeA, edgeC])
        source.schedule(.stop, at: edgeA.time)
        source.schedule(.button(edgeB), at: .origin + .milliseconds(20))
        #expect(source.pending.count == 4)
        #expect(try source.wait(until: nil) == [.button(edgeA), .stop])
        #expect(try source.wait(until: nil) == [.button(edgeB)])
        #expect(clock.now() == .origin + .milliseconds(20))
        #expect(try source.wait(until: nil) == [.button(edgeC)])
    }
}
