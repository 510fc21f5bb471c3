import CharacterLCD
import HAL
import HALLinux
import ResendConfig
import ResendCore

/// The hardware `run` acquired: the lines are released when the last reference goes.
struct AcquiredHardware {
    var button: GPIOButton
    var led: GPIOOutput?
    var bus: LinuxI2CBus
    var address: I2CAddress
    /// Whether the LCD answered its address at start-up; if not, `run` starts with the display
    /// offline and heals it when it answers.
    var lcdAnswered: Bool
    /// The bus's configured clock (device-tree `clock-frequency`), nil when unknown.
    var clockHz: Int?
    /// The keypad's output line and matrix lines when `keypad.enabled`; nil otherwise.
    var keypad: AcquiredKeypad? = nil
}

/// The SCL clock the backpack pads its bytes for: the configured clock, or 100 kHz (i2c-bcm2835's
/// default without the property) when unknown, times 1.6, because Pi 3-family boards derive SCL
/// from the core clock and can run it up to 1.6x the setting (not measured here).
/// At 100 kHz that adds nothing; at 400 kHz it pads each HD44780 byte with idle bytes.
func paddingClockHz(configured: Int?) -> Int {
    let base = min(configured ?? PCF8574Backpack<LinuxI2CBus>.standardModeClockHz, 3_000_000)
    return base * 8 / 5
}

