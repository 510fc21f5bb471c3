import HAL
import HALMock
import ResendApp
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// A bus outage in the middle of a 60 s countdown: when it starts and ends, and what the display
/// must do about it.
struct Outage: Sendable, CustomTestStringConvertible {
    var from: Double
    var to: Double
    /// When the display is re-probed: 0.5 s after going offline, then 1, 2, 4 s later, then every 5 s.
    var reprobes: [Double]
    var testDescription: String { "bus down \(from)-\(to) s" }
}

/// "1.020 Verification|Resend (60)": a frame at a time, trimmed, for readable comparisons.
func describeShow(_ time: Instant, _ frame: ScreenText) -> String {
    formatSeconds3(time - .origin) + " " + frame.lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }.joined(separator: "|")
}

struct DisplayHealingTests {
    /// Press at 1 s: shown at 1.020 (20 ms debounce), "Resend (60)" until 2.020, ..., "Resend" at 61.020.
    static let countdownShows: [String] =
        (0..<60).map { k in describeShow(at(1.02) + .seconds(Int64(k)), frame16("Verification", "Resend (\(k > 50 ? "0" : "")\(60 - k))")) }
        + [describeShow(at(61.02), frame16("Verification", "Resend"))]

    static let outages = [
        // Offline at the 11.020 label change; re-probes at 11.520, 12.520 (bus still down) and 14.520.
        Outage(from: 10.5, to: 13.5, reprobes: [11.52, 12.52, 14.52]),
        // A long outage shows the back-off capped at 5 s.
        Outage(from: 10.5, to: 40, reprobes: [11.52, 12.52, 14.52, 18.52, 23.52, 28.52, 33.52, 38.52, 43.52]),
    ]

    @Test(
        "a bus outage mid-countdown: every label change still at its deadline, one offline and one online, back-off re-probes, the right frame afterwards",
        arguments: outages)
    func outageMidCountdown(outage: Outage) throws {
        var rig = HealingRig()
        var lines: [String] = []
        rig.sampler.logger = EventLogger(format: .plain) { lines.append($0) }
        rig.bus.fail(from: at(outage.from), to: at(outage.to), with: .noDevice)
        try rig.run(presses: [at(1)], stopAt: at(70))

        // The controller's frames come at their deadlines, outage or not.
        let countdown = rig.record.shows.filter { $0.time > at(1) && $0.time < at(70) }.map { describeShow($0.time, $0.frame) }
        #expect(countdown == Self.countdownShows)

        // One outage: offline at the first failed write, online at the re-probe after the bus is back.
        let online = outage.reprobes.last!
        let events = rig.sampler.displayEvents.map { item -> String in
            let stamp = formatSeconds3(item.time - .origin)
            switch item.event {
            case .offline(let error): return "\(stamp) offline \(error.kind) \(error.operation)"
            case .online: return "\(stamp) online"
            case .refreshed: return "\(stamp) refreshed"
            }
        }
        #expect(events == ["11.020 offline noDevice write i2c 0x27", formatSeconds3(at(online) - .origin) + " online"])
        #expect(rig.record.services == outage.reprobes.map(at))
        #expect(
            lines.filter { $0.contains("display") } == [
                "11.020 display offline op=\"write i2c 0x27\" error=\"no device answered\"",
                formatSeconds3(at(online) - .origin) + " display online",
            ])

        // During the outage the glass keeps the last frame that got through (10.020)...
        let during = rig.sampler.samples.first { $0.time == at(12.02) }!
        #expect(during.screen == frame16("Verification", "Resend (51)").lines)
        #expect(rig.frame(at: at(12.02)) == frame16("Verification", "Resend (49)"))
        // ...and from the moment it is back, the frame of the moment, to the end.
        let after = rig.sampler.samples.filter { $0.time >= at(online) }
        #expect(after.first?.time == at(online))
        for sample in after {
            #expect(sample.screen == rig.frame(at: sample.time)?.lines, "at \(formatSeconds3(sample.time - .origin))")
        }
        #expect(rig.emulator.screen == frame16("Stopped", "").lines)
        #expect(rig.emulator.violations.isEmpty, "\(rig.emulator.violations)")
    }

    @Test("the periodic refresh re-initialises every interval and repairs a display that lost its state, without moving a label change")
    func periodicRefresh() throws {
        var rig = HealingRig(refresh: .seconds(10))
        let emulator = rig.emulator
        var cycled = false
        // Noise or a brown-out: the controller forgets everything after the 12.520 label change.
        rig.sampler.afterStep = { now in
            if !cycled && now >= at(12) {
                emulator.powerCycle()
                cycled = true
            }
        }
        try rig.run(presses: [at(1.5)], stopAt: at(45))

        let countdown = rig.record.shows.filter { $0.time > at(1.5) && $0.time < at(45) }.map { describeShow($0.time, $0.frame) }
        let expected = (0..<44).map { k in describeShow(at(1.52) + .seconds(Int64(k)), frame16("Verification", "Resend (\(60 - k))")) }
        #expect(countdown == expected)

        #expect(rig.record.services == [at(10), at(20), at(30), at(40)])
        #expect(rig.sampler.displayEvents.map(\.event) == [.refreshed, .refreshed, .refreshed, .refreshed])

        // Between the power cycle and the refresh at 20 s the glass is wrong; from then on right.
        let broken = rig.sampler.samples.first { $0.time == at(19.52) }!
        #expect(broken.screen != rig.frame(at: broken.time)?.lines)
        for sample in rig.sampler.samples where sample.time >= at(20) {
            #expect(sample.screen == rig.frame(at: sample.time)?.lines, "at \(formatSeconds3(sample.time - .origin))")
        }
        #expect(rig.sampler.samples.first { $0.time == at(20) }?.screen == frame16("Verification", "Resend (42)").lines)
        #expect(!rig.emulator.violations.filter { $0.time < at(20) }.isEmpty)
        #expect(rig.emulator.violations.filter { $0.time >= at(20) }.isEmpty, "\(rig.emulator.violations)")
    }

    @Test("without a refresh interval the display is never re-initialised while it works")
    func noRefresh() throws {
        var rig = HealingRig()
        try rig.run(presses: [at(1)], stopAt: at(30))
        #expect(rig.record.services.isEmpty)
        #expect(rig.sampler.displayEvents.isEmpty)
        #expect(rig.emulator.violations.isEmpty)
    }
}
