import CharacterLCD
import HAL
import Testing

/// Port calls made by `initialize()` without glyphs: four init nibbles and two writes.
let callsPerInitialize = 6

struct HD44780ErrorTests {
    @Test("a failed render throws the port's error and forgets the screen")
    func renderFailure() throws {
        var (lcd, trace) = portLCD()
        try lcd.initialize()
        try lcd.render(frame("Hi", "yo"))
        trace.failFromCall = callsPerInitialize + 1
        #expect(throws: HALError(.injected, operation: "write")) {
            try lcd.render(frame("Ho", "yo"))
        }
        #expect(!lcd.isInitialized)
        #expect(lcd.shadowFrame == nil)
    }

    @Test("the render after a failure re-runs initialize and repaints every non-blank cell")
    func recoveryRepaints() throws {
        var (lcd, trace) = portLCD()
        try lcd.defineGlyph(3, rows: [1, 1, 1, 1, 1, 1, 1, 1])
        try lcd.initialize()
        try lcd.render(frame("Hi", "yo"))
        trace.failFromCall = callsPerInitialize + 1
        #expect(throws: HALError.self) { try lcd.render(frame("Ho", "yo")) }
        trace.failFromCall = nil
        trace.clear()
        try lcd.render(frame("Ho", "yo"))
        #expect(trace.lines.filter { $0.hasPrefix("nibble") }.count == 4)
        #expect(
            trace.portWrites == [
                "I28 I08 I01",
                "I06 I58 D01 D01 D01 D01 D01 D01 D01 D01 I80 I0C",  // CGRAM re-uploaded
                "D48 D6F IC0 D79 D6F",  // the whole frame, not just the changed 'o'
            ])
        #expect(lcd.shadowFrame?[0].starts(with: "Ho".utf8) == true)
    }

    @Test(
        "a failure anywhere in initialize leaves the display uninitialized and stops there",
        arguments: 0..<callsPerInitialize)
    func initializeFailure(failingCall: Int) {
        var (lcd, trace) = portLCD()
        trace.failFromCall = failingCall
        #expect(throws: HALError.self) { try lcd.initialize() }
        #expect(!lcd.isInitialized)
        #expect(lcd.shadowFrame == nil)
        let calls = trace.events.filter { if case .wait = $0 { false } else { true } }
        #expect(calls.count == failingCall)
    }

    @Test("a failed glyph upload forgets the screen; the next render re-initializes")
    func glyphFailure() throws {
        var (lcd, trace) = portLCD()
        try lcd.initialize()
        trace.failFromCall = callsPerInitialize
        #expect(throws: HALError(.injected, operation: "write")) {
            try lcd.defineGlyph(0, rows: [0, 0, 0, 0, 0, 0, 0, 0])
        }
        #expect(!lcd.isInitialized)
        trace.failFromCall = nil
        trace.clear()
        try lcd.render(frame("a"))
        #expect(trace.portWrites == ["I28 I08 I01", "I06 I40 D00 D00 D00 D00 D00 D00 D00 D00 I80 I0C", "D61"])
    }

    @Test("a failed backlight switch does not touch the controller's state")
    func backlightFailure() throws {
        var (lcd, trace) = portLCD()
        try lcd.initialize()
        try lcd.render(frame("Hi"))
        trace.failFromCall = callsPerInitialize + 1
        #expect(throws: HALError(.injected, operation: "backlight")) { try lcd.setBacklight(false) }
        #expect(lcd.isInitialized)
        trace.failFromCall = nil
        trace.clear()
        try lcd.render(frame("Hi!"))
        #expect(trace.lines == ["D21"])
    }

    @Test("a bus error under the backpack reaches the caller and invalidates the shadow")
    func busError() throws {
        var (lcd, trace) = busLCD()
        try lcd.initialize()
        trace.failFromCall = callsPerInitialize
        #expect(throws: HALError(.injected, operation: "write i2c 27")) {
            try lcd.render(frame("Resend (59)"))
        }
        #expect(!lcd.isInitialized)
        #expect(lcd.shadowFrame == nil)
    }
}
