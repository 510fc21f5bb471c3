import HAL

/// What Home Assistant is told about the panel: its kind, hardware and version, and which parts
/// of it exist (each entity only where the configuration has the feature). Never the code, its
/// length or anything secret.
public struct HomeAssistantPanel: Hashable, Sendable {
    /// The device's model, naming the panel's kind ("Resend button", "Resend button with keypad").
    public var model: String
    /// The hardware version: the display and the keypad ("LCD 16x2, PCF8574 0x27; keypad 4x3 matrix").
    public var hardware: String
    public var softwareVersion: String
    /// The resend policy caps the sends (a "Sends left" sensor).
    public var sendCap: Bool
    /// A code-entry keypad (Entry and Lockout time left sensors).
    public var keypad: Bool
    /// The keypad limits wrong codes (an "Attempts left" sensor).
    public var attemptLimit: Bool

    public init(
        model: String = "Resend button", hardware: String = "", softwareVersion: String = "", sendCap: Bool = false, keypad: Bool = false,
        attemptLimit: Bool = false
    ) {
        self.model = model
        self.hardware = hardware
        self.softwareVersion = softwareVersion
        self.sendCap = sendCap
        self.keypad = keypad
        self.attemptLimit = attemptLimit
    }
}

/// How the panel announces itself to Home Assistant: one device message
/// (`<prefix>/device/<node>/config`, Home Assistant 2024.11 and later) or one message per entity
/// (`<prefix>/<component>/<node>/<object>/config`, any Home Assistant).
public enum DiscoveryMode: String, Hashable, Sendable, CaseIterable {
    case device
    case entity
}

/// The device's MQTT topics and Home Assistant discovery (docs/mqtt.md):
///
/// - `<base>/availability`: retained `online`/`offline`; the last will says `offline`.
/// - `<base>/state`: retained JSON (`DeviceStatus.json`).
/// - `<base>/event`: not retained, `{"event_type":"code_sent"}` (`eventTypes`).
/// - `<base>/command`: `send`; `open` and `reset_lockout` only where allowed.
/// - `<discoveryPrefix>/device/<node>/config` (device-based discovery, the default) or
///   `<discoveryPrefix>/<component>/<node>/<object>/config` (one per entity): retained discovery
///   of one device with the entities of `entities`; published again when
///   `<discoveryPrefix>/status` says `online`.
///
/// Topics are checked by the configuration (`isValidTopic`): no wildcards, quotes, backslashes,
/// spaces or control characters, so they go into JSON as they are.
public struct HomeAssistantTopics: Hashable, Sendable {
    public let base: String
    public let discoveryPrefix: String
    /// The device's name in Home Assistant (`mqtt.deviceName`, by default the host name).
    public let deviceName: String
    public var allowOpen: Bool
    public var allowResetLockout: Bool
    public var panel: HomeAssistantPanel
    public var discovery: DiscoveryMode

    public init(
        base: String, discoveryPrefix: String, deviceName: String, allowOpen: Bool = false, allowResetLockout: Bool = false,
        panel: HomeAssistantPanel = HomeAssistantPanel(), discovery: DiscoveryMode = .device
    ) {
        precondition(
            Self.isValidTopic(base) && Self.isValidTopic(discoveryPrefix) && Self.isValidName(deviceName),
            "HomeAssistantTopics: invalid topic or name")
        self.base = base
        self.discoveryPrefix = discoveryPrefix
        self.deviceName = deviceName
        self.allowOpen = allowOpen
        self.allowResetLockout = allowResetLockout
        self.panel = panel
        self.discovery = discovery
    }

    /// A device name: 1-64 printable characters (spaces and any script allowed), no control
    /// characters, not starting or ending with a space.
    public static func isValidName(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty, scalars.count <= 64, scalars.first != " ", scalars.last != " " else { return false }
        return scalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F && !($0.value >= 0x80 && $0.value < 0xA0) }
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

    /// One entity of the panel in Home Assistant.
    public struct Entity: Hashable, Sendable {
        public var component: String
        public var object: String
        /// The entity's own keys (JSON members without braces), its ids apart.
        public var fields: String
        /// Whether the configuration has this part of the panel.
        public var included: Bool
    }

