import HAL

/// The lines the loop drives, one field per output, all of one line type (`OutputLine`): nil is
/// an output that is not fitted. A new output (a buzzer, an alarm) is one more field here and its
/// wiring in the loop, not a new type parameter.
///
/// - `led`: the LED in or beside the button (on while a press is accepted).
/// - `strike`: the keypad's output line (door strike, relay), pulsed by the code entry.
///
/// Setting an output that is not fitted succeeds and does nothing.
public struct Outputs<Line: OutputLine> {
    public var led: Line?
    public var strike: Line?

    public init(led: Line? = nil, strike: Line? = nil) {
        self.led = led
        self.strike = strike
    }
}

extension Outputs where Line == NoLine {
    /// No output fitted at all.
    public static var none: Outputs<NoLine> { Outputs() }
}

/// The one "no line" type: for environments that fit no output at all (`Outputs.none`).
public struct NoLine: OutputLine {
    public init() {}
    public mutating func set(_ active: Bool) throws(HALError) {}
}

/// The commands the loop starts: `send` when a press is accepted (with a send command), `verify`
/// when a code is submitted (with a code entry; the single-button device never starts one). Their
/// outcomes reach the loop from `start` (could not start, or done at once) or `service(now:)`, or
/// as `.commandFinished` inputs from the event source.
public struct Commands<Sender: CommandRunner, Verifier: CodeVerifier> {
    public var send: Sender
    public var verify: Verifier

    public init(send: Sender, verify: Verifier) {
        self.send = send
        self.verify = verify
    }
}

extension Commands where Sender == NoCommandRunner, Verifier == NoCodeVerifier {
    /// Neither command: a send fails to start, a check fails ("Check failed").
    public static var none: Commands<NoCommandRunner, NoCodeVerifier> { Commands(send: NoCommandRunner(), verify: NoCodeVerifier()) }
}

extension Commands where Verifier == NoCodeVerifier {
    /// A send command and no verify command.
    public static func send(_ send: Sender) -> Commands<Sender, NoCodeVerifier> { Commands(send: send, verify: NoCodeVerifier()) }
}

/// What `EventLoop` sees of its outside world. `LoopEnvironment` is the one implementation, for
/// the device, the simulators, the benchmarks and the tests alike; the loop is generic over this
/// protocol so that its type names one environment (`EventLoop<SomeEnvironment>`).
public protocol LoopPorts {
    associatedtype Source: EventSource
    associatedtype Display: FrameDisplay
    associatedtype Line: OutputLine
    associatedtype Sender: CommandRunner
    associatedtype Verifier: CodeVerifier
    associatedtype Clock: MonotonicClock
    associatedtype Wall: WallClock
    associatedtype Observer: LoopObserver
    associatedtype Store: StateStorage
    associatedtype Random: RandomSource

    var source: Source { get set }
    var display: Display { get set }
    var outputs: Outputs<Line> { get set }
    var commands: Commands<Sender, Verifier> { get set }
    var clock: Clock { get }
    var wallClock: Wall { get }
    var observer: Observer { get set }
    var store: Store? { get set }
    var random: Random { get set }
}

/// Everything outside the pure state machines that `EventLoop` needs, as one value, in groups:
/// where inputs come from, where frames go, the output lines, the commands, the clocks, who hears
/// the events, where the state is kept and where codes made on the device come from.
///
/// - `source` is the loop's only blocking call (`EventSource.wait(until:)`).
/// - `clock` times everything while running; `wallClock` is read only to convert at the state's
///   reads and writes and to stamp the send command's press time.
/// - `store` nil: nothing is read or written (no persistence).
/// - `random` draws the codes made on the device (`EntryConfig.codeMadeOnDevice`);
///   `NoRandomSource` for environments that never make one.
public struct LoopEnvironment<
    Source: EventSource, Display: FrameDisplay, Line: OutputLine, Sender: CommandRunner, Verifier: CodeVerifier,
    Clock: MonotonicClock, Wall: WallClock, Observer: LoopObserver, Store: StateStorage, Random: RandomSource
>: LoopPorts {
    public var source: Source
    public var display: Display
    public var outputs: Outputs<Line>
    public var commands: Commands<Sender, Verifier>
    public let clock: Clock
    public let wallClock: Wall
    public var observer: Observer
    public var store: Store?
    public var random: Random

    public init(
        source: Source, display: Display, outputs: Outputs<Line>, commands: Commands<Sender, Verifier>, clock: Clock, wallClock: Wall,
        observer: Observer, store: Store?, random: Random
    ) {
        self.source = source
        self.display = display
        self.outputs = outputs
        self.commands = commands
        self.clock = clock
        self.wallClock = wallClock
        self.observer = observer
        self.store = store
        self.random = random
    }
}

extension LoopEnvironment where Random == NoRandomSource {
    /// An environment that never makes a code on the device (a send with one fails to start).
    public init(
        source: Source, display: Display, outputs: Outputs<Line>, commands: Commands<Sender, Verifier>, clock: Clock, wallClock: Wall,
        observer: Observer, store: Store?
    ) {
        self.init(
            source: source, display: display, outputs: outputs, commands: commands, clock: clock, wallClock: wallClock, observer: observer,
            store: store, random: NoRandomSource())
    }
}
