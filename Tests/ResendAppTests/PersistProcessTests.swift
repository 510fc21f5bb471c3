import Glibc
import HAL
import ResendCore
import Testing

/// The seconds on a "Resend (NN)" label in a screen line, nil when the label is another.
private func countdownSeconds(_ line: String) -> Int? {
    let fields = line.split(separator: "|", omittingEmptySubsequences: false)
    guard fields.count >= 3, fields[2].hasPrefix("Resend ("), let close = fields[2].firstIndex(of: ")") else { return nil }
    return Int(fields[2][fields[2].index(fields[2].startIndex, offsetBy: 8)..<close])
}

/// The countdown's end in the state file at `path`, in wall-clock seconds; nil when none.
private func readDeadline(_ path: String) -> Double? {
    guard let bytes = fileBytes(path, limit: 4096), let state = try? PersistedState(decoding: bytes) else { return nil }
    return state.controller.countdownEnd.map { Double($0.millisecondsSinceEpoch) / 1000 }
}

@Suite("Restart-proof cooldown across SIGKILL", .serialized, .timeLimit(.minutes(1)))
struct PersistProcessTests {
    @Test("a real-time run killed with SIGKILL at 1.2 s and 2.5 s of a 5 s countdown resumes with the right seconds each time")
    func killAndRestart() throws {
        let binary = try #require(executablePath(), "build the executable first: swift build")
        let directory = StateDirectory()
        let common = ["simulate", "--headless", "--realtime", "--duration", "5", "--state-file", directory.stateFile, "--events"]

        // Run 1: press at once; once the countdown shows, the deadline is on disk.
        let first = Child(binary, common + ["--script", "press@0"])
        let shown = try #require(first.waitForLine { countdownSeconds($0) == 5 }, "\(first.lines)")
        let deadline = try #require(readDeadline(directory.stateFile))
        #expect(abs(deadline - 5 - shown.at) < 0.5, "the deadline is the press + 5 s")
        var previous = first

        for killAfter in [1.2, 2.5] {
            sleepUntil(wall: deadline - 5 + killAfter)
            previous.killHard()
            let restarted = Child(binary, common + ["--script", ""])
            let line = try #require(restarted.waitForLine { $0.contains(" screen |") && !$0.contains("Stopped") }, "\(restarted.lines)")
            let seconds = try #require(countdownSeconds(line.line), "resumed with a countdown: \(line.line)")
            let remaining = deadline - line.at
            #expect(abs(Double(seconds) - remaining) <= 1, "killed at \(killAfter) s: shows \(seconds), \(remaining) s left")
            #expect(seconds <= Int((5 - killAfter).rounded(.up)))
            #expect(restarted.lines.contains { $0.hasSuffix("countdown resumed seconds_left=\(seconds)") })
            previous = restarted
        }

        // The last run goes on to the end of the countdown, on time, and stops by itself.
        let end = try #require(previous.waitForLine { $0.contains("|Resend          |") }, "\(previous.lines)")
        #expect(abs(end.at - deadline) < 0.5, "ready at the deadline: \(end.at - deadline) s off")
        #expect(previous.exitStatus() == 0)
        #expect(readDeadline(directory.stateFile) == nil)
    }
}
