import Glibc
import HAL
import HALLinux
import Testing

/// `runner` registered with a fresh `LinuxEventSource`, as the event loop registers it: waiting on
/// the source collects the runner's outcomes.
private func polledSource(for runner: ProcessRunner) throws -> LinuxEventSource {
    var source = try LinuxEventSource(button: nil)
    _ = source.register(fileDescriptor: runner.pollDescriptor) { () throws(HALError) -> [LoopInput] in try runner.collect() }
    return source
}

/// A send request for attempt `attempt` of a 60 s cooldown, pressed at the epoch.
private func send(_ sequence: Int, attempt: Int = 1) -> SendRequest {
    SendRequest(sequence: sequence, attempt: attempt, cooldownSeconds: 60, pressTime: WallTime(nanosecondsSinceEpoch: 0))
}

/// Runs one send through a real `ProcessRunner` registered with a real `LinuxEventSource`, as the
/// event loop does: wait until the runner's next service time, service it, until the outcome comes.
private func runOnce(
    _ arguments: [String], timeout: TimeSpan = .seconds(10), killGrace: TimeSpan = .seconds(2),
    request: SendRequest = send(7)
) throws -> (outcome: CommandOutcome, immediate: Bool) {
    let runner = try ProcessRunner(.init(arguments: arguments, timeout: timeout, killGrace: killGrace))
    var source = try polledSource(for: runner)
    let clock = SystemClock()
    if let outcome = runner.start(request, now: clock.now()) { return (outcome, true) }
    #expect(runner.runningCount == 1)
    let outcome = try awaitCommand(.send, of: runner, on: &source)
    #expect(runner.runningCount == 0)
    return (outcome ?? CommandOutcome(sequence: 0, ending: .exited(code: -1), duration: .zero), false)
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite("the send command runner", .timeLimit(.minutes(1)))
struct ProcessRunnerTests {
    @Test("a command exiting 0 succeeds with its standard output and standard error captured")
    func success() throws {
        let (outcome, immediate) = try runOnce(["/bin/sh", "-c", "echo hello; echo oops >&2"])
        #expect(!immediate)
        #expect(outcome.sequence == 7)
        #expect(outcome.ending == .exited(code: 0))
        #expect(outcome.succeeded)
        #expect(text(outcome.output) == "hello\noops\n")
        #expect(outcome.droppedOutputBytes == 0)
        #expect(outcome.duration > .zero && outcome.duration < .seconds(5))
    }

    @Test("a non-zero exit status is a failure with that status", arguments: [1, 3, 255])
    func nonZeroExit(code: Int32) throws {
        let (outcome, _) = try runOnce(["sh", "-c", "echo failing; exit \(code)"])
        #expect(outcome.ending == .exited(code: code))
        #expect(!outcome.succeeded)
        #expect(text(outcome.output) == "failing\n")
    }

    @Test("the command gets RESEND_ATTEMPT, RESEND_COOLDOWN_SECONDS and the press time, and keeps the environment")
    func environment() throws {
        let press = WallTime(millisecondsSinceEpoch: 1_718_022_896_789)
        let request = SendRequest(sequence: 1, attempt: 2, cooldownSeconds: 120, pressTime: press)
        let (outcome, _) = try runOnce(
            ["sh", "-c", "echo \"$RESEND_ATTEMPT $RESEND_COOLDOWN_SECONDS $RESEND_PRESS_TIME $RESEND_PRESS_UNIX_MS\"; test -n \"$PATH\""],
            request: request)
        #expect(outcome.ending == .exited(code: 0))
        #expect(text(outcome.output) == "2 120 2024-06-10T12:34:56.789Z 1718022896789\n")
    }

    @Test("arguments go to the program as they are: no shell splits or expands them")
    func noShell() throws {
        let (outcome, _) = try runOnce(["printf", "%s|", "two words", "$HOME", "*"])
        #expect(text(outcome.output) == "two words|$HOME|*|")
    }

    @Test("a command past its time-out gets SIGTERM and counts as timed out")
    func timeout() throws {
        let (outcome, _) = try runOnce(["sleep", "10"], timeout: .milliseconds(200))
        #expect(outcome.ending == .timedOut(after: .milliseconds(200), killed: false))
        #expect(!outcome.succeeded)
        #expect(outcome.duration >= .milliseconds(200) && outcome.duration < .seconds(2))
    }

    @Test("a command ignoring SIGTERM gets SIGKILL after the grace period, its children too")
    func killAfterGrace() throws {
        let (outcome, _) = try runOnce(
            ["sh", "-c", "trap '' TERM; sleep 10; echo survived"], timeout: .milliseconds(200), killGrace: .milliseconds(200))
        #expect(outcome.ending == .timedOut(after: .milliseconds(200), killed: true))
        #expect(outcome.duration >= .milliseconds(400) && outcome.duration < .seconds(3))
        #expect(text(outcome.output) == "")
    }

    @Test(
        "a command that is not found fails at once with the reason",
        arguments: [
            "/nonexistent/send-sms", "resend-button-no-such-command",
        ])
    func notFound(program: String) throws {
        let (outcome, immediate) = try runOnce([program, "+15550100"])
        #expect(immediate)
        guard case .couldNotStart(let reason, let errno) = outcome.ending else {
            Issue.record("expected couldNotStart, got \(outcome.ending)")
            return
        }
        #expect(errno == ENOENT)
        #expect(reason.hasPrefix(program + ": ENOENT"))
        #expect(!outcome.succeeded)
    }

    @Test("a file that is not executable fails at once, saying so (EACCES)")
    func notExecutable() throws {
        var template = Array("/tmp/resend-not-executable-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        #expect(fd >= 0)
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { _ = close(fd); _ = unlink(path) }
        let (outcome, immediate) = try runOnce([path])
        #expect(immediate)
        #expect(outcome.ending == .couldNotStart(reason: "\(path): is not executable (mode 0600: no execute permission; chmod +x it)", errno: EACCES))
    }

    @Test("a directory as the command fails at once saying it is a directory, not \"permission denied\"")
    func directoryCommand() throws {
        let directory = TemporaryDirectory()
        let (outcome, immediate) = try runOnce([directory.path])
        #expect(immediate)
        #expect(outcome.ending == .couldNotStart(reason: "\(directory.path): is a directory, not a program", errno: EACCES))
    }

    @Test("what a command leaves running in its process group gets SIGTERM when the command exits")
    func grandchildTerminated() throws {
        let (outcome, _) = try runOnce(["sh", "-c", "sleep 1000 & echo $!"])
        #expect(outcome.ending == .exited(code: 0))
        let grandchild = try #require(Int32(text(outcome.output).split(separator: "\n").first ?? ""))
        #expect(processGone(grandchild, within: 2), "the grandchild \(grandchild) still runs")
    }

    @Test("a grandchild ignoring SIGTERM gets SIGKILL after the grace period, at the runner's service time")
    func grandchildKilled() throws {
        // The grandchild ignores SIGTERM before the command exits (it says so through a file).
        let directory = TemporaryDirectory()
        let ready = directory.path + "/ready"
        let script =
            "sh -c 'trap \"\" TERM; echo $$ > \(ready).tmp; mv \(ready).tmp \(ready); exec sleep 1000' & "
            + "while [ ! -e \(ready) ]; do sleep 0.01; done; cat \(ready)"
        let runner = try ProcessRunner(.init(arguments: ["sh", "-c", script], timeout: .seconds(10), killGrace: .milliseconds(300)))
        var source = try polledSource(for: runner)
        let clock = SystemClock()
        #expect(runner.start(send(1), now: clock.now()) == nil)
        var outcome: CommandOutcome?
        while outcome == nil {
            for case .commandFinished(.send, let finished) in try source.wait(until: clock.now() + .seconds(5)) { outcome = finished }
        }
        let ended = clock.now()
        let grandchild = try #require(Int32(text(outcome?.output ?? []).split(separator: "\n").first ?? ""))
        #expect(!processGone(grandchild, within: 0.1), "SIGTERM is ignored: it still runs")
        let due = try #require(runner.nextService, "SIGKILL is due for the group")
        #expect(due > ended && due <= ended + .milliseconds(300))
        _ = try source.wait(until: due)
        #expect(runner.service(now: clock.now()).isEmpty)
        #expect(processGone(grandchild, within: 2))
        #expect(runner.nextService == nil)
    }

    @Test("terminateAll ends a running command and its group: SIGTERM, then SIGKILL after the grace period")
    func terminateAll() throws {
        let directory = TemporaryDirectory()
        let script =
            "echo $$ > \(directory.path)/leader.tmp; mv \(directory.path)/leader.tmp \(directory.path)/leader; "
            + "sh -c 'trap \"\" TERM; echo $$ > \(directory.path)/child.tmp; mv \(directory.path)/child.tmp \(directory.path)/child; exec sleep 1000' & sleep 1000"
        let runner = try ProcessRunner(.init(arguments: ["sh", "-c", script], timeout: .seconds(60), killGrace: .milliseconds(300)))
        let source = try polledSource(for: runner)
        let clock = SystemClock()
        #expect(runner.start(send(1), now: clock.now()) == nil)
        let leader = try #require(pidWritten(in: directory.path + "/leader", within: 2))
        let grandchild = try #require(pidWritten(in: directory.path + "/child", within: 2))
        let started = clock.now()
        runner.terminateAll()
        let took = clock.now() - started
        #expect(runner.runningCount == 0)
        #expect(took >= .milliseconds(300) && took < .seconds(2), "waited the grace period for the one ignoring SIGTERM")
        #expect(processGone(grandchild, within: 2))
        #expect(processGone(leader, within: 2))
        withExtendedLifetime(source) {}
    }

    @Test("huge output is drained, the first 4096 bytes kept and the rest counted, without blocking the command")
    func hugeOutput() throws {
        let total = 1_000_000
        let (outcome, _) = try runOnce(["head", "-c", String(total), "/dev/zero"])
        #expect(outcome.ending == .exited(code: 0))
        #expect(outcome.output.count == ProcessRunner.Configuration.defaultOutputLimit)
        #expect(outcome.output.allSatisfy { $0 == 0 })
        #expect(outcome.droppedOutputBytes == total - ProcessRunner.Configuration.defaultOutputLimit)
    }

    @Test("two sends may run at once; each outcome carries its own sequence")
    func concurrent() throws {
        let runner = try ProcessRunner(.init(arguments: ["sh", "-c", "sleep 0.$RESEND_ATTEMPT; echo $RESEND_ATTEMPT"], timeout: .seconds(5)))
        var source = try polledSource(for: runner)
        let clock = SystemClock()
        #expect(runner.start(send(1, attempt: 3), now: clock.now()) == nil)
        #expect(runner.start(send(2), now: clock.now()) == nil)
        var finished: [(Int, String)] = []
        let giveUp = clock.now() + .seconds(10)
        while finished.count < 2, clock.now() < giveUp {
            for case .commandFinished(.send, let outcome) in try source.wait(until: giveUp) {
                finished.append((outcome.sequence, text(outcome.output)))
            }
        }
        #expect(finished.map(\.0) == [2, 1])
        #expect(finished.map(\.1) == ["1\n", "3\n"])
    }

    @Test(
        "wall times format as ISO 8601 UTC with milliseconds",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00.000Z"),
            (Int64(1_718_022_896_789), "2024-06-10T12:34:56.789Z"),
            (Int64(951_782_400_005), "2000-02-29T00:00:00.005Z"),
            (Int64(-1), "1969-12-31T23:59:59.999Z"),
        ])
    func isoFormat(milliseconds: Int64, expected: String) {
        #expect(iso8601(WallTime(millisecondsSinceEpoch: milliseconds)) == expected)
    }

    @Test("the system wall clock reads CLOCK_REALTIME")
    func wallClock() {
        var spec = timespec()
        _ = clock_gettime(CLOCK_REALTIME, &spec)
        let reference = Int64(spec.tv_sec) * 1_000
        let now = SystemWallClock().now().millisecondsSinceEpoch
        #expect(now >= reference && now < reference + 5_000)
    }
}
