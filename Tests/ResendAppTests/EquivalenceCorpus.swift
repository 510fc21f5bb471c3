import Glibc
import Synchronization

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// Records every command line the tests run (with the files they give it) for the equivalence
/// suite (scripts/equivalence), which replays them through the cross-built ARM binaries under
/// qemu-user and the x86 build and compares their output byte for byte.
///
/// Off unless RESEND_RECORD_CORPUS names a directory; then each distinct invocation becomes one
/// file there, named by a stable hash of its content (so parallel tests and repeated runs give the
/// same set), holding one JSON object: {"args": ["simulate", ...], "files": {"name": "content"}}.
/// `scripts/equivalence --record` collects them into Tests/Equivalence/corpus.jsonl.
enum EquivalenceCorpus {
    private static let directory: String? = {
        guard let pointer = getenv("RESEND_RECORD_CORPUS") else { return nil }
        return String(cString: pointer)
    }()
    private static let written = Mutex<Set<UInt64>>([])

    ///
    /// `usageError`: the test parsed `arguments` without running them (`CheckOptions.parse` and
    /// the like) and saw a usage error (exit 64). Such `run` and `check` lines end in the parser,
    /// before any device is touched, so the equivalence suite replays them too (and fails the case
    /// if the x86 build does not exit 64 on it).
    static func record(_ arguments: [String], files: [String: String], usageError: Bool = false) {
        guard let directory else { return }
        let fileMembers = files.sorted { $0.key < $1.key }.map { jsonString($0.key) + ": " + jsonString($0.value) }
        let line =
            "{\"args\": [" + arguments.map(jsonString).joined(separator: ", ") + "], \"files\": {"
            + fileMembers.joined(separator: ", ") + "}" + (usageError ? ", \"usage_error\": true" : "") + "}\n"
        let bytes = Array(line.utf8)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a, 64 bit
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        guard written.withLock({ $0.insert(hash).inserted }) else { return }
        let hex = String(hash, radix: 16)
        let path = directory + "/" + String(repeating: "0", count: 16 - hex.count) + hex
        guard let file = fopen(path, "wb") else { return }
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }
}
