import Glibc

/// The path of a file in Tests/Fixtures.
public func fixturePath(_ name: String) -> String {
    // This file is Tests/TestSupport/Unifont.swift: the package root is three levels up.
    var root = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    root.removeLast(3)
    return root.joined(separator: "/") + "/Tests/Fixtures/" + name
}

/// The test fixture cut from GNU Unifont (Tests/Fixtures/README.md).
public var unifontFixturePath: String { fixturePath("unifont-subset.hex") }

/// Debian's unifont.hex when the `unifont` package is installed.
public var systemUnifontPath: String? {
    let path = "/usr/share/unifont/unifont.hex"
    return access(path, R_OK) == 0 ? path : nil
}

/// Glyphs read straight from a .hex file's text, with nothing of the driver's parser or renderer:
/// the oracle the OLED tests compare the emulated glass with.
public struct ReferenceFont {
    /// Code point -> (width, 16 rows of pixels left to right).
    public var glyphs: [UInt32: [[Bool]]] = [:]

    public init(path: String) {
        let text = String(decoding: fileBytes(path, limit: 8 << 20) ?? [], as: UTF8.self)
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":")
            guard parts.count == 2, let code = UInt32(parts[0], radix: 16) else { continue }
            let hex = Array(parts[1])
            let digitsPerRow = hex.count / 16
            var rows: [[Bool]] = []
            for row in 0..<16 {
                let value = Int(String(hex[(row * digitsPerRow)..<((row + 1) * digitsPerRow)]), radix: 16)!
                let width = digitsPerRow * 4
                rows.append((0..<width).map { value & (1 << (width - 1 - $0)) != 0 })
            }
            glyphs[code] = rows
        }
    }

    /// The 128x64 glass a person should see for `lines`: line n at y = 16 n, glyphs side by side.
    public func glass(_ lines: [String]) -> [String] {
        var pixels = [[Bool]](repeating: [Bool](repeating: false, count: 128), count: 64)
        for (row, line) in lines.prefix(4).enumerated() {
            var x = 0
            for scalar in line.unicodeScalars {
                guard let glyph = glyphs[scalar.value] else { x += 8; continue }
                for y in 0..<16 {
                    for gx in 0..<glyph[y].count where glyph[y][gx] && x + gx < 128 {
                        pixels[row * 16 + y][x + gx] = true
                    }
                }
                x += glyph[0].count
            }
        }
        return pixels.map { String($0.map { $0 ? "#" : "." }) }
    }
}
