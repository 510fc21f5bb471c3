import Foundation
import HALLinux
import ResendApp
import ResendConfig
import ResendDevice
import Testing

private let tmpfsMedium = StateMedium(
    verdict: .forgets, directory: "/var/lib/resend-button",
    mount: MountEntry.parse("24 22 0:20 / /var/lib rw - tmpfs tmpfs rw\n").first, fileSystem: "tmpfs")

private func keypad(enabled: Bool, accepted: Bool = false) -> DeviceConfig.Keypad {
    var keypad = DeviceConfig.Keypad()
    keypad.enabled = enabled
    keypad.allowForgetfulState = accepted
    return keypad
}

@Suite("A state directory that forgets at a power cut: check, run's log line, code entry")
struct StateDurabilityTests {
    private let path = "/var/lib/resend-button/state.json"

    @Test("check with a keypad on tmpfs: a PROBLEM naming the mount and what to do, exit 78; run closes code entry")
    func keypadOnTmpfs() throws {
        let durability = StateDurability(path: path, medium: tmpfsMedium, keypad: true, accepted: false)
        let finding = try #require(stateFinding(durability) as CheckFinding?)
        #expect(
            finding.line
                == "PROBLEM state file /var/lib/resend-button/state.json: /var/lib/resend-button is on tmpfs (mount /var/lib, source tmpfs), in RAM: a power cut or reboot would forget the keypad's wrong codes and lockout, so code entry stays closed (Entry closed) unless keypad.allowForgetfulState is true; "
                + forgetfulStateAdvice)
        #expect(checkExitCode([finding]) == .config)
        #expect(durability.closesEntry)
        #expect(durability.record?.plainText.hasPrefix("state volatile path=/var/lib/resend-button/state.json medium=") == true)
        #expect(durability.record?.plainText.contains("entry=closed") == true)
    }

    @Test("keypad.allowForgetfulState: a NOTE that says the cost, exit 0, code entry open")
    func acceptedByConfiguration() throws {
        let durability = StateDurability(path: path, medium: tmpfsMedium, keypad: true, accepted: true)
        let finding = try #require(stateFinding(durability) as CheckFinding?)
        #expect(finding.line.hasPrefix("NOTE state file "))
        #expect(finding.line.contains("keypad.allowForgetfulState is true: a power cut or reboot forgets the wrong codes and the lockout"))
        #expect(checkExitCode([finding]) == .ok)
        #expect(!durability.closesEntry)
        #expect(durability.record?.plainText.contains("entry=\"open (keypad.allowForgetfulState)\"") == true)
    }

    @Test("without a keypad: a NOTE (a countdown is forgotten), exit 0, logged once, nothing closed")
    func buttonAlone() throws {
        let durability = StateDurability(path: path, medium: tmpfsMedium, keypad: false, accepted: false)
        let finding = try #require(stateFinding(durability) as CheckFinding?)
        #expect(finding.line.hasPrefix("NOTE ") && finding.line.contains("a power cut or reboot forgets a running countdown"))
        #expect(!durability.closesEntry)
        #expect(durability.record?.event == "state volatile")
    }

    @Test("on a disk: OK, no log line")
    func durable() throws {
        var medium = tmpfsMedium
        medium.verdict = .durable
        medium.fileSystem = "ext4"
        let durability = StateDurability(path: path, medium: medium, keypad: true, accepted: false)
        #expect(
            stateFinding(durability)?.line.hasPrefix("OK state file /var/lib/resend-button/state.json: /var/lib/resend-button is on ext4") == true)
        #expect(durability.record == nil)
        #expect(!durability.closesEntry)
    }

    @Test("the config key is read: keypad.allowForgetfulState true and false; a string is refused")
    func configKey() {
        #expect((try? DeviceConfig.parse(text: "{ keypad: { allowForgetfulState: true } }", source: "t.json5"))?.keypad.allowForgetfulState == true)
        #expect((try? DeviceConfig.parse(text: "{ keypad: { } }", source: "t.json5"))?.keypad.allowForgetfulState == false)
        #expect(configProblems("{ keypad: { allowForgetfulState: \"yes\" } }").count == 1)
    }

    @Test("the real binary's check with a keypad configuration whose state file is on /dev/shm (tmpfs here) says PROBLEM ... exit 78")
    func realCheckOnDevShm() throws {
        let directory = "/dev/shm/resend-durability-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/kp.json5"
        try "{ stateFile: \"\(directory)/state.json\", keypad: { enabled: true, verify: { command: [\"/bin/true\"] } } }".write(
            toFile: config, atomically: true, encoding: .utf8)
        let result = try runBinary(["check", "--config", config])
        let line = try #require(result.out.split(separator: "\n").first { $0.contains("state file") }, "\(result.out)")
        #expect(line.hasPrefix("PROBLEM state file \(directory)/state.json: \(directory) is on tmpfs (mount /dev/shm, source "))
        #expect(line.contains("code entry stays closed (Entry closed)"))
        #expect(result.status == 69, "69 first: this machine has no GPIO chip; 78 is among the codes")
    }
}
