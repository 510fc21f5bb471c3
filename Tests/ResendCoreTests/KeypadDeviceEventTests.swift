import HAL
import HALMock
import ResendCore
import Testing

/// What the evdev backend delivers when its device goes and comes back (`HotplugEvdevKeypad`): the
/// releases of held keys, then `.inputDevice`; the loop logs the latter as `.keypad`.
@Suite("Keypad loop: the input device going and coming back")
struct KeypadDeviceEventTests {
    static let gone = HALError(.notFound, operation: "read /dev/input/by-id/kp", errno: 19)

    /// Send at 1 s, "123" typed from 3 s, `*` pressed at 5 s; the unplug at `unplug` delivers its
    /// release (nil: `*` is released by hand at 6.5 s, after the 1 s hold).
    func run(unplug: Instant?) throws -> TestEntryLoop<VirtualEventSource> {
        var device = KeypadDevice()
        device.tap(.button, at: kt(1))
        device.type("123", at: kt(3))
        device.source.schedule(.key(KeyEvent(.star, .pressed, at: kt(5))), at: kt(5))
        if let unplug {
            device.source.schedule(.key(KeyEvent(.star, .released, at: unplug)), at: unplug)
            device.source.schedule(.inputDevice(.offline(path: "/dev/input/by-id/kp", error: Self.gone)), at: unplug)
            device.source.schedule(.inputDevice(.online(path: "/dev/input/by-id/kp", name: "Keypad")), at: kt(9))
        } else {
            device.source.schedule(.key(KeyEvent(.star, .released, at: kt(6.5))), at: kt(6.5))
        }
        device.stop(at: kt(10))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        return loop
    }

    @Test func aKeyHeldWhenTheKeypadIsUnpluggedIsReleasedThenAndDoesNotGoOnHolding() throws {
        let unplugged = try run(unplug: kt(5.3))
        // `*` pressed and released at the unplug: one digit deleted, the field not cleared.
        #expect(unplugged.display.screen(at: kt(7)).first == "Code: **______")
        let events = unplugged.observer.events
        #expect(events.contains { $0.time == kt(5.3) && $0.event == .keypad(.offline(path: "/dev/input/by-id/kp", error: Self.gone)) })
        #expect(events.contains { $0.time == kt(9) && $0.event == .keypad(.online(path: "/dev/input/by-id/kp", name: "Keypad")) })

        // Held on (no unplug) past the hold time, `*` clears the field.
        let held = try run(unplug: nil)
        #expect(held.display.screen(at: kt(7)).first == "Code: ________")
    }
}