    /// Every entity the panel can have, `included` where the configuration has it.
    public var entities: [Entity] {
        func list(_ items: [String]) -> String { "[" + items.map { "\"" + $0 + "\"" }.joined(separator: ",") + "]" }
        func fromState(_ key: String) -> String { "\"state_topic\":\"" + state + "\",\"value_template\":\"{{ value_json." + key + " }}\"" }
        func onOff(_ key: String) -> String {
            "\"state_topic\":\"" + state + "\",\"value_template\":\"{{ 'ON' if value_json." + key + " else 'OFF' }}\""
        }
        func button(_ name: String, _ payload: String, _ icon: String) -> String {
            "\"name\":\"" + name + "\",\"command_topic\":\"" + command + "\",\"payload_press\":\"" + payload + "\",\"icon\":\"" + icon + "\""
        }
        let statuses = ["ready", "sending", "cooldown", "failed", "locked_out", "stopped"]
        let entries = ["idle", "entering", "verifying", "accepted", "locked_out", "expired", "stopped"]
        let seconds = ",\"device_class\":\"duration\",\"unit_of_measurement\":\"s\""
        return [
            Entity(
                component: "event", object: "event",
                fields: "\"name\":\"Event\",\"state_topic\":\"" + event + "\",\"event_types\":" + list(Self.eventTypes)
                    + ",\"icon\":\"mdi:bell-ring\"",
                included: true),
            Entity(component: "button", object: "send", fields: button("Send code", "send", "mdi:send"), included: true),
            Entity(component: "button", object: "open", fields: button("Open door", "open", "mdi:door-open"), included: allowOpen),
            Entity(
                component: "button", object: "reset_lockout",
                fields: button("Reset lockout", "reset_lockout", "mdi:lock-reset") + ",\"entity_category\":\"config\"", included: allowResetLockout),
            Entity(
                component: "sensor", object: "status",
                fields: "\"name\":\"Status\"," + fromState("status") + ",\"device_class\":\"enum\",\"options\":" + list(statuses)
                    + ",\"icon\":\"mdi:message-processing\"",
                included: true),
            Entity(
                component: "sensor", object: "seconds_left",
                fields: "\"name\":\"Seconds left\"," + fromState("seconds_left") + seconds + ",\"icon\":\"mdi:timer-sand\"", included: true),
            Entity(
                component: "binary_sensor", object: "lockout", fields: "\"name\":\"Lockout\"," + onOff("lockout") + ",\"icon\":\"mdi:lock-clock\"",
                included: true),
            Entity(
                component: "sensor", object: "sends_left", fields: "\"name\":\"Sends left\"," + fromState("sends_left") + ",\"icon\":\"mdi:counter\"",
                included: panel.sendCap),
            Entity(
                component: "sensor", object: "entry",
                fields: "\"name\":\"Entry\"," + fromState("entry") + ",\"device_class\":\"enum\",\"options\":" + list(entries)
                    + ",\"icon\":\"mdi:dialpad\"",
                included: panel.keypad),
            Entity(
                component: "sensor", object: "attempts_left",
                fields: "\"name\":\"Attempts left\"," + fromState("attempts_left") + ",\"icon\":\"mdi:numeric\"",
                included: panel.keypad && panel.attemptLimit),
            Entity(
                component: "sensor", object: "lockout_seconds_left",
                fields: "\"name\":\"Lockout time left\"," + fromState("lockout_seconds_left") + seconds + ",\"icon\":\"mdi:timer-lock\"",
                included: panel.keypad),
            Entity(
                component: "binary_sensor", object: "display",
                fields: "\"name\":\"Display\"," + onOff("display_online") + ",\"device_class\":\"connectivity\",\"entity_category\":\"diagnostic\"",
                included: true),
        ]
    }

    /// The device topic of device-based discovery.
    public var deviceDiscoveryTopic: String { discoveryPrefix + "/device/" + nodeID + "/config" }

    public func entityDiscoveryTopic(_ entity: Entity) -> String {
        discoveryPrefix + "/" + entity.component + "/" + nodeID + "/" + entity.object + "/config"
    }

