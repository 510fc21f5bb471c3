import HAL

/// A `MessagePublisher` that keeps every message in order, for tests: what a broker would have
/// been handed. A reference type: copies share one record.
public final class RecordingPublisher: MessagePublisher {
    public private(set) var messages: [BrokerMessage] = []

    public init() {}

    public func publish(_ message: BrokerMessage) {
        messages.append(message)
    }

    /// The payloads published to `topic`, as text, in order.
    public func texts(on topic: String) -> [String] {
        messages.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }
}
