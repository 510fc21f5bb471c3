import HAL

/// The device's MQTT topics and Home Assistant discovery (docs/mqtt.md):
///
/// - `<base>/availability`: retained `online`/`offline`; the last will says `offline`.
/// - `<base>/state`: retained JSON (`DeviceStatus.json`).
/// - `<base>/event`: not retained, `{"event_type":"code_sent"}` (`eventTypes`).
/// - `<base>/command`: `send`; `open` and `reset_lockout` only where allowed.
/// - `<discoveryPrefix>/<component>/<node>/<object>/config`: retained discovery of one device
///   with an event entity, a sensor of the seconds left, a binary sensor of the lockout and a
///   button "Send code"; published again when `<discoveryPrefix>/status` says `online`.
///
/// Topics are checked by the configuration (`isValidTopic`): no wildcards, quotes, backslashes,
/// spaces or control characters, so they go into JSON as they are.
public struct HomeAssistantTopics: Hashable, Sendable {
    public let base: String
    public let discoveryPrefix: String
    /// The device's name in Home Assistant (the host name).
    public let deviceName: String
    public var allowOpen: Bool
    public var allowResetLockout: Bool

    public init(base: String, discoveryPrefix: String, deviceName: String, allowOpen: Bool = false, allowResetLockout: Bool = false) {
        precondition(
            Self.isValidTopic(base) && Self.isValidTopic(discoveryPrefix) && Self.isValidTopic(deviceName),
            "HomeAssistantTopics: invalid topic or name")
        self.base = base
        self.discoveryPrefix = discoveryPrefix
        self.deviceName = deviceName
        self.allowOpen = allowOpen
        self.allowResetLockout = allowResetLockout
    }

    /// A topic (or name) this program publishes to: 1-200 printable ASCII characters without
    /// `+`, `#`, quotes, backslashes or spaces, not starting or ending with `/`.
    public static func isValidTopic(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 200, bytes.first != UInt8(ascii: "/"), bytes.last != UInt8(ascii: "/") else { return false }
        return bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F && !"+#\"'\\".utf8.contains($0) }
    }

    public var availability: String { base + "/availability" }
    public var state: String { base + "/state" }
    public var event: String { base + "/event" }
    public var command: String { base + "/command" }
    /// Home Assistant's birth and will topic.
    public var homeAssistantStatus: String { discoveryPrefix + "/status" }
    /// The discovery node id: the base topic with every character outside [A-Za-z0-9_-] as `_`.
    public var nodeID: String {
        String(
            decoding: base.utf8.map { byte in
                let allowed = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D
                return allowed ? byte : UInt8(ascii: "_")
            }, as: UTF8.self)
    }

    /// The event types the event topic carries (and the event entity lists).
    public static let eventTypes = [
        "code_sent", "send_failed", "cooldown_finished", "send_limit_reached", "code_accepted", "code_rejected",
        "lockout_started", "lockout_finished", "code_expired", "door_opened", "display_offline", "display_online",
    ]

    /// The event type of a loop event, nil for those not published. `hasSendCommand`: without a
    /// send command an accepted press counts as the code sent.
    public static func eventType(of event: LoopEvent, hasSendCommand: Bool) -> String? {
        switch event {
        case .controller(.sendFinished(let outcome, _, superseded: false)): return outcome.succeeded ? "code_sent" : "send_failed"
        case .controller(.pressAccepted) where !hasSendCommand: return "code_sent"
        case .controller(.countdownFinished): return "cooldown_finished"
        case .controller(.lockoutStarted): return "send_limit_reached"
        case .entry(.verified(.accepted, _)): return "code_accepted"
        case .entry(.rejected): return "code_rejected"
        case .entry(.lockoutStarted): return "lockout_started"
        case .entry(.lockoutFinished): return "lockout_finished"
        case .entry(.expired): return "code_expired"
        case .entry(.outputPulsed): return "door_opened"
        case .display(.offline): return "display_offline"
        case .display(.online): return "display_online"
        default: return nil
        }
    }

    public func availabilityMessage(online: Bool) -> BrokerMessage {
        BrokerMessage(topic: availability, text: online ? "online" : "offline", retained: true)
    }

    public func stateMessage(_ status: DeviceStatus) -> BrokerMessage {
        BrokerMessage(topic: state, text: status.json, retained: true)
    }

    public func eventMessage(_ type: String) -> BrokerMessage {
        BrokerMessage(topic: event, text: "{\"event_type\":\"" + type + "\"}", retained: false)
    }

    /// The discovery messages (retained), one per entity.
    public var discoveryMessages: [BrokerMessage] {
        let node = nodeID
        let device =
            "\"device\":{\"identifiers\":[\"" + node + "\"],\"name\":\"" + deviceName
            + "\",\"manufacturer\":\"ResendButton\",\"model\":\"ResendButton\"}"
        let common = "\"availability_topic\":\"" + availability + "\"," + device
        func config(_ component: String, _ object: String, _ fields: String) -> BrokerMessage {
            BrokerMessage(
                topic: discoveryPrefix + "/" + component + "/" + node + "/" + object + "/config",
                text: "{" + fields + ",\"unique_id\":\"" + node + "_" + object + "\"," + common + "}", retained: true)
        }
        let types = Self.eventTypes.map { "\"" + $0 + "\"" }.joined(separator: ",")
        return [
            config("event", "event", "\"name\":\"Event\",\"state_topic\":\"" + event + "\",\"event_types\":[" + types + "]"),
            config(
                "sensor", "seconds_left",
                "\"name\":\"Seconds left\",\"state_topic\":\"" + state
                    + "\",\"value_template\":\"{{ value_json.seconds_left }}\",\"unit_of_measurement\":\"s\""),
            config(
                "binary_sensor", "lockout",
                "\"name\":\"Lockout\",\"state_topic\":\"" + state
                    + "\",\"value_template\":\"{{ 'ON' if value_json.lockout else 'OFF' }}\""),
            config("button", "send", "\"name\":\"Send code\",\"command_topic\":\"" + command + "\",\"payload_press\":\"send\""),
        ]
    }

    /// What a received message asks for.
    public enum Request: Hashable, Sendable {
        case command(RemoteCommand)
        /// A command the configuration does not allow, or an unknown one (its text, for the log).
        case refused(String)
        /// Home Assistant came online: publish discovery (and the retained state) again.
        case republish
        case ignored
    }

    public func request(topic: String, payload: [UInt8]) -> Request {
        let text = String(decoding: payload, as: UTF8.self)
        if topic == homeAssistantStatus { return text == "online" ? .republish : .ignored }
        guard topic == command else { return .ignored }
        switch text {
        case "send": return .command(.send)
        case "open": return allowOpen ? .command(.open) : .refused(text)
        case "reset_lockout": return allowResetLockout ? .command(.resetLockout) : .refused(text)
        default: return .refused(text)
        }
    }
}

