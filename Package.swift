// swift-tools-version: 6.2
import PackageDescription

// The language mode is Swift 6 (tools version 6.x). Warnings are errors where the code is
// developed and checked: scripts/test and .ci/run set RESEND_STRICT=1. A user's
// build (scripts/install, package, deploy, run; a plain `swift build`) keeps them warnings, so a
// newer compiler's new warning never stops an install.
let strictBuild = Context.environment["RESEND_STRICT"] == "1"
let strict: [SwiftSetting] = strictBuild ? [.treatAllWarnings(as: .error)] : []
let cStrict: [CSetting] = [.enableWarning("all"), .enableWarning("extra")] + (strictBuild ? [.treatAllWarnings(as: .error)] : [])

let package = Package(
    name: "ResendButton",
    products: [
        .executable(name: "resend-button", targets: ["resend-button"]),
        .executable(name: "resend-bench", targets: ["resend-bench"]),
        .executable(name: "hd44780-decode", targets: ["hd44780-decode"]),
        .executable(name: "oled-decode", targets: ["oled-decode"]),
    ],
    targets: [
        // Pure layers: no Foundation, no Glibc; they also compile as Embedded Swift (scripts/embedded-check).
        .target(name: "HAL", swiftSettings: strict),
        .target(name: "CharacterLCD", dependencies: ["HAL"], swiftSettings: strict),
        .target(name: "ResendCore", dependencies: ["HAL"], swiftSettings: strict),
        // The configuration: JSON5 parser, value model, schema, errors, DeviceConfig and the
        // settings they set. Pure like the layers above (bytes in, values or errors out).
        .target(name: "ResendConfig", dependencies: ["HAL", "CharacterLCD", "ResendCore"], swiftSettings: strict),
        // Mock hardware: knows only the HAL.
        .target(name: "HALMock", dependencies: ["HAL"], swiftSettings: strict),
        // What `run` and the simulator share: exit codes, option parsing, the event loop's
        // environment and runLoop, the send/verify command service, the event log, the LCD display,
        // configuration loading, the MQTT link, the state path check.
        .target(
            name: "ResendDevice", dependencies: ["HAL", "CharacterLCD", "ResendCore", "ResendConfig", "HALMock", "HALLinux"], swiftSettings: strict),
        // The simulator on mock hardware: its options, headless scripts, the interactive terminal UI,
        // the mock services (phone, keypad, door).
        .target(
            name: "ResendSimulator", dependencies: ["ResendDevice", "HAL", "CharacterLCD", "ResendCore", "ResendConfig", "HALMock", "HALLinux"],
            swiftSettings: strict),
        // The command line and the commands `run`, `check`, `config` and `output` on Linux hardware:
        // the executable's logic as a library so tests can drive it.
        .target(
            name: "ResendApp",
            dependencies: ["ResendDevice", "ResendSimulator", "HAL", "CharacterLCD", "ResendCore", "ResendConfig", "HALLinux"],
            swiftSettings: strict),
        .executableTarget(
            name: "resend-button", dependencies: ["ResendApp", "ResendSimulator", "ResendDevice", "ResendConfig", "HALLinux", "HAL", "CLinuxOS"],
            swiftSettings: strict),
        // scripts/bench: wire bytes, CPU cost, real-time latency and accuracy, wake-ups, memory (BENCHMARKS.md).
        .executableTarget(
            name: "resend-bench",
            dependencies: ["ResendDevice", "ResendSimulator", "ResendConfig", "ResendCore", "CharacterLCD", "HALMock", "HALLinux", "HAL"],
            swiftSettings: strict),
        // scripts/vm-test: decodes the plain-I2C test adapter's record into the glass (HALMock's emulator).
        .executableTarget(name: "hd44780-decode", dependencies: ["HALMock", "HAL"], swiftSettings: strict),
        // scripts/vm-test: the same record read as a 128x64 OLED's glass (HALMock's OLED emulator).
        .executableTarget(name: "oled-decode", dependencies: ["HALMock", "HAL"], swiftSettings: strict),

        // Linux: the only code that talks to the OS. One small C target per OS library.
        // CGPIOD: libgpiod v1 (system) or v2 (scripts/libgpiod-v2 prints the flags), chosen at compile time.
        .target(name: "CGPIOD", cSettings: cStrict, linkerSettings: [.linkedLibrary("gpiod")]),
        // CI2C: i2c-dev ioctls and constants, libi2c's SMBus helpers (no pkg-config file).
        .target(name: "CI2C", cSettings: cStrict, linkerSettings: [.linkedLibrary("i2c")]),
        // CLinuxOS: timerfd, signalfd, signal masks, TIOCGWINSZ.
        .target(name: "CLinuxOS", cSettings: cStrict),
        // CEvdev: Linux input devices (EVIOCGRAB, EVIOCSCLOCKID, struct input_event's time_t-dependent layout).
        .target(name: "CEvdev", cSettings: cStrict),
        // CMosquitto: libmosquitto (MQTT), driven from our own poll loop; no library thread.
        .target(name: "CMosquitto", cSettings: cStrict, linkerSettings: [.linkedLibrary("mosquitto")]),
        .target(name: "HALLinux", dependencies: ["HAL", "CGPIOD", "CI2C", "CLinuxOS", "CEvdev", "CMosquitto"], swiftSettings: strict),

        // What the test targets share (processes, temporary directories, console capture, time, the
        // loop's test environment and recording ports); every test target imports it (Exports.swift).
        .target(name: "TestSupport", dependencies: ["HAL", "ResendCore"], path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "ResendCoreTests", dependencies: ["ResendCore", "HALMock", "HAL", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "CharacterLCDTests", dependencies: ["CharacterLCD", "HALMock", "HAL", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HALMockTests", dependencies: ["HALMock", "HAL", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HALLinuxTests", dependencies: ["HALLinux", "HAL", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "ResendAppTests",
            dependencies: [
                "ResendApp", "ResendSimulator", "ResendDevice", "ResendConfig", "HALMock", "CharacterLCD", "ResendCore", "HAL", "TestSupport",
            ],
            swiftSettings: strict),
    ]
)

// scripts/fuzz: the libFuzzer targets (Fuzz/), built only when RESEND_FUZZ=1 because they need
// `-sanitize=fuzzer` (libFuzzer supplies main); a plain `swift build` never sees them.
if Context.environment["RESEND_FUZZ"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "resend-fuzz",
            dependencies: ["ResendApp", "ResendSimulator", "ResendDevice", "ResendConfig", "ResendCore", "CharacterLCD", "HALMock", "HAL"],
            path: "Fuzz/Sources", swiftSettings: strict))
}
