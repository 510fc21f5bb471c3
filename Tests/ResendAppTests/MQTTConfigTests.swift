import Glibc
import HAL
import ResendConfig
import ResendCore
import Testing

@testable import ResendApp
@testable import ResendDevice
@testable import ResendSimulator

@Suite("The mqtt section: off by default, every value checked, never a password in the file")
struct MQTTConfigTests {
    @Test(
        "the defaults: off, localhost:1883, no TLS, no credentials, discovery under homeassistant, keepalive 60 s, open and reset_lockout not allowed"
    )
    func defaults() throws {
        let mqtt = try DeviceConfig.parse(text: "{}", source: "t.json5").mqtt
        #expect(!mqtt.enabled && mqtt.host == "localhost" && mqtt.port == 1883 && mqtt.keepaliveSeconds == 60)
        #expect(mqtt.caFile == nil && mqtt.username == nil && mqtt.passwordFile == nil && mqtt.baseTopic == nil && mqtt.clientId == nil)
        #expect(mqtt.discoveryPrefix == "homeassistant" && !mqtt.allowOpen && !mqtt.allowResetLockout)
    }

    @Test("a full section is read as written")
    func full() throws {
        let mqtt = try DeviceConfig.parse(
            text: """
                {mqtt: {enabled: true, host: "broker.lan", port: 8883, tls: {caFile: "/etc/ssl/ca.pem", certFile: "/etc/rb/c.pem", keyFile: "/etc/rb/c.key"},
                 username: "door", passwordFile: "/etc/resend-button/mqtt-password", clientId: "door-1", baseTopic: "home/door",
                 discoveryPrefix: "ha", keepaliveSeconds: 30, allowOpen: true, allowResetLockout: true},
                 send: {command: ["/bin/true"]}, keypad: {enabled: true, code: {source: "device"}, output: {line: "GPIO26"}}}
                """, source: "t.json5"
        ).mqtt
        #expect(mqtt.enabled && mqtt.host == "broker.lan" && mqtt.port == 8883 && mqtt.caFile == "/etc/ssl/ca.pem")
        #expect(mqtt.certFile == "/etc/rb/c.pem" && mqtt.keyFile == "/etc/rb/c.key" && mqtt.username == "door")
        #expect(mqtt.passwordFile == "/etc/resend-button/mqtt-password" && mqtt.clientId == "door-1" && mqtt.baseTopic == "home/door")
        #expect(mqtt.discoveryPrefix == "ha" && mqtt.keepaliveSeconds == 30 && mqtt.allowOpen && mqtt.allowResetLockout)
    }

    @Test(
        "a bad value names the key and what is allowed",
        arguments: [
            ("{mqtt: {port: 0}}", "mqtt.port: 0 is out of range; allowed: a TCP port from 1 to 65535"),
            (
                "{mqtt: {allowOpen: true}, send: {command: [\"/bin/true\"]}, keypad: {enabled: true, code: {source: \"device\"}}}",
                "mqtt.allowOpen: the command open pulses keypad.output.line: enable the keypad and set its output line, or leave allowOpen false"
            ),
            (
                "{mqtt: {allowResetLockout: true}}",
                "mqtt.allowResetLockout: the command reset_lockout ends the keypad's lockout: enable the keypad, or leave allowResetLockout false"
            ),
            ("{mqtt: {keepaliveSeconds: 2}}", "mqtt.keepaliveSeconds: 2 is out of range; allowed: whole seconds from 5 to 65535"),
            (
                "{mqtt: {baseTopic: \"home/#\"}}",
                "mqtt.baseTopic: \"home/#\" is not a topic to publish to; allowed: printable ASCII without spaces, quotes, + or #, not starting or ending with /"
            ),
            (
                "{mqtt: {discoveryPrefix: \"/ha\"}}",
                "mqtt.discoveryPrefix: \"/ha\" is not a topic to publish to; allowed: printable ASCII without spaces, quotes, + or #, not starting or ending with /"
            ),
            ("{mqtt: {clientId: \"a/b\"}}", "mqtt.clientId: \"a/b\" is not a client id; allowed: printable ASCII without spaces, quotes, /, + or #"),
            ("{mqtt: {host: \"bro ker\"}}", "mqtt.host: \"bro ker\" is not a host name or address (no spaces or control characters)"),
            ("{mqtt: {tls: {caFile: \"ca.pem\"}}}", "mqtt.tls.caFile: \"ca.pem\" is not an absolute path to a file"),
            ("{mqtt: {tls: {caFile: \"/ca.pem\", certFile: \"/c.pem\"}}}", "mqtt.tls.keyFile: a client certificate needs both certFile and keyFile"),
            ("{mqtt: {tls: {certFile: \"/c.pem\", keyFile: \"/c.key\"}}}", "mqtt.tls.caFile: a client certificate needs TLS: set caFile too"),
            ("{mqtt: {password: \"hunter2\"}}", "mqtt.password: unknown key (did you mean 'passwordFile'?)"),
        ])
    func problems(text: String, message: String) {
        let problems = configProblems(text)
        #expect(problems.contains { $0.contains(message) }, "\(problems)")
    }

    @Test(
        "a password file others may read is refused (exit 78), naming the file, its mode and the fix; the owner's own file is read, its first line only"
    )
    func passwordFile() throws {
        let directory = StateDirectory()
        directory.write("password", "s3cret\nignored\n")
        let path = directory.path + "/password"
        try #require(chmod(path, 0o644) == 0)
        #expect(throws: ExitError.self) { _ = try MQTTSetup.readPassword(path, command: "run") }
        do {
            _ = try MQTTSetup.readPassword(path, command: "run")
        } catch {
            #expect(error.code == .config)
            #expect(error.message == "run: mqtt.passwordFile '\(path)' may be read by others (mode 644); allow only its owner: chmod 600 \(path)")
        }
        try #require(chmod(path, 0o600) == 0)
        #expect(try MQTTSetup.readPassword(path, command: "run") == "s3cret")
        #expect(throws: ExitError.self) { _ = try MQTTSetup.readPassword(directory.path + "/missing", command: "run") }
    }

