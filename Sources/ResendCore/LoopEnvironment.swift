import HAL

/// Everything outside the pure state machines that `EventLoop` needs, as one value: where inputs
/// come from, where frames go, the LED and the output line, the clocks, who hears the events, the
/// command runners, and where the state is kept. The device, each simulator, the benchmarks and
/// the tests each provide one; the loop is generic over this one protocol.
///
/// - `source` is the loop's only blocking call (`EventSource.wait(until:)`).
/// - `clock` times everything while running; `wallClock` is read only to convert at the state's
///   reads and writes and to stamp the send command's press time.
/// - `sender` runs the send command, `verifier` the verify command (with a code entry; the
///   single-button device never starts one).
/// - `store` nil: nothing is read or written (no persistence).
/// - `strike` is the output line (door strike, relay); `NoStrike` when none is fitted.
/// - `random` draws the codes made on the device (`EntryConfig.codeMadeOnDevice`); by default
///   `NoRandomSource`, for environments that never make one.
public protocol LoopEnvironment {
    associatedtype Source: EventSource
    associatedtype Display: FrameDisplay
    associatedtype LED: OutputLine
    associatedtype Strike: OutputLine
    associatedtype Clock: MonotonicClock
    associatedtype Observer: LoopObserver
    associatedtype Sender: CommandRunner
    associatedtype Verifier: CodeVerifier
    associatedtype Store: StateStorage
    associatedtype Wall: WallClock
    associatedtype Random: RandomSource = NoRandomSource

    var source: Source { get set }
    var display: Display { get set }
    var led: LED { get set }
    var strike: Strike { get set }
    var clock: Clock { get }
    var observer: Observer { get set }
    var sender: Sender { get set }
    var verifier: Verifier { get set }
    var store: Store? { get set }
    var wallClock: Wall { get }
    var random: Random { get set }
}

extension LoopEnvironment where Random == NoRandomSource {
    /// No random source: a code made on the device cannot be drawn (the send fails to start).
    public var random: NoRandomSource {
        get { NoRandomSource() }
        set {}
    }
}
