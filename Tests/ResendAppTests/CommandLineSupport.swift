import ResendApp
import ResendDevice
import ResendSimulator

/// What `resend-button ARGS` did: its exit code and what it printed, as lines.
struct CommandResult {
    var code: ExitCode
    var out: [String]
    var err: [String]
}

/// The name the configuration tests give a command's result.
typealias CLIOutcome = CommandResult

/// The name the check and flag tests give a capture they build consoles from.
typealias CapturedConsole = Capture

extension Capture {
    /// A console printing into this capture that reads no file named on the command line (and
    /// the configuration file from the real file system).
    var console: Console { Console(out: printOut, err: printErr, readFile: { _ in nil }) }
}

/// Runs `resend-button ARGUMENTS` with its output captured as lines; `readFile`, `readConfig` and
/// `readText` are the console's file readers (`Console.init`'s defaults when not given). The
/// interactive simulator is not available: asked for, it is exit 70.
func runCaptured(
    _ arguments: [String], readFile: @escaping (String) -> String? = { _ in nil },
    readConfig: @escaping (String) -> ConfigFileContents = ConfigFileContents.read,
    readText: ((_ path: String, _ limit: Int, _ what: String) -> ConfigFileContents)? = nil
) -> CommandResult {
    let capture = Capture()
    let console = Console(out: capture.printOut, err: capture.printErr, readFile: readFile, readConfig: readConfig, readText: readText)
    let code = runCommandLine(arguments, console: console) { (_: SimulateOptions) throws(ExitError) in
        throw ExitError(.software, "interactive simulator not available in tests")
    }
    return CommandResult(code: code, out: capture.out, err: capture.err)
}

/// Runs the command line as a user would, with `files` as the file system (the configuration
/// file too), and records the case for the equivalence corpus.
func runCLI(_ arguments: [String], files: [String: String] = [:]) -> CommandResult {
    EquivalenceCorpus.record(arguments, files: files)
    return runCaptured(arguments, readFile: { files[$0] }, readConfig: { files[$0].map(ConfigFileContents.text) ?? .missing })
}
