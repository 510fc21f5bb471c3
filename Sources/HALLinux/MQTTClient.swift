import CLinuxOS
import CMosquitto
import HAL

/// An MQTT client (libmosquitto) driven by the program's own event loop: no library thread. The
/// loop polls `descriptor` (for writing too while `wantsWrite`), calls `handle(readable:writable:now:)`
/// when it is ready and `service(now:)` at `nextService` (the keepalive's PINGREQ, a reconnection).
/// An idle connection wakes the loop once per keepalive period (plus the PINGRESP's arrival).
///
/// - MQTT v5, with the CONNECT property Maximum Packet Size (`RB_MQTT_PACKET_MAX`, 2 KiB): the
///   broker drops a larger message instead of sending it, so none is ever read into memory. A
///   broker that answers "unsupported protocol version" gets MQTT v3.1.1 from the next attempt on
///   (reported once as `protocolFallback`); it may then send messages of any size.
/// - The keepalive is kept by what was last read, not only by what was written: a broker that
///   stops answering is noticed within 1.5 keepalive periods (and 1 s) of when it was last heard,
///   even while a countdown publishes every second: a PINGREQ one period (and 1 s: libmosquitto
///   counts whole seconds) after the broker was last heard, and the end of the connection when
///   nothing comes back within half a period, as an MQTT broker waits 1.5 periods for a silent
///   client. The messages handed over after the broker was last heard are counted
///   (`unconfirmedAtLoss`): with QoS 0 nobody knows whether they arrived.
/// - A message on one of `Settings.liveOnlyTopics` delivered retained (kept by the broker from
///   before, replayed at every subscription) is refused: with MQTT v5 the subscription asks the
///   broker never to send it (retain handling 2), with v3.1.1 it is dropped here. Dropped
///   messages (retained, topic or payload too long, the ring full) are reported one by one as
///   `Happening.dropped`.
///
/// - Connecting never blocks on the broker (the name lookup of a host name may: an address or a
///   name from /etc/hosts avoids that). A broker that cannot be reached, refuses the credentials
///   or fails TLS is tried again after 1 s, 2 s, 4 s, ... at most 60 s; a connection resets the
///   wait to 1 s.
/// - `publish` never blocks: a retained message replaces the one kept for its topic, and every
///   kept retained message is published again after each connection (the broker may have lost
///   them: a restart without persistence). Events wait in a queue of `eventQueueLimit`; a full
///   queue drops its oldest and counts it in `droppedEvents`. Only one message at a time is handed
///   to libmosquitto while the broker does not read, so its own queue never grows.
/// - The last will (`Settings.will`) is published by the broker when the connection ends without
///   a DISCONNECT (the process was killed, the network went away).
/// - Messages are published with QoS 0; the subscriptions are QoS 0.
///
/// One thread: every call on the loop's thread.
public final class MQTTClient: MessagePublisher {
    public struct Settings: Hashable, Sendable {
        public var host: String
        public var port: Int
        public var keepaliveSeconds: Int
        public var clientID: String
        public var username: String?
        public var password: String?
        /// TLS: the CA file; a client certificate needs both `certFile` and `keyFile`.
        public var caFile: String?
        public var certFile: String?
        public var keyFile: String?
        /// The last will; nil: none.
        public var will: BrokerMessage?
        /// Topics subscribed to after every connection.
        public var subscriptions: [String]
        /// Those of `subscriptions` that take only live messages: a retained one is refused
        /// (commands: a retained command would run at every connection).
        public var liveOnlyTopics: [String] = []

        public init(host: String, port: Int, keepaliveSeconds: Int, clientID: String, will: BrokerMessage?, subscriptions: [String]) {
            self.host = host
            self.port = port
            self.keepaliveSeconds = keepaliveSeconds
            self.clientID = clientID
            self.will = will
            self.subscriptions = subscriptions
        }
    }

    /// Where the connection is, for the log: reported only when it changes (never `connecting`).
    public enum LinkState: Hashable, Sendable {
        /// Before the first answer.
        case connecting
        case connected
        /// No connection could be made or it was lost (`reason` in words); retried later.
        case down(reason: String)
        /// The broker answered and refused (credentials, client id): `reason` is its answer.
        case refused(reason: String)
    }

