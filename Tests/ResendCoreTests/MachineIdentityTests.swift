import HAL
import ResendCore
import Testing

private func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var digits = Array(text.utf8)[...]
    while digits.count >= 2 {
        bytes.append(UInt8(String(decoding: digits.prefix(2), as: UTF8.self), radix: 16)!)
        digits = digits.dropFirst(2)
    }
    return bytes
}

@Suite("The panel's identity: SHA-256, HMAC-SHA256 and the machine's app-specific id")
struct MachineIdentityTests {
    @Test("SHA-256: the FIPS 180-2 examples and the empty message")
    func sha256Vectors() {
        #expect(MachineIdentity.hex(sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(MachineIdentity.hex(sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            MachineIdentity.hex(sha256(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            MachineIdentity.hex(sha256([UInt8](repeating: UInt8(ascii: "a"), count: 1_000)))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test("HMAC-SHA256: RFC 4231 test cases 1, 2 and 6 (a key longer than the block)")
    func hmacVectors() {
        #expect(
            MachineIdentity.hex(hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            MachineIdentity.hex(hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            MachineIdentity.hex(
                hmacSHA256(
                    key: [UInt8](repeating: 0xaa, count: 131), message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test(
        "the app-specific id is what systemd computes (systemd-id128 machine-id --app-specific=485bab1f59064145bd57df4708eade73); the device id is its first 12 digits"
    )
    func appSpecific() {
        // Printed by systemd-id128 252 on a machine whose /etc/machine-id is the first key.
        let machine = hex("3d1219c7c4c5404aaa1f6d2a48adfda4")
        #expect(MachineIdentity.hex(MachineIdentity.appSpecificID(machineID: machine)) == "2a609fa777ed498f83e538953e5143ca")
        #expect(MachineIdentity.deviceID(machineID: machine) == "2a609fa777ed")
        // Python's hmac for two more machine ids, with the version-4 bits set as systemd sets them.
        #expect(
            MachineIdentity.hex(MachineIdentity.appSpecificID(machineID: hex("00000000000000000000000000000001")))
                == "bb811402ebe0402cb0c4f67f33c9b5d1")
        #expect(
            MachineIdentity.hex(MachineIdentity.appSpecificID(machineID: hex("0123456789abcdef0123456789abcdef")))
                == "ff2f4ac053bc4ff9ab0a8a2b3b65a20a")
        // Never the machine id itself.
        #expect(!MachineIdentity.deviceID(machineID: machine).contains("3d1219"))
    }

    @Test("a machine-id file: 32 hex digits and a newline; uninitialized, all zeros, short or other text is no id")
    func parsing() {
        #expect(MachineIdentity.parseMachineID(Array("3d1219c7c4c5404aaa1f6d2a48adfda4\n".utf8)) == hex("3d1219c7c4c5404aaa1f6d2a48adfda4"))
        #expect(MachineIdentity.parseMachineID(Array("3D1219C7C4C5404AAA1F6D2A48ADFDA4".utf8)) == hex("3d1219c7c4c5404aaa1f6d2a48adfda4"))
        for bad in [
            "", "uninitialized\n", "00000000000000000000000000000000\n", "3d1219c7c4c5404aaa1f6d2a48adfda\n", "3d1219c7c4c5404aaa1f6d2a48adfdaz\n",
            "3d1219c7c4c5404aaa1f6d2a48adfda4\n\n",
        ] {
            #expect(MachineIdentity.parseMachineID(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test("the broker dropping sessions right after connect: reported once at the third short session in a row, again only after a long one")
    func flaps() {
        var detector = SessionFlapDetector()
        var reports: [Int] = []
        var t = kt(0)
        for round in 1...6 {
            detector.connected(at: t)
            t = t + .milliseconds(300)
            if detector.lost(at: t) { reports.append(round) }
            t = t + .seconds(1)
        }
        #expect(reports == [3])
        detector.connected(at: t)
        t = t + .seconds(60)
        let longLost = detector.lost(at: t)
        #expect(!longLost)  // a long session: not a flap, and the report is re-armed
        for round in 1...3 {
            detector.connected(at: t)
            t = t + .seconds(4)
            if detector.lost(at: t) { reports.append(10 + round) }
        }
        #expect(reports == [3, 13])
        // A loss without a session (a failed connect) counts nothing.
        let unconnected = detector.lost(at: t)
        #expect(!unconnected)
    }
}
