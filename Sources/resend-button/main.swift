import CLinuxOS
import HAL
import HALLinux
import ResendApp

// SIGINT/SIGTERM are taken through a signalfd by the event loop: block them before anything else.
do throws(HALError) {
    try StopSignals.block()
} catch {
    try? StandardStreams.writeError("resend-button: cannot block SIGINT/SIGTERM: \(error.operation): \(describe(error))\n")
    exit(ExitCode.software.rawValue)
}

let console = Console(
    out: { text in try? StandardStreams.writeOutput(text + "\n") },
    err: { text in try? StandardStreams.writeError(text + "\n") },
    readFile: { path in try? StandardStreams.readTextFile(path) })
// The arguments after the program name, from CLinuxOS (Embedded Swift has no CommandLine).
let arguments = (1..<max(1, Int(rb_argc()))).map { String(cString: rb_argv()[$0]!) }
let code = runCommandLine(arguments, console: console, interactive: runInteractive)
exit(code.rawValue)
