// libFuzzer entry points of `resend-fuzz` (built by scripts/fuzz only: it needs -sanitize=fuzzer,
// which supplies main). One binary holds every target; the name it is started as picks one:
// scripts/fuzz links `.build/fuzz/fuzz-config` etc. to it, so `.build/fuzz/fuzz-config FILE`
// replays one input. A Swift trap, a precondition failure, ASan finding or a hang is a crash.

/// The targets, by name: each gets the raw bytes of one input.
let targets: [(name: String, run: @Sendable ([UInt8]) -> Void)] = [
    ("config", fuzzConfig),
    ("script", fuzzScript),
    ("state", fuzzState),
    ("cli", fuzzCommandLine),
    ("lcd", fuzzDriverAndEmulator),
    ("unifont", fuzzUnifont),
    ("oled", fuzzOLED),
]

/// The target this process runs: `fuzz-NAME` from the name it was started as.
nonisolated(unsafe) var selected: (@Sendable ([UInt8]) -> Void)?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>)
    -> CInt
{
    let program = CommandLine.arguments.first ?? ""
    let base = program.split(separator: "/").last.map(String.init) ?? program
    guard base.hasPrefix("fuzz-"), let target = targets.first(where: { $0.name == base.dropFirst("fuzz-".count) }) else {
        fatalError("resend-fuzz: start it as fuzz-TARGET (a link made by scripts/fuzz); targets: \(targets.map(\.name).joined(separator: ", "))")
    }
    selected = target.run
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selected?(bytes)
    return 0
}