    /// What a call brought: a state change, or a message on a subscribed topic.
    public enum Happening: Hashable, Sendable {
        case state(LinkState, retryIn: TimeSpan?)
        case message(topic: String, payload: [UInt8])
        /// A received message that was not taken.
        case dropped(Drop)
        /// The broker does not speak MQTT v5: the next attempts use v3.1.1 (no packet size bound).
        case protocolFallback
    }

    /// A received message that was dropped: its topic (at most `RB_MQTT_TOPIC_MAX` bytes of it),
    /// the full sizes, and why.
    public struct Drop: Hashable, Sendable {
        public enum Reason: String, Hashable, Sendable {
            case retained
            case topicTooLong = "topic_too_long"
            case payloadTooLong = "payload_too_long"
            case queueFull = "queue_full"
        }
        public var topic: String
        public var topicBytes: Int
        public var payloadBytes: Int
        public var reason: Reason
        /// Further drops not reported one by one (their reports overflowed).
        public var alsoDropped: Int
        /// The payload of a message refused as retained (it fit); empty otherwise.
        public var payload: [UInt8]

        public init(topic: String, topicBytes: Int, payloadBytes: Int, reason: Reason, alsoDropped: Int = 0, payload: [UInt8] = []) {
            self.payload = payload
            self.topic = topic
            self.topicBytes = topicBytes
            self.payloadBytes = payloadBytes
            self.reason = reason
            self.alsoDropped = alsoDropped
        }
    }

    public static let eventQueueLimit = 32
    public static let firstRetry = TimeSpan.seconds(1)
    public static let longestRetry = TimeSpan.seconds(60)

    public let settings: Settings
    private let client: OpaquePointer
    public private(set) var state: LinkState = .connecting
    private var reportedState: LinkState?
    private var retained: [BrokerMessage] = []
    /// Topics of `retained` not yet handed to libmosquitto on this connection, in order.
    private var unsentRetained: [String] = []
    private var events: [BrokerMessage] = []
    /// Events dropped because the queue was full, since start.
    public private(set) var droppedEvents = 0
    private var retryAt: Instant?
    private var retry = MQTTClient.firstRetry
    /// When libmosquitto last read (`lastIn`) and wrote (`lastOut`) on this connection, as its
    /// own keepalive bookkeeping sees it: a PINGREQ is due a keepalive after the older of the two.
    private var lastIn: Instant?
    private var lastOut: Instant?
    /// Messages handed to libmosquitto since the broker was last heard.
    private var unheardMessages = 0
    /// Of the last connection that was lost: the messages handed over after the broker was last
    /// heard (sent into a connection that may have been dead already).
    public private(set) var unconfirmedAtLoss = 0
    /// True once `start` ran; a client never started publishes nothing.
    private var started = false
    /// The socket hung up and libmosquitto kept it: not polled until the next attempt.
    private var abandoned = false
    /// When libmosquitto sent the PINGREQ that the broker has not answered yet (nothing read since).
    private var pingSentAt: Instant?

    /// Prepares the client (credentials, TLS, will); does not connect (`start`).
    public init(_ settings: Settings) throws(HALError) {
        self.settings = settings
        guard let made = rb_mqtt_new(settings.clientID) else {
            throw HALError(.io, operation: "mosquitto_new", errno: rb_errno())
        }
        client = made
        do throws(HALError) {
            if settings.username != nil || settings.password != nil {
                try Self.check(rb_mqtt_set_credentials(client, settings.username, settings.password), "mosquitto_username_pw_set")
            }
            if let ca = settings.caFile {
                try Self.check(rb_mqtt_set_tls(client, ca, settings.certFile, settings.keyFile), "mosquitto_tls_set \(ca)")
            }
            if let will = settings.will {
                try Self.check(
                    will.payload.withUnsafeBytes {
                        rb_mqtt_set_will(client, will.topic, $0.baseAddress, Int32($0.count), 1, will.retained)
                    }, "mosquitto_will_set")
            }
        } catch {
            rb_mqtt_free(client)
            throw error
        }
    }

    deinit { rb_mqtt_free(client) }