/// `resend-button run`: acquires the button (and LED) lines and the LCD's bus, then runs the event
/// loop on the monotonic clock until SIGINT or SIGTERM; then the LCD shows the stopped screen, the
/// lines are released and the function returns (exit 0). One log line per event goes to
/// `console.err`. Start-up failures throw one line per problem with a sysexits code.
///
/// Under systemd (`Type=notify`) it sends READY=1 once the hardware is up, WATCHDOG=1 from the
/// event loop at half the unit's WatchdogSec, and STOPPING=1 when it stops; elsewhere those are
/// no-ops. The send command runs as a child watched through its pidfd in the same poll set, and
/// the countdown is persisted in the state file (unless `--state-file off`).
public func runDevice(_ options: RunOptions, console: Console, notifier: SystemdNotifier = .fromProcessEnvironment()) throws(ExitError) {
    try checkStatePath(options.config.stateFile, command: "run", fromFlag: options.stateFileFromFlag, configPath: options.configPath)
    try checkStateFormat(options.config.stateFile, keypad: options.config.keypad.enabled, command: "run")
    let mqttSetup = options.config.mqtt.enabled ? try MQTTSetup(options.config, stateFile: options.config.stateFile, command: "run") : nil
    // An OLED's glyphs, read once before the hardware (exit 78 for a missing or short font).
    let font = try options.config.loadOLEDFont(source: options.configPath, read: DeviceConfig.readFontFile)
    let hardware = try acquireHardware(options, facts: StartupFacts.gather())
    let settings = options.config.behaviour
    let clock = SystemClock()
    var source: LinuxEventSource
    do throws(HALError) {
        source = try LinuxEventSource(button: hardware.button)
    } catch {
        throw ExitError(.software, "run: cannot set up the event loop: \(error.operation): \(describe(error))")
    }
    // One directory per send and its checks ($RUNTIME_DIRECTORY/session under systemd, else a
    // private temporary one removed at exit), for both commands.
    let session: SessionDirectory?
    if options.config.send.command != nil || options.config.keypad.enabled {
        do throws(HALError) {
            session = try SessionDirectory.forThisProcess()
        } catch {
            throw ExitError(startupExitCode(for: error.kind), "run: cannot make the session directory: \(error.operation): \(describe(error))")
        }
    } else {
        session = nil
    }
    defer { session?.remove() }
    // The keypad's backend registers its descriptors now (before the started line, which names it).
    let keypad = try attachKeypad(options, hardware: hardware, source: &source, session: session?.path)
    // A button held at start-up is pressed already: its release is not a bounce, and it is no press.
    let initiallyPressed = (try? hardware.button.isPressed()) ?? false
    let debouncer = Debouncer(
        window: .milliseconds(Int64(settings.debounceMilliseconds)), mode: settings.debounceMode, pressed: initiallyPressed)
    let button = hardware.button
    let logger = EventLogger(
        format: options.config.log.format, droppedEdgeEvents: { button.droppedEvents }, logSendOutput: options.config.send.logOutput,
        output: console.err)
    var started = startedRecord(
        options, button: hardware.button.line, led: hardware.led?.line, busPath: hardware.bus.path,
        writes: hardware.bus.supportsMultiByteWrite, address: hardware.address)
    started.fields.append(.string("i2c_clock", clockText(hardware.clockHz)))
    started.fields.append(.string("display", hardware.lcdAnswered ? "online" : "offline"))
    if let keypad { started.fields += keypad.startedFields }
    logger.log(started, at: clock.now())
    if let warning = clockWarning(hardware.clockHz) {
        logger.log(LogRecord("i2c clock high", [.string("advice", warning)]), at: clock.now())
    }
    // Said once: a state directory in RAM forgets at a power cut (a keypad then stays closed).
    let durability = StateDurability.assess(options.config.stateFile, keypad: options.config.keypad)
    if let record = durability?.record { logger.log(record, at: clock.now()) }

    let runner: CommandService
    do throws(HALError) {
        runner = try .make(
            .send, arguments: options.config.send.command, timeout: .seconds(Int64(options.config.send.timeoutSeconds)),
            // Not logged (the default): nothing is kept, every byte only counted.
            outputLimit: options.config.send.logOutput ? options.config.send.maxOutputBytes : 0, environment: options.config.send.environment,
            sessionDirectory: session?.path)
    } catch {
        throw ExitError(.software, "run: cannot prepare the send command: \(error.operation): \(describe(error))")
    }
    runner.attach(to: &source)
    var watchdogTimer: WatchdogTimer?
    if let interval = notifier.watchdogPingInterval {
        do throws(HALError) {
            let timer = try WatchdogTimer(interval: interval)
            watchdogTimer = timer
            var warned = false
            _ = source.register(fileDescriptor: timer.fileDescriptor) { () throws(HALError) -> [LoopInput] in
                guard try timer.consumeExpiry() else { return [] }
                do throws(HALError) {
                    try notifier.watchdog()
                } catch {
                    if !warned { logger.log(notifyFailedRecord(error), at: SystemClock().now()) }
                    warned = true
                }
                return []
            }
        } catch {
            throw ExitError(.software, "run: cannot set up the watchdog timer: \(error.operation): \(describe(error))")
        }
    }

    var backpack = PCF8574Backpack(
        bus: hardware.bus, address: hardware.address, wiring: options.config.lcd.wiring,
        busClockHz: paddingClockHz(configured: hardware.clockHz))
    if !options.config.lcd.backlight {
        // Before the first byte, so that even the init dance leaves the backlight off.
        try? backpack.setBacklight(false)
    }
    var display: DeviceDisplay<LinuxI2CBus, SleepDelay>
    if let font, let controller = options.config.display.kind.oledController {
        display = .oled(
            OLEDDisplay(
                oled: SSD130x(
                    bus: hardware.bus, delay: SleepDelay(), address: hardware.address, controller: controller,
                    contrast: UInt8(options.config.display.contrast), flipped: options.config.display.flip), font: font))
    } else {
        display = .lcd(
            LCDDisplay(
                lcd: HD44780(port: backpack, delay: SleepDelay(), geometry: settings.geometry), rom: options.config.lcd.rom,
                refreshInterval: options.config.lcd.refreshSeconds.map { .seconds(Int64($0)) }))
    }
    if hardware.lcdAnswered {
        do throws(HALError) {
            try display.start(now: clock.now())
        } catch {
            // It answered the probe a moment ago: keep going, the display heals when it answers again.
            logger.record(.display(.offline(error)), at: clock.now())
        }
    } else {
        // Nothing answered at the address: the button, LED, send command and countdown work
        // meanwhile, and the display comes up when it answers (the same healing as after a bus
        // error). `check` reports it.
        display.startOffline(now: clock.now())
        logger.record(
            .display(
                .offline(
                    HALError(
                        .noDevice,
                        operation:
                            "probe \(hardware.bus.path) \(hexAddress(hardware.address.rawValue)): nothing answered at start-up; \(Advice.wiring)",
                        errno: 0))),
            at: clock.now())
    }
    do throws(HALError) {
        try notifier.ready(status: "button \(hardware.button.line.description), LCD \(hexAddress(hardware.address.rawValue)) on \(hardware.bus.path)")
    } catch {
        logger.log(notifyFailedRecord(error), at: clock.now())
    }
    let coordinator = deviceCoordinator(
        controller: options.config.controllerConfig, button: debouncer, keypad: keypad == nil ? nil : options.config.keypad)
    let mqtt = try mqttSetup.map { setup throws(ExitError) in
        (try attachMQTT(setup, source: &source, command: "run") { logger.log($0, at: SystemClock().now()) }, setup.topics)
    }
    func runLoop<Observer: LoopObserver>(observer: Observer) throws(HALError) {
        let environment = DeviceLoopEnvironment(
            source: source, display: display, outputs: Outputs(led: hardware.led, strike: hardware.keypad?.output),
            commands: .device(send: runner, verify: keypad?.verifier ?? .none), clock: clock, wallClock: SystemWallClock(), observer: observer,
            store: options.config.stateFile.map { StateFile(path: $0) }, random: .kernel(KernelRandom()))
        try ResendApp.runLoop(environment, coordinator: coordinator, stateForgets: durability?.closesEntry ?? false)
    }
    do throws(HALError) {
        if let (client, topics) = mqtt {
            try runLoop(
                observer: PublishingObserver(
                    inner: logger, publisher: client, topics: topics, hasSendCommand: options.config.controllerConfig.hasSendCommand))
        } else {
            try runLoop(observer: logger)
        }
        keypad?.stop()
    } catch {
        keypad?.stop()
        throw ExitError(.ioError, "run: waiting for events failed: \(error.operation): \(describe(error))")
    }
    mqtt?.0.finish(within: .seconds(1))
    try? notifier.stopping()
    withExtendedLifetime(watchdogTimer) {}
}

