import HAL

/// The pull a Raspberry Pi header pin has from power-on until software sets another (the GPIO
/// pull table of the BCM2835 ARM Peripherals datasheet: GPIO0-8 pull up, GPIO9-27 pull down).
/// It decides what a door strike's driver stage sees while the Pi boots and before the service
/// has driven the output inactive.
public enum ResetPull: Hashable, Sendable {
    case up
    case down

    /// The level the pull gives a pin nobody drives.
    var level: String { self == .up ? "high" : "low" }

    /// The pull's word, the bias vocabulary's ("pull-up", "pull-down").
    var name: String { (self == .up ? GPIOBias.pullUp : GPIOBias.pullDown).name }
}

/// The reset pulls of the header's GPIO lines, by BCM number.
public let piResetPulls: [(pins: ClosedRange<Int>, pull: ResetPull)] = [
    (0...8, .up),
    (9...27, .down),
]

/// The BCM number and reset pull of a line named like the Pi's own ("GPIO5", "GPIO26"); nil
/// for any other name (a chip:offset, another board's name), whose reset state is unknown here.
public func piResetPull(line: String) -> (pin: Int, pull: ResetPull)? {
    guard line.hasPrefix("GPIO") else { return nil }
    let digits = line.dropFirst(4)
    guard (1...2).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
        digits.count == 1 || digits.first != "0", let pin = Int(digits)
    else { return nil }
    guard let entry = piResetPulls.first(where: { $0.pins.contains(pin) }) else { return nil }
    return (pin, entry.pull)
}

/// One line for `config check` when the keypad's output line would be active from power-on until
/// the service starts: its reset pull is the output's active level (an active-high output on
/// GPIO0-8, an active-low one on GPIO9-27). Nil when the pull keeps it inactive, when there is no
/// output (or the keypad is off), or when the line is not named like a Pi's.
public func outputResetPullWarning(_ keypad: DeviceConfig.Keypad) -> String? {
    guard keypad.enabled, let line = keypad.output.line, let (pin, pull) = piResetPull(line: line) else { return nil }
    let activeLevel = keypad.output.activeLow ? "low" : "high"
    guard pull.level == activeLevel else { return nil }
    let polarity = keypad.output.activeLow ? "active-low (activeLow: true)" : "active-high"
    guard let other = piResetPulls.first(where: { $0.pull != pull }) else { preconditionFailure("piResetPulls: both pulls are listed") }
    let otherStage = keypad.output.activeLow ? "an active-high stage (activeLow: false)" : "an active-low stage (activeLow: true)"
    return "keypad.output.line: GPIO\(pin) has a \(pull.name) at reset, and the output is \(polarity): "
        + "a strike or relay that follows the pull is energised from power-on until the service starts; "
        + "choose a pin of GPIO\(other.pins.lowerBound)-\(other.pins.upperBound) (\(other.pull.name) at reset) or \(otherStage)"
}
