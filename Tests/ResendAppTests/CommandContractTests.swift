import HAL
import HALMock
import ResendApp
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

// The exit-code contract of the send and verify commands (docs/exit-codes.md), shown through the
// headless simulator on virtual time: what the screen and the LED say for each outcome.

private func keypadConfig(_ keypad: String = "") -> [String: String] {
    ["kp.json5": "{ keypad: { enabled: true, verify: { command: ['/usr/local/bin/check-code'] }, \(keypad) } }"]
}

private func screen(_ time: String, _ lines: String...) -> String {
    "\(time) screen |" + lines.map { $0 + String(repeating: " ", count: max(0, 16 - $0.count)) }.joined(separator: "|") + "|"
}

@Suite("The command exit-code contract")
struct CommandContractTests {
    @Test("verify exit 3: \"Code expired\", keys ignored until the next send, which opens the field again")
    func verifyExpired() {
        let result = runCLI(
            [
                "simulate", "--config", "kp.json5", "--headless", "--duration", "5", "--mock-send", "ok@1", "--mock-verify", "expired@0.5",
                "--script", "press@0 keys@2:1234# key@4:5 press@6 key@8:5 end@9",
            ],
            files: keypadConfig())
        #expect(result.code == .ok)
        #expect(result.err == [])
        #expect(result.out.contains(screen("3.720", "Code expired", "Resend (02)")))
        // The key at 4 s is ignored: the screen stays until the resend.
        #expect(!result.out.contains { $0.hasPrefix("4.020 screen") && $0.contains("Code: *") })
        #expect(result.out.contains(screen("7.020", "Code: ________", "Resend (04)")))
        #expect(result.out.contains(screen("8.020", "Code: *_______", "Resend (03)")))
    }

    @Test("verify exit 3 gives the try back: with 2 attempts, expired then a resend and a wrong code leaves 1")
    func verifyExpiredCountsNoTry() {
        let result = runCLI(
            [
                "simulate", "--config", "kp.json5", "--headless", "--duration", "3", "--mock-send", "ok@0.5", "--mock-verify",
                "expired@0.5,reject@0.5",
                "--script", "press@0 keys@1:1234# press@4 keys@5:1234# end@8",
            ],
            files: keypadConfig("entry: { maxAttempts: 2 }"))
        #expect(result.code == .ok)
        #expect(result.out.contains { $0.contains("|Wrong, 1 left ") })
    }

    @Test("verify exit 75: \"Try again later\" and no try counted (2 attempts: tempfail, then a wrong code leaves 1)")
    func verifyTemporaryFailure() {
        let result = runCLI(
            [
                "simulate", "--config", "kp.json5", "--headless", "--duration", "20", "--mock-send", "ok@1", "--mock-verify",
                "tempfail@0.5,reject@0.5",
                "--script", "press@0 keys@2:1234# keys@5:1234# end@8",
            ],
            files: keypadConfig("entry: { maxAttempts: 2 }"))
        #expect(result.code == .ok)
        #expect(result.err == [])
        #expect(result.out.contains(screen("3.720", "Try again later", "Resend (17)")))
        #expect(result.out.contains(screen("6.720", "Wrong, 1 left", "Resend (14)")))
    }

    @Test("verify exit 2, a signal's stand-in and a time-out stay \"Check failed\" / \"Check timed out\"")
    func verifyOtherFailures() {
        let result = runCLI(
            [
                "simulate", "--config", "kp.json5", "--headless", "--duration", "20", "--mock-send", "ok@1", "--mock-verify",
                "exit=4@0.5,timeout@0.5",
                "--script", "press@0 keys@2:1234# keys@5:1234# end@8",
            ],
            files: keypadConfig())
        #expect(result.out.contains(screen("3.720", "Check failed", "Resend (17)")))
        #expect(result.out.contains(screen("6.720", "Check timed out", "Resend (14)")))
    }

    @Test("send exit 75 on the first press: \"Try later\" over \"Send code\", the LED on, the countdown cancelled")
    func sendTemporaryFailureFirstPress() {
        let result = runCLI(
            ["simulate", "--headless", "--duration", "10", "--mock-send", "tempfail@1,ok@1", "--script", "press@0 press@3 end@5"])
        #expect(result.code == .ok)
        #expect(result.err == [])
        #expect(
            result.out == [
                "0.000 led on",
                screen("0.000", "Verification", "Send code"),
                "0.020 led off",
                screen("0.020", "Sending...", "Resend (10)"),
                "1.020 led on",
                screen("1.020", "Try later", "Send code"),
                "3.020 led off",
                screen("3.020", "Sending...", "Resend (10)"),
                screen("4.020", "Code sent", "Resend (09)"),
                screen("5.000", "Stopped", ""),
            ])
    }

    @Test("send exit 75 does not count against the cap: with --max-sends 1 the next press still sends (a failed send would lock the button)")
    func sendTemporaryFailureNotCounted() {
        func run(_ first: String) -> CommandResult {
            runCLI([
                "simulate", "--headless", "--duration", "10", "--max-sends", "1", "--window", "100", "--mock-send", "\(first)@1,ok@1",
                "--script", "press@0 press@3 end@5",
            ])
        }
        let tempfail = run("tempfail")
        #expect(tempfail.out.contains(screen("4.020", "Code sent", "Resend (09)")))
        let failed = run("fail")
        #expect(failed.out.contains(screen("1.020", "Send failed", "Wait (99)")))
        #expect(!failed.out.contains { $0.contains("Code sent") })
    }

    @Test("send exit 75 after a send: the label stays \"Resend\" and the escalating cooldown is not advanced")
    func sendTemporaryFailureKeepsTheRun() {
        let result = runCLI(
            ["simulate", "--headless", "--cooldowns", "5,50", "--mock-send", "ok@1,tempfail@1,ok@1", "--script", "press@0 press@6 press@8 end@10"])
        #expect(result.out.contains(screen("7.020", "Try later", "Resend")))
        // The third press is the second send of the run: the second cooldown, 50 s.
        #expect(result.out.contains(screen("8.020", "Sending...", "Resend (50)")))
    }

    @Test("--mock-send and --mock-verify name the contract's outcomes in their usage errors")
    func mockOutcomeNames() {
        let send = runCLI(["simulate", "--headless", "--mock-send", "nope@1"])
        #expect(send.code == .usage)
        #expect(send.err.joined().contains("tempfail"))
        let verify = runCLI(["simulate", "--config", "kp.json5", "--headless", "--mock-verify", "nope@1"], files: keypadConfig())
        #expect(verify.err.joined().contains("expired, tempfail"))
    }
}
