import HAL

/// SHA-256 (FIPS 180-4) over bytes: the hash behind `hmacSHA256`.
public func sha256(_ message: [UInt8]) -> [UInt8] {
    let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
    var h: [UInt32] = [0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19]
    var padded = message
    padded.append(0x80)
    while padded.count % 64 != 56 { padded.append(0) }
    let bits = UInt64(message.count) &* 8
    for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
    var w = [UInt32](repeating: 0, count: 64)
    for chunk in stride(from: 0, to: padded.count, by: 64) {
        for i in 0..<16 {
            let at = chunk + i * 4
            w[i] = UInt32(padded[at]) << 24 | UInt32(padded[at + 1]) << 16 | UInt32(padded[at + 2]) << 8 | UInt32(padded[at + 3])
        }
        for i in 16..<64 {
            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
        for i in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let choice = (e & f) ^ (~e & g)
            let t1 = hh &+ s1 &+ choice &+ k[i] &+ w[i]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ majority
            (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        for (i, v) in [a, b, c, d, e, f, g, hh].enumerated() { h[i] = h[i] &+ v }
    }
    return h.flatMap { v in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> UInt32($0)) } }
}

/// HMAC-SHA256 (RFC 2104): 32 bytes.
public func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
    var block = key.count > 64 ? sha256(key) : key
    block += [UInt8](repeating: 0, count: 64 - block.count)
    let inner = sha256(block.map { $0 ^ 0x36 } + message)
    return sha256(block.map { $0 ^ 0x5c } + inner)
}

/// The panel's identity on the network, derived from the machine id (/etc/machine-id) the way
/// systemd's `sd_id128_get_machine_app_specific` derives an application's id: HMAC-SHA256 keyed by
/// the machine id over `appID`, its first 16 bytes marked as a version-4 UUID. The machine id
/// itself never leaves the machine; `systemd-id128 machine-id --app-specific=485bab1f59064145bd57df4708eade73`
/// prints the same id.
public enum MachineIdentity {
    /// This program's application id (made once with `systemd-id128 new`).
    public static let appID: [UInt8] = [
        0x48, 0x5b, 0xab, 0x1f, 0x59, 0x06, 0x41, 0x45, 0xbd, 0x57, 0xdf, 0x47, 0x08, 0xea, 0xde, 0x73,
    ]

    /// The 16 bytes of a machine-id file's text (32 lowercase or uppercase hex digits, an optional
    /// newline); nil for anything else, "uninitialized" (a first boot) and the all-zero id.
    public static func parseMachineID(_ text: [UInt8]) -> [UInt8]? {
        var digits = text
        if digits.last == UInt8(ascii: "\n") { digits.removeLast() }
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for pair in stride(from: 0, to: 32, by: 2) {
            guard let high = hexValue(digits[pair]), let low = hexValue(digits[pair + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes.allSatisfy({ $0 == 0 }) ? nil : bytes
    }

    /// The app-specific id (16 bytes), as sd_id128_get_machine_app_specific computes it.
    public static func appSpecificID(machineID: [UInt8], appID: [UInt8] = MachineIdentity.appID) -> [UInt8] {
        var id = Array(hmacSHA256(key: machineID, message: appID).prefix(16))
        id[6] = (id[6] & 0x0F) | 0x40
        id[8] = (id[8] & 0x3F) | 0x80
        return id
    }

    /// The device id in topics, the client id and discovery: the first 12 hex digits (48 bits) of
    /// the app-specific id.
    public static func deviceID(machineID: [UInt8]) -> String {
        String(hex(appSpecificID(machineID: machineID)).prefix(12))
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// Notices a broker that keeps ending the session right after it starts, the mark of another
/// client connected with the same client id (the broker drops the older one): three sessions in
/// a row that each lasted less than `shortSession` make `lost` return true, once, until a session
/// lasts longer.
public struct SessionFlapDetector: Hashable, Sendable {
    public var shortSession: TimeSpan
    public var threshold: Int
    private var connectedAt: Instant?
    private var shortInARow = 0
    private var reported = false

    public init(shortSession: TimeSpan = .seconds(5), threshold: Int = 3) {
        self.shortSession = shortSession
        self.threshold = threshold
    }

    public mutating func connected(at now: Instant) { connectedAt = now }

    /// The session ended at `now`: true when this is the `threshold`-th short one in a row.
    public mutating func lost(at now: Instant) -> Bool {
        guard let start = connectedAt else { return false }
        connectedAt = nil
        if now - start < shortSession {
            shortInARow += 1
        } else {
            shortInARow = 0
            reported = false
        }
        guard shortInARow >= threshold, !reported else { return false }
        reported = true
        return true
    }
}
