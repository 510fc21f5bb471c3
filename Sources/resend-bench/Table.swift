import HAL

/// The one table scripts/bench prints: each figure next to its target and the figure of the
/// gpiozero + RPLCD implementation it is compared with (measured on mocks; "—" where there is none).
struct Table {
    struct Row {
        var figure: String
        var ours: String
        var target: String
        /// "yes", "NO", or "" where there is no target to meet.
        var met: String
        var theirs: String
    }

    private(set) var rows: [Row] = []

    /// The gpiozero + RPLCD implementation's figures, measured on mocks.
    enum Theirs {
        static let tick = "136 one-byte tx (272 B)"
        static let countdownError = "+837 ms after 60 s (instant bus), +3.16 s (100 kHz model)"
        static let latency = "26.7 ms"
        static let idleSwitches = "101"
        static let peakRSS = "22.5 MiB"
        static let none = "—"
    }

    mutating func add(_ figure: String, _ ours: String, target: String = "—", met: Bool? = nil, theirs: String = Theirs.none) {
        add(figure, ours, target: target, metText: met.map { $0 ? "yes" : "NO" } ?? "", theirs: theirs)
    }

    mutating func add(_ figure: String, _ ours: String, target: String, metText: String, theirs: String) {
        rows.append(Row(figure: figure, ours: ours, target: target, met: metText, theirs: theirs))
    }

    // MARK: Figure 1

    mutating func addWire(i2c: WireFigures, smbus: WireFigures) {
        for figures in [i2c, smbus] {
            let bus = figures.smbusOnly ? "SMBus-only" : "I2C"
            func floorText(_ floor: WireCount) -> String { "floor " + floor.text }
            func frameRow(_ name: String, _ frames: [FrameOnWire], issue: String? = nil, theirs: String = Theirs.none) {
                let ours = describeRange(frames) { $0.ours } + (frames.count > 1 ? " (x\(frames.count))" : "")
                let floor = "floor " + describeRange(frames) { $0.floor }
                add(
                    "\(bus): \(name)", ours, target: floor + (issue.map { "; issue: " + $0 } ?? ""),
                    met: frames.allSatisfy { $0.ours == $0.floor }, theirs: theirs)
            }
            add(
                "\(bus): LCD init (datasheet 4-bit dance)", figures.initialization.ours.text,
                target: floorText(figures.initialization.floor), met: figures.initialization.ours == figures.initialization.floor)
            frameRow("first paint (Verification / Send code)", [figures.firstPaint])
            frameRow("press (Send code -> Resend (60))", [figures.press])
            let smbus = figures.smbusOnly
            frameRow(
                "tick, one digit changes", figures.oneDigitTicks, issue: smbus ? nil : "1 tx, 9 B before the tAS set-up bytes", theirs: Theirs.tick)
            frameRow(
                "tick, two digits change", figures.twoDigitTicks, issue: smbus ? nil : "1 tx, 13 B before the tAS set-up bytes", theirs: Theirs.tick)
            frameRow("end of countdown (-> Resend)", [figures.ready])
            add(
                "\(bus): whole 60 s countdown (press frame to Resend)", figures.countdown.ours.text,
                target: floorText(figures.countdown.floor), met: figures.countdown.ours == figures.countdown.floor)
            let errors = Samples(figures.labelErrors)
            add(
                "\(bus): label error on the 100 kHz wire model, virtual time (max over \(errors.count) labels; last)",
                signedMillis(Double(errors.max)) + "; " + signedMillis(Double(figures.labelErrors.last ?? 0)),
                target: "within 2 ms at every label", met: errors.max <= 2_000_000 && errors.min >= -2_000_000,
                theirs: Theirs.countdownError)
            if !figures.violations.isEmpty {
                add("\(bus): HD44780 emulator violations", "\(figures.violations.count): \(figures.violations[0])", target: "0", met: false)
            }
        }
    }

    // MARK: Figure 2

