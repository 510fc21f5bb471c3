import CharacterLCD
import HAL
import HALLinux
import ResendConfig
import ResendCore

/// The panel's identity on the broker where the configuration leaves it to the defaults
/// (docs/mqtt.md, identity): a device id from the machine id (`MachineIdentity`), never the
/// machine id itself; the host name only as the device's display name. An installation that ran
/// before keeps the topics it had: a file beside the state file (`mqtt-identity`) remembers the
/// base topic and client id first used.
public enum MQTTIdentity {
    public static let machineIDFile = "/etc/machine-id"
    /// The most a machine-id or identity file may hold.
    static let fileLimit = 1_024

    /// What the defaults resolve to, and where they came from.
    public struct Defaults: Hashable, Sendable {
        public var baseTopic: String
        public var clientID: String
        /// A line for the log when the defaults are not the machine's id (kept from before, or
        /// no machine id); nil otherwise.
        public var note: String?
        /// The discovery form whose retained topics this start removes (an upgrade from the
        /// per-entity form, or `mqtt.discovery` changed since the last start); nil: none.
        public var cleanupFrom: DiscoveryMode? = nil
    }

    /// `mqtt-identity` in the state file's directory.
    public static func memoryFile(stateFile: String) -> String {
        let directory = stateFile.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return (directory.isEmpty ? "" : directory) + "/mqtt-identity"
    }

    /// What `mqtt-identity` remembers: lines `baseTopic <topic>`, `clientId <id>` and
    /// `discovery device|entity` (the form last published).
    public struct Memory: Hashable, Sendable {
        public var baseTopic: String
        public var clientID: String
        public var discovery: DiscoveryMode?
    }

    /// The remembered defaults; nil unless the base topic and client id are there and valid.
    public static func parseMemory(_ bytes: [UInt8]) -> Memory? {
        var base: String?
        var client: String?
        var discovery: DiscoveryMode?
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 1)
            guard parts.count == 2 else { continue }
            let value = String(decoding: parts[1], as: UTF8.self)
            switch String(decoding: parts[0], as: UTF8.self) {
            case "baseTopic" where HomeAssistantTopics.isValidTopic(value): base = value
            case "clientId" where HomeAssistantTopics.isValidTopic(value) && !value.contains("/"): client = value
            case "discovery": discovery = DiscoveryMode(rawValue: value)
            default: break
            }
        }
        guard let base, let client else { return nil }
        return Memory(baseTopic: base, clientID: client, discovery: discovery)
    }

    public static func memoryText(_ memory: Memory) -> [UInt8] {
        Array(
            ("baseTopic " + memory.baseTopic + "\nclientId " + memory.clientID + "\n"
                + (memory.discovery.map { "discovery " + $0.rawValue + "\n" } ?? "")).utf8)
    }

    /// The defaults: remembered ones first; else, where an earlier run left a state file but no
    /// memory (an upgrade from a version that used the host name), the host-name defaults; else
    /// the machine's device id; the host name only when there is no machine id.
    /// `discovery`: the form this start publishes; an upgrade (`ranBefore` without memory) comes
    /// from the per-entity form.
    public static func resolve(host: String, deviceID: String?, remembered: Memory?, ranBefore: Bool, discovery: DiscoveryMode = .device) -> Defaults
    {
        if let remembered {
            var kept = Defaults(baseTopic: remembered.baseTopic, clientID: remembered.clientID, note: nil)
            if let before = remembered.discovery, before != discovery { kept.cleanupFrom = before }
            return kept
        }
        let legacy = Defaults(
            baseTopic: "resend-button/" + host, clientID: "resend-button-" + host, note: nil)
        if ranBefore {
            var kept = legacy
            kept.note = "kept from before this version (an earlier run left the state file)"
            if discovery == .device { kept.cleanupFrom = .entity }
            return kept
        }
        guard let deviceID else {
            var named = legacy
            named.note = "from the host name: no machine id in " + machineIDFile
            return named
        }
        return Defaults(baseTopic: "resend-button/" + deviceID, clientID: "resend-button-" + deviceID, note: nil)
    }

    /// The device id of the machine id in `path`; nil when it is missing, unreadable, a link or
    /// not a machine id.
    public static func deviceID(machineIDFile path: String) -> String? {
        guard let bytes = try? FileReader.read(path, limit: fileLimit), let id = MachineIdentity.parseMachineID(bytes) else { return nil }
        return MachineIdentity.deviceID(machineID: id)
    }

    /// Resolves the defaults for this machine; with `stateFile`, reads the memory beside it and,
    /// when `remember` and there is none yet, writes it.
    public static func defaults(host: String, machineIDFile: String, stateFile: String?, remember: Bool, discovery: DiscoveryMode = .device)
        -> Defaults
    {
        var remembered: Memory? = nil
        var ranBefore = false
        var memoryPath: String? = nil
        if let stateFile {
            let path = memoryFile(stateFile: stateFile)
            memoryPath = path
            remembered = (try? FileReader.read(path, limit: fileLimit)).flatMap(parseMemory)
            ranBefore = (try? FileType.of(stateFile)) == .some(.regular)
        }
        let resolved = resolve(
            host: host, deviceID: deviceID(machineIDFile: machineIDFile), remembered: remembered, ranBefore: ranBefore, discovery: discovery)
        if remember, remembered == nil || remembered?.discovery != discovery, let memoryPath {
            var file = StateFile(path: memoryPath)
            // Best effort: without the memory the same rule decides again at the next start.
            try? file.write(memoryText(Memory(baseTopic: resolved.baseTopic, clientID: resolved.clientID, discovery: discovery)))
        }
        return resolved
    }
}

