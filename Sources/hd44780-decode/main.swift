import Glibc
import HAL
import HALMock

// hd44780-decode: what the glass showed after each I2C transaction of a recorded byte stream.
//
// Reads the record of the VM's plain-I2C test adapter (vm/module/i2c-plain.c) on stdin, one line
// per i2c_msg:
//     <transaction> <start s.nnnnnnnnn> <end s.nnnnnnnnn> <message>/<messages> <w|r> 0x<address> <ack|nak> <length> <hex bytes|->
// and feeds every acknowledged byte written to the backpack's address into HALMock's
// HD44780Emulator (a PCF8574 with the common wiring in front of an HD44780). Prints one line per
// transaction that wrote to the backpack, in order:
//     <start s.nnnnnnnnn> tx=<transaction> wire=<bytes on the wire, address bytes included> bl=<on|off> |<row 1>|<row 2>|...
// a line `<start> tx=<transaction> nak` per transaction the device did not acknowledge, and at
// the end `violation <time> <kind>: <what>` per protocol mistake the emulator saw,
// `adapter: <n> transfers returned <min>-<max> us after their wire time, mean <mean> us` (the
// host's wake-up latency, which the layout does not depend on) and
// `transactions=<n> wire=<bytes> violations=<n>`. The parsing and layout are HALMock's
// AdapterRecordMessage and GlassDecoder.
//
// Time model: the adapter models the bus: a transfer's bytes go on the wire from its start stamp,
// 9 clocks each at the bus rate (90 us at 100 kHz, the address byte first), and master_xfer
// returns (the end stamp) no earlier than the last byte, as a real adapter's write() blocks for
// the wire time. The decoder lays the bytes out the same way and the HD44780's timing checks use
// those times; a transfer whose end is before its wire time was over is refused (status 65), so
// the verdict never rests on host scheduling.
//
// A test tool for scripts/vm-test, not part of the product. Exit status: 0; 64 for bad flags;
// 65 (EX_DATAERR) for a malformed record line, a record that overflowed, or a transfer that ended
// before its wire time.

let usage = """
    usage: hd44780-decode [--columns N] [--rows N] [--address 0xNN] [--bus-hz N] < RECORD
      --columns N      the module's columns (default 16)
      --rows N         the module's rows: 1, 2 or 4 (default 2)
      --address 0xNN   the backpack's 7-bit address (default 0x27)
      --bus-hz N       the adapter's SCL rate, 10000-3400000 (default 100000, i2c-plain's clock_frequency)
    """

func emit(_ text: String) {
    print(text)
}

func fail(_ message: String, status: Int32) -> Never {
    var line = "hd44780-decode: " + message
    if !line.hasSuffix("\n") { line += "\n" }
    line.withUTF8 { buffer in _ = Glibc.write(2, buffer.baseAddress, buffer.count) }
    exit(status)
}

func escaped<S: StringProtocol>(_ text: S) -> String { AdapterRecordError.escaped(text) }

struct Options {
    var columns = 16
    var rows = 2
    var address: UInt8 = 0x27
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
        case "--columns":
            let text = value(argument)
            guard let n = Int(text), (1...40).contains(n) else {
                fail("--columns '\(escaped(text))': allowed are 1-40", status: 64)
            }
            options.columns = n
        case "--rows":
            let text = value(argument)
            guard let n = Int(text), [1, 2, 4].contains(n) else {
                fail("--rows '\(escaped(text))': allowed are 1, 2 or 4", status: 64)
            }
            options.rows = n
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
            emit(usage)
            exit(0)
        default:
            fail("unknown argument '\(escaped(argument))'\n" + usage, status: 64)
        }
    }
    if options.rows == 4 && options.columns > 20 {
        fail("--columns \(options.columns) with --rows 4: 4-row modules have 1-20 columns", status: 64)
    }
    return options
}

let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
let decoder = GlassDecoder(columns: options.columns, rows: options.rows, address: options.address, busHz: options.busHz)

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
    for line in try decoder.decode(messages) { emit(line) }
} catch {
    fail(error.message, status: 65)
}
