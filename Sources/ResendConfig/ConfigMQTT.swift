import HAL
import ResendCore

extension DeviceConfig {
    /// `mqtt`: the device's state and events on an MQTT broker, with Home Assistant discovery
    /// (docs/mqtt.md). Off by default. The password is never in this file: `passwordFile` names a
    /// file only its owner may read.
    public struct MQTT: Hashable, Sendable {
        /// `mqtt.enabled`.
        public var enabled = false
        /// `mqtt.host`: the broker's address or name.
        public var host = "localhost"
        /// `mqtt.port`: 1883 (8883 is the usual port with TLS).
        public var port = 1883
        /// `mqtt.tls.caFile`: TLS with this CA file; nil: no TLS.
        public var caFile: String? = nil
        /// `mqtt.tls.certFile`, `mqtt.tls.keyFile`: a client certificate (both or neither).
        public var certFile: String? = nil
        public var keyFile: String? = nil
        /// `mqtt.username`: nil: none.
        public var username: String? = nil
        /// `mqtt.passwordFile`: the password's file (its first line); nil: no password.
        public var passwordFile: String? = nil
        /// `mqtt.clientId`: nil: `resend-button-<device id>` (docs/mqtt.md, identity).
        public var clientId: String? = nil
        /// `mqtt.baseTopic`: nil: `resend-button/<device id>`, or what this installation used first.
        public var baseTopic: String? = nil
        /// `mqtt.deviceName`: the device's name in Home Assistant; nil: the host name.
        public var deviceName: String? = nil
        /// `mqtt.discovery`: "device" (one discovery message, Home Assistant 2024.11 and later) or
        /// "entity" (one per entity, any Home Assistant).
        public var discovery = DiscoveryMode.device
        /// `mqtt.discoveryPrefix`: Home Assistant's discovery prefix.
        public var discoveryPrefix = "homeassistant"
        /// `mqtt.keepaliveSeconds`: the MQTT keepalive; an idle device wakes once per period.
        public var keepaliveSeconds = 60
        /// `mqtt.allowOpen`: the command `open` pulses the keypad's output line.
        public var allowOpen = false
        /// `mqtt.allowResetLockout`: the command `reset_lockout` ends the code entry's lockout.
        public var allowResetLockout = false

        public init() {}

        public static let portRange = 1...65_535
        /// libmosquitto refuses a keepalive below 5 s; 65535 is the protocol's limit.
        public static let keepaliveRange = 5...65_535
    }

    /// Reads the `mqtt` section.
    static func readMQTT(_ section: ConfigSection, reader: ConfigReader) -> MQTT {
        var mqtt = MQTT()
        if let enabled = section.bool("enabled") { mqtt.enabled = enabled }
        if let host = section.string("host", what: "the broker's address or host name", allowEmpty: false) {
            if host.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
                reader.report(section.keyPath("host"), "\(jsonString(host)) is not a host name or address (no spaces or control characters)")
            } else {
                mqtt.host = host
            }
        }
        if let port = section.integer("port", range: MQTT.portRange, unit: "a TCP port") { mqtt.port = port }
        let tls = section.section("tls")
        mqtt.caFile = readAbsolutePath(tls, "caFile", what: "the CA certificate file (PEM)", reader: reader)
        mqtt.certFile = readAbsolutePath(tls, "certFile", what: "the client certificate file (PEM)", reader: reader)
        mqtt.keyFile = readAbsolutePath(tls, "keyFile", what: "the client key file (PEM)", reader: reader)
        if (mqtt.certFile == nil) != (mqtt.keyFile == nil) {
            reader.report(tls.keyPath(mqtt.certFile == nil ? "certFile" : "keyFile"), "a client certificate needs both certFile and keyFile")
        }
        if mqtt.certFile != nil && mqtt.caFile == nil {
            reader.report(tls.keyPath("caFile"), "a client certificate needs TLS: set caFile too")
        }
        tls.finish()
        mqtt.username = section.optionalString("username", what: "the user name on the broker", allowEmpty: false)
        mqtt.passwordFile = readAbsolutePath(section, "passwordFile", what: "a file holding the password (mode 0600 or 0400)", reader: reader)
        if let id = section.optionalString("clientId", what: "the MQTT client id", allowEmpty: false) {
            if HomeAssistantTopics.isValidTopic(id) && !id.contains("/") {
                mqtt.clientId = id
            } else {
                reader.report(
                    section.keyPath("clientId"), "\(jsonString(id)) is not a client id; allowed: printable ASCII without spaces, quotes, /, + or #")
            }
        }
        mqtt.baseTopic = readTopic(section, "baseTopic", reader: reader)
        if let prefix = readTopic(section, "discoveryPrefix", reader: reader) { mqtt.discoveryPrefix = prefix }
        if let name = section.optionalString("deviceName", what: "the device's name in Home Assistant", allowEmpty: false) {
            if HomeAssistantTopics.isValidName(name) {
                mqtt.deviceName = name
            } else {
                reader.report(
                    section.keyPath("deviceName"),
                    "\(jsonString(name)) is not a device name; allowed: 1 to 64 characters without control characters, not starting or ending with a space"
                )
            }
        }
        if let mode = section.choice("discovery", options: DiscoveryMode.allCases.map { ($0.rawValue, $0) }) { mqtt.discovery = mode }
        if let seconds = section.integer("keepaliveSeconds", range: MQTT.keepaliveRange, unit: "whole seconds") {
            mqtt.keepaliveSeconds = seconds
        }
        if let allow = section.bool("allowOpen") { mqtt.allowOpen = allow }
        if let allow = section.bool("allowResetLockout") { mqtt.allowResetLockout = allow }
        return mqtt
    }

    private static func readTopic(_ section: ConfigSection, _ key: String, reader: ConfigReader) -> String? {
        guard let topic = section.optionalString(key, what: "an MQTT topic such as \"resend-button/door\"", allowEmpty: false) else { return nil }
        guard HomeAssistantTopics.isValidTopic(topic) else {
            reader.report(
                section.keyPath(key),
                "\(jsonString(topic)) is not a topic to publish to; allowed: printable ASCII without spaces, quotes, + or #, not starting or ending with /"
            )
            return nil
        }
        return topic
    }

    private static func readAbsolutePath(_ section: ConfigSection, _ key: String, what: String, reader: ConfigReader) -> String? {
        guard let path = section.optionalString(key, what: what, allowEmpty: false) else { return nil }
        if let problem = pathProblem(path) {
            reader.report(section.keyPath(key), "\(jsonString(path)) \(problem)")
            return nil
        }
        guard path.hasPrefix("/") && !path.hasSuffix("/") else {
            reader.report(section.keyPath(key), "\(quoted(path)) is not an absolute path to a file")
            return nil
        }
        return path
    }
}
