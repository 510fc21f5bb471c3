import CharacterLCD
import HAL
import Testing

/// Our own bugs crash: misuse of the API is a precondition failure, not a thrown error.
/// (Exit tests run the body in a child process.)
struct PreconditionTests {
    @Test("a frame row longer than the display is a precondition failure")
    func rowTooLong() async {
        await #expect(processExitsWith: .failure) {
            var (lcd, _) = portLCD(.lcd16x2)
            try lcd.render(frame("0123456789abcdefX"))
        }
    }

    @Test("a frame with more rows than the display is a precondition failure")
    func tooManyRows() async {
        await #expect(processExitsWith: .failure) {
            var (lcd, _) = portLCD(.lcd16x2)
            try lcd.render(frame("a", "b", "c"))
        }
    }

    @Test("a glyph code above 7 or a row wider than 5 dots is a precondition failure")
    func badGlyph() async {
        await #expect(processExitsWith: .failure) {
            var (lcd, _) = portLCD()
            try lcd.defineGlyph(8, rows: [0, 0, 0, 0, 0, 0, 0, 0])
        }
        await #expect(processExitsWith: .failure) {
            var (lcd, _) = portLCD()
            try lcd.defineGlyph(0, rows: [0x20, 0, 0, 0, 0, 0, 0, 0])
        }
    }

    @Test("a backpack with a wiring made invalid by mutation is a precondition failure")
    func invalidWiring() async {
        await #expect(processExitsWith: .failure) {
            var wiring = PCF8574Wiring.common
            wiring.d7 = wiring.rs
            _ = PCF8574Backpack(bus: RecordingBus(trace: Trace()), address: backpackAddress, wiring: wiring)
        }
    }
}
