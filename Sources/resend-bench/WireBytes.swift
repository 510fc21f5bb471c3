import CharacterLCD
import HAL
import HALMock
import ResendCore
import ResendDevice
import ResendSimulator

// Figure 1: what goes over the I2C wire, counted on the recording bus, next to the protocol floor.

/// Protocol facts the floor is computed from (HARDWARE.md, HD44780U datasheet Figure 24).
enum WireFloor {
    /// Every I2C transaction starts with one address byte (7-bit address + R/W).
    static let addressBytesPerTransaction = 1
    /// PCF8574 backpack: two nibbles per HD44780 byte, each written with E high then E low.
    static let expanderBytesPerLCDByte = 4
    /// An init nibble (the controller may still be in 8-bit mode): E high, E low.
    static let expanderBytesPerInitNibble = 2
    /// HD44780U bus timing, tAS: RS must be set up before E rises, so a change of RS costs one
    /// expander byte with E low before the strobe.
    static let expanderBytesPerRSChange = 1
    /// The PCF8574 powers up with all pins high (E = R/W = 1): one idle byte (E, RS, R/W low)
    /// before the init, in a transaction of its own before the power-on wait.
    static let idleBytes = 1
    /// HD44780U Figure 24, 4-bit interface: function set 0x3 three times, then 0x2, each one nibble.
    static let initNibbles = 4
    /// Then function set (N, F), display off, clear, entry mode set, and our display on.
    static let initInstructions = 5
    /// Waits that no byte on the wire may bridge split the init into transactions: after the first
    /// 0x3 (> 4.1 ms), after the second (> 100 us), after clear (1.52 ms). The third 0x3, the 0x2
    /// and the instructions after them need only 37 us, less than one byte on a 100 kHz wire.
    /// The idle byte's transaction, then those 4 (RS stays low through the init: no set-up bytes).
    static let initTransactions = 5

    /// The datasheet init in the fewest transactions its waits allow.
    static func initialization(smbusOnly: Bool) -> WireCount {
        let expander = idleBytes + initNibbles * expanderBytesPerInitNibble + initInstructions * expanderBytesPerLCDByte
        return WireCount(expanderBytes: expander, transactions: smbusOnly ? expander : initTransactions)
    }

    /// One frame of `lcdBytes` HD44780 bytes with `rsChanges` changes of RS: one transaction, or
    /// one per expander byte on SMBus.
    static func frame(lcdBytes: Int, rsChanges: Int, smbusOnly: Bool) -> WireCount {
        let expander = lcdBytes * expanderBytesPerLCDByte + rsChanges * expanderBytesPerRSChange
        return WireCount(expanderBytes: expander, transactions: lcdBytes == 0 ? 0 : (smbusOnly ? expander : 1))
    }

    /// The fewest HD44780 bytes that change the screen from `before` to `after`: one data byte per
    /// changed cell, plus one set-DDRAM-address per run of changed cells that are consecutive in
    /// DDRAM, except a run starting where the address counter already points, or one that follows
    /// another after a single unchanged cell (rewriting that cell is one data byte, where a new
    /// address would also cost two RS changes). And the fewest RS changes for them, from `dataBefore` (RS of the last byte on the wire): the
    /// run reached free first (its data needs RS high), then per addressed run an instruction (RS
    /// low) and its data (RS high).
    static func lcdBytes(before: [String], after: [String], addressCounter: Int, dataBefore: Bool, address: (Int, Int) -> Int?) -> (
        bytes: Int, rsChanges: Int
    ) {
        var changed: [Int] = []
        for (row, (old, new)) in zip(before, after).enumerated() {
            for (column, (a, b)) in zip(old, new).enumerated() where a != b {
                guard let cell = address(row, column) else { continue }
                changed.append(cell)
            }
        }
        changed.sort()
        var runStarts: [Int] = []
        var bridged = 0
        for (index, cell) in changed.enumerated() where index == 0 || changed[index - 1] + 1 != cell {
            if index > 0, changed[index - 1] + 2 == cell {
                // One unchanged cell between two runs: rewriting it (one data byte) costs less
                // than a new address (one instruction byte and two RS changes).
                bridged += 1
                continue
            }
            runStarts.append(cell)
        }
        let reachedFree = runStarts.contains(addressCounter) ? 1 : 0
        var rsChanges = 0
        var data = dataBefore
        if reachedFree == 1, !data {
            rsChanges += 1
            data = true
        }
        for _ in 0..<(runStarts.count - reachedFree) {
            if data { rsChanges += 1 }  // to the instruction register for the address
            rsChanges += 1  // back to data
            data = true
        }
        return (changed.count + bridged + runStarts.count - reachedFree, changed.isEmpty ? 0 : rsChanges)
    }
}

