import HAL

/// Builders of button waveforms: logical edges (`pressed == true` = pushed) with their times, as a
/// GPIO backend would report them. Feed them to `VirtualEventSource`.
public enum ButtonScript {
    /// A clean press at `time`, released `holdFor` later: two edges.
    public static func press(at time: Instant, holdFor: TimeSpan) -> [ButtonEdge] {
        precondition(holdFor > .zero, "a press is held for a positive time")
        return [ButtonEdge(pressed: true, time: time), ButtonEdge(pressed: false, time: time + holdFor)]
    }

    /// A contact that bounces when pushed: pressed at `time`, then `bounces` times released and
    /// pressed again, one edge every `spacing`, settling pressed at `time + 2 * bounces * spacing`;
    /// released `holdFor` after it settled. `1 + 2 * bounces + 1` edges; `bounces == 0` is `press`.
    public static func bouncyPress(at time: Instant, bounces: Int, spacing: TimeSpan, holdFor: TimeSpan) -> [ButtonEdge] {
        precondition(bounces >= 0, "bounces must not be negative")
        precondition(spacing > .zero, "bounce edges are a positive time apart")
        precondition(holdFor > .zero, "a press is held for a positive time")
        var edges: [ButtonEdge] = []
        for index in 0...(2 * bounces) {
            // Even edges press, odd edges are the bounce releasing.
            edges.append(ButtonEdge(pressed: index % 2 == 0, time: time + spacing * Int64(index)))
        }
        let settled = time + spacing * Int64(2 * bounces)
        edges.append(ButtonEdge(pressed: false, time: settled + holdFor))
        return edges
    }

    /// A glitch (noise spike): pressed at `time` for only `width`. Same waveform as `press`; the
    /// name says that the pulse should be shorter than the debounce interval and be ignored.
    public static func glitch(at time: Instant, width: TimeSpan) -> [ButtonEdge] {
        precondition(width > .zero, "a glitch has a positive width")
        return [ButtonEdge(pressed: true, time: time), ButtonEdge(pressed: false, time: time + width)]
    }

    /// The edges as event-loop inputs at their own times.
    public static func inputs(_ edges: [ButtonEdge]) -> [(time: Instant, input: LoopInput)] {
        edges.map { (time: $0.time, input: LoopInput.button($0)) }
    }
}
