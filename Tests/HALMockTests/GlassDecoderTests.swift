import HAL
import HALMock
import Testing

/// The LCD init as the driver writes it on a PCF8574 backpack (CharacterLCD's init test has the
/// same bytes), each transaction with the wait the driver takes after its write() returned.
private let initTransactions: [(bytes: String, waitAfter: TimeSpan)] = [
    ("08", .milliseconds(50)),  // idle, then the power-on wait
    ("3C 38", .microseconds(4_500)),
    ("3C 38", .microseconds(150)),
    ("3C 38", .microseconds(100)),
    ("2C 28", .microseconds(100)),
    ("2C 28 8C 88 0C 08 8C 88 0C 08 1C 18", .milliseconds(2)),  // I28 I08 I01: clear, then 2 ms
    ("0C 08 6C 68 0C 08 CC C8", .zero),  // I06 I0C
]

/// "10.000180000"
private func stamp(_ instant: Instant) -> String {
    let seconds = instant.nanoseconds / 1_000_000_000
    let fraction = String(instant.nanoseconds % 1_000_000_000)
    return "\(seconds)." + String(repeating: "0", count: 9 - fraction.count) + fraction
}

/// A record line of one write message to 0x27, transaction `number`.
private func line(_ number: Int, start: Instant, end: Instant, _ bytes: String) -> String {
    let hex = bytes.split(separator: " ").joined().lowercased()
    return "\(number) \(stamp(start)) \(stamp(end)) 1/1 w 0x27 ack \(hex.count / 2) \(hex)"
}

/// The init as i2c-plain records it, transactions 298-304 from 10 s on. `busModel`: the adapter
/// returns after the wire time (90 us a byte, the address byte included) plus `late` (the host
/// ran the program late); otherwise at once, as the adapter did before it modelled the bus. The
/// driver's next write starts its wait plus `late` after the return.
private func initRecord(busModel: Bool, late: TimeSpan) -> [String] {
    var start = Instant(nanoseconds: 10_000_000_000)
    var lines: [String] = []
    for (offset, transaction) in initTransactions.enumerated() {
        let wireBytes = 1 + transaction.bytes.split(separator: " ").count
        let end = busModel ? start + TimeSpan(nanoseconds: Int64(wireBytes) * 90_000) + late : start
        lines.append(line(298 + offset, start: start, end: end, transaction.bytes))
        start = end + transaction.waitAfter + late
    }
    return lines
}

private func decode(_ lines: [String]) throws(AdapterRecordError) -> [String] {
    var messages: [AdapterRecordMessage] = []
    for (index, text) in lines.enumerated() {
        messages.append(try AdapterRecordMessage.parse(text, number: index + 1))
    }
    return try GlassDecoder(columns: 16, rows: 2, address: 0x27).decode(messages)
}

@Suite("hd44780-decode: the glass from i2c-plain's record")
struct GlassDecoderTests {
    @Test(
        "the init through the bus-modelling adapter decodes to a blank glass without a violation, however late the host ran the program",
        arguments: [TimeSpan.zero, .microseconds(316), .milliseconds(5)])
    func initThroughBusModel(late: TimeSpan) throws {
        let record = initRecord(busModel: true, late: late)
        let output = try decode(record)
        #expect(!output.contains { $0.hasPrefix("violation") })
        let lateMicros = late.nanoseconds / 1_000
        let lastStart = record[6].split(separator: " ")[1]
        #expect(
            output.suffix(3) == [
                "\(lastStart) tx=304 wire=9 bl=on |                |                |",
                "adapter: 7 transfers returned \(lateMicros)-\(lateMicros) us after their wire time, mean \(lateMicros) us",
                "transactions=7 wire=36 violations=0",
            ])
    }

    @Test("a record whose transfers returned before their wire time (an instant adapter) is refused, naming the first such transaction")
    func instantAdapterRefused() {
        #expect(throws: AdapterRecordError.self) { try decode(initRecord(busModel: false, late: .microseconds(316))) }
        do {
            _ = try decode(initRecord(busModel: false, late: .microseconds(316)))
        } catch {
            #expect(error.message.hasPrefix("transaction 298 (start 10.000000000): the adapter returned 180 us before its 2 wire bytes"))
        }
    }

    @Test(
        "a write 2.316 ms after the start of the clear's transaction, whose 13 wire bytes took 1.17 ms, is still the busy violation of a too-short wait"
    )
    func hastyWriteAfterClear() throws {
        // The timing of the failed run: the next write 2.316 ms after the clear's transaction
        // started. Through the bus-modelling adapter that is a program that waited only 1.146 ms
        // after write() returned; the clear (latched by the 13th byte, 1.52 ms) is still running.
        var lines = initRecord(busModel: true, late: .zero)
        let clearStart = Instant(nanoseconds: 10_056_110_000)
        #expect(lines[5].hasPrefix("303 10.056110000 10.057280000 1/1 w 0x27 ack 12 "))
        lines[6] = line(
            304, start: clearStart + .microseconds(2_316), end: clearStart + .microseconds(3_126),
            initTransactions[6].bytes)
        let output = try decode(lines)
        #expect(output.contains("violation 10058.606 ms busy: E rose while clear display was still executing (busy for another 194 us)"))
        #expect(output.last == "transactions=7 wire=36 violations=1")
    }

    @Test("a malformed record line is one error naming the line and the field")
    func malformedLine() {
        #expect(
            throws: AdapterRecordError(
                "record line 3 '1 1.0 1/1 w 0x27 ack 1 08': 8 fields, not 9; expected '<transaction> <start s.nnnnnnnnn> <end s.nnnnnnnnn> <i>/<n> <w|r> 0xNN <ack|nak> <length> <hex|->'"
            )
        ) {
            try AdapterRecordMessage.parse("1 1.0 1/1 w 0x27 ack 1 08", number: 3)
        }
        #expect(throws: AdapterRecordError.self) {
            try AdapterRecordMessage.parse("1 2.000000000 1.000000000 1/1 w 0x27 ack 1 08", number: 1)
        }
    }
}