/// Transactions and bytes; `wireBytes` adds one address byte per transaction.
struct WireCount: Hashable {
    var expanderBytes: Int
    var transactions: Int
    var wireBytes: Int { expanderBytes + transactions * WireFloor.addressBytesPerTransaction }

    static func + (a: WireCount, b: WireCount) -> WireCount {
        WireCount(expanderBytes: a.expanderBytes + b.expanderBytes, transactions: a.transactions + b.transactions)
    }
    static let zero = WireCount(expanderBytes: 0, transactions: 0)
    var text: String { "\(wireBytes) B in \(transactions) tx" }
}

/// One change of the emulated screen and what it cost on the wire.
struct FrameOnWire {
    var before: [String]
    var after: [String]
    var ours: WireCount
    var floor: WireCount
    /// When the last byte of the frame's last transaction left the wire (bus timing model).
    var end: Instant

    var label: String { trimmed(after[1]) }
    var previousLabel: String { trimmed(before[1]) }
}

func trimmed(_ line: String) -> String {
    var text = Substring(line)
    while text.last == " " { text = text.dropLast() }
    return String(text)
}

/// Attributes the bus transactions of each loop step to the screen change they made.
struct FrameRecorder: LoopObserver {
    let bus: RecordingI2CBus
    let emulator: HD44780Emulator
    let smbusOnly: Bool
    var attributed: Int
    var screen: [String]
    var addressCounter: Int
    var frames: [FrameOnWire] = []

    init(bus: RecordingI2CBus, emulator: HD44780Emulator, smbusOnly: Bool) {
        self.bus = bus
        self.emulator = emulator
        self.smbusOnly = smbusOnly
        attributed = bus.transactions.count
        screen = emulator.screen
        addressCounter = emulator.addressCounter
    }

    mutating func record(_ event: LoopEvent, at now: Instant) {}

    mutating func stepFinished(at now: Instant) {
        let transactions = bus.transactions[attributed...]
        attributed = bus.transactions.count
        let after = emulator.screen
        defer {
            screen = after
            addressCounter = emulator.addressCounter
        }
        guard !transactions.isEmpty else { return }
        precondition(transactions.allSatisfy { !$0.failed }, "bench: a write failed on the recording bus")
        let ours = WireCount(expanderBytes: transactions.reduce(0) { $0 + $1.bytes.count }, transactions: transactions.count)
        let emulator = self.emulator
        // RS as the wire left it before this frame (common wiring: RS on P0).
        let first = transactions.startIndex
        let dataBefore = first > bus.transactions.startIndex && (bus.transactions[first - 1].bytes.last ?? 0) & 1 != 0
        let (lcdBytes, rsChanges) = WireFloor.lcdBytes(
            before: screen, after: after, addressCounter: addressCounter, dataBefore: dataBefore
        ) { emulator.ddramAddress(row: $0, column: $1) }
        guard let last = transactions.last else { preconditionFailure("bench: a frame with no transaction") }
        let end = last.time + bus.byteTime * Int64(last.bytes.count + WireFloor.addressBytesPerTransaction)
        frames.append(
            FrameOnWire(
                before: screen, after: after, ours: ours, floor: WireFloor.frame(lcdBytes: lcdBytes, rsChanges: rsChanges, smbusOnly: smbusOnly),
                end: end))
    }
}

/// The figures of one run: a 60 s countdown on virtual time through the real loop, driver and
/// backpack, onto the HD44780 emulator behind a recording bus with 100 kHz timing.
struct WireFigures {
    var smbusOnly: Bool
    var initialization: (ours: WireCount, floor: WireCount)
    var firstPaint: FrameOnWire
    var press: FrameOnWire
    var oneDigitTicks: [FrameOnWire]
    var twoDigitTicks: [FrameOnWire]
    var ready: FrameOnWire
    var countdown: (ours: WireCount, floor: WireCount)
    /// Each label's frame end minus its ideal instant (press + k s, k = 1...duration), on the bus
    /// timing model.
    var labelErrors: [Int64]
    var violations: [String]
}

let benchAddress = I2CAddress(constant: 0x27)  // PCF8574T default

