import ResendConfig

/// The parsed command line of one subcommand: values by flag name, switches that were given, and
/// the positional arguments. `--name value` and `--name=value` are both accepted.
public struct ParsedArguments: Sendable {
    public var values: [String: String] = [:]
    public var switches: Set<String> = []
    public var positional: [String] = []

    public func value(_ name: String) -> String? { values[name] }
    public func has(_ name: String) -> Bool { switches.contains(name) }
}

/// Parses `arguments` against `specs`; an unknown flag or a missing value is a usage error
/// (exit 64) that names the flag and, for a near miss, the flag that was probably meant.
public func parseArguments(_ arguments: [String], specs: [OptionSpec], command: String) throws(ExitError) -> ParsedArguments {
    var parsed = ParsedArguments()
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        index += 1
        guard argument.hasPrefix("--"), argument.count > 2 else {
            if argument.hasPrefix("-") && argument != "-" {
                throw ExitError(.usage, "\(command): unknown option \(shown(argument)) (options start with --; see --help)")
            }
            parsed.positional.append(argument)
            continue
        }
        var name = String(argument.dropFirst(2))
        var inlineValue: String?
        if let equals = name.firstIndex(of: "=") {
            inlineValue = String(name[name.index(after: equals)...])
            name = String(name[..<equals])
        }
        guard let spec = specs.first(where: { $0.name == name }) else {
            var message = "\(command): unknown option \(shown("--" + name))"
            if let near = closestName(to: name, among: specs.map { $0.name }) { message += "; did you mean '--\(near)'?" }
            throw ExitError(.usage, message)
        }
        if let valueName = spec.valueName {
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, !looksLikeOption(arguments[index]) {
                value = arguments[index]
                index += 1
            } else {
                // `--address --state-file off`: the next word is another option, so --address has
                // no value. A value that starts with -- can still be given as --name=--value.
                var message = "\(command): option '--\(name)' needs a value (\(valueName))"
                if index < arguments.count {
                    message +=
                        ", but the next argument \(shown(arguments[index])) is an option; to give a value starting with --, write --\(name)=VALUE"
                }
                throw ExitError(.usage, message)
            }
            if let problem = valueProblem(value, valueName: valueName) {
                throw ExitError(.usage, "\(command): --\(name): \(shown(value)) \(problem)")
            }
            parsed.values[name] = value
        } else {
            if inlineValue != nil { throw ExitError(.usage, "\(command): option '--\(name)' takes no value") }
            parsed.switches.insert(name)
        }
    }
    return parsed
}

/// `--name` or `--name=value`: an option, never taken as the value of the option before it.
func looksLikeOption(_ argument: String) -> Bool {
    argument.hasPrefix("--") && argument.count > 2
}

/// What is wrong with `value` for an option whose value is a `PATH` or a GPIO `LINE`, or nil:
/// the rules the configuration file applies to its paths and line names too.
func valueProblem(_ value: String, valueName: String) -> String? {
    switch valueName {
    case "PATH": return pathProblem(value)
    case "LINE": return lineNameProblem(value)
    default: return nil
    }
}