    mutating func addCPU(_ cpu: CPUFigures) {
        let how = "median of \(cpu.runs) runs"
        add("CPU: accepted press (controller, \(cpu.controllers) per run, \(how))", perOperation(cpu.acceptedPress))
        add("CPU: ignored press during a countdown", perOperation(cpu.ignoredPress))
        add("CPU: advance at a deadline (a tick's new frame)", perOperation(cpu.advanceAtDeadline))
        add(
            "CPU: render a countdown frame (codes -> driver -> backpack -> null bus, \(cpu.renders) per run)",
            perOperation(cpu.render))
        add("CPU: LCDDisplay.show (text -> ROM -> driver -> null bus)", perOperation(cpu.show))
    }

    // MARK: Figure 3

    mutating func addLatency(_ latency: LatencyFigures) {
        let window = RealTimeRig.debounceWindow.nanoseconds
        func split(_ samples: Samples) -> String {
            "\(millis(TimeSpan(nanoseconds: samples.median))) / \(millis(TimeSpan(nanoseconds: samples.percentile(99))))"
                + " = \(millis(TimeSpan(nanoseconds: window), 0)) + \(millis(TimeSpan(nanoseconds: samples.median - window)))"
                + " / + \(millis(TimeSpan(nanoseconds: samples.percentile(99) - window)))"
        }
        func under2ms(_ samples: Samples) -> String {
            let median = samples.median - window < 2_000_000
            let p99 = samples.percentile(99) - window < 2_000_000
            return median == p99 ? (median ? "yes" : "NO") : "median \(median ? "yes" : "NO"), p99 \(p99 ? "yes" : "NO")"
        }
        let n = latency.presses
        add(
            "press -> first label cell on the glass, median / p99 = window + ours (\(n) presses)", split(latency.toGlass),
            target: "debounce + under 2 ms", metText: under2ms(latency.toGlass), theirs: Theirs.latency + " (first LCD change)")
        add(
            "press -> label transaction written, median / p99 = window + ours", split(latency.toWritten),
            target: "debounce + under 2 ms", metText: under2ms(latency.toWritten), theirs: Theirs.latency)
        add(
            "  ours, part 1: window end -> write starts (timerfd wake-up + our code), median / p99",
            "\(millis(TimeSpan(nanoseconds: latency.wakeAndCompute.median), 3)) / \(millis(TimeSpan(nanoseconds: latency.wakeAndCompute.percentile(99)), 3))"
        )
        add(
            "  ours, part 2: the label transaction on the 100 kHz wire (49 B), median / p99",
            "\(millis(TimeSpan(nanoseconds: latency.onWire.median), 3)) / \(millis(TimeSpan(nanoseconds: latency.onWire.percentile(99)), 3))")
    }

    // MARK: Figures 4 and 5

    // MARK: Figure 7

    mutating func addKeypad(_ keypad: KeypadFigures) {
        func deadlineText(_ deadline: Instant?) -> String { deadline.map { "at \($0.nanoseconds) ns" } ?? "none" }
        add(
            "keypad: loop wake-ups in 10 min idle, ready screen (virtual time; the idle wait's deadline)",
            "\(keypad.idleReadyWakeups) (deadline \(deadlineText(keypad.idleReadyDeadline)))", target: "0",
            met: keypad.idleReadyWakeups == 0 && keypad.idleReadyDeadline == nil)
        add(
            "keypad: loop wake-ups in 10 min idle after a code was accepted and the countdown ended",
            "\(keypad.idleAfterFlowWakeups) (deadline \(deadlineText(keypad.idleAfterFlowDeadline)))", target: "0",
            met: keypad.idleAfterFlowWakeups == 0 && keypad.idleAfterFlowDeadline == nil)
        let window = keypad.window.nanoseconds
        for (geometry, first, typing, firstLine) in keypad.echo {
            func part(_ value: Int64) -> String { millis(TimeSpan(nanoseconds: value), 3) }
            func ours(_ samples: Samples) -> String {
                "\(part(samples.median)) / \(part(samples.max)) = \(millis(keypad.window, 0)) + \(part(samples.median - window)) / + \(part(samples.max - window))"
            }
            for (what, values) in [("2nd-6th digit", typing), ("1st digit after a message (the line is redrawn)", first)] {
                let samples = Samples(values)
                add(
                    "keypad \(geometry): \(what) key -> its * on the glass, 100 kHz wire model, virtual time, median / max (\(samples.count) keys)",
                    ours(samples), target: "debounce + 2 ms", met: samples.max - window <= 2_000_000)
            }
            let lines = Samples(firstLine)
            add(
                "keypad \(geometry): 1st digit after a message key -> the whole field line (\"Code: *\") on the glass, same run, median / max (\(lines.count) keys)",
                ours(lines))
        }
    }

