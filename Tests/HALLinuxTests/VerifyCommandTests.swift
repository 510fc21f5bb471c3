import Glibc
import HAL
import HALLinux
import Testing

/// Runs one check through a real `ProcessRunner` (purpose verify) registered with a real
/// `LinuxEventSource`, as the event loop does; `input` is what `CommandService` writes (the code
/// and a new line). Returns the outcome and the input buffer after `start` (it must be zeros).
private func verifyOnce(
    _ arguments: [String], input: String, timeout: TimeSpan = .seconds(10),
    environment: [String: String] = [:]
) throws -> (outcome: CommandOutcome, inputAfter: [UInt8]) {
    let runner = try ProcessRunner(
        .init(
            arguments: arguments, timeout: timeout, killGrace: .milliseconds(200),
            environment: environment, purpose: .verify))
    var source = try LinuxEventSource(button: nil)
    _ = source.register(fileDescriptor: runner.pollDescriptor) { () throws(HALError) -> [LoopInput] in try runner.collect() }
    let clock = SystemClock()
    var bytes = Array(input.utf8)
    if let outcome = runner.start(sequence: 3, input: &bytes, now: clock.now()) { return (outcome, bytes) }
    let outcome = try awaitCommand(.verify, of: runner, on: &source)
    return (outcome ?? CommandOutcome(sequence: 0, ending: .exited(code: -1), duration: .zero), bytes)
}

private func contents(_ path: String) -> String {
    String(decoding: (try? FileReader.read(path, limit: 1 << 20)) ?? [], as: UTF8.self)
}

/// A check command as a user would write it: reads one line from standard input and compares it.
private let checker = ["sh", "-c", #"read code; [ "$code" = 918273 ]"#]

@Suite("Verify command (real processes)")
struct VerifyCommandTests {
    @Test("the code arrives on standard input, then end of file: the right code exits 0, a wrong one 1")
    func codeOnStandardInput() throws {
        let right = try verifyOnce(checker, input: "918273\n")
        #expect(right.outcome.ending == .exited(code: 0))
        #expect(right.outcome.sequence == 3)
        #expect(try verifyOnce(checker, input: "111111\n").outcome.ending == .exited(code: 1))
        // End of file follows the code: a command reading everything ends.
        let all = try verifyOnce(["sh", "-c", #"test "$(cat)" = 918273"#], input: "918273\n")
        #expect(all.outcome.ending == .exited(code: 0))
    }

    @Test("the runner overwrites its copy of the code with zeros, whether the command started or not")
    func inputWiped() throws {
        #expect(try verifyOnce(checker, input: "918273\n").inputAfter == [UInt8](repeating: 0, count: 7))
        let missing = try verifyOnce(["/nonexistent/verify"], input: "918273\n")
        #expect(missing.inputAfter == [UInt8](repeating: 0, count: 7))
        guard case .couldNotStart(let reason, let errno) = missing.outcome.ending else {
            Issue.record("expected could not start, got \(missing.outcome.ending)")
            return
        }
        #expect(errno == ENOENT)
        #expect(!reason.contains("918273"))
    }

    @Test("the code is in neither the command's argv (/proc/PID/cmdline) nor its environment (/proc/PID/environ), nor in its outcome")
    func codeNotInProc() throws {
        let directory = TemporaryDirectory()
        // The command saves its own /proc entries after reading the code, then checks it against a
        // file (the expected code in its script would put it in argv).
        directory.write("expected", "918273")
        let script =
            #"read code; cat /proc/$$/cmdline > "$DIR/cmdline"; cat /proc/$$/environ > "$DIR/environ"; "#
            + #"printf '%s' "$code" > "$DIR/stdin"; [ "$code" = "$(cat "$DIR/expected")" ]"#
        let result = try verifyOnce(["sh", "-c", script], input: "918273\n", environment: ["DIR": directory.path])
        #expect(result.outcome.ending == .exited(code: 0))
        #expect(contents(directory.path + "/stdin") == "918273", "the command did get the code")
        let cmdline = contents(directory.path + "/cmdline")
        let environ = contents(directory.path + "/environ")
        #expect(cmdline.contains("read code"), "the command's own argv was read")
        #expect(environ.contains("DIR="), "the command's own environment was read")
        #expect(!cmdline.contains("918273"))
        #expect(!environ.contains("918273"))
        for name in ["RESEND_ATTEMPT=", "RESEND_COOLDOWN_SECONDS=", "RESEND_PRESS_TIME=", "RESEND_PRESS_UNIX_MS="] {
            #expect(!environ.contains(name), "the send command's variables are not given to the verify command")
        }
        #expect(!String(decoding: result.outcome.output, as: UTF8.self).contains("918273"))
    }

    @Test("a verify command past its time-out is terminated: timed out, like the send command")
    func timeout() throws {
        let result = try verifyOnce(["sh", "-c", "read code; exec sleep 30"], input: "918273\n", timeout: .milliseconds(300))
        #expect(result.outcome.ending == .timedOut(after: .milliseconds(300), killed: false))
    }

    @Test("other exit statuses and signals come back as such (the loop shows them as Check failed)")
    func otherEndings() throws {
        #expect(try verifyOnce(["sh", "-c", "read code; exit 3"], input: "918273\n").outcome.ending == .exited(code: 3))
        #expect(try verifyOnce(["sh", "-c", "read code; kill -KILL $$"], input: "918273\n").outcome.ending == .signalled(signal: SIGKILL))
    }
}
