import Glibc
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
let code = runCommandLine(Array(CommandLine.arguments.dropFirst()), console: console, interactive: runInteractive)
exit(code.rawValue)
