import HAL
import HALMock
import ResendCore
import Testing

private typealias PublishingEnvironment = LoopEnvironment<
    VirtualEventSource, FrameLog, RecordingLED, ScriptedCommandRunner, ScriptedVerifier, ManualClock, ManualWallClock,
    PublishingObserver<EventRecorder, RecordingPublisher>, MemoryStateStorage, NoRandomSource
>

private let topics = HomeAssistantTopics(
    base: "rb/door", discoveryPrefix: "homeassistant", deviceName: "door", allowOpen: true, allowResetLockout: true)

extension KeypadDevice {
    /// The keypad device's loop with its events published to `publisher` (MQTT on virtual time).
    fileprivate func publishingLoop(verifier: ScriptedVerifier, publisher: RecordingPublisher) -> EventLoop<PublishingEnvironment> {
        let pad = DeviceCoordinator(
            controller: ResendController(config: ControllerConfig(duration: .seconds(60), layout: layout, hasSendCommand: true)),
            entry: CodeEntry(config: entry))
        let observer = PublishingObserver(inner: EventRecorder(), publisher: publisher, topics: topics, hasSendCommand: true)
        let environment = PublishingEnvironment(
            source: source, display: FrameLog(), outputs: Outputs(led: led, strike: output),
            commands: Commands(send: ScriptedCommandRunner([.succeeds(after: .milliseconds(500))]), verify: verifier), clock: clock, wallClock: wall,
            observer: observer, store: storage)
        return EventLoop(environment: environment, coordinator: pad)
    }

    mutating func remote(_ command: RemoteCommand, at time: Instant) { source.schedule(.remote(command), at: time) }
}

/// The `"key":value` of a state payload.
private func field(_ key: String, _ state: String) -> String? {
    let prefix = "\"" + key + "\":"
    let pairs = state.filter { $0 != "{" && $0 != "}" }.split(separator: ",").map(String.init)
    return pairs.first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
}

