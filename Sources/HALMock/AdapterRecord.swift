import HAL

/// The record of the VM's plain-I2C test adapter (vm/module/i2c-plain.c) and what it put on the
/// glass: the logic of the hd44780-decode tool, here so tests can run it on recorded lines.
///
/// A record line is one i2c_msg:
///     <transaction> <start s.nnnnnnnnn> <end s.nnnnnnnnn> <message>/<messages> <w|r> 0x<address> <ack|nak> <length> <hex bytes|->
/// `start` is when the adapter got the transfer, `end` when its master_xfer returned. The adapter
/// models the bus: a transfer returns only after its wire time at the bus rate has passed since
/// `start` (9 clocks per byte, an address byte per message). The decoder lays the bytes out the
/// same way, from `start` at the same rate, so both agree on when each byte reached the
/// HD44780; a transfer that ended before its last byte could have crossed the wire means the
/// record is not from such an adapter (or another rate) and is refused rather than decoded.
public struct AdapterRecordMessage: Hashable, Sendable {
    public var transaction: Int
    /// The start stamp as written ("12.000345678"), echoed in the output.
    public var startText: String
    public var start: Instant
    public var end: Instant
    public var isRead: Bool
    public var address: UInt8
    public var acknowledged: Bool
    public var bytes: [UInt8]

    public init(
        transaction: Int, startText: String, start: Instant, end: Instant, isRead: Bool, address: UInt8,
        acknowledged: Bool, bytes: [UInt8]
    ) {
        self.transaction = transaction
        self.startText = startText
        self.start = start
        self.end = end
        self.isRead = isRead
        self.address = address
        self.acknowledged = acknowledged
        self.bytes = bytes
    }

    /// Parses one record line (without its newline); `number` is its line number for messages.
    public static func parse(_ line: String, number: Int) throws(AdapterRecordError) -> AdapterRecordMessage {
        let fields = line.split(separator: " ")
        func malformed(_ what: String) -> AdapterRecordError {
            AdapterRecordError(
                "record line \(number) '\(AdapterRecordError.escaped(line))': \(what); expected '<transaction> <start s.nnnnnnnnn> <end s.nnnnnnnnn> <i>/<n> <w|r> 0xNN <ack|nak> <length> <hex|->'"
            )
        }
        if fields.first == "overflow" {
            throw AdapterRecordError(
                "record line \(number) '\(AdapterRecordError.escaped(line))': the adapter's record overflowed (lines were dropped); clear it more often"
            )
        }
        guard fields.count == 9 else { throw malformed("\(fields.count) fields, not 9") }
        guard let transaction = Int(fields[0]), transaction >= 0 else { throw malformed("bad transaction number") }
        guard let start = parseTime(fields[1]) else { throw malformed("bad start time") }
        guard let end = parseTime(fields[2]) else { throw malformed("bad end time") }
        guard end >= start else { throw malformed("the end is before the start") }
        guard fields[4] == "w" || fields[4] == "r" else { throw malformed("direction is not w or r") }
        guard fields[5].hasPrefix("0x"), let address = UInt8(fields[5].dropFirst(2), radix: 16), address < 0x80 else {
            throw malformed("bad address")
        }
        guard fields[6] == "ack" || fields[6] == "nak" else { throw malformed("neither ack nor nak") }
        guard let length = Int(fields[7]), let bytes = parseHex(fields[8]), bytes.count == length else {
            throw malformed("the length does not match the bytes")
        }
        return AdapterRecordMessage(
            transaction: transaction, startText: String(fields[1]), start: start, end: end, isRead: fields[4] == "r",
            address: address, acknowledged: fields[6] == "ack", bytes: bytes)
    }

    /// "12.000345678" -> nanoseconds; nil when malformed or out of range.
    static func parseTime(_ text: Substring) -> Instant? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 9,
            let seconds = Int64(parts[0]), seconds >= 0, seconds < 1_000_000_000,
            let nanoseconds = Int64(parts[1]), nanoseconds >= 0
        else { return nil }
        return Instant(nanoseconds: seconds * 1_000_000_000 + nanoseconds)
    }

    static func parseHex(_ text: Substring) -> [UInt8]? {
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
}

/// A record the decoder cannot use; `message` is one line naming the line or transaction.
public struct AdapterRecordError: Error, Hashable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }

    /// `text` with control characters and non-ASCII escaped, for one-line error messages.
    public static func escaped<S: StringProtocol>(_ text: S) -> String {
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
}

/// One transaction of a record in which a message went to a decoder's device, walked at the
/// adapter's wire times (`wireTransactions`): each byte, address bytes included, ends one byte
/// time after the one before, from the transaction's start.
public struct WireTransaction {
    /// An acknowledged write to the device: when its address byte ended, each data byte with the
    /// time it ended, and when the last one ended.
    public struct Write {
        public var start: Instant
        public var bytes: [(byte: UInt8, at: Instant)]
        public var end: Instant
    }

    public var number: Int
    /// The first message's start stamp as written.
    public var startText: String
    /// Bytes on the wire up to the first unacknowledged message, address bytes included.
    public var wire: Int
    /// The device's writes, in order, up to the first unacknowledged message.
    public var writes: [Write]
    /// Whether any message of the transaction was not acknowledged.
    public var nak: Bool
    /// How long after its wire time the adapter returned, in nanoseconds.
    public var lateness: Int64

