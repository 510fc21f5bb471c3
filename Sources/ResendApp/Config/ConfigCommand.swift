import ResendConfig

/// `resend-button config check FILE`: validates FILE and prints `FILE: OK; <summary>` (exit 0),
/// then `FILE: warning: ...` when the keypad's output is active at the pin's reset pull (exit 0 too),
/// or every problem, one line each, and exits 78 (EX_CONFIG). A missing FILE is 78 too; a
/// missing or extra argument is a usage error (64).
public func runConfigCommand(_ arguments: [String], console: Console) throws(ExitError) {
    let usage = "usage: resend-button config check FILE"
    guard let subcommand = arguments.first else {
        throw ExitError(.usage, "config: missing subcommand\n\(usage)")
    }
    switch subcommand {
    case "--help", "-h", "help":
        console.out(configHelp)
    case "check":
        let rest = Array(arguments.dropFirst())
        if rest == ["--help"] || rest == ["-h"] {
            console.out(configHelp)
            return
        }
        guard rest.count == 1, let path = rest.first else {
            throw ExitError(
                .usage, (rest.isEmpty ? "config check: missing FILE" : "config check: expected one FILE, got \(rest.count) arguments") + "\n\(usage)")
        }
        // The rule of every PATH flag: a control character would garble each message naming the file.
        if let problem = pathProblem(path) {
            throw ExitError(.usage, "config check: FILE \(shown(path)) \(problem)\n\(usage)")
        }
        // Read as bytes, so that bytes which are not UTF-8 get a line and column instead of
        // silently becoming U+FFFD.
        let contents = console.readText(path, DeviceConfig.maximumFileSize, "a configuration file")
        let bytes: [UInt8]
        switch contents {
        case .bytes(let read): bytes = read
        case .text(let text): bytes = Array(text.utf8)
        case .missing, .unreadable:
            throw ExitError(.config, "\(path): cannot read the configuration file: \(contents.failureReason ?? "")")
        }
        let config: DeviceConfig
        do throws(ConfigErrors) {
            config = try DeviceConfig.parse(bytes: bytes, source: path)
        } catch {
            throw error.exitError
        }
        if config.lcd.address == .auto {
            throw ExitError(.config, "\(path): lcd.address: \"auto\" is for 'resend-button check' only: " + autoAddressRefusal)
        }
        // An OLED's texts against its font's glyphs and the glass's width.
        _ = try config.loadOLEDFont(source: path) { console.readText($0, DeviceConfig.Display.maximumFontSize, "a font file") }
        console.out("\(path): OK; \(config.summary)")
        // Valid, but the door would be open while the Pi boots: a warning, still exit 0.
        if let warning = outputResetPullWarning(config.keypad) {
            console.out("\(path): warning: \(warning)")
        }
    default:
        var message = "config: unknown subcommand \(shown(subcommand))"
        if let near = closestName(to: subcommand, among: ["check"]) { message += "; did you mean '\(near)'?" }
        throw ExitError(.usage, message + "\n\(usage)")
    }
}

let configHelp = """
    usage: resend-button config check FILE

    Checks a configuration file (JSON5): syntax, unknown keys, types and ranges, and that every text
    fits the display and its character ROM. Prints 'FILE: OK; <summary>' and exits 0 (with a warning
    line when the keypad's output line is active at its Raspberry Pi pin's reset pull), or prints every
    problem as 'FILE: key.path: message' (syntax errors as 'FILE:LINE:COL: syntax error: ...') and
    exits 78. board/config.example.json5 documents every key.
    """