@Suite("MQTT and Home Assistant: what the device publishes")
struct HomeAssistantTests {
    @Test(
        "a press, a wrong code and a lockout: events code_sent, code_rejected, lockout_started (never retained); the state retained, counting down; the typed code and its length in no message"
    )
    func publishedFlow() throws {
        var device = KeypadDevice()
        device.entry.maxAttempts = 2
        device.tap(.button, at: kt(1))
        device.type("987654#", at: kt(3))
        device.type("987654#", at: kt(7))
        device.stop(at: kt(12))
        let publisher = RecordingPublisher()
        var loop = device.publishingLoop(verifier: ScriptedVerifier([.exited(code: 1)]), publisher: publisher)
        try loop.run()

        #expect(
            publisher.texts(on: "rb/door/event") == [
                "{\"event_type\":\"code_sent\"}", "{\"event_type\":\"code_rejected\"}", "{\"event_type\":\"code_rejected\"}",
                "{\"event_type\":\"lockout_started\"}",
            ])
        #expect(publisher.messages.filter { $0.topic == "rb/door/event" }.allSatisfy { !$0.retained })
        #expect(publisher.messages.filter { $0.topic != "rb/door/event" }.allSatisfy { $0.retained })
        // Availability first, then discovery, then the state; offline at the stop.
        #expect(publisher.messages.first == BrokerMessage(topic: "rb/door/availability", text: "online", retained: true))
        #expect(publisher.texts(on: "rb/door/availability") == ["online", "offline"])
        let states = publisher.texts(on: "rb/door/state")
        #expect(
            states.first
                == "{\"status\":\"ready\",\"seconds_left\":0,\"sends_left\":null,\"entry\":\"idle\",\"attempts_left\":2,\"lockout\":false,\"lockout_seconds_left\":0,\"display_online\":true}"
        )
        // One state per second of the countdown (60 ... 50 by the stop at 12 s), each on its second.
        let shown = states.compactMap { field("seconds_left", $0) }.compactMap { Int($0) }
        #expect(shown.contains(60) && shown.contains(50) && !shown.contains(61))
        #expect(states.contains { field("entry", $0) == "\"locked_out\"" && field("lockout", $0) == "true" && field("attempts_left", $0) == "2" })
        #expect(states.last.map { field("status", $0) } == "\"stopped\"")
        // Never the code, its digits in a row, or its length.
        let everything = publisher.messages.map { String(decoding: $0.payload, as: UTF8.self) }.joined(separator: "\n")
        #expect(!everything.contains("987654") && !everything.contains("length") && !everything.contains("digit"))
    }

    @Test("a remote send is a press: accepted when ready (the countdown starts), ignored while it counts down")
    func remoteSend() throws {
        var device = KeypadDevice()
        device.remote(.send, at: kt(1))
        device.remote(.send, at: kt(5))
        device.stop(at: kt(8))
        let publisher = RecordingPublisher()
        var loop = device.publishingLoop(verifier: ScriptedVerifier([.exited(code: 0)]), publisher: publisher)
        try loop.run()
        #expect(loop.display.screen(at: kt(1)) == ["Sending...", "Resend (60)"])
        #expect(loop.display.screen(at: kt(5)) == ["Code: ________", "Resend (56)"])
        let events = loop.observer.inner.events.map { $0.event }
        #expect(events.filter { $0 == .remote(.send) }.count == 2)
        #expect(events.contains(.controller(.pressIgnored(at: kt(5), secondsLeft: 56))))
        #expect(publisher.texts(on: "rb/door/event") == ["{\"event_type\":\"code_sent\"}"])
    }

    @Test("a remote open pulses the output for its length, lockout or not; reset_lockout ends a lockout and gives the attempts back")
    func remoteOpenAndResetLockout() throws {
        var device = KeypadDevice()
        device.entry.maxAttempts = 1
        device.tap(.button, at: kt(1))
        device.type("1111#", at: kt(3))  // rejected at 5.52 s: lockout of 30 s
        device.remote(.open, at: kt(8))
        device.remote(.resetLockout, at: kt(12))
        device.stop(at: kt(15))
        let publisher = RecordingPublisher()
        var loop = device.publishingLoop(verifier: ScriptedVerifier([.exited(code: 1)]), publisher: publisher)
        try loop.run()
        // Open: active at 8 s for the 2 s pulse; the lockout goes on meanwhile.
        #expect(device.output.history.map { $0.time } == [kt(0), kt(8), kt(10)])
        #expect(device.output.levels == [false, true, false])
        #expect(loop.display.screen(at: kt(9)).first?.hasPrefix("Try again") == true)
        // Reset: the field again at 12 s, with its attempts.
        #expect(loop.display.screen(at: kt(12)).first == "Code: ________")
        #expect(publisher.texts(on: "rb/door/event").contains("{\"event_type\":\"door_opened\"}"))
        #expect(publisher.texts(on: "rb/door/event").suffix(1) == ["{\"event_type\":\"lockout_finished\"}"])
        #expect(publisher.texts(on: "rb/door/state").last { field("entry", $0) == "\"entering\"" }.map { field("attempts_left", $0) } == "1")
    }

    @Test("commands: send always; open and reset_lockout only when allowed; Home Assistant's online republishes; other topics ignored")
    func requests() {
        var closed = topics
        closed.allowOpen = false
        closed.allowResetLockout = false
        func ask(_ t: HomeAssistantTopics, _ topic: String, _ text: String) -> HomeAssistantTopics.Request {
            t.request(topic: topic, payload: Array(text.utf8))
        }
        #expect(ask(closed, "rb/door/command", "send") == .command(.send))
        #expect(ask(closed, "rb/door/command", "open") == .refused("open"))
        #expect(ask(closed, "rb/door/command", "reset_lockout") == .refused("reset_lockout"))
        #expect(ask(topics, "rb/door/command", "open") == .command(.open))
        #expect(ask(topics, "rb/door/command", "reset_lockout") == .command(.resetLockout))
        #expect(ask(topics, "rb/door/command", "SEND") == .refused("SEND"))
        #expect(ask(topics, "homeassistant/status", "online") == .republish)
        #expect(ask(topics, "homeassistant/status", "offline") == .ignored)
        #expect(ask(topics, "rb/door/state", "send") == .ignored)
    }

    @Test(
        "device discovery: one retained device message with device info, origin, availability and every entity the configuration has; a part it lacks is only its platform"
    )
    func deviceDiscovery() {
        var keypadTopics = topics
        keypadTopics.panel = HomeAssistantPanel(
            model: "Resend button with keypad", hardware: "LCD 16x2, PCF8574 0x27; keypad 4x3 matrix", softwareVersion: "0.1.0", keypad: true,
            attemptLimit: true)
        let messages = keypadTopics.discoveryMessages
        #expect(messages.map { $0.topic } == ["homeassistant/device/rb_door/config"])
        #expect(messages.allSatisfy { $0.retained })
        let text = String(decoding: messages.last?.payload ?? [], as: UTF8.self)
        #expect(
            text.hasPrefix(
                "{\"dev\":{\"identifiers\":[\"rb_door\"],\"name\":\"door\",\"manufacturer\":\"ResendButton\",\"model\":\"Resend button with keypad\",\"sw_version\":\"0.1.0\",\"hw_version\":\"LCD 16x2, PCF8574 0x27; keypad 4x3 matrix\"},\"o\":{\"name\":\"ResendButton\",\"sw_version\":\"0.1.0\"},\"availability_topic\":\"rb/door/availability\",\"cmps\":{"
            ))
        #expect(
            text.contains(
                "\"open\":{\"platform\":\"button\",\"name\":\"Open door\",\"command_topic\":\"rb/door/command\",\"payload_press\":\"open\",\"icon\":\"mdi:door-open\",\"unique_id\":\"rb_door_open\",\"object_id\":\"door_open\",\"default_entity_id\":\"button.door_open\"}"
            ))
        #expect(text.contains("\"reset_lockout\":{\"platform\":\"button\",\"name\":\"Reset lockout\","))
        #expect(text.contains("\"entity_category\":\"config\",\"unique_id\":\"rb_door_reset_lockout\""))
        #expect(
            text.contains(
                "\"status\":{\"platform\":\"sensor\",\"name\":\"Status\",\"state_topic\":\"rb/door/state\",\"value_template\":\"{{ value_json.status }}\",\"device_class\":\"enum\",\"options\":[\"ready\",\"sending\",\"cooldown\",\"failed\",\"locked_out\",\"stopped\"]"
            ))
        #expect(
            text.contains(
                "\"name\":\"Seconds left\",\"state_topic\":\"rb/door/state\",\"value_template\":\"{{ value_json.seconds_left }}\",\"device_class\":\"duration\",\"unit_of_measurement\":\"s\""
            ))
        #expect(text.contains("\"name\":\"Lockout time left\""))
        #expect(text.contains("\"name\":\"Attempts left\""))
        #expect(text.contains("\"entry\":{\"platform\":\"sensor\",\"name\":\"Entry\""))
        #expect(text.contains("\"device_class\":\"connectivity\",\"entity_category\":\"diagnostic\""))
        // No cap of sends: its sensor is only its platform, which removes it.
        #expect(text.contains("\"sends_left\":{\"platform\":\"sensor\"}"))
        #expect(text.contains("\"event_types\":[\"code_sent\",\"send_failed\""))
    }

    @Test("a plain button panel: no keypad sensors, no open or reset buttons; Send code, Status, Seconds left, Lockout, Display and Event")
    func plainPanel() {
        let plain = HomeAssistantTopics(base: "rb/door", discoveryPrefix: "homeassistant", deviceName: "door")
        #expect(
            plain.entities.filter { $0.included }.map { $0.component + "." + $0.object } == [
                "event.event", "button.send", "sensor.status", "sensor.seconds_left", "binary_sensor.lockout", "binary_sensor.display",
            ])
        var capped = plain
        capped.panel.sendCap = true
        #expect(capped.entities.filter { $0.included }.map { $0.object }.contains("sends_left"))
    }

    @Test(
        "entity discovery (older Home Assistant): one message per included entity with device and origin, an empty one for each part left out"
    )
    func entityDiscovery() {
        var old = topics
        old.discovery = .entity
        old.allowOpen = false
        let messages = old.discoveryMessages
        #expect(messages.count == 12 && !messages.map { $0.topic }.contains("homeassistant/device/rb_door/config"))
        let byTopic = Dictionary(uniqueKeysWithValues: messages.map { ($0.topic, String(decoding: $0.payload, as: UTF8.self)) })
        #expect(byTopic["homeassistant/button/rb_door/open/config"] == "")
        let send = byTopic["homeassistant/button/rb_door/send/config"] ?? ""
        #expect(send.hasPrefix("{\"name\":\"Send code\",\"command_topic\":\"rb/door/command\",\"payload_press\":\"send\""))
        #expect(
            send.contains(
                "\"unique_id\":\"rb_door_send\",\"object_id\":\"door_send\",\"default_entity_id\":\"button.door_send\",\"availability_topic\":\"rb/door/availability\",\"device\":{\"identifiers\":[\"rb_door\"]"
            ))
        #expect(send.contains("\"origin\":{\"name\":\"ResendButton\"}"))
        #expect(messages.allSatisfy { $0.retained })
    }

    @Test("migration: the cleanup of the other form is empty retained payloads on each of its topics of this device")
    func migration() {
        let fromEntity = topics.discoveryCleanup(from: .entity)
        #expect(fromEntity.count == 12 && fromEntity.allSatisfy { $0.retained && $0.payload.isEmpty })
        #expect(fromEntity.map { $0.topic }.contains("homeassistant/sensor/rb_door/seconds_left/config"))
        #expect(topics.discoveryCleanup(from: .device) == [BrokerMessage(topic: "homeassistant/device/rb_door/config", text: "", retained: true)])
    }

    @Test("a device name with spaces and quotes: escaped in JSON; the entity ids use its slug")
    func deviceNames() {
        let named = HomeAssistantTopics(base: "rb/door", discoveryPrefix: "homeassistant", deviceName: "Front \"Door\" 2")
        let text = String(decoding: named.discoveryMessages.last?.payload ?? [], as: UTF8.self)
        #expect(text.contains("\"name\":\"Front \\\"Door\\\" 2\""))
        #expect(text.contains("\"default_entity_id\":\"sensor.front_door_2_status\""))
        for good in ["door", "Front door", "Tür 2"] { #expect(HomeAssistantTopics.isValidName(good), "\(good)") }
        for bad in ["", " door", "door ", "a\nb", "a\u{7F}", String(repeating: "x", count: 65)] {
            #expect(!HomeAssistantTopics.isValidName(bad), "\(bad)")
        }
    }

    @Test("topics: no wildcards, quotes, spaces or control characters; not starting or ending with a slash")
    func topicRules() {
        for good in ["resend-button/door", "a", "home/floor.1/door_2"] { #expect(HomeAssistantTopics.isValidTopic(good), "\(good)") }
        for bad in ["", "/door", "door/", "a/#", "a/+/b", "a b", "a\"b", "a\\b", "caf\u{E9}", "a\nb", String(repeating: "x", count: 201)] {
            #expect(!HomeAssistantTopics.isValidTopic(bad), "\(bad)")
        }
    }

    @Test("the display going offline and back: display_offline and display_online events, display_online in the state")
    func displayState() {
        let publisher = RecordingPublisher()
        var observer = PublishingObserver(inner: EventRecorder(), publisher: publisher, topics: topics, hasSendCommand: false)
        let pad = buttonCoordinator(ControllerConfig(), button: Debouncer())
        observer.statusChanged(DeviceStatus(coordinator: pad, now: kt(0)), at: kt(0))
        observer.record(.display(.offline(HALError(.io, operation: "write", errno: 5))), at: kt(1))
        observer.record(.display(.online), at: kt(2))
        #expect(publisher.texts(on: "rb/door/event") == ["{\"event_type\":\"display_offline\"}", "{\"event_type\":\"display_online\"}"])
        #expect(publisher.texts(on: "rb/door/state").map { field("display_online", $0) } == ["true", "false", "true"])
    }
}
