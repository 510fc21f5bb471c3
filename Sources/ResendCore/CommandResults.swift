import HAL

// The command contract in one place: the exit statuses both commands follow, what a send's and a
// verify's ending mean (the two mappings), and the verify command's request and answer.

/// The exit statuses of the command contract that both commands follow (docs/exit-codes.md): 0
/// is success, `rejected` a wrong code (verify command only), `expired` the code is gone or expired
/// on the service's side (verify command only), `temporaryFailure` (EX_TEMPFAIL) a rate limit or
/// no network: nothing was judged or sent. Any other status, a signal or a time-out is a failure.
public enum CommandExitStatus {
    public static let rejected: Int32 = 1
    public static let expired: Int32 = 3
    public static let temporaryFailure: Int32 = 75
}

/// What the verify command said about a code.
public enum VerifyResult: Hashable, Sendable {
    /// Exit status 0.
    case accepted
    /// Exit status 1: a wrong code (the try counts).
    case rejected
    /// Exit status 3: the code is gone or expired on the service's side. Code entry closes until
    /// the next send; the try is given back (the code was not judged).
    case expired
    /// Exit status 75 (EX_TEMPFAIL): the service could not judge the code now (a rate limit, no
    /// network). The try is given back.
    case temporaryFailure
    /// Anything else: another exit status, a signal, could not start. No attempt is counted.
    case failed
    /// It ran past its time-out. No attempt is counted.
    case timedOut

    /// The contract (`CommandExitStatus`): exit 0 accepted, 1 rejected, 3 expired, 75 temporary
    /// failure, a time-out timed out, anything else failed.
    public init(_ ending: CommandOutcome.Ending) {
        switch ending {
        case .exited(code: 0): self = .accepted
        case .exited(code: CommandExitStatus.rejected): self = .rejected
        case .exited(code: CommandExitStatus.expired): self = .expired
        case .exited(code: CommandExitStatus.temporaryFailure): self = .temporaryFailure
        case .timedOut: self = .timedOut
        case .exited, .signalled, .couldNotStart: self = .failed
        }
    }
}

/// What the send command's ending means (`CommandExitStatus`).
public enum SendResult: Hashable, Sendable {
    /// Exit status 0: the code was sent.
    case sent
    /// Exit status 75 (EX_TEMPFAIL): rate-limited or a temporary fault; nothing was sent, and the
    /// send does not count (`ResendController`).
    case temporaryFailure
    /// Any other status, a signal, a time-out, could not start.
    case failed

    public init(_ ending: CommandOutcome.Ending) {
        switch ending {
        case .exited(code: 0): self = .sent
        case .exited(code: CommandExitStatus.temporaryFailure): self = .temporaryFailure
        case .exited, .signalled, .timedOut, .couldNotStart: self = .failed
        }
    }
}

/// The end of one verification, matched to its request by `sequence`.
public struct VerifyOutcome: Hashable, Sendable {
    public var sequence: Int
    public var result: VerifyResult

    public init(sequence: Int, result: VerifyResult) {
        self.sequence = sequence
        self.result = result
    }
}

/// One run of the verify command: the code goes to its standard input (never argv or the
/// environment, which other users can read in /proc).
public struct VerifyRequest: Hashable, Sendable {
    public var sequence: Int
    public var code: SecretCode

    public init(sequence: Int, code: SecretCode) {
        self.sequence = sequence
        self.code = code
    }
}
