import CharacterLCD
import HAL
import HALLinux
import ResendCore
import ResendDevice
import ResendSimulator

// Figure 2: CPU time per controller event and per rendered frame, on the real monotonic clock.

/// A bus that accepts everything at once and only counts: what is left is our own CPU time.
struct NullBus: I2CBus {
    let supportsMultiByteWrite = true
    var bytes = 0
    var transactions = 0

    mutating func write(_ bytes: [UInt8], to address: I2CAddress) throws(HALError) {
        self.bytes += bytes.count
        transactions += 1
    }

    mutating func probe(_ address: I2CAddress) throws(HALError) -> Bool { true }
}

/// Datasheet waits cost no CPU; skipping them keeps the render loop about our code only.
struct NoDelay: Delay {
    mutating func delay(_ span: TimeSpan) {}
}

struct CPUFigures {
    /// Median over runs of the mean time per call, nanoseconds.
    var acceptedPress: Double
    var ignoredPress: Double
    var advanceAtDeadline: Double
    var render: Double
    var show: Double
    var runs: Int
    var controllers: Int
    var renders: Int
}

/// Times `body` on CLOCK_MONOTONIC and returns nanoseconds per operation.
private func timed(operations: Int, _ body: () -> Void) -> Double {
    let clock = SystemClock()
    let start = clock.now()
    body()
    return Double((clock.now() - start).nanoseconds) / Double(operations)
}

/// The countdown's frames, as the controller makes them, from "Resend (60)" to "Resend".
private func countdownFrames(config: ControllerConfig) -> [ScreenText] {
    var controller = ResendController(config: config)
    _ = controller.start(now: .origin)
    var frames: [ScreenText] = []
    func collect(_ actions: [ControllerAction]) {
        for case .show(let frame) in actions { frames.append(frame) }
    }
    collect(controller.press(now: .origin))
    for second in 1...config.durationSeconds {
        collect(controller.advance(to: .origin + .seconds(Int64(second))))
    }
    precondition(frames.count == config.durationSeconds + 1, "bench: one frame per second of the countdown")
    return frames
}

func measureCPU(quick: Bool) throws(HALError) -> CPUFigures {
    let runs = quick ? 3 : 7
    let controllers = quick ? 300 : 2_000
    let cycles = quick ? 60 : 400
    let config = ControllerConfig(duration: ControllerConfig.defaultDuration, texts: Texts(), layout: .sixteenByTwo)
    let seconds = config.durationSeconds
    var sink = 0

    var template = ResendController(config: config)
    sink &+= template.start(now: .origin).count
    let pressAt = Instant.origin + .seconds(1)
    var accepted: [Double] = []
    var ignored: [Double] = []
    var advanced: [Double] = []
    for _ in 0..<runs {
        var fleet = Array(repeating: template, count: controllers)
        accepted.append(
            timed(operations: controllers) {
                for index in fleet.indices { sink &+= fleet[index].press(now: pressAt).count }
            })
        ignored.append(
            timed(operations: controllers) {
                for index in fleet.indices { sink &+= fleet[index].press(now: pressAt + .milliseconds(500)).count }
            })
        advanced.append(
            timed(operations: controllers * seconds) {
                for second in 1...seconds {
                    let now = pressAt + .seconds(Int64(second))
                    for index in fleet.indices { sink &+= fleet[index].advance(to: now).count }
                }
            })
        precondition(fleet.allSatisfy { $0.state == .ready(used: true) }, "bench: every countdown must end")
    }

    let frames = countdownFrames(config: config)
    let codes = frames.map { frame in
        frame.lines.map { line in
            do throws(UnsupportedCharacter) { return try CharacterROM.a00.encode(line) } catch {
                preconditionFailure("bench: the default texts are in the A00 ROM")
            }
        }
    }
    let geometry = LCDGeometry.lcd16x2
    var lcd = HD44780(port: PCF8574Backpack(bus: NullBus(), address: benchAddress), delay: NoDelay(), geometry: geometry)
    try lcd.initialize()
    var display = LCDDisplay(
        lcd: HD44780(port: PCF8574Backpack(bus: NullBus(), address: benchAddress), delay: NoDelay(), geometry: geometry),
        rom: .a00)
    try display.start(now: .origin)
    var rendered: [Double] = []
    var shown: [Double] = []
    var renderError: HALError?
    for _ in 0..<runs {
        rendered.append(
            timed(operations: cycles * codes.count) {
                for _ in 0..<cycles {
                    for frame in codes {
                        do throws(HALError) { try lcd.render(frame) } catch { renderError = error }
                    }
                }
            })
        shown.append(
            timed(operations: cycles * frames.count) {
                for _ in 0..<cycles {
                    for frame in frames { sink &+= display.show(frame, now: .origin).count }
                }
            })
    }
    if let renderError { throw renderError }
    // The work must have reached the bus (or the optimiser took it away), the same from both paths.
    precondition(lcd.port.bus.bytes > 0 && display.lcd.port.bus.bytes == lcd.port.bus.bytes, "bench: null bus byte counts")
    precondition(sink != Int.min, "bench: sink")
    return CPUFigures(
        acceptedPress: medianOfRuns(accepted), ignoredPress: medianOfRuns(ignored), advanceAtDeadline: medianOfRuns(advanced),
        render: medianOfRuns(rendered), show: medianOfRuns(shown), runs: runs, controllers: controllers,
        renders: cycles * codes.count)
}
