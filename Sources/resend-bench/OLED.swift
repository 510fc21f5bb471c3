import CharacterLCD
import Glibc
import HAL
import HALMock

// `resend-bench oled [--font PATH]`: bytes and transactions of the SSD1306/SH1106 driver on the
// recording bus with the OLED emulator (virtual time, exact): the full paint at start, the press
// (title and label change), each tick of a 60 s countdown in Chinese, against the floor (the
// bytes of GDDRAM that change). scripts/oled-bench prints these next to luma.oled's.

func runOLEDFigures(_ arguments: [String]) {
    var fontPath = "/usr/share/unifont/unifont.hex"
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        switch argument {
        case "--font": fontPath = rest.popFirst() ?? { fail("--font needs a path") }()
        default: fail("usage: resend-bench oled [--font PATH]")
        }
    }
    guard let bytes = readWholeFile(fontPath) else { fail("oled: cannot read \(fontPath)") }
    let font: Unifont
    do throws(UnifontError) {
        font = try Unifont(parsing: bytes, wanted: Set("短信验证获取码重新已发送()0123456789".unicodeScalars.map(\.value)))
    } catch {
        fail("oled: \(fontPath): \(error.message)")
    }
    emit(
        "| OLED figure (128x64, Unifont, 60 s countdown \"重新获取(NN)\") | controller | transactions | wire bytes (address bytes included) | data bytes | floor: changed GDDRAM bytes |"
    )
    emit("|---|---|---|---|---|---|")
    for controller in OLEDController.all {
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, blocking: true)
        let emulator = OLEDEmulator(chip: controller == .ssd1306 ? .ssd1306 : .sh1106)
        let address = I2CAddress(constant: 0x3C)
        bus.attach(emulator, at: address)
        var oled = SSD130x(bus: bus, delay: VirtualDelay(clock: clock), address: address, controller: controller)
        var shown = PixelFrame()
        func step(_ lines: [String]) -> (tx: Int, wire: Int, data: Int, floor: Int) {
            let frame = UnifontText.render(lines, font: font)
            bus.resetCounters()
            let before = emulator.dataBytesWritten
            do throws(HALError) { try oled.render(frame) } catch { fail("oled: \(error.operation)") }
            var floor = 0
            for index in 0..<frame.bytes.count where frame.bytes[index] != shown.bytes[index] { floor += 1 }
            shown = frame
            precondition(emulator.violations.isEmpty, "oled: \(emulator.violations)")
            return (bus.transactions.count, bus.wireBytes, emulator.dataBytesWritten - before, floor)
        }
        let first = step(["短信验证", "获取验证码"])
        emit("| init + first full paint | \(controller.name) | \(first.tx) | \(first.wire) | \(first.data) | 1024 (whole RAM) |")
        let press = step(["验证码已发送", "重新获取(60)"])
        emit("| press (title and label change) | \(controller.name) | \(press.tx) | \(press.wire) | \(press.data) | \(press.floor) |")
        var ticks: [(tx: Int, wire: Int, data: Int, floor: Int)] = []
        for seconds in stride(from: 59, through: 1, by: -1) {
            ticks.append(step(["验证码已发送", "重新获取(\(seconds < 10 ? "0" : "")\(seconds))"]))
        }
        let last = step(["短信验证", "重新获取"])
        func mean(_ values: [Int]) -> String {
            let total = values.reduce(0, +)
            let tenths = (total * 10 + values.count / 2) / values.count
            return "\(tenths / 10).\(tenths % 10)"
        }
        emit(
            "| tick (59 ticks: mean / max) | \(controller.name) | \(mean(ticks.map(\.tx))) / \(ticks.map(\.tx).max() ?? 0) | \(mean(ticks.map(\.wire))) / \(ticks.map(\.wire).max() ?? 0) | \(mean(ticks.map(\.data))) / \(ticks.map(\.data).max() ?? 0) | \(mean(ticks.map(\.floor))) / \(ticks.map(\.floor).max() ?? 0) |"
        )
        emit("| end of countdown (title and label) | \(controller.name) | \(last.tx) | \(last.wire) | \(last.data) | \(last.floor) |")
    }
}

/// The bytes of the file at `path` (at most 16 MiB), nil when it cannot be read.
private func readWholeFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { _ = close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while bytes.count < 16 << 20 {
        let count = read(fd, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[..<count]
    }
    return bytes
}
