import CharacterLCD
import HAL
import HALMock
import Testing

/// The SSD1306/SH1106 driver against the independent OLED emulator, with glyphs from the Unifont
/// fixture: what a person would see on the glass, and what it costs on the wire.
private struct OLEDRig {
    let clock = ManualClock()
    let bus: RecordingI2CBus
    let emulator: OLEDEmulator
    var oled: SSD130x<RecordingI2CBus, VirtualDelay>
    let font: Unifont
    let reference = ReferenceFont(path: unifontFixturePath)
    static let address = I2CAddress(0x3C)!

    init(_ controller: OLEDController, maxWriteLength: Int = 8192, flipped: Bool = false) throws {
        bus = RecordingI2CBus(clock: clock, blocking: true)
        emulator = OLEDEmulator(chip: controller == .ssd1306 ? .ssd1306 : .sh1106)
        bus.attach(emulator, at: OLEDRig.address)
        oled = SSD130x(
            bus: bus, delay: VirtualDelay(clock: clock), address: OLEDRig.address, controller: controller,
            maxWriteLength: maxWriteLength, flipped: flipped)
        font = try Unifont(parsing: fileBytes(unifontFixturePath)!)
    }

    mutating func show(_ lines: [String]) throws {
        try oled.render(UnifontText.render(lines, font: font))
    }

    /// The emulated glass equals the glyphs read straight from the font file.
    func expectGlass(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let want = reference.glass(lines)
        let got = emulator.rows
        #expect(got == want, "glass differs for \(lines)", sourceLocation: sourceLocation)
        #expect(emulator.violations.isEmpty, "\(emulator.violations)", sourceLocation: sourceLocation)
    }
}

private let chips: [OLEDController] = [.ssd1306, .sh1106]

/// The bytes that differ between two glasses, as the controller stores them (one byte = one
/// column of one 8-row page): their count, the pages they are on, and the area of their bounding
/// rectangle of pages x columns (the floor the issue states for one window).
private func damage(_ a: [String], _ b: [String]) -> (changed: Int, pages: Int, boundingArea: Int) {
    var count = 0
    var pages = Set<Int>()
    var columns = Set<Int>()
    let rowsA = a.map { Array($0) }
    let rowsB = b.map { Array($0) }
    for page in 0..<8 {
        for x in 0..<128 where (0..<8).contains(where: { rowsA[page * 8 + $0][x] != rowsB[page * 8 + $0][x] }) {
            count += 1
            pages.insert(page)
            columns.insert(x)
        }
    }
    guard let firstPage = pages.min(), let lastPage = pages.max(), let first = columns.min(), let last = columns.max() else {
        return (0, 0, 0)
    }
    return (count, pages.count, (lastPage - firstPage + 1) * (last - first + 1))
}

@Suite("SSD1306 / SH1106 driver on the emulated OLED")
struct OLEDDriverTests {
    @Test("a 60 s countdown in Chinese: every label's pixels are the font's glyphs, each tick at the floor", arguments: chips)
    func chineseCountdown(controller: OLEDController) throws {
        var rig = try OLEDRig(controller)
        try rig.show(["短信验证", "获取验证码"])
        rig.expectGlass(["短信验证", "获取验证码"])
        #expect(rig.emulator.isDisplayOn)
        var previous = rig.reference.glass(["短信验证", "获取验证码"])
        for seconds in stride(from: 60, through: 1, by: -1) {
            let number = seconds < 10 ? "0\(seconds)" : "\(seconds)"
            let lines = ["验证码已发送", "重新获取(\(number))"]
            rig.bus.resetCounters()
            let dataBefore = rig.emulator.dataBytesWritten
            try rig.show(lines)
            rig.expectGlass(lines)
            let want = rig.reference.glass(lines)
            let changes = damage(previous, want)
            let sent = rig.emulator.dataBytesWritten - dataBefore
            if seconds < 60 {
                // A tick changes one or two digits: never more data than the changed pages x
                // columns, at most two writes per changed page; on the SSD1306 never more wire
                // bytes than one window over the bounding rectangle (command write: address,
                // 0x00, 0x21 s e 0x22 s e; data write: address, 0x40, the area).
                #expect(sent >= changes.changed && sent <= changes.boundingArea, "\(seconds): \(sent) data bytes, floor \(changes)")
                #expect(rig.bus.transactions.count <= 2 * changes.pages, "\(seconds): \(rig.bus.trace)")
                if controller == .ssd1306 {
                    #expect(rig.bus.wireBytes <= changes.boundingArea + 10, "\(seconds): \(rig.bus.trace)")
                }
            }
            previous = want
        }
        try rig.show(["短信验证", "重新获取"])
        rig.expectGlass(["短信验证", "重新获取"])
    }