/// A `LoopObserver` that passes everything on to `inner` and publishes the device on MQTT
/// through `publisher`: availability online (at creation) and discovery, the state whenever it
/// changes, and the events of `HomeAssistantTopics.eventType`. At `stop` it publishes the state
/// and availability `offline`.
public struct PublishingObserver<Inner: LoopObserver, Publisher: MessagePublisher>: LoopObserver {
    public var inner: Inner
    public var publisher: Publisher
    public let topics: HomeAssistantTopics
    public let hasSendCommand: Bool
    private var status: DeviceStatus?
    private var displayOnline = true

    public init(inner: Inner, publisher: Publisher, topics: HomeAssistantTopics, hasSendCommand: Bool) {
        self.inner = inner
        self.publisher = publisher
        self.topics = topics
        self.hasSendCommand = hasSendCommand
        self.publisher.publish(topics.availabilityMessage(online: true))
        for message in topics.discoveryMessages { self.publisher.publish(message) }
    }

    public mutating func record(_ event: LoopEvent, at now: Instant) {
        inner.record(event, at: now)
        if let type = HomeAssistantTopics.eventType(of: event, hasSendCommand: hasSendCommand) {
            publisher.publish(topics.eventMessage(type))
        }
        switch event {
        case .display(.offline): setDisplay(online: false)
        case .display(.online): setDisplay(online: true)
        case .controller(.stopped): publisher.publish(topics.availabilityMessage(online: false))
        default: break
        }
    }

    public mutating func stepFinished(at now: Instant) {
        inner.stepFinished(at: now)
    }

    public mutating func statusChanged(_ status: DeviceStatus, at now: Instant) {
        inner.statusChanged(status, at: now)
        var shown = status
        shown.displayOnline = displayOnline
        guard shown != self.status else { return }
        self.status = shown
        publisher.publish(topics.stateMessage(shown))
    }

    private mutating func setDisplay(online: Bool) {
        guard online != displayOnline else { return }
        displayOnline = online
        guard var shown = status else { return }
        shown.displayOnline = online
        status = shown
        publisher.publish(topics.stateMessage(shown))
    }
}