    /// libmosquitto's version, "2.0.11".
    public static var libraryVersion: String {
        let packed = Int(rb_mqtt_library_version())
        return String(packed / 1_000_000) + "." + String(packed / 1_000 % 1_000) + "." + String(packed % 1_000)
    }

    /// Starts the first connection attempt.
    public func start(now: Instant) -> [Happening] {
        started = true
        return connect(now: now)
    }

    /// The socket to poll; nil while there is none (waiting to retry).
    public var descriptor: Int32? {
        let fd = rb_mqtt_socket(client)
        return fd >= 0 && !abandoned ? fd : nil
    }

    /// True while libmosquitto has bytes the socket did not take yet.
    public var wantsWrite: Bool { descriptor != nil && rb_mqtt_want_write(client) }

    /// When `service(now:)` must run: the keepalive or the next connection attempt.
    public var nextService: Instant? { earliestOf(retryAt, keepaliveAt) }

    /// When the keepalive must be looked at: with a PINGREQ unanswered, half a period after it
    /// went out (the connection is then given up); otherwise when libmosquitto's keepalive check
    /// (`mosquitto_loop_misc`, which sends the PINGREQ) is due: one period (plus 1 s: libmosquitto
    /// counts whole seconds) after the older of the last read and the last write. Writes alone
    /// never postpone it: a broker that stopped reading still gets its PINGREQ.
    private var keepaliveAt: Instant? {
        guard descriptor != nil, let lastIn, let lastOut else { return nil }
        if let pingSentAt { return pingSentAt + answerWait }
        return min(lastIn, lastOut) + keepalive
    }

    /// The socket was ready: reads and writes what it can, then hands over queued messages. A
    /// socket whose peer hung up but that libmosquitto keeps (it does during a TLS handshake) is
    /// no longer polled: the connection counts as down and the next attempt closes it.
    public func handle(_ readiness: PollReadiness, now: Instant) -> [Happening] {
        var out: [Happening] = []
        if readiness.readable && descriptor != nil {
            let code = rb_mqtt_read(client)
            heard(now: now)
            out += collect(code: code, now: now)
        }
        if readiness.writable && descriptor != nil {
            let code = rb_mqtt_write(client)
            lastOut = now
            out += collect(code: code, now: now)
        }
        if readiness.hungUp && descriptor != nil {
            abandoned = true
            lose(
                reason: settings.caFile == nil ? "the broker closed the connection" : "the broker closed the connection during the TLS handshake",
                now: now)
        }
        flush(now: now)
        return out + reportState()
    }

    /// The keepalive (libmosquitto's misc: a PINGREQ, or the end of a connection whose PINGRESP
    /// did not come) or a reconnection is due.
    public func service(now: Instant) -> [Happening] {
        var out: [Happening] = []
        if let at = keepaliveAt, at <= now {
            if pingSentAt != nil {
                // Nothing came back within half a period of the PINGREQ: the broker is gone or
                // hung. libmosquitto itself would wait a whole period more.
                pingSentAt = nil
                abandoned = true
                _ = rb_mqtt_disconnect(client)
                lose(reason: reason(RB_MQTT_ERR_KEEPALIVE), now: now)
            } else {
                // libmosquitto sends its PINGREQ and counts the broker as heard now, or ends a
                // connection that is not up yet (MOSQ_ERR_KEEPALIVE).
                lastIn = now
                lastOut = now
                out += collect(code: rb_mqtt_misc(client), now: now)
                if state == .connected && descriptor != nil { pingSentAt = now }
            }
        }
        if let at = retryAt, at <= now {
            out += connect(now: now)
        }
        flush(now: now)
        return out + reportState()
    }

    /// An empty retained message (which deletes the broker's retained message on its topic) goes
    /// out in order with the retained messages and is forgotten once sent: kept, it would delete
    /// the topic again after every connection.
    public func publish(_ message: BrokerMessage) {
        if message.retained {
            if let index = retained.firstIndex(where: { $0.topic == message.topic }) {
                retained[index] = message
            } else {
                retained.append(message)
            }
            if !unsentRetained.contains(message.topic) { unsentRetained.append(message.topic) }
        } else {
            if events.count == Self.eventQueueLimit {
                events.removeFirst()
                droppedEvents += 1
            }
            events.append(message)
        }
        if started { flush(now: SystemClock().now()) }
    }

