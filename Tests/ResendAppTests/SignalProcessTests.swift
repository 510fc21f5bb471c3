import Glibc
import HAL
import HALLinux
import Testing

/// The built `resend-button` with `arguments`, its standard error discarded.
private func running(_ arguments: [String]) throws -> Child {
    Child(try #require(executablePath(), "build the executable first: swift build"), arguments, discardErrors: true)
}

@Suite("Signals and the send command's process group, with the built binary", .serialized, .timeLimit(.minutes(1)))
struct SignalProcessTests {
    @Test(
        "a day-long headless run on virtual time ends at once on SIGTERM or SIGINT, killed by the signal (143 or 130 in a shell)",
        arguments: [SIGTERM, SIGINT])
    func virtualTimeRun(signal: Int32) throws {
        // Nobody reads the output: the run fills the pipe and waits there, as long as it takes.
        let run = try running(["simulate", "--headless", "--duration", "86400", "--script", "press@0 end@86400"])
        #expect(run.outputStarted(within: 10))
        _ = kill(run.pid, signal)
        let end = try #require(run.waitForEnd(within: 5), "still running 5 s after the signal")
        #expect(killedBy(end.status) == signal, "wait status \(end.status)")
        #expect(end.took < .milliseconds(500))
    }

    @Test("a real-time headless run stops gracefully on SIGINT: the stopped screen, exit 0, at once")
    func realtimeStops() throws {
        let run = try running(["simulate", "--headless", "--realtime", "--duration", "60", "--script", "press@0"])
        #expect(run.waitForLine(timeout: 10) { $0.hasSuffix("|Resend (60)     |") } != nil)
        _ = kill(run.pid, SIGINT)
        let end = try #require(run.waitForEnd(within: 5))
        #expect(exitCode(end.status) == 0)
        #expect(end.took < .milliseconds(500))
        run.readRest(timeout: 2)
        #expect(run.lines.last?.hasSuffix(" screen |Stopped         |                |") == true)
    }

    @Test("a command hung past the countdown is SIGKILLed and its outcome still shows: killed=1, Send failed")
    func hungCommandOutcome() throws {
        let directory = StateDirectory()
        let hang = directory.script("hang", "trap '' TERM\nexec sleep 1000\n")
        let run = try running([
            "simulate", "--headless", "--realtime", "--events", "--duration", "1", "--send-timeout", "1", "--send-command", hang,
            "--script", "press@0",
        ])
        let finished = run.waitForLine(timeout: 10) { $0.contains(" send finished ") }
        #expect(finished?.line.contains(" send finished result=timeout after_ms=1000 killed=1 ms=") == true)
        #expect(run.waitForLine(timeout: 2) { $0.hasSuffix(" screen |Send failed     |Resend          |") } != nil)
        let end = try #require(run.waitForEnd(within: 5))
        #expect(exitCode(end.status) == 0)
    }

    @Test("what the send command leaves running in its process group is ended when the command exits")
    func grandchildEndsWithCommand() throws {
        let directory = StateDirectory()
        let command = directory.script("send", "sleep 1000 &\necho $! > \(directory.path)/grandchild\n")
        let run = try running([
            "simulate", "--headless", "--realtime", "--events", "--duration", "30", "--send-command", command, "--script", "press@0",
        ])
        #expect(run.waitForLine(timeout: 10) { $0.contains(" send finished result=ok ") } != nil)
        let grandchild = try #require(pidWritten(in: directory.path + "/grandchild", within: 5))
        #expect(processGone(grandchild, within: 2), "the grandchild \(grandchild) outlived the command")
        _ = kill(run.pid, SIGTERM)
        #expect(run.waitForEnd(within: 5).map { exitCode($0.status) } == 0)
    }

    @Test("on SIGTERM the program ends a running send command and its group (SIGTERM, SIGKILL after the grace) before it exits 0")
    func groupEndsWithProgram() throws {
        let directory = StateDirectory()
        let command = directory.script(
            "send",
            """
            sh -c 'trap "" TERM; echo $$ > \(directory.path)/stubborn.tmp; mv \(directory.path)/stubborn.tmp \(directory.path)/stubborn; exec sleep 1000' &
            echo $$ > \(directory.path)/command
            sleep 1000

            """)
        let run = try running([
            "simulate", "--headless", "--realtime", "--events", "--duration", "30", "--send-command", command, "--script", "press@0",
        ])
        let leader = try #require(pidWritten(in: directory.path + "/command", within: 5))
        let stubborn = try #require(pidWritten(in: directory.path + "/stubborn", within: 5))
        _ = kill(run.pid, SIGTERM)
        let end = try #require(run.waitForEnd(within: 10))
        #expect(exitCode(end.status) == 0)
        // The command ends on SIGTERM; the grandchild ignoring it gets SIGKILL after the 2 s grace.
        #expect(end.took >= .milliseconds(1_900) && end.took < .seconds(4), "took \(end.took)")
        #expect(processGone(leader, within: 1))
        #expect(processGone(stubborn, within: 1))
    }
}
