@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// What `resend-button ARGS` did, with `files` as the files named on the command line (the
/// configuration file is read from the real file system); recorded for the equivalence corpus.
func runCommand(_ arguments: [String], files: [String: String] = [:]) -> CLIOutcome {
    EquivalenceCorpus.record(arguments, files: files)
    return runCaptured(arguments, readFile: { files[$0] })
}

/// The lines `config check` prints for `text`, and its exit code.
func checkConfig(_ text: String, name: String = "t.json5") -> CLIOutcome {
    runCommand(["config", "check", name], files: [name: text])
}

/// `config check` of a file holding exactly `bytes` (which need not be UTF-8).
func checkConfig(bytes: [UInt8], name: String = "t.json5") -> CLIOutcome {
    runCaptured(["config", "check", name], readText: { path, _, _ in path == name ? .bytes(bytes) : .missing })
}

/// The problems of `text` as `config check` prints them, without the "t.json5: " prefix; empty
/// when the file is valid.
func configProblems(_ text: String) -> [String] {
    do throws(ConfigErrors) {
        _ = try DeviceConfig.parse(text: text, source: "t.json5")
        return []
    } catch {
        return error.lines.map { String($0.dropFirst("t.json5".count)) }
    }
}

/// The repository's root, from this file's path (Tests/ResendAppTests/...).
func repositoryFile(_ relativePath: String) -> String {
    var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    components.removeLast(3)
    return components.joined(separator: "/") + "/" + relativePath
}

func readRepositoryFile(_ relativePath: String) -> String? {
    if case .bytes(let bytes) = ConfigFileContents.read(repositoryFile(relativePath)) { return String(decoding: bytes, as: UTF8.self) }
    return nil
}
