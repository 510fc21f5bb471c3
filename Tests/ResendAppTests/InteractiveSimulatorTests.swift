import CharacterLCD
import HAL
import HALMock
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// Keys typed at given instants on a virtual clock: `waitForKeys` moves the clock to the next
/// key or the deadline, like the terminal would block.
private struct TypedKeys: KeySource {
    let clock: ManualClock
    var keys: [(Instant, KeyInput)]
    mutating func waitForKeys(until deadline: Instant?) throws(HALError) -> [KeyInput] {
        if let next = keys.first, deadline == nil || next.0 <= deadline! {
            clock.set(to: max(clock.now(), next.0))
            keys.removeFirst()
            return [next.1]
        }
        if let deadline {
            clock.set(to: max(clock.now(), deadline))
            return []
        }
        return [.stop]  // the typist left
    }
}

private func key(_ character: Character) -> KeyInput { .key(character.asciiValue!) }

@Suite("Interactive simulator")
struct InteractiveSimulatorTests {
    @Test("space and enter press the button: a pressed edge now and a release 200 ms later")
    func spaceAndEnterPress() throws {
        let clock = ManualClock()
        let t = Instant.origin + .seconds(3)
        var button = KeyboardButton(
            keys: TypedKeys(clock: clock, keys: [(t, key(" ")), (t + .seconds(1), .key(0x0D))]), clock: clock, bounceKey: "b")
        var edges: [ButtonEdge] = []
        while edges.count < 4 {
            for input in try button.wait(until: nil) {
                guard let edge = input.buttonEdge else { Issue.record("unexpected \(input)"); return }
                edges.append(edge)
            }
        }
        #expect(
            edges == [
                ButtonEdge(pressed: true, time: t), ButtonEdge(pressed: false, time: t + .milliseconds(200)),
                ButtonEdge(pressed: true, time: t + .seconds(1)), ButtonEdge(pressed: false, time: t + .milliseconds(1200)),
            ])
    }

    @Test("the bounce key gives a burst that settles pressed, then a release")
    func bounceKey() throws {
        let clock = ManualClock()
        var button = KeyboardButton(keys: TypedKeys(clock: clock, keys: [(.origin, key("x"))]), clock: clock, bounceKey: "x")
        var edges: [ButtonEdge] = []
        while true {
            let inputs = try button.wait(until: nil)
            if inputs == [.stop] { break }
            edges += inputs.compactMap(\.buttonEdge)
        }
        #expect(edges.count == 10)
        #expect(zip(edges, edges.dropFirst()).allSatisfy { $0.pressed != $1.pressed && $0.time < $1.time })
        #expect(edges[8].pressed == true)
        #expect(edges.last?.pressed == false)
    }

    @Test("q, Q, Ctrl-C, Ctrl-D and a stop signal all stop", arguments: [key("q"), key("Q"), .key(0x03), .key(0x04), KeyInput.stop])
    func quitKeys(input: KeyInput) throws {
        let clock = ManualClock()
        var button = KeyboardButton(keys: TypedKeys(clock: clock, keys: [(.origin, input)]), clock: clock, bounceKey: "b")
        #expect(try button.wait(until: nil) == [.stop])
    }

    @Test("other keys do nothing; the deadline still returns on time")
    func otherKeysIgnored() throws {
        let clock = ManualClock()
        var button = KeyboardButton(keys: TypedKeys(clock: clock, keys: [(.origin, key("z"))]), clock: clock, bounceKey: "b")
        #expect(try button.wait(until: .origin + .seconds(2)) == [])
        #expect(clock.now() == .origin + .seconds(2))
    }

    @Test("the terminal drawing shows the LCD rows in a frame, the LED and the keys")
    func drawing() throws {
        let clock = ManualClock()
        var settings = BehaviourSettings()
        settings.durationSeconds = 5
        var device = MockDevice(
            settings: settings, clock: clock, delay: VirtualDelay(clock: clock), bus: RecordingI2CBus(clock: clock, blocking: true))
        try device.display.start(now: clock.now())
        let drawn = Capture()
        let renderer = TerminalRenderer(emulator: device.emulator, led: device.led, settings: settings, bounceKey: "b") { drawn.out.append($0) }
        let t = clock.now() + .seconds(1)
        let environment = LoopEnvironment(
            source: KeyboardButton(keys: TypedKeys(clock: clock, keys: [(t, key(" "))]), clock: clock, bounceKey: "b"), display: device.display,
            outputs: Outputs(led: device.led), commands: .none, clock: clock, wallClock: NoWallClock(), observer: renderer,
            store: NoStateStorage?.none)
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(controller: settings.controllerConfig, button: settings.makeDebouncer(), keypad: nil))
        try loop.run()
        let frames = drawn.out
        #expect(frames.first?.contains("│Verification    │") == true)
        #expect(frames.first?.contains("│Send code       │") == true)
        #expect(frames.first?.contains("LED ● on") == true)
        #expect(frames.contains { $0.contains("│Resend (05)     │") && $0.contains("LED ○ off") && $0.contains("countdown started") })
        #expect(frames.contains { $0.contains("│Resend (01)     │") })
        #expect(frames.last?.contains("│Stopped         │") == true)
        #expect(frames.allSatisfy { $0.hasPrefix("\u{1B}[H") })  // drawn in place, no scrolling
        #expect(frames.first?.contains("space/enter press   b bouncy press   q quit") == true)
        #expect(device.emulator.violations.isEmpty)
    }
}