/// The broker settings and topics of a configuration's `mqtt` section, made concrete: the
/// identity's defaults filled in (`MQTTIdentity`), the password read from `passwordFile`.
public struct MQTTSetup: Sendable {
    public var settings: MQTTClient.Settings
    public var topics: HomeAssistantTopics
    /// Logged once when the link starts: where the identity came from, when that is not the
    /// machine's id.
    public var identityNote: LogRecord?
    /// Published once before the discovery: the other form's retained topics emptied.
    public var discoveryCleanup: [BrokerMessage] = []

    /// The longest password file read: a password is a line.
    static let passwordFileLimit = 4_096

    /// Refuses a password file that others may read (group or world bits), a missing or
    /// unreadable one. `stateFile`: where the identity is remembered (nil: nowhere); `check`
    /// reads it but never writes it.
    public init(_ device: DeviceConfig, stateFile: String?, command: String, machineIDFile: String = MQTTIdentity.machineIDFile) throws(ExitError) {
        let config = device.mqtt
        let host = currentHostName() ?? "localhost"
        let hostPart = HomeAssistantTopics.isValidTopic(host) && !host.contains("/") ? host : "device"
        let defaults = MQTTIdentity.defaults(
            host: hostPart, machineIDFile: machineIDFile, stateFile: stateFile, remember: command != "check", discovery: config.discovery)
        let base = config.baseTopic ?? defaults.baseTopic
        let clientID = config.clientId ?? defaults.clientID
        if let note = defaults.note, config.baseTopic == nil || config.clientId == nil {
            identityNote = LogRecord("mqtt identity", [.string("base_topic", base), .string("client_id", clientID), .string("reason", note)])
        }
        topics = HomeAssistantTopics(
            base: base, discoveryPrefix: config.discoveryPrefix, deviceName: config.deviceName ?? hostPart, allowOpen: config.allowOpen,
            allowResetLockout: config.allowResetLockout, panel: Self.panel(device), discovery: config.discovery)
        let made = topics
        discoveryCleanup = defaults.cleanupFrom.map { made.discoveryCleanup(from: $0) } ?? []
        settings = MQTTClient.Settings(
            host: config.host, port: config.port, keepaliveSeconds: config.keepaliveSeconds,
            clientID: clientID, will: topics.availabilityMessage(online: false),
            subscriptions: [topics.command, topics.homeAssistantStatus])
        // A retained command would run at every connection; Home Assistant's retained `online` is
        // how it says it is there.
        settings.liveOnlyTopics = [topics.command]
        settings.username = config.username
        settings.caFile = config.caFile
        settings.certFile = config.certFile
        settings.keyFile = config.keyFile
        if let path = config.passwordFile { settings.password = try Self.readPassword(path, command: command) }
    }

