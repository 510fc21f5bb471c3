import CLinuxOS
import HAL
import HALLinux
import ResendApp
import ResendConfig
import ResendDevice
import ResendSimulator

// SIGINT and SIGTERM keep their default action (end the process, status 130/143 in a shell)
// until an event loop takes them through its signalfd (`Poller`), and get it back when the loop
// is gone: every command ends on them promptly, and `run` and the simulators stop gracefully.
let console = Console(
    out: { text in try? StandardStreams.writeOutput(text + "\n") },
    err: { text in try? StandardStreams.writeError(text + "\n") },
    readFile: { path in try? StandardStreams.readTextFile(path, limit: DeviceConfig.maximumFileSize) },
    readText: ConfigFileContents.read(_:limit:what:))
// The arguments after the program name, from CLinuxOS (Embedded Swift has no CommandLine).
let arguments = (1..<max(1, Int(rb_argc()))).compactMap { rb_argv()[$0].map { String(cString: $0) } }
let code = runCommandLine(arguments, console: console, interactive: runInteractive)
exit(code.rawValue)
