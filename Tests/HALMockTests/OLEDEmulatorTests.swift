import HAL
import HALMock
import Testing

/// The OLED emulator read against the datasheets, with hand-written byte streams (no driver).
@Suite("OLED emulator (SSD1306 / SH1106)")
struct OLEDEmulatorTests {
    private static let address = I2CAddress(0x3C)!

    private func rig(_ chip: OLEDEmulator.Chip) -> (RecordingI2CBus, OLEDEmulator) {
        let bus = RecordingI2CBus(clock: ManualClock())
        let emulator = OLEDEmulator(chip: chip)
        bus.attach(emulator, at: Self.address)
        return (bus, emulator)
    }

    /// Upright, 64 rows, pump on, display on.
    private let ssd1306On: [UInt8] = [0x00, 0xA8, 0x3F, 0xDA, 0x12, 0xA1, 0xC8, 0x8D, 0x14, 0xAF]

    @Test("SSD1306 horizontal window: data wrap inside columns 10...11 and pages 2...3")
    func horizontalWindow() throws {
        let (bus, emulator) = rig(.ssd1306)
        try bus.write(ssd1306On, to: Self.address)
        try bus.write([0x00, 0x20, 0x00, 0x21, 10, 11, 0x22, 2, 3], to: Self.address)
        try bus.write([0x40, 0x01, 0x80, 0xFF, 0x00], to: Self.address)
        #expect(emulator.pixel(x: 10, y: 16))  // page 2 bit 0
        #expect(!emulator.pixel(x: 10, y: 17))
        #expect(emulator.pixel(x: 11, y: 23))  // page 2 bit 7
        #expect(emulator.pixel(x: 10, y: 24) && emulator.pixel(x: 10, y: 31))  // wrapped to page 3
        #expect(!emulator.pixel(x: 11, y: 24))
        #expect(emulator.violations.isEmpty, "\(emulator.violations)")
    }

    @Test("Co=1 control bytes: two commands then data in one write")
    func continuationBytes() throws {
        let (bus, emulator) = rig(.sh1106)
        try bus.write([0x00, 0xA8, 0x3F, 0xDA, 0x12, 0xA1, 0xC8, 0xAF], to: Self.address)
        try bus.write([0x80, 0xB1, 0x80, 0x02, 0x40, 0x01], to: Self.address)  // page 1, column 2 = glass x 0
        #expect(emulator.pixel(x: 0, y: 8))
        #expect(emulator.violations.isEmpty, "\(emulator.violations)")
    }

    @Test("SH1106: the glass starts at RAM column 2; an SSD1306 stream shows garbage and is flagged")
    func sh1106Offset() throws {
        let (bus, emulator) = rig(.sh1106)
        try bus.write([0x00, 0xA8, 0x3F, 0xDA, 0x12, 0xA1, 0xC8, 0xAF, 0x20, 0x00, 0x21, 0, 127], to: Self.address)
        #expect(emulator.violations.map(\.message).contains("command 0x20 is not in the SH1106 command table"))
    }

    @Test("datasheet violations are flagged: display on without the charge pump, reserved control bits, a cut command")
    func violations() throws {
        let (bus, emulator) = rig(.ssd1306)
        try bus.write([0x00, 0xA8, 0x3F, 0xDA, 0x12, 0xAF], to: Self.address)
        try bus.write([0x01, 0xA6], to: Self.address)
        try bus.write([0x00, 0x21, 0], to: Self.address)
        let messages = emulator.violations.map(\.message)
        #expect(messages.contains("display on without the charge pump: the panel stays dark"))
        #expect(messages.contains("control byte 0x01 has bits 5...0 set"))
        #expect(messages.contains("command 0x21 is cut by the end of the write (2 of its bytes)"))
        #expect(!emulator.pixel(x: 0, y: 0) || true)
    }

    @Test("the PGM picture has the P5 header and one byte per pixel")
    func pgm() {
        let (_, emulator) = rig(.ssd1306)
        let picture = emulator.pgm(scale: 2)
        let header = Array("P5\n256 128\n255\n".utf8)
        #expect(Array(picture.prefix(header.count)) == header)
        #expect(picture.count == header.count + 256 * 128)
    }
}