    /// Whether a data byte reached the device.
    public var wrote: Bool { writes.contains { !$0.bytes.isEmpty } }
}

/// The transactions of `messages` (in record order) with a message to `address`, each walked at
/// `byteTime` per byte. Throws when a transaction returned before its wire time was over: the
/// record is not from an adapter that completes a transfer after its wire time at this rate.
public func wireTransactions(
    _ messages: [AdapterRecordMessage], address: UInt8, byteTime: TimeSpan
) throws(AdapterRecordError) -> [WireTransaction] {
    var transactions: [WireTransaction] = []
    var index = 0
    while index < messages.count {
        let number = messages[index].transaction
        var end = index
        while end < messages.count && messages[end].transaction == number { end += 1 }
        let group = messages[index..<end]
        index = end
        guard let first = group.first, group.contains(where: { $0.address == address }) else { continue }
        var clock = first.start
        var wire = 0
        var writes: [WireTransaction.Write] = []
        for message in group {
            clock = clock + byteTime  // the address byte
            wire += 1
            guard message.acknowledged else { break }
            let ours = !message.isRead && message.address == address
            var write = WireTransaction.Write(start: clock, bytes: [], end: clock)
            for byte in message.bytes {
                clock = clock + byteTime
                wire += 1
                if ours { write.bytes.append((byte, clock)) }
            }
            write.end = clock
            if ours { writes.append(write) }
        }
        let returned = group.map { $0.end }.max() ?? first.end
        if returned < clock {
            throw AdapterRecordError(
                "transaction \(number) (start \(first.startText)): the adapter returned \((clock - returned).nanoseconds / 1_000) us before its \(wire) wire bytes at \(byteTime.nanoseconds) ns each were over; the record is not from an adapter that completes a transfer after its wire time at this rate (i2c-plain's clock_frequency, --bus-hz)"
            )
        }
        transactions.append(
            WireTransaction(
                number: number, startText: first.startText, wire: wire, writes: writes,
                nak: group.contains(where: { !$0.acknowledged }), lateness: (returned - clock).nanoseconds))
    }
    return transactions
}

/// Feeds a record's acknowledged writes to the backpack into an `HD44780Emulator` (a PCF8574 with
/// the common wiring in front of an HD44780) and tells what the glass showed after each
/// transaction.
public struct GlassDecoder {
    public let emulator: HD44780Emulator
    public let address: UInt8
    /// One byte on the wire: 9 clocks (8 bits and the acknowledge) at the bus rate, in whole
    /// nanoseconds, as the adapter computes it (90 us at 100 kHz).
    public let byteTime: TimeSpan

    /// `busHz`: the adapter's SCL rate (its `clock_frequency`), 10 kHz to 3.4 MHz.
    public init(columns: Int, rows: Int, address: UInt8, busHz: Int = 100_000) {
        precondition((10_000...3_400_000).contains(busHz), "bus rate outside 10 kHz-3.4 MHz")
        self.emulator = HD44780Emulator(columns: columns, rows: rows, poweredOnAt: .origin)
        self.address = address
        self.byteTime = TimeSpan(nanoseconds: 9_000_000_000 / Int64(busHz))
    }

    /// The output lines for `messages` (in record order), one per transaction that wrote to the
    /// backpack:
    ///     <start s.nnnnnnnnn> tx=<transaction> wire=<bytes on the wire, address bytes included> bl=<on|off> |<row 1>|<row 2>|...
    /// `<start> tx=<transaction> nak` per transaction the device did not acknowledge, then
    /// `violation <time> <kind>: <what>` per protocol mistake the emulator saw,
    /// `adapter: <n> transfers returned <min>-<max> us after their wire time, mean <mean> us` (how
    /// late the host ran the adapter's wake-ups; the layout does not depend on it) and
    /// `transactions=<n> wire=<bytes> violations=<n>`.
    /// Throws when a transfer to the backpack returned before its wire time was over.
    public func decode(_ messages: [AdapterRecordMessage]) throws(AdapterRecordError) -> [String] {
        var output: [String] = []
        var transactionCount = 0
        var wireTotal = 0
        let transactions = try wireTransactions(messages, address: address, byteTime: byteTime)
        for transaction in transactions {
            for write in transaction.writes {
                for (byte, time) in write.bytes { emulator.receive(byte, at: time) }
            }
            if transaction.nak {
                output.append("\(transaction.startText) tx=\(transaction.number) nak")
                continue
            }
            guard transaction.wrote else { continue }
            transactionCount += 1
            wireTotal += transaction.wire
            let glass = emulator.screen.map { "|" + $0 }.joined() + "|"
            output.append(
                "\(transaction.startText) tx=\(transaction.number) wire=\(transaction.wire) bl=\(emulator.backlight ? "on" : "off") \(glass)")
        }
        for violation in emulator.violations {
            output.append("violation \(violation)")
        }
        let lateness = transactions.map { $0.lateness }  // per transfer: return minus the end of its wire time, ns
        if let least = lateness.min(), let most = lateness.max() {
            let mean = lateness.reduce(0, +) / Int64(lateness.count)
            output.append(
                "adapter: \(lateness.count) transfers returned \(least / 1_000)-\(most / 1_000) us after their wire time, mean \(mean / 1_000) us")
        }
        output.append("transactions=\(transactionCount) wire=\(wireTotal) violations=\(emulator.violations.count)")
        return output
    }
}
