import CharacterLCD
import Glibc
import HAL
import HALLinux
import HALMock
import ResendCore
import ResendDevice
import ResendSimulator

// Figures 3-6: the product's real-time loop (LinuxEventSource: poll + timerfd + signalfd, SleepDelay,
// the driver inside LCDDisplay) on CLOCK_MONOTONIC, with presses fed through a pipe by another
// thread and a bus that blocks for as long as a 100 kHz wire would.

/// What the loop tells the feeder thread, one byte each on the notice pipe.
enum Notice {
    /// The loop's start step finished (the ready screen is up); it is about to wait.
    static let started = UInt8(ascii: "S")
    /// A transaction put a countdown label ("Resend (NN)") on the glass.
    static let countdown = UInt8(ascii: "L")
    /// A transaction put the after-countdown label ("Resend") on the glass.
    static let ready = UInt8(ascii: "R")
}

/// What the feeder sends the loop: 16 bytes, a kind then a CLOCK_MONOTONIC time in nanoseconds.
private enum Message {
    static let size = 16
    static let release: Int64 = 0
    static let press: Int64 = 1
    static let stop: Int64 = 2
}

/// The registered descriptor's handler: turns messages into loop inputs.
private func readMessages(_ fd: Int32) throws(HALError) -> [LoopInput] {
    var words = [Int64](repeating: 0, count: 32)
    let count = words.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
    if count < 0 { throw HALError(.io, operation: "read bench pipe", errno: errno) }
    if count == 0 { return [.stop] }
    precondition(count % Message.size == 0, "bench: a message was split")
    return (0..<count / Message.size).map { index in
        let kind = words[2 * index]
        let time = Instant(nanoseconds: words[2 * index + 1])
        switch kind {
        case Message.press: return .button(ButtonEdge(pressed: true, time: time))
        case Message.release: return .button(ButtonEdge(pressed: false, time: time))
        default: return .stop
        }
    }
}

/// An I2C adapter modelled on real time: a write blocks (clock_nanosleep, as a real i2c-dev write
/// sleeps until the controller's interrupt) for (1 address byte + n data bytes) x `byteTime`, then
/// returns. With an emulator attached, the bytes are decoded afterwards with the arrival time each
/// would have had on the wire (the PCF8574 drives its port once the byte is acknowledged), to find
/// when the label line changed; that work happens after the write's end is stamped.
final class WireModelBus: I2CBus {
    struct LabelChange {
        /// The label row after the transaction, trailing spaces trimmed.
        var label: String
        /// When `write` was called.
        var started: Instant
        /// When the first changed label cell was latched by the HD44780 (wire timing model).
        var onGlass: Instant
        /// When `write` returned: the frame is written.
        var written: Instant
    }

    let supportsMultiByteWrite = true
    /// Standard-mode I2C: 100 kHz SCL, 9 clocks per byte (8 bits + ACK).
    static let byteTime = TimeSpan.microseconds(90)
    private let clock = SystemClock()
    private let emulator: HD44780Emulator?
    private let notices: Int32
    private var label = ""
    private(set) var labelChanges: [LabelChange] = []
    /// The start of every write: each blocked the loop thread once.
    private(set) var writeStarts: [Instant] = []

    init(emulate geometry: LCDGeometry?, notices: Int32) {
        emulator = geometry.map { HD44780Emulator(columns: $0.columns, rows: $0.rows, clock: SystemClock()) }
        self.notices = notices
    }

    var violations: [String] { emulator?.violations.map(\.description) ?? [] }

    func write(_ bytes: [UInt8], to address: I2CAddress) throws(HALError) {
        let started = clock.now()
        sleep(until: started + WireModelBus.byteTime * Int64(1 + bytes.count))
        let written = clock.now()
        writeStarts.append(started)
        guard let emulator else { return }
        var onGlass: Instant?
        for (index, byte) in bytes.enumerated() {
            let arrival = started + WireModelBus.byteTime * Int64(index + 2)
            emulator.receive(byte, at: arrival)
            // Odd bytes drop E: only they can latch a nibble.
            if onGlass == nil, index % 2 == 1, trimmed(emulator.screen[1]) != label { onGlass = arrival }
        }
        let now = trimmed(emulator.screen[1])
        guard now != label, let onGlass else { return }
        label = now
        labelChanges.append(LabelChange(label: now, started: started, onGlass: onGlass, written: written))
        if now == Texts().resendLabel {
            writeAll(notices, [Notice.ready])
        } else if countdownSeconds(now) != nil {
            writeAll(notices, [Notice.countdown])
        }
    }

    func probe(_ address: I2CAddress) throws(HALError) -> Bool { true }
}

/// NN of "Resend (NN)", else nil.
func countdownSeconds(_ label: String) -> Int? {
    let prefix = "Resend ("
    let suffix = ")"
    guard label.hasPrefix(prefix), label.hasSuffix(suffix) else { return nil }
    return Int(label.dropFirst(prefix.count).dropLast(suffix.count))
}

