import HAL
import HALLinux
import HALMock
import ResendCore

/// A command the loop runs, the send command or the verify command (one type serves both; which
/// one it is, is its purpose, `CommandPurpose`): none, scripted (the simulator on virtual time), a
/// real process, or the desktop flow's services (the phone as the send command, the desktop code's
/// check as the verify command; each fails as none does in the other role).
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
    case phone(PhoneSendService)
    case desktopCheck(DesktopCodeVerifier)

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
        case .phone(var service):
            let outcome = service.start(request, now: now)
            self = .phone(service)
            return outcome
        case .desktopCheck:
            var runner = NoCommandRunner()
            return runner.start(request, now: now)
        }
    }

    public mutating func start(_ request: VerifyRequest, now: Instant) -> CommandOutcome? {
        var code = request.code
        switch self {
        case .none, .phone:
            code.wipe()
            var verifier = NoCodeVerifier()
            return verifier.start(request, now: now)
        case .desktopCheck(var verifier):
            let outcome = verifier.start(request, now: now)
            self = .desktopCheck(verifier)
            return outcome
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
        case .phone(let service): return service.nextService
        case .desktopCheck(let verifier): return verifier.nextService
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
        case .phone(var service):
            let outcomes = service.service(now: now)
            self = .phone(service)
            return outcomes
        case .desktopCheck(var verifier):
            let outcomes = verifier.service(now: now)
            self = .desktopCheck(verifier)
            return outcomes
        }
    }

    /// A process still running (and whatever it started) gets SIGTERM and, after the grace
    /// period, SIGKILL; returns once they are reaped. Nothing for the others.
    func terminateAll() {
        if case .process(let process) = self { process.terminateAll() }
    }
}
