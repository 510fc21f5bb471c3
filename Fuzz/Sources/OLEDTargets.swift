import CharacterLCD
import HAL
import HALMock

/// The GNU Unifont .hex parser (display.font is outside input): any bytes give glyphs or a
/// `UnifontError` naming a line inside the input, never a crash; every glyph kept is 8 or 16 wide
/// with 16 rows, and the text layout on the glass never fails.
func fuzzUnifont(_ bytes: [UInt8]) {
    let font: Unifont
    do throws(UnifontError) {
        font = try Unifont(parsing: bytes)
    } catch {
        let lines = bytes.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        precondition(error.line >= 1 && error.line <= lines, "unifont: error on line \(error.line) of \(lines)")
        precondition(!error.message.isEmpty, "unifont: an error without a message")
        return
    }
    var text = ""
    for (code, glyph) in font.glyphs {
        precondition(glyph.width == 8 || glyph.width == 16, "unifont: glyph U+\(Unifont.codePointText(code)) is \(glyph.width) wide")
        precondition(glyph.rows.count == UnifontGlyph.height, "unifont: glyph with \(glyph.rows.count) rows")
        if glyph.width == 8 { precondition(glyph.rows.allSatisfy { $0 & 0x00FF == 0 }, "unifont: an 8-wide glyph has pixels past column 8") }
        if let scalar = Unicode.Scalar(code), text.unicodeScalars.count < 24 { text.unicodeScalars.append(scalar) }
    }
    _ = UnifontText.render([text, String(text.reversed())], font: font)
}

/// The SSD1306/SH1106 driver against the emulator: arbitrary frames, flips, contrast, display
/// on/off, write limits and injected failures. After every successful call the emulated glass
/// is exactly the frame and the byte stream broke no datasheet rule.
func fuzzOLED(_ bytes: [UInt8]) {
    var input = bytes[...]
    func next() -> UInt8? { input.popFirst() }
    guard let setup = next() else { return }
    let controller: OLEDController = setup & 1 == 0 ? .ssd1306 : .sh1106
    let maxWrite = 2 + Int(setup >> 1) * 33
    let clock = ManualClock()
    let bus = RecordingI2CBus(clock: clock, blocking: true)
    let emulator = OLEDEmulator(chip: controller == .ssd1306 ? .ssd1306 : .sh1106)
    let address = I2CAddress(constant: 0x3C)
    bus.attach(emulator, at: address)
    var oled = SSD130x(bus: bus, delay: VirtualDelay(clock: clock), address: address, controller: controller, maxWriteLength: maxWrite)
    var frame = PixelFrame()
    while let operation = next() {
        do throws(HALError) {
            switch operation % 8 {
            case 0: try oled.setFlipped(operation & 0x10 != 0)
            case 1: try oled.setContrast(next() ?? 0)
            case 2: try oled.setDisplayOn(operation & 0x10 != 0)
            case 3: bus.failNext(1)
            default:
                // Change a few bytes (a glyph's worth) at a place the input picks.
                let count = Int(next() ?? 0) % 40
                var x = Int(next() ?? 0) % OLEDGlass.width
                var y = Int(next() ?? 0) % OLEDGlass.height
                for _ in 0..<count {
                    frame.set(x: x, y: y, (next() ?? 0) & 1 == 1)
                    x = (x + 1) % OLEDGlass.width
                    if x == 0 { y = (y + 3) % OLEDGlass.height }
                }
                try oled.render(frame)
            }
        } catch {
            continue
        }
        precondition(emulator.violations.isEmpty, "oled: \(emulator.violations)")
        guard oled.isInitialized, oled.isDisplayOn, let shown = oled.shadowFrame else { continue }
        precondition(shown == frame || operation % 8 < 4, "oled: the shadow is not the frame")
        for y in 0..<OLEDGlass.height {
            for x in 0..<OLEDGlass.width {
                let want = shown.pixel(x: oled.isFlipped ? OLEDGlass.width - 1 - x : x, y: oled.isFlipped ? OLEDGlass.height - 1 - y : y)
                precondition(emulator.pixel(x: x, y: y) == want, "oled: glass differs from the frame at (\(x), \(y))")
            }
        }
    }
}