    @Test("the simulator refuses mqtt.enabled without --headless --realtime (a real broker runs on real time)")
    func simulatorNeedsRealTime() {
        #expect(throws: ExitError.self) {
            _ = try SimulateOptions.parse(["--headless", "--config", "/m.json5", "--script", "press@0"]) { _ in .text("{mqtt: {enabled: true}}") }
        }
        do {
            _ = try SimulateOptions.parse(["--headless", "--config", "/m.json5", "--script", "press@0"]) { _ in .text("{mqtt: {enabled: true}}") }
        } catch {
            #expect(error.code == .usage)
            #expect(error.message == "simulate: mqtt.enabled in the configuration needs --headless --realtime (a real broker runs on real time)")
        }
    }
}

@Suite("MQTT identity: the machine's device id for the defaults, an upgraded installation keeping its topics")
struct MQTTIdentityTests {
    @Test(
        "a fresh installation: base topic and client id from the machine id (never the machine id itself), remembered beside the state file; the host name is only the display name"
    )
    func fresh() throws {
        let directory = StateDirectory()
        directory.write("machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n")
        var config = DeviceConfig()
        config.mqtt.enabled = true
        let setup = try MQTTSetup(
            config, stateFile: directory.path + "/state.json", command: "run", machineIDFile: directory.path + "/machine-id")
        #expect(setup.topics.base == "resend-button/2a609fa777ed")
        #expect(setup.settings.clientID == "resend-button-2a609fa777ed")
        #expect(setup.topics.nodeID == "resend-button_2a609fa777ed")
        #expect(setup.identityNote == nil)
        #expect(!setup.topics.deviceName.contains("2a609fa777ed"))
        #expect(directory.read("mqtt-identity") == "baseTopic resend-button/2a609fa777ed\nclientId resend-button-2a609fa777ed\ndiscovery device\n")
        #expect(setup.discoveryCleanup.isEmpty)
        let everything = setup.topics.discoveryMessages.map { String(decoding: $0.payload, as: UTF8.self) + $0.topic }.joined()
        #expect(!everything.contains("3d1219c7"))
    }

    @Test(
        "an upgrade: a state file from an earlier run and no memory keeps the host-name topics (logged once), and remembers them; later starts keep them"
    )
    func upgrade() throws {
        let directory = StateDirectory()
        directory.write("machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n")
        directory.write("state.json", "{}")
        var config = DeviceConfig()
        config.mqtt.enabled = true
        let host = try MQTTSetup(config, stateFile: nil, command: "check").topics.deviceName
        for start in 1...2 {
            let setup = try MQTTSetup(
                config, stateFile: directory.path + "/state.json", command: "run", machineIDFile: directory.path + "/machine-id")
            #expect(setup.topics.base == "resend-button/" + host)
            #expect(setup.settings.clientID == "resend-button-" + host)
            // The first start empties the earlier version's per-entity topics, once.
            #expect(setup.discoveryCleanup.count == (start == 1 ? 12 : 0))
        }
        #expect(directory.read("mqtt-identity") == "baseTopic resend-button/\(host)\nclientId resend-button-\(host)\ndiscovery device\n")
        // The switch to entity discovery empties the device topic once.
        config.mqtt.discovery = .entity
        let switched = try MQTTSetup(
            config, stateFile: directory.path + "/state.json", command: "run", machineIDFile: directory.path + "/machine-id")
        #expect(switched.discoveryCleanup.map { $0.topic } == ["homeassistant/device/resend-button_\(host)/config"])
        config.mqtt.discovery = .device
        // Configured values win over both.
        config.mqtt.baseTopic = "home/door"
        config.mqtt.deviceName = "Front door"
        let configured = try MQTTSetup(
            config, stateFile: directory.path + "/state.json", command: "run", machineIDFile: directory.path + "/machine-id")
        #expect(configured.topics.base == "home/door" && configured.topics.deviceName == "Front door")
    }

    @Test("the rules: memory first; an earlier run means the host name; else the device id; the host name without a machine id (with a note)")
    func rules() {
        #expect(
            MQTTIdentity.resolve(host: "pi", deviceID: "abc", remembered: .init(baseTopic: "x/y", clientID: "c", discovery: .device), ranBefore: true)
                .baseTopic == "x/y")
        #expect(MQTTIdentity.resolve(host: "pi", deviceID: "abc", remembered: nil, ranBefore: true).baseTopic == "resend-button/pi")
        #expect(MQTTIdentity.resolve(host: "pi", deviceID: "abc", remembered: nil, ranBefore: false).baseTopic == "resend-button/abc")
        let unnamed = MQTTIdentity.resolve(host: "pi", deviceID: nil, remembered: nil, ranBefore: false)
        #expect(unnamed.clientID == "resend-button-pi" && unnamed.note?.contains("no machine id") == true)
        #expect(
            MQTTIdentity.parseMemory(Array("baseTopic a/b\nclientId c\ndiscovery entity\n".utf8))
                == .init(baseTopic: "a/b", clientID: "c", discovery: .entity))
        #expect(MQTTIdentity.parseMemory(Array("baseTopic a/#\nclientId c\n".utf8)) == nil)
        #expect(MQTTIdentity.parseMemory(Array("baseTopic a/b\n".utf8)) == nil)
        #expect(MQTTIdentity.memoryFile(stateFile: "/var/lib/resend-button/state.json") == "/var/lib/resend-button/mqtt-identity")
    }
}