    mutating func addIdle(_ idle: IdleFigures) {
        add(
            "voluntary context switches of the loop thread, \(idle.seconds) s idle", "\(idle.contextSwitches)",
            target: "1 or fewer", met: idle.contextSwitches <= 1, theirs: Theirs.idleSwitches + " (10 s)")
    }

    mutating func addCountdown(
        quiet: CountdownFigures, loaded: CountdownFigures?, loadedRealTime: CountdownFigures?, accuracy: Bool, wakeups: Bool
    ) {
        func row(_ figures: CountdownFigures, _ condition: String) {
            for (what, values) in [("label written", figures.errors), ("first label cell on glass", figures.glassErrors)] {
                let errors = Samples(values)
                let worst = max(errors.max, -errors.min)
                add(
                    "countdown \(figures.durationSeconds) s on real time, \(condition): \(what) - ideal, max / mean (\(errors.count) labels)",
                    signedMillis(Double(errors.max)) + " / " + signedMillis(errors.mean) + " (min " + signedMillis(Double(errors.min)) + ")",
                    target: "within 2 ms at every label", met: worst <= 2_000_000, theirs: Theirs.countdownError)
            }
        }
        if accuracy {
            row(quiet, "quiet")
            if let loaded { row(loaded, "2 busy processes") }
            if let loadedRealTime { row(loadedRealTime, "2 busy processes, loop thread SCHED_FIFO") }
        }
        if wakeups {
            let loopWakeups = quiet.contextSwitches - quiet.busWrites
            add(
                "voluntary context switches of the loop thread, press + \(quiet.durationSeconds) s countdown (idle to idle)",
                "\(quiet.contextSwitches) = \(loopWakeups) waits in poll + \(quiet.busWrites) blocking bus writes",
                target: "—", theirs: Theirs.none)
        }
    }

    // MARK: Figure 6

    mutating func addMemory(button: (status: Int32, peakRSS: Int)?, loopChild: Int, methodFloor: Int, binary: Int?, stripped: Int?) {
        let limit = 12 * 1_048_576
        if let button {
            let ours = mebibytes(button.peakRSS) + (button.status == 0 ? "" : " (exit \(button.status))")
            add(
                "peak RSS: static release resend-button simulate --headless --script press@0", ours,
                target: "12 MiB or less", met: button.status == 0 && button.peakRSS <= limit, theirs: Theirs.peakRSS)
        } else {
            add("peak RSS: static release resend-button simulate --headless", "not run (no --resend-button)")
        }
        add(
            "peak RSS: the real-time loop process (resend-bench loop-child)", mebibytes(loopChild),
            target: "12 MiB or less", met: loopChild <= limit, theirs: Theirs.peakRSS)
        add("  (floor of the peak RSS method: /bin/true measured the same way)", mebibytes(methodFloor))
        if let binary {
            add("binary: static release resend-button, unstripped", mebibytes(binary))
        }
        if let stripped {
            add("binary: static release resend-button, stripped", mebibytes(stripped))
        }
    }

    // MARK: Output

    func render() -> [String] {
        let header = Row(figure: "figure", ours: "ours", target: "target", met: "met", theirs: "gpiozero + RPLCD")
        func line(_ row: Row) -> String {
            "| \(row.figure) | \(row.ours) | \(row.target) | \(row.met) | \(row.theirs) |"
        }
        return [line(header), "|---|---|---|---|---|"] + rows.map(line)
    }
}