/// `systemd notify failed op=... error=...`: logged, never fatal (systemd then says why it waits).
func notifyFailedRecord(_ error: HALError) -> LogRecord {
    LogRecord("systemd notify failed", [.string("op", error.operation), .string("error", describe(error))])
}

/// Finds and requests the lines, opens the bus and settles the address. Tries every part even when
/// an earlier one failed, so one run names everything that is missing.
func acquireHardware(_ options: RunOptions, facts: StartupFacts) throws(ExitError) -> AcquiredHardware {
    var failures: [ExitError] = []

    var button: GPIOButton?
    do throws(HALError) {
        let configuration = GPIOButton.Configuration(
            bias: options.config.button.bias, activeLow: options.config.button.activeLow,
            kernelDebounce: options.config.button.kernelDebounceMs.map { .milliseconds(Int64($0)) })
        button = try GPIOButton(line: try locate(options.config.button.lineSpec), configuration: configuration)
    } catch {
        failures.append(startupFailure(error, resource: .button(options.config.button.lineSpec), facts: facts))
    }

    var led: GPIOOutput?
    // Without any GPIO chip the LED would only repeat the button's message.
    if let spec = options.config.led.lineSpec, facts.gpioChipCount > 0 {
        do throws(HALError) {
            led = try GPIOOutput(line: try locate(spec), activeLow: options.config.led.activeLow, initiallyActive: false)
        } catch {
            failures.append(startupFailure(error, resource: .led(spec), facts: facts))
        }
    }

    var bus: LinuxI2CBus?
    var address: I2CAddress?
    var answered = false
    do throws(HALError) {
        var opened = try LinuxI2CBus(busNumber: options.config.lcd.bus)
        // An OLED answers at display.address; lcd.address is the character LCD's.
        switch options.config.display.isOLED ? .fixed(options.config.display.address) : options.config.lcd.address {
        case .auto:
            // RunOptions.parse refuses it; a caller that builds options by hand gets the same answer.
            failures.append(ExitError(.usage, "run: --address auto: " + autoAddressRefusal))
        case .fixed(let fixed):
            do throws(HALError) {
                answered = try opened.probe(fixed)
                address = fixed
            } catch  where error.kind == .busy {
                let client = Discovery.i2cClient(bus: options.config.lcd.bus, address: fixed.rawValue)
                failures.append(
                    ExitError(
                        .unavailable,
                        "run: \(StartupResource.lcd(fixed, bus: options.config.lcd.bus).name): \(error.operation): \(describe(error)); \(Advice.kernelDriverOwns(fixed, client: client))"
                    ))
            }
        }
        bus = opened
    } catch {
        failures.append(startupFailure(error, resource: .i2cBus(options.config.lcd.bus), facts: facts))
    }

    let keypad = acquireKeypad(options.config.keypad, facts: facts, failures: &failures)

    if let failure = combine(failures) { throw failure }
    guard let button, let bus, let address, keypad != nil || !options.config.keypad.enabled else {
        preconditionFailure("acquireHardware: no failure reported, yet a part is missing")
    }
    return AcquiredHardware(
        button: button, led: led, bus: bus, address: address, lcdAnswered: answered,
        clockHz: Discovery.i2cClockHz(bus: options.config.lcd.bus), keypad: keypad)
}

