import Glibc
import HAL
import HALMock

// hd44780-decode: what the glass showed after each I2C transaction of a recorded byte stream.
//
// Reads the record of the VM's plain-I2C test adapter (vm/module/i2c-plain.c) on stdin, one line
// per i2c_msg:
//     <transaction> <seconds.nanoseconds> <message>/<messages> <w|r> 0x<address> <ack|nak> <length> <hex bytes|->
// and feeds every acknowledged byte written to the backpack's address into HALMock's
// HD44780Emulator (a PCF8574 with the common wiring in front of an HD44780). Prints one line per
// transaction that wrote to the backpack, in order:
//     <seconds.nanoseconds> tx=<transaction> wire=<bytes on the wire, address bytes included> bl=<on|off> |<row 1>|<row 2>|...
// a line `<seconds.nanoseconds> tx=<transaction> nak` per transaction the device did not
// acknowledge, and at the end `violation <time> <kind>: <what>` per protocol mistake the emulator
// saw and `transactions=<n> wire=<bytes> violations=<n>`.
//
// Time model: the recorded time is when the adapter got the transfer (the VM's adapter is
// instant); each byte is placed on a 100 kHz wire (9 clocks, 90 us per byte, the address byte
// first), and a transaction starts no earlier than the previous one ended, as on a real bus where
// write() blocks for the wire time. The HD44780's timing checks use those times.
//
// A test tool for scripts/vm-test, not part of the product. Exit status: 0; 64 for bad flags;
// 65 (EX_DATAERR) for a malformed record line or a record that overflowed.

let usage = """
    usage: hd44780-decode [--columns N] [--rows N] [--address 0xNN] < RECORD
      --columns N      the module's columns (default 16)
      --rows N         the module's rows: 1, 2 or 4 (default 2)
      --address 0xNN   the backpack's 7-bit address (default 0x27)
    """

/// 100 kHz, 8 data bits and the acknowledge: 90 us per byte.
let byteTime = TimeSpan.microseconds(90)

func emit(_ text: String) {
    print(text)
}

func fail(_ message: String, status: Int32) -> Never {
    var line = "hd44780-decode: " + message
    if !line.hasSuffix("\n") { line += "\n" }
    line.withUTF8 { buffer in _ = Glibc.write(2, buffer.baseAddress, buffer.count) }
    exit(status)
}

/// `text` with control characters and non-ASCII escaped, for one-line error messages.
func escaped<S: StringProtocol>(_ text: S) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
        if scalar.value >= 0x20 && scalar.value < 0x7F && scalar != "\\" {
            result.unicodeScalars.append(scalar)
        } else {
            result += "\\u{" + String(scalar.value, radix: 16) + "}"
        }
    }
    return result
}

struct Options {
    var columns = 16
    var rows = 2
    var address: UInt8 = 0x27
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

/// One line of the record.
struct Message {
    var transaction: Int
    var timeText: String
    var time: Instant
    var isRead: Bool
    var address: UInt8
    var acknowledged: Bool
    var bytes: [UInt8]
}

/// "12.000345678" -> nanoseconds; nil when malformed or out of range.
func parseTime(_ text: Substring) -> Instant? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[1].count == 9,
          let seconds = Int64(parts[0]), seconds >= 0, seconds < 1_000_000_000,
          let nanoseconds = Int64(parts[1]), nanoseconds >= 0
    else { return nil }
    return Instant(nanoseconds: seconds * 1_000_000_000 + nanoseconds)
}

func parseHex(_ text: Substring) -> [UInt8]? {
    if text == "-" { return [] }
    guard text.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.count / 2)
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
        bytes.append(byte)
        index = next
    }
    return bytes
}

func parseLine(_ line: String, number: Int) -> Message {
    let fields = line.split(separator: " ")
    func malformed(_ what: String) -> Never {
        fail("record line \(number) '\(escaped(line))': \(what); expected '<transaction> <s.nnnnnnnnn> <i>/<n> <w|r> 0xNN <ack|nak> <length> <hex|->'", status: 65)
    }
    if fields.first == "overflow" {
        fail("record line \(number) '\(escaped(line))': the adapter's record overflowed (lines were dropped); clear it more often", status: 65)
    }
    guard fields.count == 8 else { malformed("\(fields.count) fields, not 8") }
    guard let transaction = Int(fields[0]), transaction >= 0 else { malformed("bad transaction number") }
    guard let time = parseTime(fields[1]) else { malformed("bad time") }
    guard fields[3] == "w" || fields[3] == "r" else { malformed("direction is not w or r") }
    guard fields[4].hasPrefix("0x"), let address = UInt8(fields[4].dropFirst(2), radix: 16), address < 0x80 else {
        malformed("bad address")
    }
    guard fields[5] == "ack" || fields[5] == "nak" else { malformed("neither ack nor nak") }
    guard let length = Int(fields[6]), let bytes = parseHex(fields[7]), bytes.count == length else {
        malformed("the length does not match the bytes")
    }
    return Message(transaction: transaction, timeText: String(fields[1]), time: time, isRead: fields[3] == "r",
                   address: address, acknowledged: fields[5] == "ack", bytes: bytes)
}

let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
let emulator = HD44780Emulator(columns: options.columns, rows: options.rows, poweredOnAt: .origin)

var messages: [Message] = []
var lineNumber = 0
while let line = readLine(strippingNewline: true) {
    lineNumber += 1
    if line.isEmpty { continue }
    messages.append(parseLine(line, number: lineNumber))
}

var wireEnd = Instant.origin
var transactionCount = 0
var wireTotal = 0
var index = 0
while index < messages.count {
    let transaction = messages[index].transaction
    var end = index
    while end < messages.count && messages[end].transaction == transaction { end += 1 }
    let group = messages[index..<end]
    index = end
    guard let first = group.first, group.contains(where: { $0.address == options.address }) else { continue }
    if group.contains(where: { !$0.acknowledged }) {
        emit("\(first.timeText) tx=\(transaction) nak")
        continue
    }
    var clock = max(first.time, wireEnd)
    var wire = 0
    var wrote = false
    for message in group {
        clock = clock + byteTime  // the address byte
        wire += 1
        for byte in message.bytes {
            clock = clock + byteTime
            wire += 1
            if !message.isRead {
                emulator.receive(byte, at: clock)
                wrote = true
            }
        }
    }
    wireEnd = clock
    guard wrote else { continue }
    transactionCount += 1
    wireTotal += wire
    let glass = emulator.screen.map { "|" + $0 }.joined() + "|"
    emit("\(first.timeText) tx=\(transaction) wire=\(wire) bl=\(emulator.backlight ? "on" : "off") \(glass)")
}
for violation in emulator.violations {
    emit("violation \(violation)")
}
emit("transactions=\(transactionCount) wire=\(wireTotal) violations=\(emulator.violations.count)")
