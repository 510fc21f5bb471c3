import HAL
import HALLinux
import ResendConfig
import ResendCore

/// What `run` holds for its keypad (`keypad.enabled`) while the loop runs: the backend attached to
/// the event source, the verify command's runner and what the `started` line says about them.
final class RunKeypad {
    enum Backend {
        case matrix(MatrixKeypadAttachment)
        case evdev(EvdevKeypadAttachment)
    }

    let backend: Backend
    let verifier: CommandService
    /// `keypad=... keypad_output=... verify=... send_key=...` for the `started` line.
    let startedFields: [LogField]

    init(backend: Backend, verifier: CommandService, startedFields: [LogField]) {
        self.backend = backend
        self.verifier = verifier
        self.startedFields = startedFields
    }

    /// At stop: a matrix releases its rows (no row stays driven while the program is not running).
    func stop() {
        if case .matrix(let matrix) = backend { matrix.stop() }
    }
}

/// Prepares the keypad of `run`: the verify command (a `ProcessRunner` with `CommandPurpose.verify`, the
/// code on its standard input) and the backend, both registered with `source`. Nil when the keypad
/// is off. The lines were acquired with the rest of the hardware (`acquireKeypad`).
func attachKeypad(_ options: RunOptions, hardware: AcquiredHardware, source: inout LinuxEventSource, session: String? = nil) throws(ExitError)
    -> RunKeypad?
{
    let keypad = options.config.keypad
    guard keypad.enabled else { return nil }
    let verifier: CommandService
    do throws(HALError) {
        verifier = try .make(
            .verify, arguments: keypad.verify.command, timeout: .seconds(Int64(keypad.verify.timeoutSeconds)),
            environment: keypad.verify.environment, sessionDirectory: session)
    } catch {
        throw ExitError(.software, "run: cannot prepare the verify command: \(error.operation): \(describe(error))")
    }
    verifier.attach(to: &source)
    let backend: RunKeypad.Backend
    switch keypad.backend {
    case .matrix:
        guard let lines = hardware.keypad?.matrix, let layout = keypad.layout,
            layout.rows == lines.rows.count, layout.columns == lines.columns.count
        else {
            // `DeviceConfig` refuses such a section; a caller that builds options by hand gets this.
            throw ExitError(.config, "run: keypad.keys: the key map must have one row per keypad.rows line and one key per keypad.columns line")
        }
        do throws(HALError) {
            backend = .matrix(try MatrixKeypadAttachment(lines: lines, layout: layout, diodes: keypad.diodes, settle: keypad.settle, source: &source))
        } catch {
            throw ExitError(startupExitCode(for: error.kind), "run: keypad matrix: \(error.operation): \(describe(error))")
        }
    case .evdev:
        backend = .evdev(try EvdevKeypadAttachment(keypad, source: &source))
    }
    return RunKeypad(
        backend: backend, verifier: verifier, startedFields: keypadStartedFields(keypad, backend: backend, output: hardware.keypad?.output?.line))
}

/// The keypad's fields of the `started` line: `keypad` (the backend with its lines or device),
/// `keypad_output` (the line, or none), `verify` (the program, or none) and `send_key`.
func keypadStartedFields(_ keypad: DeviceConfig.Keypad, backend: RunKeypad.Backend, output: GPIOLineLocation?) -> [LogField] {
    let summary: String
    switch backend {
    case .matrix(let matrix): summary = matrix.summary
    case .evdev(let evdev): summary = evdev.summary
    }
    return [
        .string("keypad", summary),
        .string(
            "keypad_output",
            output.map { $0.description + (keypad.output.activeLow ? " active-low" : "") + " pulse \(keypad.output.pulseMs) ms" } ?? "none"),
        .string("verify", keypad.verify.command?.first ?? "none"),
        .string("send_key", keypad.sendKey == .button ? "button" : String(decoding: [keypad.sendKey.symbol], as: UTF8.self)),
    ]
}
