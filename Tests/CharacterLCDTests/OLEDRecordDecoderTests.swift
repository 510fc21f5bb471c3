import CharacterLCD
import HAL
import HALMock
import Testing

/// oled-decode's logic (HALMock's OLEDRecordDecoder, vm/oled.sh): the driver's byte stream, as the
/// VM's plain adapter records it, read back as the text a person sees, glyph by glyph.
@Suite("OLED record decoder")
struct OLEDRecordDecoderTests {
    private let hex = String(decoding: fileBytes(unifontFixturePath)!, as: UTF8.self)

    /// The driver's writes for `frames` on the recording bus, as i2c-plain's record lines: one
    /// transaction per write, ending after its wire time (90 us per byte, the address included).
    private func record(_ controller: OLEDController, _ frames: [[String]], corrupt: ((inout [UInt8]) -> Void)? = nil) throws -> [String] {
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, blocking: true)
        let address = I2CAddress(constant: 0x3C)
        bus.attach(OLEDEmulator(chip: controller == .ssd1306 ? .ssd1306 : .sh1106), at: address)
        var oled = SSD130x(bus: bus, delay: VirtualDelay(clock: clock), address: address, controller: controller)
        let font = try Unifont(parsing: Array(hex.utf8))
        try oled.initialize()
        for frame in frames { try oled.render(UnifontText.render(frame, font: font)) }
        return bus.transactions.enumerated().map { index, transaction in
            var bytes = transaction.bytes
            if index == bus.transactions.count - 1 { corrupt?(&bytes) }
            let start = transaction.time.nanoseconds
            let end = start + Int64(bytes.count + 1) * 90_000
            func stamp(_ ns: Int64) -> String {
                let fraction = String(ns % 1_000_000_000)
                return "\(ns / 1_000_000_000)." + String(repeating: "0", count: 9 - fraction.count) + fraction
            }
            return "\(index) \(stamp(start)) \(stamp(end)) 1/1 w 0x3c ack \(bytes.count) "
                + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
    }

    private func decode(_ lines: [String], chip: OLEDEmulator.Chip) throws -> [String] {
        let messages = try lines.enumerated().map { try AdapterRecordMessage.parse($1, number: $0 + 1) }
        return try OLEDRecordDecoder(chip: chip, glyphs: try GlassGlyphs(hex: hex), address: 0x3C).decode(messages)
    }

    @Test("a recorded Chinese countdown frame reads back as its text on SSD1306 and SH1106", arguments: [OLEDController.ssd1306, .sh1106])
    func readsTheLabel(controller: OLEDController) throws {
        let lines = try record(controller, [["短信验证", "获取验证码"], ["验证码已发送", "重新获取(60)"], ["验证码已发送", "重新获取(59)"]])
        let out = try decode(lines, chip: controller == .ssd1306 ? .ssd1306 : .sh1106)
        let glasses = out.filter { $0.contains(" tx=") }.map { String($0[$0.firstIndex(of: "|")!...]) }
        #expect(glasses.last == "|验证码已发送|重新获取(59)|||")
        #expect(glasses.contains("|短信验证|获取验证码|||"))
        #expect(
            out.last
                == "transactions=\(lines.count) wire=\(out.filter { $0.contains(" tx=") }.count + lines.map { Int($0.split(separator: " ")[7])! }.reduce(0, +)) violations=0"
        )
    }

    @Test("a pixel no glyph of the font explains reads as ?")
    func wrongGlyph() throws {
        // The last write is the tick's data: flip one pixel of its first byte.
        let lines = try record(.ssd1306, [["验证码已发送", "重新获取(60)"], ["验证码已发送", "重新获取(59)"]]) { bytes in bytes[bytes.count - 1] ^= 0x10 }
        let out = try decode(lines, chip: .ssd1306)
        let last = try #require(out.last(where: { $0.contains(" tx=") }))
        #expect(last.hasSuffix("|验证码已发送|重新获取(5?)|||"), "\(last)")
    }

    @Test("a malformed font line is an error naming the line, never a crash")
    func malformedFont() {
        for (text, line) in [
            ("0041:00000000000000000000000000000000\n0042:xyz\n", 2), ("zz:00\n", 1), ("0041:" + String(repeating: "G", count: 32), 1),
        ] {
            #expect(throws: AdapterRecordError.self) { _ = try GlassGlyphs(hex: text) }
            do {
                _ = try GlassGlyphs(hex: text)
            } catch {
                #expect(error.message.hasPrefix("font line \(line): "), "\(error.message)")
            }
        }
    }
}