    /// The entity id Home Assistant is asked for, without its component: the device name's slug
    /// (lowercase letters and digits, runs of anything else as one `_`), `_`, the object.
    public func objectID(_ entity: Entity) -> String {
        var slug = ""
        for scalar in deviceName.lowercased().unicodeScalars {
            if (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9") {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty && !slug.hasSuffix("_") {
                slug += "_"
            }
        }
        while slug.hasSuffix("_") { slug.removeLast() }
        return (slug.isEmpty ? "resend_button" : slug) + "_" + entity.object
    }

    /// unique_id, and the entity id asked for both ways: `object_id` (Home Assistant before
    /// 2025.10) and `default_entity_id` (2025.10 and later).
    private func ids(_ entity: Entity) -> String {
        let object = objectID(entity)
        return ",\"unique_id\":\"" + nodeID + "_" + entity.object + "\",\"object_id\":\"" + object + "\",\"default_entity_id\":\"" + entity.component
            + "." + object + "\""
    }

    /// Device info and origin, JSON members without braces.
    private var deviceInfo: String {
        var device =
            "\"identifiers\":[\"" + nodeID + "\"],\"name\":\"" + jsonEscaped(deviceName) + "\",\"manufacturer\":\"ResendButton\",\"model\":\""
            + jsonEscaped(panel.model) + "\""
        if !panel.softwareVersion.isEmpty { device += ",\"sw_version\":\"" + jsonEscaped(panel.softwareVersion) + "\"" }
        if !panel.hardware.isEmpty { device += ",\"hw_version\":\"" + jsonEscaped(panel.hardware) + "\"" }
        return device
    }

    private var origin: String {
        "\"name\":\"ResendButton\"" + (panel.softwareVersion.isEmpty ? "" : ",\"sw_version\":\"" + jsonEscaped(panel.softwareVersion) + "\"")
    }

    /// The discovery messages, all retained. Device mode: the device message with every included
    /// entity and, for each part the configuration lacks, only its platform (which removes it).
    /// Entity mode: one message per included entity and an empty one for each left out.
    public var discoveryMessages: [BrokerMessage] {
        let all = entities
        switch discovery {
        case .device:
            let components = all.map { entity in
                "\"" + entity.object + "\":{\"platform\":\"" + entity.component + "\"" + (entity.included ? "," + entity.fields + ids(entity) : "")
                    + "}"
            }
            let text =
                "{\"dev\":{" + deviceInfo + "},\"o\":{" + origin + "},\"availability_topic\":\"" + availability + "\",\"cmps\":{"
                + components.joined(separator: ",") + "}}"
            return [BrokerMessage(topic: deviceDiscoveryTopic, text: text, retained: true)]
        case .entity:
            return all.map { entity in
                let text =
                    entity.included
                    ? "{" + entity.fields + ids(entity) + ",\"availability_topic\":\"" + availability + "\",\"device\":{" + deviceInfo
                        + "},\"origin\":{"
                        + origin + "}}" : ""
                return BrokerMessage(topic: entityDiscoveryTopic(entity), text: text, retained: true)
            }
        }
    }

    /// Empty retained payloads on every topic of `other`'s discovery form for this device: they
    /// remove from the broker (and Home Assistant) what an earlier version or the other mode
    /// left, so no entity is there twice. Published once, before this form's discovery (Home
    /// Assistant removes what an empty payload names, and the discovery that follows adds it
    /// back under the same unique ids).
    public func discoveryCleanup(from other: DiscoveryMode) -> [BrokerMessage] {
        switch other {
        case .device: return [BrokerMessage(topic: deviceDiscoveryTopic, text: "", retained: true)]
        case .entity: return entities.map { BrokerMessage(topic: entityDiscoveryTopic($0), text: "", retained: true) }
        }
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

/// Text from the configuration inside a JSON string: quotes and backslashes escaped (control
/// characters are refused by `isValidName`).
func jsonEscaped(_ text: String) -> String {
    var out = ""
    for character in text {
        if character == "\"" || character == "\\" { out.append("\\") }
        out.append(character)
    }
    return out
}
