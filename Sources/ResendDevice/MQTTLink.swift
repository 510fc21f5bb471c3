import HAL
import HALLinux
import ResendConfig
import ResendCore

/// The broker settings and topics of a configuration's `mqtt` section, made concrete: the host
/// name filled in where the defaults name it, the password read from `passwordFile`.
public struct MQTTSetup: Sendable {
    public var settings: MQTTClient.Settings
    public var topics: HomeAssistantTopics

    /// The longest password file read: a password is a line.
    static let passwordFileLimit = 4_096

    /// Refuses a password file that others may read (group or world bits), a missing or
    /// unreadable one, and a host name that cannot be a topic when the defaults need it.
    public init(_ config: DeviceConfig.MQTT, command: String) throws(ExitError) {
        let host = currentHostName() ?? "localhost"
        let hostPart = HomeAssistantTopics.isValidTopic(host) && !host.contains("/") ? host : "device"
        let base = config.baseTopic ?? "resend-button/" + hostPart
        topics = HomeAssistantTopics(
            base: base, discoveryPrefix: config.discoveryPrefix, deviceName: hostPart, allowOpen: config.allowOpen,
            allowResetLockout: config.allowResetLockout)
        settings = MQTTClient.Settings(
            host: config.host, port: config.port, keepaliveSeconds: config.keepaliveSeconds,
            clientID: config.clientId ?? "resend-button-" + hostPart, will: topics.availabilityMessage(online: false),
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
    let translate: ([MQTTClient.Happening]) -> [LoopInput] = { happenings in
        var inputs: [LoopInput] = []
        for happening in happenings {
            switch happening {
            case .state(let state, let retry):
                var record = mqttStateRecord(state, broker: broker, retry: retry)
                if case .down = state, client.unconfirmedAtLoss > 0 {
                    record.fields.append(.int("unconfirmed", client.unconfirmedAtLoss))
                }
                log(record)
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
            onReady: { readiness, now in translate(client.handle(readiness, now: now)) },
            service: { now in translate(client.service(now: now)) }))
    _ = translate(client.start(now: SystemClock().now()))
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
