import HAL
import HALLinux
import Testing

/// The client's queue while no broker reads: events wait in a bounded queue that drops its oldest
/// and counts them; retained messages (state, availability) are kept one per topic and never
/// counted as dropped. No broker is needed: a client that was never started hands nothing over.
@Suite("the MQTT client's queue while the broker does not read")
struct MQTTQueueTests {
    private func client() throws -> MQTTClient {
        try MQTTClient(
            MQTTClient.Settings(
                host: "127.0.0.1", port: 1, keepaliveSeconds: 60, clientID: "queue-test", will: nil, subscriptions: []))
    }

    private func event(_ n: Int) -> BrokerMessage {
        BrokerMessage(topic: "t/event", payload: Array("{\"event\":\"code_sent\",\"n\":\(n)}".utf8), retained: false)
    }

    @Test("events beyond the queue's limit are dropped, one count each; the limit itself drops none")
    func eventsBeyondTheLimitAreCounted() throws {
        let mqtt = try client()
        for n in 0..<MQTTClient.eventQueueLimit { mqtt.publish(event(n)) }
        #expect(mqtt.droppedEvents == 0)
        for n in 0..<9 { mqtt.publish(event(MQTTClient.eventQueueLimit + n)) }
        #expect(mqtt.droppedEvents == 9)
    }

    @Test("retained messages replace the one kept for their topic and are never counted as dropped")
    func retainedMessagesAreNeverDropped() throws {
        let mqtt = try client()
        for n in 0..<(3 * MQTTClient.eventQueueLimit) {
            mqtt.publish(BrokerMessage(topic: "t/state", payload: Array("{\"seconds\":\(n)}".utf8), retained: true))
            mqtt.publish(BrokerMessage(topic: "t/availability", payload: Array("online".utf8), retained: true))
        }
        #expect(mqtt.droppedEvents == 0)
    }
}
