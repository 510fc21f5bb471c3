import HAL

/// Runs the verify command without blocking the loop, like `CommandRunner` runs the send command:
/// `start` returns at once; the outcome arrives exactly once per started request, returned by
/// `start` (could not start), by `service(now:)` (runners on virtual time), or through the event
/// source as `LoopInput.commandFinished(.verify, _)` (a real process). `nextService` names the instant a
/// SIGTERM/SIGKILL or a scripted completion is due.
///
/// The code goes to the command's standard input only, never into argv, the environment, a log
/// or a file; a runner wipes its copies of the digits once written (`SecretCode.wipe`). The
/// outcome's `output` is never logged by the loop (a command might echo the code).
public protocol CodeVerifier {
    mutating func start(_ request: VerifyRequest, now: Instant) -> CommandOutcome?
    var nextService: Instant? { get }
    mutating func service(now: Instant) -> [CommandOutcome]
}

/// No verify command: every check fails at once ("Check failed"; no attempt is counted).
public struct NoCodeVerifier: CodeVerifier {
    public init() {}
    public mutating func start(_ request: VerifyRequest, now: Instant) -> CommandOutcome? {
        CommandOutcome(sequence: request.sequence, ending: .couldNotStart(reason: "no verify command is configured", errno: 0), duration: .zero)
    }
    public var nextService: Instant? { nil }
    public mutating func service(now: Instant) -> [CommandOutcome] { [] }
}
