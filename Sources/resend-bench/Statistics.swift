import HAL

/// Order statistics over samples. Percentiles use the nearest-rank method (the p-th percentile of n
/// sorted samples is the sample at rank ceil(p/100 * n)), so every figure printed is a measured value.
struct Samples {
    let sorted: [Int64]

    init(_ values: [Int64]) {
        precondition(!values.isEmpty, "Samples: no samples")
        sorted = values.sorted()
    }

    var count: Int { sorted.count }
    var min: Int64 { sorted[0] }
    var max: Int64 { sorted[sorted.count - 1] }
    var median: Int64 { percentile(50) }
    var mean: Double { Double(sorted.reduce(0, +)) / Double(sorted.count) }

    /// Nearest rank: the smallest sample with at least `p` percent of the samples at or below it.
    func percentile(_ p: Int) -> Int64 {
        precondition((1...100).contains(p), "percentile: p must be 1...100")
        let rank = (p * sorted.count + 99) / 100
        return sorted[rank - 1]
    }
}

/// The median of several runs of one micro-benchmark, each run's figure being a mean per operation.
func medianOfRuns(_ runs: [Double]) -> Double {
    precondition(!runs.isEmpty, "medianOfRuns: no runs")
    let sorted = runs.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

// MARK: Formatting without Foundation

/// `value` rounded to `decimals` places, e.g. fixed(1.05, 2) == "1.05", fixed(-0.004, 2) == "0.00".
func fixed(_ value: Double, _ decimals: Int) -> String {
    precondition((0...9).contains(decimals), "fixed: 0...9 decimals")
    var scale: Int64 = 1
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (value * Double(scale)).rounded()
    let negative = scaled < 0
    let magnitude = Int64(negative ? -scaled : scaled)
    let whole = magnitude / scale
    var text = (negative ? "-" : "") + String(whole)
    if decimals > 0 {
        let fraction = String(magnitude % scale)
        text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
    return text
}

/// A span in milliseconds with `decimals` places: "20.81 ms".
func millis(_ span: TimeSpan, _ decimals: Int = 2) -> String {
    fixed(Double(span.nanoseconds) / 1e6, decimals) + " ms"
}

/// A span in milliseconds with an explicit sign: "+0.84 ms", "-0.02 ms".
func signedMillis(_ nanoseconds: Double, _ decimals: Int = 2) -> String {
    let text = fixed(nanoseconds / 1e6, decimals)
    return text.hasPrefix("-") ? text + " ms" : "+" + text + " ms"
}

/// Bytes in MiB with two decimals: "5.87 MiB".
func mebibytes(_ bytes: Int) -> String {
    fixed(Double(bytes) / 1_048_576, 2) + " MiB"
}

/// Nanoseconds per operation, three significant-ish figures: "412 ns", "1.93 us".
func perOperation(_ nanoseconds: Double) -> String {
    nanoseconds < 10_000 ? fixed(nanoseconds, 0) + " ns" : fixed(nanoseconds / 1_000, 1) + " us"
}
