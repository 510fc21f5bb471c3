import Glibc
import HAL
import HALLinux

// resend-bench: the figures of BENCHMARKS.md as one table on stdout (progress on stderr).
// Run it through scripts/bench, which builds the release binaries and passes their paths.

let usage = """
    usage: resend-bench [--quick] [--only 1,2,...] [--resend-button PATH] [--stripped PATH]
      --quick          fewer iterations and shorter real-time runs (a smoke run, under 30 s)
      --only LIST      only these figures: 1 wire, 2 cpu, 3 latency, 4 accuracy, 5 wake-ups, 6 memory, 7 keypad
      --resend-button  the static release resend-button (figure 6: its peak RSS)
      --stripped       a stripped copy of it (figure 6: its size)
    """

struct Options {
    var quick = false
    var figures: Set<Int> = Set(1...7)
    var resendButton: String?
    var stripped: String?
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        switch argument {
        case "--quick": options.quick = true
        case "--only":
            guard let list = rest.popFirst() else { fail("--only needs a list\n" + usage) }
            let numbers = list.split(separator: ",").compactMap { Int($0) }
            guard !numbers.isEmpty, numbers.allSatisfy({ (1...7).contains($0) }) else { fail("--only: figures are 1-7\n" + usage) }
            options.figures = Set(numbers)
        case "--resend-button": options.resendButton = rest.popFirst() ?? { fail("--resend-button needs a path") }()
        case "--stripped": options.stripped = rest.popFirst() ?? { fail("--stripped needs a path") }()
        case "-h", "--help":
            emit(usage)
            exit(0)
        default: fail("unknown argument '\(argument)'\n" + usage)
        }
    }
    return options
}

func fileSize(_ path: String) -> Int? {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : nil
}

/// The path of this executable, to start it again as the loop child.
func ownExecutable() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if length <= 0 { fail("readlink /proc/self/exe: errno \(errno)") }
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func main() throws(HALError) {
    let arguments = Array(CommandLine.arguments.dropFirst())
    switch arguments.first {
    case "loop-child":
        try runLoopChild()
        return
    case "peak-rss":
        runPeakRSS(Array(arguments.dropFirst()))
    case "oled":
        runOLEDFigures(Array(arguments.dropFirst()))
        return
    default:
        break
    }
    let options = parseOptions(arguments)
    var table = Table()
    let clock = SystemClock()
    let began = clock.now()

    if options.figures.contains(1) {
        progress("figure 1: I2C bytes on the recording bus (virtual time)")
        let i2c = try measureWire(smbusOnly: false)
        let smbus = try measureWire(smbusOnly: true)
        table.addWire(i2c: i2c, smbus: smbus)
    }
    if options.figures.contains(2) {
        progress("figure 2: CPU per controller event and per frame")
        table.addCPU(try measureCPU(quick: options.quick))
    }
    let needsRig = !options.figures.isDisjoint(with: [3, 4, 5])
    if needsRig {
        var rig = try RealTimeRig(emulate: true)
        if options.figures.contains(3) {
            let presses = options.quick ? 150 : 1_000
            progress("figure 3: press to frame on real time, \(presses) presses (about \(presses * 45 / 1_000) s)")
            table.addLatency(try measureLatency(rig: &rig, presses: presses))
        }
        let seconds = options.quick ? 3 : 10
        if options.figures.contains(5) {
            progress("figure 5: \(seconds) s idle")
            table.addIdle(try measureIdle(rig: &rig, seconds: seconds))
        }
        if !options.figures.isDisjoint(with: [4, 5]) {
            progress("figures 4, 5: a \(seconds) s countdown on real time")
            let quiet = try measureCountdown(rig: &rig, durationSeconds: seconds)
            var loaded: CountdownFigures?
            var loadedRealTime: CountdownFigures?
            if options.figures.contains(4) {
                progress("figure 4: a \(seconds) s countdown with 2 busy processes")
                let busy = BusyLoops(count: 2)
                sleep(until: clock.now() + .milliseconds(200))
                loaded = try measureCountdown(rig: &rig, durationSeconds: seconds)
                if setRealTimeScheduling(true) {
                    progress("figure 4: the same with the loop thread under SCHED_FIFO")
                    loadedRealTime = try measureCountdown(rig: &rig, durationSeconds: seconds)
                    _ = setRealTimeScheduling(false)
                } else {
                    progress("figure 4: SCHED_FIFO not permitted; skipping that run")
                }
                busy.stop()
            }
            table.addCountdown(
                quiet: quiet, loaded: loaded, loadedRealTime: loadedRealTime, accuracy: options.figures.contains(4),
                wakeups: options.figures.contains(5))
        }
        let violations = rig.bus.violations
        if !violations.isEmpty {
            progress("HD44780 emulator violations on the real-time bus (\(violations.count)):")
            for violation in violations.prefix(10) { progress("  " + violation) }
        }
    }
    if options.figures.contains(6) {
        progress("figure 6: peak RSS and binary size")
        let bench = ownExecutable()
        var button: (status: Int32, peakRSS: Int)?
        if let path = options.resendButton {
            button = peakRSS(of: [path, "simulate", "--headless", "--script", "press@0"], helper: bench)
        }
        let child = peakRSS(of: [bench, "loop-child"], helper: bench)
        if child.status != 0 { fail("the loop child exited with \(child.status)") }
        let floor = peakRSS(of: ["/bin/true"], helper: bench)
        table.addMemory(
            button: button, loopChild: child.peakRSS, methodFloor: floor.peakRSS, binary: options.resendButton.flatMap(fileSize),
            stripped: options.stripped.flatMap(fileSize))
    }
    if options.figures.contains(7) {
        progress("figure 7: the keypad on virtual time (idle wake-ups, key to echo)")
        let keypad = try measureKeypad(codes: options.quick ? 50 : 500)
        for violation in keypad.violations.prefix(10) { progress("  HD44780 emulator violation: " + violation) }
        table.addKeypad(keypad)
    }
    progress("done in \(millis(clock.now() - began, 0))")
    for line in table.render() { emit(line) }
}

do throws(HALError) {
    try main()
} catch {
    fail("\(error.operation): \(error.kind) (errno \(error.errno))")
}