/// The line's chip and offset: a name is looked up on every chip, chip:offset is taken as given.
func locate(_ spec: LineSpec) throws(HALError) -> GPIOLineLocation {
    switch spec {
    case .named(let name):
        return try findLine(named: name)
    case .chipOffset(let chip, let offset):
        return LineSpec.location(chip: chip, offset: offset)
    }
}

/// The `started` line: the configuration in force.
public func startedRecord(
    _ options: RunOptions, button: GPIOLineLocation, led: GPIOLineLocation?, busPath: String,
    writes batched: Bool, address: I2CAddress
) -> LogRecord {
    let settings = options.config.behaviour
    return LogRecord(
        "started",
        [
            .string("version", programVersion),
            .string("libgpiod", LibGPIOD.version),
            .string("button", button.description),
            .string("bias", options.config.button.bias.name),
            .string("active", options.config.button.activeLow ? "low" : "high"),
            .string("kernel_debounce_ms", options.config.button.kernelDebounceMs.map(String.init) ?? "off"),
            .string("led", led.map { $0.description + (options.config.led.activeLow ? " active-low" : "") } ?? "none"),
            .string("i2c", busPath),
            .string("i2c_writes", batched ? "batched" : "smbus-byte"),
            .string("address", hexAddress(address.rawValue)),
            .string("geometry", settings.geometry.name),
            .int("duration", settings.durationSeconds),
            .int("debounce_ms", settings.debounceMilliseconds),
            .string("debounce_mode", settings.debounceMode.name),
            .string("refresh", options.config.lcd.refreshSeconds.map { "\($0)s" } ?? "off"),
            .string("log_format", options.config.log.format.rawValue),
            .string("config", options.configPath),
            .string("state_file", options.config.stateFile ?? "off"),
            .string("send", options.config.send.command?.first ?? "none"),
            .string("rom", options.config.lcd.rom.rawValue),
        ])
}