    /// What Home Assistant is told about the panel: its kind, display and keypad, version.
    public static func panel(_ device: DeviceConfig) -> HomeAssistantPanel {
        let lcd = device.lcd
        let address: String
        switch lcd.address {
        case .auto: address = "auto"
        case .fixed(let fixed):
            let digits = Array("0123456789ABCDEF")
            address = "0x" + String([digits[Int(fixed.rawValue >> 4)], digits[Int(fixed.rawValue & 0x0F)]])
        }
        var hardware = "LCD \(lcd.geometry.columns)x\(lcd.geometry.rows), PCF8574 \(address)"
        let keypad = device.keypad
        if keypad.enabled {
            switch keypad.backend {
            case .matrix: hardware += "; keypad \(keypad.rows.count)x\(keypad.columns.count) matrix"
            case .evdev: hardware += "; keypad (input device)"
            }
        }
        return HomeAssistantPanel(
            model: keypad.enabled ? "Resend button with keypad" : "Resend button", hardware: hardware, softwareVersion: programVersion,
            sendCap: device.policy.enabled, keypad: keypad.enabled, attemptLimit: keypad.entry.maxAttempts != nil)
    }

    static func readPassword(_ path: String, command: String) throws(ExitError) -> String {
        let bits: UInt32?
        do throws(HALError) {
            bits = try permissionBits(of: path)
        } catch {
            throw ExitError(.config, "\(command): mqtt.passwordFile \(shown(path)): \(describe(error))")
        }
        guard let bits else { throw ExitError(.config, "\(command): mqtt.passwordFile \(shown(path)): no such file") }
        if bits & 0o077 != 0 {
            throw ExitError(
                .config,
                "\(command): mqtt.passwordFile \(shown(path)) may be read by others (mode \(String(bits, radix: 8))); allow only its owner: chmod 600 \(path)"
            )
        }
        let bytes: [UInt8]
        do throws(FileReadError) {
            bytes = try FileReader.read(path, limit: passwordFileLimit)
        } catch {
            throw ExitError(.config, "\(command): mqtt.passwordFile: \(error.reason())")
        }
        let line = bytes.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        return String(decoding: line, as: UTF8.self)
    }
}

