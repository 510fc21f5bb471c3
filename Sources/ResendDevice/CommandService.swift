import HAL
import HALLinux
import HALMock
import ResendCore

/// A command the loop runs, the send command or the verify command (one type serves both; which
/// one it is, is its purpose, `CommandPurpose`): none, scripted (the simulator on virtual time), a
/// real process, or a send command played in-process (`InProcessSend`, the simulator's phone; as
/// the verify command it fails as none does).
///
/// - As the send command (`CommandRunner`): none fails every send at once ("no send command is
///   configured").
/// - As the verify command (`CodeVerifier`): none fails every check at once ("Check failed");
///   scripted wipes the code at once and keeps only the sequence; a process gets the digits and a
///   new line on its standard input (`ProcessRunner.start(sequence:input:now:)`, with
///   `CommandPurpose.verify`, so its outcomes arrive as `.commandFinished(.verify, _)`). The code is wiped once given.
public enum CommandService: CommandRunner, CodeVerifier {
    case none
    case scripted(ScriptedCommandRunner)
    case process(ProcessRunner)
    case inProcess(InProcessSend)

    public mutating func start(_ request: SendRequest, now: Instant) -> CommandOutcome? {
        switch self {
        case .none:
            var runner = NoCommandRunner()
            return runner.start(request, now: now)
        case .scripted(var runner):
            let outcome = runner.start(request, now: now)
            self = .scripted(runner)
            return outcome
        case .process(let runner):
            return runner.start(request, now: now)
        case .inProcess(var runner):
            let outcome = runner.start(request, now: now)
            self = .inProcess(runner)
            return outcome
        }
    }

    public mutating func start(_ request: VerifyRequest, now: Instant) -> CommandOutcome? {
        var code = request.code
        switch self {
        case .none, .inProcess:
            code.wipe()
            var verifier = NoCodeVerifier()
            return verifier.start(request, now: now)
        case .scripted:
            code.wipe()
            // The scripted runner takes a send request; only the sequence matters here.
            return start(
                SendRequest(sequence: request.sequence, attempt: 0, cooldownSeconds: 0, pressTime: WallTime(nanosecondsSinceEpoch: 0)),
                now: now)
        case .process(let runner):
            // The digits and a new line, as one line of standard input (`read code` in a shell).
            var input = code.digits + [UInt8(ascii: "\n")]
            code.wipe()
            return runner.start(sequence: request.sequence, input: &input, now: now)
        }
    }

    public var nextService: Instant? {
        switch self {
        case .none: return nil
        case .scripted(let runner): return runner.nextService
        case .process(let runner): return runner.nextService
        case .inProcess(let runner): return runner.nextService
        }
    }

    public mutating func service(now: Instant) -> [CommandOutcome] {
        switch self {
        case .none:
            return []
        case .scripted(var runner):
            let outcomes = runner.service(now: now)
            self = .scripted(runner)
            return outcomes
        case .process(let runner):
            return runner.service(now: now)
        case .inProcess(var runner):
            let outcomes = runner.service(now: now)
            self = .inProcess(runner)
            return outcomes
        }
    }

    /// A process still running (and whatever it started) gets SIGTERM and, after the grace
    /// period, SIGKILL; returns once they are reaped. Nothing for the others.
    func terminateAll() {
        if case .process(let process) = self { process.terminateAll() }
    }
}

/// A send command played inside the program (the simulator's phone is its receiver): `delay` after
/// each start it hands `deliver` the bytes a real send command reads on its standard input (a code
/// made on the device and a new line; nil when the send has no code) and exits 0, as a service
/// accepting the message. It writes no output, and overwrites its copy of the bytes once delivered.
public struct InProcessSend: CommandRunner {
    public let delay: TimeSpan
    private let deliver: (_ input: [UInt8]?, _ at: Instant) -> Void
    private var running: [(sequence: Int, input: [UInt8]?, due: Instant)] = []

    public init(delay: TimeSpan, deliver: @escaping (_ input: [UInt8]?, _ at: Instant) -> Void) {
        self.delay = delay
        self.deliver = deliver
    }

    public mutating func start(_ request: SendRequest, now: Instant) -> CommandOutcome? {
        var input: [UInt8]?
        if var code = request.input {
            input = code.digits + [UInt8(ascii: "\n")]
            code.wipe()
        }
        running.append((request.sequence, input, now + delay))
        return nil
    }

    public var nextService: Instant? { running.first?.due }

    public mutating func service(now: Instant) -> [CommandOutcome] {
        var outcomes: [CommandOutcome] = []
        while let first = running.first, first.due <= now {
            running.removeFirst()
            deliver(first.input, first.due)
            if var input = first.input { input.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            outcomes.append(CommandOutcome(sequence: first.sequence, ending: .exited(code: 0), duration: delay))
        }
        return outcomes
    }
}

extension CommandService {
    /// The one place the loop's commands are made, for `run` and every simulator: a process for
    /// `arguments` (its outcomes arrive as `.commandFinished(purpose, _)` once it is attached to
    /// the event source, `attach(to:)`), else the scripted steps (`--mock-send`, `--mock-verify`),
    /// else none. Throws when the process cannot be prepared; the caller names the command and
    /// chooses the exit code.
    public static func make(
        _ purpose: CommandPurpose, arguments: [String]?, timeout: TimeSpan,
        outputLimit: Int = ProcessRunner.Configuration.defaultOutputLimit, environment: [String: String] = [:],
        sessionDirectory: String?, scripted: [ScriptedCommandRunner.Step]? = nil
    ) throws(HALError) -> CommandService {
        if let arguments {
            return .process(
                try ProcessRunner(
                    .init(
                        arguments: arguments, timeout: timeout, outputLimit: outputLimit, environment: environment, purpose: purpose,
                        sessionDirectory: sessionDirectory)))
        }
        if let scripted { return .scripted(ScriptedCommandRunner(scripted)) }
        return .none
    }

    /// The running process's children, when this is a process.
    public var process: ProcessRunner? {
        if case .process(let process) = self { return process }
        return nil
    }

    /// Registers a process's descriptor with `source`, so that its outcomes arrive as inputs;
    /// nothing for the others.
    public func attach(to source: inout LinuxEventSource) {
        guard let process else { return }
        _ = source.register(fileDescriptor: process.pollDescriptor) { () throws(HALError) -> [LoopInput] in try process.collect() }
    }
}
