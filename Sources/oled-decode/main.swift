import Glibc
import HAL
import HALMock

// oled-decode: what a person read on a 128x64 OLED (SSD1306 or SH1106) after each I2C transaction
// of a recorded byte stream: hd44780-decode's counterpart for the OLED (vm/oled.sh).
//
// Reads the record of the VM's plain-I2C test adapter (vm/module/i2c-plain.c) on stdin (one line
// per i2c_msg, as hd44780-decode does), feeds every acknowledged byte written to the OLED's
// address into HALMock's OLEDEmulator (control bytes, commands, addressing modes, windows, the
// SH1106's column offset), and reads the glass with the glyphs of a GNU Unifont .hex file
// (--font; read straight from its lines, not through the driver's parser). Prints one line per
// transaction that wrote to the OLED:
//     <start s.nnnnnnnnn> tx=<transaction> wire=<bytes on the wire, address bytes included> data=<display data bytes> |<line 1>|<line 2>|<line 3>|<line 4>|
// (a dark 8-pixel cell reads as a space, a cell no glyph of the font explains as "?"), a line
// `<start> tx=<transaction> nak` per transaction not acknowledged, then
// `violation <time>: <what>` per datasheet rule the emulator saw broken and
// `transactions=<n> wire=<bytes> violations=<n>`. The logic is HALMock's OLEDRecordDecoder.
//
// A test tool for scripts/vm-test, not part of the product. Exit status: 0; 64 for bad flags; 65
// (EX_DATAERR) for a malformed record line, a record that overflowed, or a transfer that ended
// before its wire time; 66 (EX_NOINPUT) for a font file that cannot be read or parsed.

let usage = """
    usage: oled-decode --font PATH [--chip ssd1306|sh1106] [--address 0xNN] [--bus-hz N] < RECORD
      --font PATH      a GNU Unifont .hex file (the glyphs the glass is read with)
      --chip NAME      ssd1306 (default) or sh1106
      --address 0xNN   the OLED's 7-bit address (default 0x3c)
      --bus-hz N       the adapter's SCL rate, 10000-3400000 (default 100000, i2c-plain's clock_frequency)
    """

func fail(_ message: String, status: Int32) -> Never {
    var line = "oled-decode: " + message
    if !line.hasSuffix("\n") { line += "\n" }
    line.withUTF8 { buffer in _ = Glibc.write(2, buffer.baseAddress, buffer.count) }
    exit(status)
}

func escaped<S: StringProtocol>(_ text: S) -> String { AdapterRecordError.escaped(text) }

struct Options {
    var font: String?
    var chip = OLEDEmulator.Chip.ssd1306
    var address: UInt8 = 0x3C
    var busHz = 100_000
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments[...]
    func value(_ name: String) -> String {
        guard let value = rest.popFirst() else { fail("\(name) needs a value\n" + usage, status: 64) }
        return value
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "--font":
            options.font = value(argument)
        case "--chip":
            switch value(argument) {
            case "ssd1306": options.chip = .ssd1306
            case "sh1106": options.chip = .sh1106
            case let text: fail("--chip '\(escaped(text))': allowed are ssd1306 and sh1106", status: 64)
            }
        case "--address":
            let text = value(argument)
            guard text.hasPrefix("0x"), let n = UInt8(text.dropFirst(2), radix: 16), I2CAddress(n) != nil else {
                fail("--address '\(escaped(text))': allowed is a 7-bit address 0x08-0x77", status: 64)
            }
            options.address = n
        case "--bus-hz":
            let text = value(argument)
            guard let n = Int(text), (10_000...3_400_000).contains(n) else {
                fail("--bus-hz '\(escaped(text))': allowed are 10000-3400000 (Hz)", status: 64)
            }
            options.busHz = n
        case "-h", "--help":
            print(usage)
            exit(0)
        default:
            fail("unknown argument '\(escaped(argument))'\n" + usage, status: 64)
        }
    }
    return options
}

/// The whole file at `path` (at most 16 MiB), or nil.
func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n == 0 { break }
        bytes += buffer[0..<n]
        if bytes.count > 16 << 20 { return nil }
    }
    return ferror(file) == 0 ? bytes : nil
}

let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
guard let fontPath = options.font else { fail("--font PATH is needed\n" + usage, status: 64) }
guard let fontBytes = readFile(fontPath) else { fail("\(escaped(fontPath)): cannot read it (at most 16 MiB)", status: 66) }
let glyphs: GlassGlyphs
do {
    glyphs = try GlassGlyphs(hex: String(decoding: fontBytes, as: UTF8.self))
} catch {
    fail("\(escaped(fontPath)): \(error.message)", status: 66)
}
let decoder = OLEDRecordDecoder(chip: options.chip, glyphs: glyphs, address: options.address, busHz: options.busHz)

var messages: [AdapterRecordMessage] = []
var lineNumber = 0
while let line = readLine(strippingNewline: true) {
    lineNumber += 1
    if line.isEmpty { continue }
    do {
        messages.append(try AdapterRecordMessage.parse(line, number: lineNumber))
    } catch {
        fail(error.message, status: 65)
    }
}
do {
    for line in try decoder.decode(messages) { print(line) }
} catch {
    fail(error.message, status: 65)
}