/// Creates the client, registers it with `source` (its socket in the loop's poll set, its
/// keepalive and reconnections at their deadlines) and starts connecting. Changes of the
/// connection go to `log` once each (`MQTTClient.LinkState`); received commands become
/// `LoopInput.remote` when the configuration allows them, refused ones are logged (a retained
/// command is always refused: `retained=1`); every dropped message is logged with its size and
/// the kind of its topic; Home Assistant's `online` republishes discovery and the state. The
/// lines an outsider can cause are rate-limited by the logger (`EventLogger`).
public func attachMQTT(_ setup: MQTTSetup, source: inout LinuxEventSource, command: String, log: @escaping (LogRecord) -> Void) throws(ExitError)
    -> MQTTClient
{
    let client: MQTTClient
    do throws(HALError) {
        client = try MQTTClient(setup.settings)
    } catch {
        throw ExitError(.config, "\(command): mqtt: \(error.operation)")
    }
    let topics = setup.topics
    let broker = setup.settings.host + ":" + String(setup.settings.port)
    var reportedDrops = 0
    var flaps = SessionFlapDetector()
    if let note = setup.identityNote { log(note) }
    if !setup.discoveryCleanup.isEmpty {
        log(
            LogRecord(
                "mqtt discovery migrated",
                [
                    .string("removed", setup.topics.discoveryPrefix + "/.../" + setup.topics.nodeID + "/..."),
                    .int("topics", setup.discoveryCleanup.count),
                ]))
    }
    for message in setup.discoveryCleanup { client.publish(message) }
    let translate: ([MQTTClient.Happening], Instant) -> [LoopInput] = { happenings, now in
        var inputs: [LoopInput] = []
        for happening in happenings {
            switch happening {
            case .state(let state, let retry):
                var record = mqttStateRecord(state, broker: broker, retry: retry)
                if case .down = state, client.unconfirmedAtLoss > 0 {
                    record.fields.append(.int("unconfirmed", client.unconfirmedAtLoss))
                }
                log(record)
                if state == .connected { flaps.connected(at: now) }
                if case .down = state, flaps.lost(at: now) {
                    log(
                        LogRecord(
                            "mqtt session keeps dropping",
                            [
                                .string("client_id", setup.settings.clientID),
                                .string(
                                    "likely",
                                    "another client is connected with this client id (the broker drops the older one); give each panel its own mqtt.clientId and mqtt.baseTopic, or its own /etc/machine-id"
                                ),
                            ]))
                }
                if state == .connected, client.droppedEvents > reportedDrops {
                    log(LogRecord("mqtt events dropped", [.int("count", client.droppedEvents - reportedDrops)]))
                    reportedDrops = client.droppedEvents
                }
            case .message(let topic, let payload):
                switch topics.request(topic: topic, payload: payload) {
                case .command(let command): inputs.append(.remote(command))
                case .refused(let text): log(LogRecord("mqtt command refused", [.string("command", text)]))
                case .republish: client.republishRetained()
                case .ignored: break
                }
            case .dropped(let drop):
                log(mqttDropRecord(drop, kind: topics.kind(of: drop.topic)))
            case .protocolFallback:
                log(
                    LogRecord(
                        "mqtt protocol",
                        [
                            .string("broker", broker), .string("version", "3.1.1"),
                            .string("reason", "the broker does not speak MQTT v5: set message_size_limit on the broker (docs/mqtt.md)"),
                        ]))
            }
        }
        return inputs
    }
    source.register(
        connection: PolledConnection(
            descriptor: { client.descriptor }, wantsWrite: { client.wantsWrite }, nextService: { client.nextService },
            onReady: { readiness, now in translate(client.handle(readiness, now: now), now) },
            service: { now in translate(client.service(now: now), now) }))
    let now = SystemClock().now()
    _ = translate(client.start(now: now), now)
    return client
}

/// `mqtt connected broker=host:1883`, `mqtt down broker=... reason="..." retry_s=2`,
/// `mqtt refused broker=... reason="Not authorized" retry_s=1`.
func mqttStateRecord(_ state: MQTTClient.LinkState, broker: String, retry: TimeSpan?) -> LogRecord {
    var fields: [LogField] = [.string("broker", broker)]
    let event: String
    switch state {
    case .connecting: event = "mqtt connecting"
    case .connected: event = "mqtt connected"
    case .down(let reason):
        event = "mqtt down"
        fields.append(.string("reason", reason))
    case .refused(let reason):
        event = "mqtt refused"
        fields.append(.string("reason", reason))
    }
    if let retry { fields.append(.int("retry_s", max(1, wholeSecondsLeft(retry)))) }
    return LogRecord(event, fields)
}

extension HomeAssistantTopics {
    /// The kind of a received message's topic, for the log: `command`, `homeassistant_status` or
    /// `other` (the topic itself may be anything a publisher chose).
    func kind(of topic: String) -> String {
        if topic == command { return "command" }
        if topic == homeAssistantStatus { return "homeassistant_status" }
        return "other"
    }
}

/// `mqtt command refused retained=1 command=open`: a retained command (never run);
/// `mqtt message dropped topic=command bytes=300 reason=payload_too_long`: one that did not fit
/// (`also_dropped=N` when further drops went unreported).
func mqttDropRecord(_ drop: MQTTClient.Drop, kind: String) -> LogRecord {
    if drop.reason == .retained {
        return LogRecord("mqtt command refused", [.int("retained", 1), .string("command", String(decoding: drop.payload, as: UTF8.self))])
    }
    var fields: [LogField] = [
        .string("topic", kind), .int("bytes", drop.payloadBytes), .int("topic_bytes", drop.topicBytes), .string("reason", drop.reason.rawValue),
    ]
    if drop.alsoDropped > 0 { fields.append(.int("also_dropped", drop.alsoDropped)) }
    return LogRecord("mqtt message dropped", fields)
}
