import HAL
import HALLinux
import TestSupport
import Testing

@testable import ResendDevice

/// The log's rate limit for lines an outsider can cause, on virtual time: a burst passes, the rest
/// is one summary line once the window is over, and the device's own lines always pass.
@Suite("the log's rate limit for lines an outsider can cause")
struct LogRateLimitTests {
    private func logger(_ lines: Box) -> EventLogger {
        EventLogger(format: .plain) { lines.value.append($0) }
    }

    final class Box: @unchecked Sendable { var value: [String] = [] }

    @Test("10 MQTT commands in a window are logged, the 11th to the 5000th are one summary line at the window's end")
    func floodBecomesASummary() {
        let lines = Box()
        let log = logger(lines)
        for n in 0..<5000 { log.log(LogRecord("mqtt command", [.string("command", "send")]), at: at(1 + Double(n) / 1000)) }
        #expect(lines.value.count == 10)
        log.stepFinished(at: at(10.999))
        #expect(lines.value.count == 10, "not yet: the window runs 10 s from its first line")
        log.stepFinished(at: at(11))
        #expect(lines.value.last == #"11.000 log suppressed event="mqtt command" count=4990 seconds=10"#)
        log.log(LogRecord("mqtt command", [.string("command", "send")]), at: at(11.5))
        #expect(lines.value.last == "11.500 mqtt command command=send", "a new window lets lines pass again")
    }

    @Test("the device's own lines pass during a flood: code rejected, entry lockout started")
    func ownLinesAlwaysPass() {
        let lines = Box()
        let log = logger(lines)
        for n in 0..<100 { log.log(LogRecord("mqtt command refused", [.string("command", "open")]), at: at(1 + Double(n) / 100)) }
        log.log(LogRecord("code rejected", [.int("attempts_left", 2)]), at: at(1.5))
        log.log(LogRecord("entry lockout started", [.int("seconds", 30), .int("round", 1)]), at: at(1.6))
        #expect(lines.value.contains("1.500 code rejected attempts_left=2"))
        #expect(lines.value.contains("1.600 entry lockout started seconds=30 round=1"))
        #expect(lines.value.filter { $0.contains("mqtt command refused") }.count == 10)
    }

    @Test("each event has its own window; a window that left nothing out ends without a summary")
    func windowsPerEvent() {
        var limit = LogRateLimit(burst: 2, window: .seconds(5))
        let passed = [
            limit.admit("press ignored", at: at(0)), limit.admit("press ignored", at: at(1)), limit.admit("press ignored", at: at(2)),
            limit.admit("mqtt command", at: at(2)),
        ]
        #expect(passed == [true, true, false, true])
        #expect(limit.nextSummary == at(5))
        let early = limit.summaries(at: at(4.9))
        #expect(early.isEmpty)
        let due = limit.summaries(at: at(5))
        #expect(due.map(\.plainText) == [#"log suppressed event="press ignored" count=1 seconds=5"#])
        let later = limit.summaries(at: at(7))
        #expect(later.isEmpty, "mqtt command's window left nothing out")
        #expect(limit.nextSummary == nil)
    }

    @Test("a dropped message's line names the topic's kind, its sizes and why; a retained command is refused")
    func dropLines() {
        let big = MQTTClient.Drop(topic: "rb/test/command", topicBytes: 15, payloadBytes: 300, reason: .payloadTooLong)
        #expect(
            mqttDropRecord(big, kind: "command").plainText == "mqtt message dropped topic=command bytes=300 topic_bytes=15 reason=payload_too_long")
        let many = MQTTClient.Drop(topic: "x", topicBytes: 1, payloadBytes: 2, reason: .queueFull, alsoDropped: 7)
        #expect(
            mqttDropRecord(many, kind: "other").plainText == "mqtt message dropped topic=other bytes=2 topic_bytes=1 reason=queue_full also_dropped=7"
        )
        let retained = MQTTClient.Drop(topic: "rb/test/command", topicBytes: 15, payloadBytes: 4, reason: .retained, payload: Array("open".utf8))
        #expect(mqttDropRecord(retained, kind: "command").plainText == "mqtt command refused retained=1 command=open")
    }
}
