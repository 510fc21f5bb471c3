import HALLinux
import ResendConfig

/// Refuses a state file path that names something other than a regular file (a device node, a
/// FIFO, a socket, a directory, a symbolic link), before anything runs: the program reads, moves
/// aside and replaces only its own regular file, and a wrong path is a mistake only an edit
/// fixes. With `fromFlag` the path came from `--state-file` (exit 64), else from the
/// configuration file `configPath` (exit 78). Nothing at the path yet is fine (a fresh start).
public func checkStatePath(_ path: String?, command: String, fromFlag: Bool, configPath: String) throws(ExitError) {
    guard let path, let reason = StateFile(path: path).checkPath() else { return }
    let advice = "the state file must be a regular file or not exist yet; it was left as it is"
    if fromFlag {
        throw ExitError(.usage, "\(command): --state-file: '\(path)' \(reason); \(advice)")
    }
    throw ExitError(.config, "\(configPath): stateFile: \(quoted(path)) \(reason); \(advice)")
}
