/// One message for a message broker (MQTT): a topic, its payload and whether the broker keeps it
/// for later subscribers (retained).
public struct BrokerMessage: Hashable, Sendable {
    public var topic: String
    public var payload: [UInt8]
    /// Retained: the broker keeps the latest one per topic and hands it to every new subscriber.
    /// Used for state and availability; never for events (a retained "code accepted" would be
    /// replayed to every client that subscribes later).
    public var retained: Bool

    public init(topic: String, payload: [UInt8], retained: Bool) {
        self.topic = topic
        self.payload = payload
        self.retained = retained
    }

    public init(topic: String, text: String, retained: Bool) {
        self.init(topic: topic, payload: Array(text.utf8), retained: retained)
    }
}

/// Where the device's state and events go (an MQTT broker on Linux, a recorder in tests).
///
/// `publish` never blocks and never fails: a publisher that is not connected, or whose broker
/// does not read, keeps what it has to deliver. A retained message replaces the one kept for its
/// topic (only the latest state matters) and every kept retained message is published again after
/// each (re)connection; events wait in a bounded queue that drops its oldest when full and counts
/// what it dropped.
public protocol MessagePublisher {
    mutating func publish(_ message: BrokerMessage)
}

/// A request from outside the device (an MQTT command), delivered as `LoopInput.remote`. Only
/// requests the configuration allows arrive; the loop treats them like the local inputs they
/// stand for.
public enum RemoteCommand: Hashable, Sendable {
    /// Like a press of Send/Resend: accepted when the button would accept a press.
    case send
    /// Opens the door: the output line pulses as after an accepted code (with a code entry and
    /// an output line only).
    case open
    /// Ends the code entry's lockout and forgets its wrong codes.
    case resetLockout
}
