import Glibc
import HAL
import Testing

@testable import HALLinux

/// Runs `body` and returns the HALError it threw, or nil when it returned normally.
func thrownError(_ body: () throws -> Void) -> HALError? {
    do {
        try body()
        return nil
    } catch let error as HALError {
        return error
    } catch {
        Issue.record("not a HALError: \(error)")
        return nil
    }
}

/// A pipe whose ends close when the value goes away.
final class Pipe {
    let readEnd: Int32
    private(set) var writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        let result = pipe(&fds)
        precondition(result == 0, "pipe failed")
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    func write(_ bytes: [UInt8]) {
        let written = Glibc.write(writeEnd, bytes, bytes.count)
        precondition(written == bytes.count, "pipe write failed")
    }

    func closeWriteEnd() {
        _ = close(writeEnd)
        writeEnd = -1
    }

    deinit {
        _ = close(readEnd)
        if writeEnd >= 0 { _ = close(writeEnd) }
    }
}

/// A fake I2C bus whose devices answer at `responders`; `claimed` addresses are held by a driver.
struct FakeProbeBus: I2CBus {
    var responders: Set<UInt8>
    var claimed: Set<UInt8> = []
    var failure: HALError?
    var probed: [UInt8] = []

    var supportsMultiByteWrite: Bool { true }

    mutating func write(_ bytes: [UInt8], to address: I2CAddress) throws(HALError) {}

    mutating func probe(_ address: I2CAddress) throws(HALError) -> Bool {
        probed.append(address.rawValue)
        if let failure { throw failure }
        if claimed.contains(address.rawValue) { throw HALError(.busy, operation: "I2C_SLAVE", errno: EBUSY) }
        return responders.contains(address.rawValue)
    }
}

/// Waits, as the event loop does, for the command `runner` started (for `purpose`) to finish: the
/// runner's descriptor is registered with `source`, which is waited on until the runner's next
/// service time, when the runner is serviced (that gives no outcome: outcomes come through the
/// source). The outcome; nil after 20 s, or when the end comes as another purpose's (an issue each).
func awaitCommand(_ purpose: CommandPurpose, of runner: ProcessRunner, on source: inout LinuxEventSource) throws -> CommandOutcome? {
    let clock = SystemClock()
    let giveUp = clock.now() + .seconds(20)
    while clock.now() < giveUp {
        let deadline = runner.nextService.map { min($0, giveUp) } ?? giveUp
        for input in try source.wait(until: deadline) {
            guard case .commandFinished(let finished, let outcome) = input else { continue }
            guard finished == purpose else {
                Issue.record("a \(purpose) command's end came as a \(finished) command's")
                return nil
            }
            return outcome
        }
        if let due = runner.nextService, due <= clock.now() {
            #expect(runner.service(now: clock.now()).isEmpty)
        }
    }
    Issue.record("the \(purpose) command did not finish in 20 s")
    return nil
}