    /// Publishes every kept retained message again (Home Assistant came back online).
    public func republishRetained() {
        unsentRetained = retained.map { $0.topic }
        if started { flush(now: SystemClock().now()) }
    }

    /// Hands the queue to the broker and disconnects cleanly (no last will), waiting at most
    /// `limit` for the socket to take the bytes. For the end of the program.
    public func finish(within limit: TimeSpan) {
        let end = SystemClock().now() + limit
        while state == .connected, !unsentRetained.isEmpty || !events.isEmpty || wantsWrite, SystemClock().now() < end {
            if let fd = descriptor {
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&entry, 1, 50)
            }
            _ = handle(PollReadiness(readable: false, writable: true), now: SystemClock().now())
        }
        if state == .connected {
            _ = rb_mqtt_disconnect(client)
            _ = rb_mqtt_write(client)
        }
    }

    private var keepalive: TimeSpan { .seconds(Int64(settings.keepaliveSeconds + 1)) }
    /// How long a PINGREQ may go unanswered: half a keepalive period.
    private var answerWait: TimeSpan { .milliseconds(Int64(settings.keepaliveSeconds) * 500) }

    /// Something came from the broker: it is alive.
    private func heard(now: Instant) {
        lastIn = now
        pingSentAt = nil
        unheardMessages = 0
    }

    private func connect(now: Instant) -> [Happening] {
        retryAt = nil
        abandoned = false
        let code = rb_mqtt_connect(client, settings.host, Int32(settings.port), Int32(settings.keepaliveSeconds))
        if code != 0 {
            lose(reason: reason(code), now: now)
        } else {
            // The last failure stays the state until the broker answers.
            lastIn = now
            lastOut = now
            unheardMessages = 0
        }
        return reportState()
    }

    /// Takes what libmosquitto's callbacks recorded after a call that returned `code`.
    private func collect(code: Int32, now: Instant) -> [Happening] {
        var out: [Happening] = []
        var fellBack = false
        let connack = rb_mqtt_take_connack(client)
        if connack == 0 {
            state = .connected
            retry = Self.firstRetry
            for topic in settings.subscriptions {
                _ = rb_mqtt_subscribe(client, topic, 0, !settings.liveOnlyTopics.contains(topic))
            }
            unsentRetained = retained.map { $0.topic }
            lastOut = now
        } else if connack == RB_MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION && rb_mqtt_is_v5(client) && rb_mqtt_use_v311(client) == 0 {
            // An MQTT v3.1.1 broker: the next attempt speaks its version, at once.
            out.append(.protocolFallback)
            fellBack = true
        } else if connack > 0 {
            state = .refused(reason: String(cString: rb_mqtt_connack_string(client, connack)))
        }
        var topic = [CChar](repeating: 0, count: Int(RB_MQTT_TOPIC_MAX) + 1)
        var payload = [UInt8](repeating: 0, count: Int(RB_MQTT_PAYLOAD_MAX))
        var length = 0
        var wasRetained = false
        while rb_mqtt_take_message(client, &topic, &payload, &length, &wasRetained) == 1 {
            let name = Self.text(topic)
            if wasRetained && settings.liveOnlyTopics.contains(name) {
                out.append(
                    .dropped(
                        Drop(topic: name, topicBytes: name.utf8.count, payloadBytes: length, reason: .retained, payload: Array(payload[0..<length]))))
            } else {
                out.append(.message(topic: name, payload: Array(payload[0..<length])))
            }
        }
        var topicBytes = 0
        while true {
            let reason = rb_mqtt_take_drop(client, &topic, &topicBytes, &length)
            if reason == RB_MQTT_DROP_NONE { break }
            let why: Drop.Reason =
                switch reason {
                case RB_MQTT_DROP_TOPIC_TOO_LONG: .topicTooLong
                case RB_MQTT_DROP_PAYLOAD_TOO_LONG: .payloadTooLong
                default: .queueFull
                }
            out.append(.dropped(Drop(topic: Self.text(topic), topicBytes: topicBytes, payloadBytes: length, reason: why)))
        }
        let unreported = Int(clamping: rb_mqtt_take_unreported_drops(client))
        if unreported > 0, case .dropped(var last) = out.last {
            last.alsoDropped = unreported
            out[out.count - 1] = .dropped(last)
        }
        var reasonCode: Int32 = 0
        let disconnected = rb_mqtt_take_disconnect(client, &reasonCode)
        if disconnected || (code != 0 && descriptor == nil) {
            if fellBack {
                loseKeepingState(now: now)
                retryAt = now
            } else if case .refused = state {
                loseKeepingState(now: now)
            } else {
                lose(reason: reason(code != 0 ? code : reasonCode), now: now)
            }
        }
        return out
    }

    private func lose(reason: String, now: Instant) {
        unconfirmedAtLoss = unheardMessages
        unheardMessages = 0
        var detail = [CChar](repeating: 0, count: Int(RB_MQTT_ERROR_MAX))
        if rb_mqtt_take_error_log(client, &detail) {
            state = .down(reason: reason + " " + String(decoding: detail.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        } else {
            state = .down(reason: reason)
        }
        loseKeepingState(now: now)
    }

    /// No connection now: try again after the growing wait.
    private func loseKeepingState(now: Instant) {
        lastIn = nil
        lastOut = nil
        pingSentAt = nil
        retryAt = now + retry
        retry = min(retry + retry, Self.longestRetry)
    }

    /// The state when it changed since it was last reported.
    private func reportState() -> [Happening] {
        // Attempts are not reported: a broker that stays down or keeps refusing is one line, even
        // when the reason changes (lost, then refused while it restarts).
        guard state != .connecting, reportedState.map({ !Self.sameKind($0, state) }) ?? true else { return [] }
        reportedState = state
        let waiting = retryAt.map { $0 - SystemClock().now() }
        return [.state(state, retryIn: state == .connected || state == .connecting ? nil : waiting)]
    }

    /// Hands queued messages to libmosquitto while connected and it has nothing pending.
    private func flush(now: Instant) {
        while state == .connected, descriptor != nil, !rb_mqtt_want_write(client) {
            let message: BrokerMessage
            if let topic = unsentRetained.first {
                unsentRetained.removeFirst()
                guard let kept = retained.first(where: { $0.topic == topic }) else { continue }
                message = kept
                if kept.payload.isEmpty { retained.removeAll { $0.topic == topic } }
            } else if !events.isEmpty {
                message = events.removeFirst()
            } else {
                return
            }
            let code = message.payload.withUnsafeBytes {
                rb_mqtt_publish(client, message.topic, $0.baseAddress, Int32($0.count), 0, message.retained)
            }
            lastOut = now
            unheardMessages += 1
            if code != 0 {
                _ = collect(code: code, now: now)
                return
            }
        }
    }

    private static func sameKind(_ a: LinkState, _ b: LinkState) -> Bool {
        switch (a, b) {
        case (.connecting, .connecting), (.connected, .connected), (.down, .down), (.refused, .refused): return true
        default: return false
        }
    }

    private static func check(_ code: Int32, _ operation: String) throws(HALError) {
        guard code != 0 else { return }
        let errno = code == RB_MQTT_ERR_ERRNO ? rb_errno() : 0
        throw HALError(code == RB_MQTT_ERR_ERRNO ? .io : .invalidArgument, operation: operation + ": " + reason(code), errno: errno)
    }

    /// libmosquitto's error in words; for a system call's failure, errno's. libmosquitto 2.0.11
    /// has no words for MOSQ_ERR_KEEPALIVE ("Unknown error.").
    private func reason(_ code: Int32) -> String {
        if code == RB_MQTT_ERR_KEEPALIVE {
            return "the broker did not answer within the keepalive (\(settings.keepaliveSeconds) s)"
        }
        return Self.reason(code)
    }

    private static func reason(_ code: Int32) -> String {
        if code == RB_MQTT_ERR_ERRNO { return describe(errno: rb_errno()) }
        return String(cString: rb_mqtt_error_string(code))
    }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

private func earliestOf(_ a: Instant?, _ b: Instant?) -> Instant? {
    guard let a else { return b }
    guard let b else { return a }
    return min(a, b)
}
