import HAL
import HALLinux
import ResendConfig

/// The line `output off` drives: the keypad's output (`keypad.output.line`) and its polarity.
public struct OutputLineTarget: Hashable, Sendable {
    public var spec: LineSpec
    public var activeLow: Bool

    public init(spec: LineSpec, activeLow: Bool) {
        self.spec = spec
        self.activeLow = activeLow
    }

    /// The physical level of "inactive": low, or high for an active-low strike or relay.
    public var inactiveLevel: String { activeLow ? "high" : "low" }
}

/// Finds the line, requests it as an output at its inactive level and releases it again. On a
/// Raspberry Pi kernel a released output keeps its level, so the strike stays off after this
/// process ends; on other kernels the level after the release is the driver's (gpio-sim's, for
/// instance, returns to its pull). Returns where the line was found.
public typealias OutputLineDriver = (OutputLineTarget) throws(HALError) -> GPIOLineLocation

/// The real `OutputLineDriver`: the same line lookup and request as `run`'s output (`GPIOOutput`).
public func driveOutputLineInactive(_ target: OutputLineTarget) throws(HALError) -> GPIOLineLocation {
    let location = try locate(target.spec)
    let output = try GPIOOutput(line: location, activeLow: target.activeLow, initiallyActive: false)
    withExtendedLifetime(output) {}
    return location
}

let outputUsage = "usage: resend-button output off [--config PATH]"

let outputOffSpecs: [OptionSpec] = [
    OptionSpec(
        "config", value: "PATH", help: "the configuration file whose keypad.output line to drive (default \(DeviceConfig.defaultPath) when it exists)"
    ),
    OptionSpec("help", help: "show this help"),
]

let outputHelp = helpText(
    usage: "resend-button output off [options]",
    summary: """
        Drives the keypad's output line (keypad.output.line: the door strike or relay) to its inactive
        level and does nothing else: no LCD, no button, no event loop. The systemd unit runs it after
        the service ends, however it ends (a crash, SIGKILL, a watchdog abort, a bad configuration), so
        that a door opened by a pulse does not stay open: Raspberry Pi kernels keep a released output
        at its last level. It needs the line to be free: while 'run' holds it, it says so (exit 69).
        Exit 0 when the line was driven inactive, or when the configuration has no output line (it says
        which); 69 no such chip or line, or the line is held; 77 no permission; 78 a bad keypad.enabled
        or keypad.output (a mistake elsewhere in the file is reported, and the line driven anyway).
        """,
    specs: outputOffSpecs)

/// `resend-button output off [--config PATH]`: reads the configuration as `run` does and drives
/// its keypad output inactive through `drive`. One line on `console.out` says what was done (or
/// that there is nothing to do); every failure is an `ExitError` with `run`'s exit codes and advice.
public func runOutputCommand(
    _ arguments: [String], console: Console, drive: OutputLineDriver = driveOutputLineInactive,
    facts: () -> StartupFacts = { StartupFacts.gather() }
) throws(ExitError) {
    guard let subcommand = arguments.first else {
        throw ExitError(.usage, "output: missing subcommand (off)\n\(outputUsage)")
    }
    switch subcommand {
    case "--help", "-h", "help":
        console.out(outputHelp)
        return
    case "off":
        break
    default:
        var message = "output: unknown subcommand \(shown(subcommand))"
        if let near = closestName(to: subcommand, among: ["off"]) { message += "; did you mean '\(near)'?" }
        throw ExitError(.usage, message + " (subcommands: off)\n\(outputUsage)")
    }
    let parsed = try parseArguments(Array(arguments.dropFirst()), specs: outputOffSpecs, command: "output off")
    if parsed.has("help") {
        console.out(outputHelp)
        return
    }
    if let extra = parsed.positional.first {
        throw ExitError(.usage, "output off: unexpected argument \(shown(extra)) (options start with --)\n\(outputUsage)")
    }
    let path = parsed.value("config") ?? DeviceConfig.defaultPath
    let keypad: DeviceConfig.Keypad
    var fileHasProblems = false
    do throws(ExitError) {
        keypad = try DeviceConfig.load(for: parsed, read: console.readConfig).keypad
    } catch {
        // A hook that keeps a door safe reads only what it needs: a mistake elsewhere in the file
        // (run refuses it) must not leave the strike as it is.
        guard let own = outputKeys(path, read: console.readConfig) else { throw error }
        fileHasProblems = true
        keypad = own
    }
    let problems = "output off: \(path) has problems (resend-button config check lists them)"
    guard let target = outputTarget(keypad) else {
        if fileHasProblems { console.err(problems) }
        let reason =
            keypad.output.line.map { "keypad.enabled is not true, so run does not drive keypad.output.line \(shown($0))" }
            ?? "no keypad.output.line"
        console.out("output off: nothing to drive: \(reason) in \(path)")
        return
    }
    if fileHasProblems { console.err(problems + "; keypad.output is valid, so it is driven") }
    do throws(HALError) {
        let location = try drive(target)
        console.out("output off: keypad output \(location.description) driven inactive (\(target.inactiveLevel))")
    } catch {
        throw startupFailure(error, resource: .keypadLine(role: "keypad output", target.spec), facts: facts(), command: "output off")
    }
}

/// The keypad section of the file at `path` when its output keys are right, whatever else is
/// wrong (`DeviceConfig.parseOutputKeys`); nil when they are not, or the file cannot be read.
private func outputKeys(_ path: String, read: (String) -> ConfigFileContents) -> DeviceConfig.Keypad? {
    let bytes: [UInt8]
    switch read(path) {
    case .bytes(let contents): bytes = contents
    case .text(let text): bytes = Array(text.utf8)
    case .missing, .unreadable: return nil
    }
    return try? DeviceConfig.parseOutputKeys(bytes: bytes, source: path)
}

/// The line `run` drives for this keypad section, or nil when it drives none: the same condition
/// as `acquireKeypad` (the keypad on and an output line named).
public func outputTarget(_ keypad: DeviceConfig.Keypad) -> OutputLineTarget? {
    guard keypad.enabled, let line = keypad.output.line else { return nil }
    return OutputLineTarget(spec: LineSpec(parsing: line) ?? .named(line), activeLow: keypad.output.activeLow)
}