/// Collects what the latency and accuracy figures need from the loop's events.
struct PressObserver: LoopObserver {
    let notices: Int32
    var steps = 0
    /// The first press edge's kernel-style timestamp (the feeder's clock reading).
    var pressEdge: Instant?
    /// The debounced press: the instant the controller starts the countdown from.
    var pressInstant: Instant?

    mutating func record(_ event: LoopEvent, at now: Instant) {
        switch event {
        case .edge(let edge) where edge.pressed && pressEdge == nil: pressEdge = edge.time
        case .debounced(let change) where change.pressed && pressInstant == nil: pressInstant = change.time
        default: break
        }
    }

    mutating func stepFinished(at now: Instant) {
        if steps == 0 { writeAll(notices, [Notice.started]) }
        steps += 1
    }
}

/// The feeder thread's side: presses and stops into the loop, notices out of it.
struct Feeder: Sendable {
    let input: Int32
    let notices: Int32
    let loopThread: Int32
    let clock = SystemClock()

    private func send(_ kind: Int64, _ time: Instant) {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: kind.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: time.nanoseconds.littleEndian) { bytes += $0 }
        writeAll(input, bytes)
    }

    /// A press edge stamped now, as libgpiod stamps edges on CLOCK_MONOTONIC; returns the stamp.
    func press() -> Instant {
        let time = clock.now()
        send(Message.press, time)
        return time
    }

    func release() { send(Message.release, clock.now()) }
    func stop() { send(Message.stop, clock.now()) }

    /// Blocks until `notice` arrives; earlier notices of other kinds are skipped.
    func waitFor(_ notice: UInt8) {
        while let byte = readByte(notices) {
            if byte == notice { return }
        }
        fail("the loop closed the notice pipe")
    }

    var loopContextSwitches: Int { voluntaryContextSwitches(thread: loopThread) }
}

/// Hands results from the feeder thread to the main thread; read only after `Thread.join()`.
final class FeederResults: @unchecked Sendable {
    var values: [Int] = []
    var instants: [Instant] = []
}

/// The device's loop on real time, reused across runs: the event source (with the feeder's pipe
/// registered) and the display outlive each `EventLoop`, as on the device across presses.
struct RealTimeRig {
    let clock = SystemClock()
    let bus: WireModelBus
    var display: LCDDisplay<PCF8574Backpack<WireModelBus>, SleepDelay>
    var source: LinuxEventSource
    private let input = Pipe()
    private let notices = Pipe()
    /// The loop runs on the main thread, whose thread id is the process id.
    let loopThread = getpid()
    static let debounceWindow = TimeSpan.milliseconds(20)

    init(emulate: Bool) throws(HALError) {
        let geometry = LCDGeometry.lcd16x2
        bus = WireModelBus(emulate: emulate ? geometry : nil, notices: notices.writeEnd)
        let lcd = HD44780(port: PCF8574Backpack(bus: bus, address: benchAddress), delay: SleepDelay(), geometry: geometry)
        display = LCDDisplay(lcd: lcd, rom: .a00)
        try display.start(now: clock.now())
        source = try LinuxEventSource(button: nil)
        let fd = input.readEnd
        _ = source.register(fileDescriptor: fd) { () throws(HALError) -> [LoopInput] in try readMessages(fd) }
    }

    /// Runs a fresh loop (controller in Ready, debouncer released) until the feeder stops it.
    mutating func run(durationSeconds: Int, feeder body: @escaping @Sendable (Feeder) -> Void) throws(HALError) -> PressObserver {
        let feeder = Feeder(input: input.writeEnd, notices: notices.readEnd, loopThread: loopThread)
        let thread = Thread { body(feeder) }
        let config = ControllerConfig(duration: .seconds(Int64(durationSeconds)), texts: Texts(), layout: .sixteenByTwo)
        let environment = LoopEnvironment(
            source: source, display: display, outputs: .none, commands: .none, clock: clock, wallClock: NoWallClock(),
            observer: PressObserver(notices: notices.writeEnd), store: NoStateStorage?.none)
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(
                controller: config, button: Debouncer(window: RealTimeRig.debounceWindow, mode: .stable), keypad: nil))
        try loop.run()
        source = loop.environment.source
        display = loop.environment.display
        thread.join()
        return loop.environment.observer
    }
}

// MARK: Figure 3: press to frame

struct LatencyFigures {
    var presses: Int
    /// Edge to the end of the transaction that changed the label, ns.
    var toWritten: Samples
    /// Edge to the HD44780 latching the first changed label cell, ns.
    var toGlass: Samples
    /// From the end of the debounce window to the start of that write: wake-up and our code, ns.
    var wakeAndCompute: Samples
    /// The label-changing transaction's own time on the modelled wire, ns.
    var onWire: Samples
    var wallTime: TimeSpan
}