    @Test("a tick that changes only the ones digit at the same window sends one data write and no command (SSD1306)")
    func tickWithoutWindowCommands() throws {
        var rig = try OLEDRig(.ssd1306)
        try rig.show(["", "重新获取(59)"])
        try rig.show(["", "重新获取(58)"])
        try rig.show(["", "重新获取(57)"])
        rig.bus.resetCounters()
        try rig.show(["", "重新获取(56)"])
        rig.expectGlass(["", "重新获取(56)"])
        #expect(rig.bus.transactions.count == 1)
        #expect(rig.bus.transactions.first?.bytes.first == 0x40, "\(rig.bus.trace)")
    }

    @Test("an identical frame sends nothing", arguments: chips)
    func identicalFrame(controller: OLEDController) throws {
        var rig = try OLEDRig(controller)
        try rig.show(["获取验证码"])
        rig.bus.resetCounters()
        try rig.show(["获取验证码"])
        #expect(rig.bus.transactions.isEmpty)
    }

    @Test("init: SSD1306 charge pump 0x8D 0x14 and horizontal addressing; SH1106 DC-DC 0xAD 0x8B and no 0x20/0x21/0x22", arguments: chips)
    func initSequence(controller: OLEDController) throws {
        var rig = try OLEDRig(controller)
        try rig.oled.initialize()
        let first = rig.bus.transactions[0].bytes
        #expect(first.first == 0x00)
        #expect(first.dropFirst().first == 0xAE, "display off first")
        let commands = rig.bus.transactions.filter { $0.bytes.first == 0x00 }.flatMap { $0.bytes.dropFirst() }
        #expect(commands.last == 0xAF, "display on last")
        switch controller {
        case .ssd1306:
            #expect(first.contains(0x8D) && first[first.firstIndex(of: 0x8D)! + 1] == 0x14)
            #expect(first.contains(0x20) && first[first.firstIndex(of: 0x20)! + 1] == 0x00)
        case .sh1106:
            #expect(first.contains(0xAD) && first[first.firstIndex(of: 0xAD)! + 1] == 0x8B)
            // No 0x20/0x21/0x22: the emulator flags any command outside the SH1106's table.
            #expect(!first.contains(0x8D))
        }
        // The 100 ms until SEG/COM are on (SSD1306 8.9: tAF).
        #expect(rig.oled.delay.requests == [.milliseconds(100)])
        rig.expectGlass([])
    }

    @Test("no write is longer than the adapter's limit; the glass is still right", arguments: chips)
    func messageLimit(controller: OLEDController) throws {
        var rig = try OLEDRig(controller, maxWriteLength: 32)
        try rig.show(["短信验证", "获取验证码", "Code: 123456", "请稍候(59)"])
        rig.expectGlass(["短信验证", "获取验证码", "Code: 123456", "请稍候(59)"])
        #expect(rig.bus.transactions.allSatisfy { $0.bytes.count <= 32 })
    }

    @Test("flipped: the picture turned by 180 degrees", arguments: chips)
    func flipped(controller: OLEDController) throws {
        var rig = try OLEDRig(controller)
        try rig.show(["获取验证码", "A"])
        try rig.oled.setFlipped(true)
        let want = rig.reference.glass(["获取验证码", "A"])
        let turned = want.reversed().map { String($0.reversed()) }
        #expect(rig.emulator.rows == turned)
        #expect(rig.emulator.violations.isEmpty, "\(rig.emulator.violations)")
    }

    @Test("a failed write: the next frame re-initializes and paints the whole glass", arguments: chips)
    func healsAfterFailure(controller: OLEDController) throws {
        var rig = try OLEDRig(controller)
        try rig.show(["短信验证", "重新获取(10)"])
        rig.bus.failNext(1)
        #expect(throws: HALError.self) { try rig.show(["短信验证", "重新获取(09)"]) }
        #expect(!rig.oled.isInitialized)
        try rig.show(["短信验证", "重新获取(08)"])
        rig.expectGlass(["短信验证", "重新获取(08)"])
    }

    @Test("display off darkens the glass and keeps the picture; contrast is sent", arguments: chips)
    func displayOffAndContrast(controller: OLEDController) throws {
        var rig = try OLEDRig(controller)
        try rig.show(["获取验证码"])
        try rig.oled.setDisplayOn(false)
        #expect(rig.emulator.rows == rig.reference.glass([]))
        try rig.oled.setDisplayOn(true)
        rig.expectGlass(["获取验证码"])
        try rig.oled.setContrast(0x20)
        #expect(rig.emulator.contrast == 0x20)
    }

    @Test("an SMBus-only adapter is refused with .unsupported")
    func smbusOnly() {
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, supportsMultiByteWrite: false)
        var oled = SSD130x(bus: bus, delay: VirtualDelay(clock: clock), address: I2CAddress(0x3C)!, controller: .ssd1306)
        #expect(throws: HALError(.unsupported, operation: "ssd1306 at i2c 0x3C: the adapter cannot send a control byte and data in one write")) {
            try oled.initialize()
        }
    }
}
