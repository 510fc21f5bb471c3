import HALLinux
import ResendConfig

extension LineSpec {
    /// The chip's device node for a chip-and-offset spec; nil for a line name.
    public func location(deviceDirectory: String = "/dev") -> GPIOLineLocation? {
        guard case .chipOffset(let chip, let offset) = self else { return nil }
        return LineSpec.location(chip: chip, offset: offset, deviceDirectory: deviceDirectory)
    }

    /// The device node of chip number `chip` and the line's offset on it.
    static func location(chip: Int, offset: UInt32, deviceDirectory: String = "/dev") -> GPIOLineLocation {
        GPIOLineLocation(chipPath: "\(deviceDirectory)/gpiochip\(chip)", offset: offset)
    }

    /// The line `--option` names, or a usage error naming the flag and the two forms it takes.
    static func parse(_ text: String, option: String, command: String) throws(ExitError) -> LineSpec {
        guard let line = LineSpec(parsing: text) else {
            throw ExitError(
                .usage,
                "\(command): --\(option): \(shown(text)) is not a GPIO line; use a line name like GPIO17 or gpiochipN:OFFSET like gpiochip0:17")
        }
        return line
    }

    /// An LED line, if any, must not be the button's: a usage error naming `--led` otherwise.
    static func checkLED(_ led: LineSpec?, button: LineSpec, command: String) throws(ExitError) {
        if let led, led == button {
            throw ExitError(.usage, "\(command): --led: \(led.text) is the button's line; the LED needs a line of its own")
        }
    }
}
