import Glibc
import HAL
import ResendApp
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// Line 1 of a `screen |...|...|` line of the simulator's output.
private func line1(_ line: String) -> String? {
    let fields = line.split(separator: "|", omittingEmptySubsequences: false)
    guard line.contains(" screen |"), fields.count >= 3 else { return nil }
    return String(fields[1].reversed().drop { $0 == " " }.reversed())
}

private func fileSize(_ path: String) -> Int? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Int(info.st_size)
}

/// A security device fails closed when its state cannot be kept: a state file it cannot read is
/// moved aside (never silently replaced), and a state it cannot write closes code entry.
@Suite("State file faults", .serialized, .timeLimit(.minutes(1)))
struct StateFailClosedTests {
    @Test("a state file over the 64 KiB read cap is moved aside like any unreadable one; the device starts fresh and writes a new one")
    func oversizedStateFileIsMovedAside() {
        let directory = StateDirectory()
        directory.write("state.json", String(repeating: " ", count: 70_000))
        let result = runCLI(["simulate", "--headless", "--events", "--state-file", directory.stateFile, "--script", "press@0 end@1"])
        #expect(result.code == .ok)
        #expect(
            result.out.first
                == "0.000 state unreadable reason=\"read \(directory.stateFile): is larger than 65536 bytes\" moved_to=\(directory.stateFile).corrupt-1"
        )
        #expect(fileSize(directory.stateFile + ".corrupt-1") == 70_000, "kept for a human")
        #expect((fileSize(directory.stateFile) ?? 0) > 0 && (fileSize(directory.stateFile) ?? 0) < 1_000, "a new state was written")
    }

    @Test(
        "with a directory at STATE.tmp no write succeeds: code entry closes with one log line and no code is checked; once it is removed, the retry writes and entry opens again"
    )
    func unwritableStateClosesEntry() throws {
        let binary = try #require(executablePath(), "build the executable first: swift build")
        let directory = StateDirectory()
        let blocker = directory.stateFile + ".tmp"
        #expect(mkdir(blocker, 0o755) == 0)
        directory.write("verify.sh", "read code; exit 1\n")
        directory.write("kp.json5", "{ keypad: { enabled: true, verify: { command: ['/bin/false'] } } }")
        let child = Child(
            binary,
            [
                "simulate", "--config", directory.path + "/kp.json5", "--headless", "--realtime", "--events", "--duration", "60",
                "--state-file", directory.stateFile, "--verify-command", "sh " + directory.path + "/verify.sh",
                "--script", "press@0 keys@0.3:1111#",
            ])
        let closed = try #require(child.waitForLine { $0.contains("entry closed") }, "\(child.lines)")
        #expect(closed.line.hasSuffix("entry closed reason=\"the state cannot be written\""))
        #expect(child.lines.contains { $0.contains("state write failed") && $0.contains(blocker) })
        // The press's write failed at once; the keys after it are ignored: nothing is checked.
        _ = child.waitForLine(timeout: 2) { $0.contains("code submitted") }
        #expect(child.lines.contains { line1($0) == "Entry closed" })
        #expect(!child.lines.contains { $0.contains("code submitted") || $0.contains("verify") && $0.contains("finished") })
        #expect(child.lines.filter { $0.contains("entry closed") }.count == 1, "one line")
        #expect(fileSize(directory.stateFile) == nil)

        // Repaired: the next retry (1 s, 2 s, 4 s after the first failure) writes, and entry opens.
        #expect(rmdir(blocker) == 0)
        let reopened = try #require(child.waitForLine(timeout: 8) { $0.contains("entry reopened") }, "\(child.lines)")
        _ = reopened
        let field = try #require(child.waitForLine { line1($0) == "Code: ________" }, "\(child.lines)")
        _ = field
        #expect(fileSize(directory.stateFile) != nil)
        child.killHard()
    }
}
