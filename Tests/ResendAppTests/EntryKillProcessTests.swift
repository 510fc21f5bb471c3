import Glibc
import HAL
import ResendCore
import Testing

/// The code-entry state in a state file: (wrong codes counted, lockout rounds, a lockout running).
private func entryState(_ path: String) -> (failures: Int, rounds: Int, lockedOut: Bool)? {
    guard let bytes = fileBytes(path, limit: 4096), let entry = (try? PersistedState(decoding: bytes))?.entry else { return nil }
    return (entry.failures, entry.rounds, entry.lockoutEnd != nil)
}

/// Line 1 of a `screen |...|...|` line of the simulator's output.
private func line1(_ line: String) -> String? {
    let fields = line.split(separator: "|", omittingEmptySubsequences: false)
    guard line.contains(" screen |"), fields.count >= 3 else { return nil }
    return String(fields[1].reversed().drop { $0 == " " }.reversed())
}

/// Where the program dies during a wrong code's check.
enum KillPoint: String, CaseIterable, CustomTestStringConvertible {
    /// SIGKILL 0.5 s after "Checking..." shows (the verify command is still running).
    case duringCheck
    /// The verify command SIGKILLs the program as its last act before `exit 1`.
    case byTheVerifyCommand
    /// SIGKILL as soon as the answer shows ("Wrong, N left", or the lockout).
    case atTheAnswer

    var testDescription: String { rawValue }

    /// The verify command's script: the code on its standard input, always wrong.
    var verifyScript: String {
        switch self {
        case .duringCheck: return "read code; sleep 3; exit 1\n"
        case .byTheVerifyCommand: return "read code; kill -9 $PPID; exit 1\n"
        case .atTheAnswer: return "read code; exit 1\n"
        }
    }
}

/// A wrong code must count even when the power is cut during its check: the simulator (the loop
/// `run` uses, on real time, with a real verify command and a state file) is SIGKILLed at each
/// point of a check and restarted; each round counts, and after maxAttempts (3) such rounds the
/// next start is locked out.
@Suite("A wrong code counts through a kill", .serialized, .timeLimit(.minutes(1)))
struct EntryKillProcessTests {
    @Test("killed during a wrong code's check, each try still counts and the third round locks entry", arguments: KillPoint.allCases)
    func killedDuringChecks(point: KillPoint) throws {
        let binary = try #require(executablePath(), "build the executable first: swift build")
        let directory = StateDirectory()
        directory.write("verify.sh", point.verifyScript)
        directory.write(
            "kp.json5", "{ keypad: { enabled: true, verify: { command: ['/bin/false'] }, entry: { maxAttempts: 3, lockoutSeconds: [30] } } }")
        let common = [
            "simulate", "--config", directory.path + "/kp.json5", "--headless", "--realtime", "--events", "--duration", "60",
            "--state-file", directory.stateFile, "--verify-command", "sh " + directory.path + "/verify.sh",
        ]
        for round in 1...3 {
            // The first run presses the button (no send command: the field opens at once); later
            // runs resume the open field from the state file.
            let child = Child(binary, common + ["--script", (round == 1 ? "press@0 " : "") + "keys@0.3:1111#"])
            switch point {
            case .duringCheck:
                let checking = try #require(child.waitForLine { line1($0) == "Checking..." }, "round \(round): \(child.lines)")
                sleepUntil(wall: checking.at + 0.5)
                #expect(!child.lines.contains { $0.contains("verify finished") }, "killed before the answer")
                child.killHard()
            case .byTheVerifyCommand:
                _ = child.waitForLine { _ in false }  // to the end of its output: killed by its verify command
                #expect(child.exitStatus() == nil, "killed by a signal")
                #expect(child.lines.contains { $0.hasSuffix("code submitted length=4 check=1") }, "round \(round): \(child.lines)")
                #expect(!child.lines.contains { $0.contains("verify finished") }, "its answer never arrived")
            case .atTheAnswer:
                let answer = try #require(
                    child.waitForLine { line1($0).map { $0.hasPrefix("Wrong") || $0.hasPrefix("Try again") } ?? false },
                    "round \(round): \(child.lines)")
                child.killHard()
                #expect(line1(answer.line) == (round < 3 ? "Wrong, \(3 - round) left" : "Try again (30)"))
            }
            let state = try #require(entryState(directory.stateFile), "round \(round)")
            if round < 3 {
                #expect(state.failures == round && !state.lockedOut, "round \(round): \(state)")
            } else if point == .atTheAnswer {
                #expect(state.failures == 0 && state.rounds == 1 && state.lockedOut, "\(state)")
            } else {
                #expect(state.failures == 3 && !state.lockedOut, "the third try is on disk: \(state)")
            }
        }
        // The next start is locked out, and a code typed now is not checked.
        let last = Child(binary, common + ["--script", "keys@0.3:1111#"])
        let first = try #require(last.waitForLine { line1($0) != nil && line1($0) != "Stopped" }, "\(last.lines)")
        let shown = try #require(line1(first.line))
        #expect(shown == "Try again (30)" || shown == "Try again (29)", "\(first.line)")
        let lockout = point == .atTheAnswer ? "entry lockout resumed" : "entry lockout started seconds=30 round=1"
        #expect(last.lines.contains { $0.contains(lockout) }, "\(last.lines)")
        _ = last.waitForLine(timeout: 2.5) { $0.contains("code submitted") }
        #expect(!last.lines.contains { $0.contains("code submitted") }, "keys are ignored during the lockout")
        last.killHard()
    }
}