func measureLatency(rig: inout RealTimeRig, presses: Int) throws(HALError) -> LatencyFigures {
    var written: [Int64] = []
    var glass: [Int64] = []
    var wake: [Int64] = []
    var wire: [Int64] = []
    let began = rig.clock.now()
    for _ in 0..<presses {
        let seen = rig.bus.labelChanges.count
        let observer = try rig.run(durationSeconds: 60) { feeder in
            feeder.waitFor(Notice.started)
            // A little random idle time, so the press does not land at a fixed phase after the start step.
            sleep(until: feeder.clock.now() + .microseconds(Int64.random(in: 500...3_000)))
            _ = feeder.press()
            feeder.waitFor(Notice.countdown)
            feeder.release()
            feeder.stop()
        }
        guard let edge = observer.pressEdge, let debounced = observer.pressInstant,
            let change = rig.bus.labelChanges[seen...].first(where: { countdownSeconds($0.label) != nil })
        else { fail("a press did not reach the label") }
        written.append((change.written - edge).nanoseconds)
        glass.append((change.onGlass - edge).nanoseconds)
        wake.append((change.started - debounced).nanoseconds)
        wire.append((change.written - change.started).nanoseconds)
    }
    return LatencyFigures(
        presses: presses, toWritten: Samples(written), toGlass: Samples(glass), wakeAndCompute: Samples(wake),
        onWire: Samples(wire), wallTime: rig.clock.now() - began)
}

// MARK: Figures 4 and 5: countdown accuracy and wake-ups

struct CountdownFigures {
    var durationSeconds: Int
    /// Per label after the press frame (k = 1...duration): frame written minus press + k s, ns.
    var errors: [Int64]
    /// The same for the instant the first changed label cell was latched (wire timing model).
    var glassErrors: [Int64]
    /// Voluntary context switches of the loop thread from idle before the press to idle after the
    /// ready frame.
    var contextSwitches: Int
    /// Of those, the bus model's blocking writes (one sleep each).
    var busWrites: Int
}

func measureCountdown(rig: inout RealTimeRig, durationSeconds: Int) throws(HALError) -> CountdownFigures {
    let results = FeederResults()
    let seen = rig.bus.labelChanges.count
    let observer = try rig.run(durationSeconds: durationSeconds) { feeder in
        feeder.waitFor(Notice.started)
        sleep(until: feeder.clock.now() + .milliseconds(50))
        results.values.append(feeder.loopContextSwitches)
        results.instants.append(feeder.press())
        feeder.waitFor(Notice.ready)
        // Let the loop go back to waiting with no deadline, so the window ends idle as it began.
        sleep(until: feeder.clock.now() + .milliseconds(50))
        results.values.append(feeder.loopContextSwitches)
        results.instants.append(feeder.clock.now())
        feeder.stop()
    }
    guard let pressInstant = observer.pressInstant else { fail("the countdown press was not debounced") }
    var errors: [Int64] = []
    var glassErrors: [Int64] = []
    for change in rig.bus.labelChanges[seen...] where change.written > pressInstant {
        let secondsLeft = change.label == Texts().resendLabel ? 0 : countdownSeconds(change.label)
        guard let secondsLeft, secondsLeft < durationSeconds else { continue }
        let ideal = pressInstant + .seconds(Int64(durationSeconds - secondsLeft))
        errors.append((change.written - ideal).nanoseconds)
        glassErrors.append((change.onGlass - ideal).nanoseconds)
        if secondsLeft == 0 { break }
    }
    if errors.count != durationSeconds { fail("expected \(durationSeconds) label changes after the press, saw \(errors.count)") }
    let from = results.instants[0]
    let to = results.instants[1]
    let busWrites = rig.bus.writeStarts.filter { $0 >= from && $0 <= to }.count
    return CountdownFigures(
        durationSeconds: durationSeconds, errors: errors, glassErrors: glassErrors, contextSwitches: results.values[1] - results.values[0],
        busWrites: busWrites)
}

struct IdleFigures {
    var seconds: Int
    var contextSwitches: Int
}

/// The loop blocked in wait with no deadline (Ready, nothing pending) for `seconds`, counted from
/// 50 ms after its start step so that the one switch into poll() is not in the window.
func measureIdle(rig: inout RealTimeRig, seconds: Int) throws(HALError) -> IdleFigures {
    let results = FeederResults()
    _ = try rig.run(durationSeconds: 60) { feeder in
        feeder.waitFor(Notice.started)
        sleep(until: feeder.clock.now() + .milliseconds(50))
        let before = feeder.loopContextSwitches
        sleep(until: feeder.clock.now() + .seconds(Int64(seconds)))
        results.values = [feeder.loopContextSwitches - before]
        feeder.stop()
    }
    return IdleFigures(seconds: seconds, contextSwitches: results.values[0])
}

// MARK: Figure 6: the loop process on its own (run as a child for its peak RSS)

/// `resend-bench loop-child`: init, a press, a 2 s countdown and a stop, with no emulator and no
/// records beyond the bus's own: the device's loop as it would run, so its peak RSS is the loop's.
func runLoopChild() throws(HALError) {
    var rig = try RealTimeRig(emulate: false)
    _ = try rig.run(durationSeconds: 2) { feeder in
        feeder.waitFor(Notice.started)
        _ = feeder.press()
        sleep(until: feeder.clock.now() + .milliseconds(2_100))
        feeder.stop()
    }
}
