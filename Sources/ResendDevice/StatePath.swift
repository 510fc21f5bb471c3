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

/// What to do about a state file on a medium that forgets at a power cut.
public let forgetfulStateAdvice =
    "keep the state on a file system that survives a power cut: stateFile on a persistent partition, or that partition bind-mounted at the state file's directory (docs/deploy.md, \"A read-only or overlay root\")"

/// The state file's medium, judged for a device with or without a keypad: `run` logs `record` once
/// at start and closes code entry when `closesEntry`; `check` turns it into a finding.
public struct StateDurability: Hashable, Sendable {
    public var path: String
    public var medium: StateMedium
    public var keypad: Bool
    /// `keypad.allowForgetfulState`.
    public var accepted: Bool

    public init(path: String, medium: StateMedium, keypad: Bool, accepted: Bool) {
        self.path = path
        self.medium = medium
        self.keypad = keypad
        self.accepted = accepted
    }

    /// Looks at the medium of `path` (nil: no state file, nothing to judge).
    public static func assess(_ path: String?, keypad: DeviceConfig.Keypad) -> StateDurability? {
        guard let path else { return nil }
        return StateDurability(path: path, medium: .of(stateFile: path), keypad: keypad.enabled, accepted: keypad.allowForgetfulState)
    }

    /// Code entry stays closed: a keypad, a forgetful medium, and no `keypad.allowForgetfulState`.
    public var closesEntry: Bool { keypad && medium.verdict == .forgets && !accepted }

    /// What a power cut costs here, in words.
    public var cost: String {
        guard keypad else { return "a power cut or reboot forgets a running countdown" }
        if accepted { return "keypad.allowForgetfulState is true: a power cut or reboot forgets the wrong codes and the lockout" }
        return
            "a power cut or reboot would forget the keypad's wrong codes and lockout, so code entry stays closed (Entry closed) unless keypad.allowForgetfulState is true"
    }

    /// `state volatile path=... medium="..." entry=closed|open advice="..."` for a forgetful medium,
    /// `state medium unknown ...` when it could not be told; nil on a durable one.
    public var record: LogRecord? {
        switch medium.verdict {
        case .durable:
            return nil
        case .forgets:
            var fields: [LogField] = [.string("path", path), .string("medium", medium.summary)]
            if keypad { fields.append(.string("entry", closesEntry ? "closed" : "open (keypad.allowForgetfulState)")) }
            fields.append(.string("advice", forgetfulStateAdvice))
            return LogRecord("state volatile", fields)
        case .unknown:
            return LogRecord("state medium unknown", [.string("path", path), .string("medium", medium.summary)])
        }
    }
}