func measureWire(smbusOnly: Bool, durationSeconds: Int = 60) throws(HALError) -> WireFigures {
    let clock = ManualClock()
    let bus = RecordingI2CBus(clock: clock, supportsMultiByteWrite: !smbusOnly, blocking: true)
    let geometry = LCDGeometry.lcd16x2
    let emulator = HD44780Emulator(columns: geometry.columns, rows: geometry.rows, clock: clock)
    bus.attach(emulator, at: benchAddress)
    let lcd = HD44780(port: PCF8574Backpack(bus: bus, address: benchAddress), delay: VirtualDelay(clock: clock), geometry: geometry)
    var display = LCDDisplay(lcd: lcd, rom: .a00)
    try display.start(now: clock.now())
    let initTransactions = bus.successfulTransactions
    let initOurs = WireCount(expanderBytes: initTransactions.reduce(0) { $0 + $1.bytes.count }, transactions: initTransactions.count)

    let start = clock.now()
    let window = TimeSpan.milliseconds(20)
    let pressAt = start + .milliseconds(100)
    let inputs: [(time: Instant, input: LoopInput)] = [
        (pressAt, .button(ButtonEdge(pressed: true, time: pressAt))),
        (pressAt + .milliseconds(200), .button(ButtonEdge(pressed: false, time: pressAt + .milliseconds(200)))),
        (pressAt + .seconds(Int64(durationSeconds) + 1), .stop),
    ]
    let config = ControllerConfig(duration: .seconds(Int64(durationSeconds)), texts: Texts(), layout: .sixteenByTwo)
    let environment = LoopEnvironment(
        source: VirtualEventSource(clock: clock, inputs: inputs), display: display, outputs: .none, commands: .none, clock: clock,
        wallClock: NoWallClock(), observer: FrameRecorder(bus: bus, emulator: emulator, smbusOnly: smbusOnly), store: NoStateStorage?.none)
    var loop = EventLoop(
        environment: environment, coordinator: deviceCoordinator(controller: config, button: Debouncer(window: window, mode: .stable), keypad: nil))
    try loop.run()
    let frames = loop.environment.observer.frames

    let countdownLabel = { (label: String) in label.hasPrefix("Resend (") }
    guard frames.count >= 3,
        let pressIndex = frames.firstIndex(where: { countdownLabel($0.label) && !countdownLabel($0.previousLabel) }),
        let readyIndex = frames.firstIndex(where: { $0.label == "Resend" })
    else {
        preconditionFailure("bench: the countdown did not show up on the emulated screen: \(frames.map(\.after))")
    }
    let countdownFrames = Array(frames[pressIndex...readyIndex])
    precondition(countdownFrames.count == durationSeconds + 1, "bench: expected one frame per second of the countdown")
    let ticks = countdownFrames.dropFirst().dropLast()
    func changedCharacters(_ frame: FrameOnWire) -> Int {
        zip(frame.previousLabel, frame.label).filter { $0 != $1 }.count
    }
    // The controller's press instant is the debounced change: the edge plus the stable window.
    let pressInstant = pressAt + window
    // k = 0, the press frame, is the latency figure's business; the labels after it are on the clock.
    let errors = countdownFrames.enumerated().dropFirst().map { k, frame in
        (frame.end - (pressInstant + .seconds(Int64(k)))).nanoseconds
    }
    return WireFigures(
        smbusOnly: smbusOnly,
        initialization: (initOurs, WireFloor.initialization(smbusOnly: smbusOnly)),
        firstPaint: frames[0],
        press: frames[pressIndex],
        oneDigitTicks: ticks.filter { changedCharacters($0) == 1 },
        twoDigitTicks: ticks.filter { changedCharacters($0) == 2 },
        ready: frames[readyIndex],
        countdown: (
            countdownFrames.reduce(WireCount.zero) { $0 + $1.ours }, countdownFrames.reduce(WireCount.zero) { $0 + $1.floor }
        ),
        labelErrors: errors,
        violations: emulator.violations.map(\.description))
}

/// "9 B in 1 tx", or "9-13 B in 1 tx" when the frames of a kind differ.
/// `values` as `N` when all are equal, `MIN-MAX` otherwise (not empty).
private func range(_ values: [Int]) -> String {
    guard let low = values.min(), let high = values.max() else { preconditionFailure("bench: a range of nothing") }
    return low == high ? "\(low)" : "\(low)-\(high)"
}

func describeRange(_ frames: [FrameOnWire], _ count: (FrameOnWire) -> WireCount) -> String {
    guard !frames.isEmpty else { return "none" }
    return "\(range(frames.map { count($0).wireBytes })) B in \(range(frames.map { count($0).transactions })) tx"
}
