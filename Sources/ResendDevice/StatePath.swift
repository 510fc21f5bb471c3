import HALLinux
import ResendConfig
import ResendCore

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

/// Refuses to start a keypad over a state file that needs a newer program (after a downgrade):
/// moving it aside would reset the wrong codes and the lockout it holds (fail closed). The file is
/// left as it is; the systemd unit does not restart on 78, so `systemctl status` shows why. The
/// event loop keeps such a file too (and code entry closed) when it meets one later.
public func checkStateFormat(_ path: String?, keypad: Bool, command: String) throws(ExitError) {
    guard keypad, let path, let newer = StateFile(path: path).storedNewerFormat() else { return }
    throw ExitError(
        .config,
        "\(command): state file '\(path)' is \(newer.description); with keypad.enabled its wrong codes and lockout must not be reset, so it was left as it is: install a resend-button that reads format \(newer.readableFrom) again (the one that wrote it, or newer), or remove the file to start afresh (that resets the wrong codes and the lockout)"
    )
}
