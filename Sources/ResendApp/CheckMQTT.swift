import HAL
import HALLinux
import ResendConfig
import ResendCore

/// `check`'s broker findings when the configuration's `mqtt.enabled`: the broker reachable, TLS,
/// the credentials accepted, and the round trip of one message (published to `<base>/check`, not
/// retained, and received back), within `limit`. The check's own connection has no last will, so
/// it never marks the device offline.
func mqttCheck(_ options: CheckOptions, limit: TimeSpan = .seconds(5)) -> [CheckFinding] {
    guard options.config.mqtt.enabled else { return [] }
    let setup: MQTTSetup
    do throws(ExitError) {
        setup = try MQTTSetup(options.config, stateFile: nil, command: "check")
    } catch {
        return [.problem(error.code, error.message)]
    }
    var settings = setup.settings
    let probe = setup.topics.base + "/check"
    settings.subscriptions = [probe]
    settings.clientID += "-check"
    settings.will = nil
    let broker = "MQTT broker \(settings.host):\(settings.port)"
    let client: MQTTClient
    var source: LinuxEventSource
    do throws(HALError) {
        client = try MQTTClient(settings)
        source = try LinuxEventSource(button: nil)
    } catch {
        return [.problem(.unavailable, "\(broker): \(error.operation)")]
    }
    let clock = SystemClock()
    let outcome = MQTTCheckOutcome()
    let take: ([MQTTClient.Happening]) -> [LoopInput] = { happenings in
        for happening in happenings {
            switch happening {
            case .state(let state, _):
                outcome.state = state
                if state == .connected {
                    outcome.sentAt = clock.now()
                    client.publish(BrokerMessage(topic: probe, text: "check", retained: false))
                }
            case .message(let topic, _) where topic == probe:
                if let sent = outcome.sentAt { outcome.roundTrip = clock.now() - sent }
            case .message, .dropped, .protocolFallback:
                break
            }
        }
        return []
    }
    source.register(
        connection: PolledConnection(
            descriptor: { client.descriptor }, wantsWrite: { client.wantsWrite }, nextService: { client.nextService },
            onReady: { readiness, now in take(client.handle(readiness, now: now)) }, service: { now in take(client.service(now: now)) }))
    let end = clock.now() + limit
    _ = take(client.start(now: clock.now()))
    while outcome.roundTrip == nil, clock.now() < end {
        if case .refused = outcome.state { break }
        if case .down = outcome.state { break }
        do throws(HALError) {
            if try source.wait(until: end).contains(.stop) { break }
        } catch {
            return [.problem(.ioError, "\(broker): \(error.operation): \(describe(error))")]
        }
    }
    client.finish(within: .milliseconds(500))
    let tls = settings.caFile.map { "TLS (CA \($0))" } ?? "no TLS"
    let who = settings.username.map { "authenticated as \(shown($0))" } ?? "anonymous"
    switch outcome.state {
    case .connected:
        guard let trip = outcome.roundTrip else {
            return [
                .problem(
                    .unavailable,
                    "\(broker): connected (\(tls), \(who)) but a message to \(probe) did not come back within \(formatSeconds3(limit)) s; check the broker's ACL for \(setup.topics.base)/#"
                )
            ]
        }
        return [.ok("\(broker) reachable, \(tls), \(who), round trip \(formatMilliseconds(trip)) ms")]
    case .refused(let reason):
        return [.problem(.noPermission, "\(broker) (\(tls)) refused the connection: \(reason); check mqtt.username and mqtt.passwordFile")]
    case .down(let reason):
        return [
            .problem(
                .unavailable,
                "\(broker): \(reason); check mqtt.host, mqtt.port\(settings.caFile == nil ? "" : " and mqtt.tls") and that the broker runs")
        ]
    case .connecting:
        return [.problem(.unavailable, "\(broker): no answer within \(formatSeconds3(limit)) s; check mqtt.host, mqtt.port and the network")]
    }
}

/// Milliseconds with one decimal: `1.2`.
private func formatMilliseconds(_ span: TimeSpan) -> String {
    let tenths = (span.nanoseconds + 50_000) / 100_000
    return String(tenths / 10) + "." + String(tenths % 10)
}

/// What the broker check saw so far (a class at file scope: Embedded Swift specialises no local
/// classes).
private final class MQTTCheckOutcome {
    var state: MQTTClient.LinkState = .connecting
    var sentAt: Instant?
    var roundTrip: TimeSpan?
}
